import Foundation
import Glibc

/// A test server of bench/'s that is not ours (tus servers, WsgiDAV, moto), started as those
/// scripts expect: `python3 bench/SCRIPT ARGS…`, its first line on standard output (the port,
/// and what else it says), its errors in `logPath`, its standard input kept open (closing it
/// stops the server).
struct PeerProcess {
    let process: Process
    let input: Pipe
    let output: FileHandle
    /// The first line the server wrote.
    let firstLine: String

    /// The bench/ folder, found from this file's place in the package.
    static let bench = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../bench").standardized.path

    /// Starts `script` with `arguments`; `what` names it when it does not start.
    static func launch(_ script: String, _ arguments: [String], logPath: String, what: String) throws -> PeerProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", bench + "/" + script] + arguments
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle(forWritingAtPath: logPath)
        try process.run()
        let line = readLine(output.fileHandleForReading)
        guard !line.isEmpty else {
            process.terminate()
            throw TusPeer.PeerError(message: "\(what) did not start: \((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")")
        }
        return PeerProcess(process: process, input: input, output: output.fileHandleForReading, firstLine: line)
    }

    /// One line from `handle`, without its end.
    static func readLine(_ handle: FileHandle) -> String {
        var bytes: [UInt8] = []
        while true {
            let byte = handle.readData(ofLength: 1)
            guard let first = byte.first, first != UInt8(ascii: "\n") else { break }
            bytes.append(first)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
