import Foundation
import Glibc

/// A host of its own for a test that needs an origin that is not a loopback one (a client
/// remembers what it learnt of an origin across processes, never of a loopback one): a network
/// namespace reached over a veth pair with 10.x addresses, its programs started inside it with
/// `ip netns exec`. No address of this machine but loopback is used. Needs root and iproute2;
/// `stop()` (or the end of this process) removes it.
public final class NetworkNamespace: @unchecked Sendable {
    /// The namespace's own address, where its servers listen.
    public let address: String
    private let name: String
    private let link: String
    private var started: [Process] = []
    private static let ip = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Whether this process may make one: root, with iproute2.
    public static var available: Bool { getuid() == 0 && ip != nil }

    public init() throws {
        guard let ip = Self.ip else { throw ToolFailure("iproute2's ip is missing") }
        let tag = "\(getpid() % 10_000)\(Int.random(in: 100...999))"
        name = "umtest-\(tag)"
        link = "umt\(tag)"
        let net = Int.random(in: 64...250)
        let subnet = Int.random(in: 1...250)
        let here = "10.\(net).\(subnet).1"
        address = "10.\(net).\(subnet).2"
        let steps: [[String]] = [
            ["netns", "add", name],
            ["link", "add", link, "type", "veth", "peer", "name", link + "p"],
            ["link", "set", link + "p", "netns", name],
            ["addr", "add", here + "/24", "dev", link],
            ["link", "set", link, "up"],
            ["netns", "exec", name, ip, "addr", "add", address + "/24", "dev", link + "p"],
            ["netns", "exec", name, ip, "link", "set", link + "p", "up"],
            ["netns", "exec", name, ip, "link", "set", "lo", "up"],
        ]
        for step in steps {
            let result = try ToolRun.run(ip, step)
            guard result.status == 0 else {
                stop()
                throw ToolFailure("ip \(step.joined(separator: " ")) failed (\(result.status))")
            }
        }
    }

    /// Starts `arguments` inside the namespace with its standard input a pipe held open (the
    /// test servers here end when it closes) and its standard output given back; its standard
    /// error goes to `log`.
    public func start(_ arguments: [String], log: String) throws -> (process: Process, output: FileHandle) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.ip!)
        process.arguments = ["netns", "exec", name] + arguments
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
        started.append(process)
        return (process, output.fileHandleForReading)
    }

    /// Sends `signal` to the processes in it whose command line contains `marker`.
    public func signal(_ signal: Int32, where marker: String) {
        guard let ip = Self.ip, let pids = try? ToolRun.output(ip, ["netns", "pids", name]) else { return }
        for pid in pids.split(separator: "\n").compactMap({ Int32($0) }) {
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { continue }
            let command = String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
            if command.contains(marker) { kill(pid, signal) }
        }
    }

    /// Stops what was started in it (and anything else left there) and removes it.
    public func stop() {
        for process in started where process.isRunning { process.terminate() }
        guard let ip = Self.ip else { return }
        if let pids = try? ToolRun.output(ip, ["netns", "pids", name]) {
            for pid in pids.split(separator: "\n").compactMap({ Int32($0) }) { kill(pid, SIGKILL) }
        }
        _ = try? ToolRun.run(ip, ["link", "del", link])
        _ = try? ToolRun.run(ip, ["netns", "del", name])
    }

    deinit { stop() }

    public struct ToolFailure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}
