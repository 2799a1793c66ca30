import Foundation
import Glibc

/// An independent tus 1.0.0 server for tests: `tuspyserver` (PyPI; a FastAPI router, run by
/// uvicorn), `aiohttp-tus` (PyPI; aiohttp) or `fastapi-tusd` (PyPI; another FastAPI router), on
/// 127.0.0.1 and a free port, keeping its uploads
/// in a folder of its own. Neither is ours, so a client that gets along with them speaks tus and
/// not only our reading of it. It stops with `stop()`, and by itself when this process ends (it
/// reads its standard input to the end and then exits).
public final class TusPeer: @unchecked Sendable {
    public enum Server: Sendable {
        /// `bench/tus_server.py`.
        case tuspyserver
        /// `bench/tus_aiohttp_server.py`: requests over `maxRequest` bytes are refused with 413.
        case aiohttpTus(maxRequest: Int64)
        /// `bench/tus_fastapi_server.py`: fastapi-tusd, which keeps what a cut request carried.
        case fastapiTusd
    }

    public let port: Int
    public let directory: String
    public let server: Server
    private let peer: PeerProcess
    private let logPath: String

    /// Whether python3 with tuspyserver and uvicorn is on this machine (`.ci/run` installs them).
    public static let available: Bool = {
        PythonDigests.hasModules(["tuspyserver", "uvicorn", "fastapi"])
    }()

    /// Whether python3 with aiohttp-tus is on this machine (`.ci/run` installs it).
    public static let aiohttpTusAvailable: Bool = {
        PythonDigests.hasModules(["aiohttp_tus", "aiohttp"])
    }()

    /// Whether python3 with fastapi-tusd is on this machine (`.ci/run` installs it).
    public static let fastapiTusdAvailable: Bool = {
        PythonDigests.hasModules(["fastapi_tusd", "uvicorn"])
    }()

    /// The creation URL.
    public var url: String {
        switch server {
        case .tuspyserver: "http://127.0.0.1:\(port)/files/"
        case .aiohttpTus, .fastapiTusd: "http://127.0.0.1:\(port)/files"
        }
    }

    /// The complete files aiohttp-tus stored, by name (it keeps partial ones out of sight).
    public var storedFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    /// Starts one off the cooperative pool (Python takes a second to import FastAPI, and this
    /// waits for its port).
    public static func start(
        _ server: Server = .tuspyserver, maxSize: Int64? = nil, checksums: Bool = false, corrupting: [Int] = []
    ) async throws -> TusPeer {
        try await offPool { try TusPeer(server, maxSize: maxSize, checksums: checksums, corrupting: corrupting) }
    }

    /// `maxSize`: the server's `Tus-Max-Size`. `checksums`: the checksum extension in front of
    /// it (Python's hashlib checks each PATCH's `Upload-Checksum`; tuspyserver has none), the
    /// PATCHes numbered in `corrupting` (from 1) arriving with their first byte flipped.
    public init(_ server: Server = .tuspyserver, maxSize: Int64? = nil, checksums: Bool = false, corrupting: [Int] = []) throws {
        self.server = server
        let root = TestFiles.makeTemporaryDirectory("tus-peer")
        directory = root + "/files"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        logPath = root + "/access.log"
        FileManager.default.createFile(atPath: logPath, contents: nil)
        let arguments: (String, [String]) =
            switch server {
            case .tuspyserver:
                (
                    "tus_server.py",
                    [directory, String(maxSize ?? 128 << 30), logPath]
                        + (checksums ? ["checksum", corrupting.map(String.init).joined(separator: ",")] : [])
                )
            case .aiohttpTus(let maxRequest):
                ("tus_aiohttp_server.py", [directory, String(maxRequest), logPath])
            case .fastapiTusd:
                ("tus_fastapi_server.py", [directory, String(maxSize ?? 128 << 30), logPath])
            }
        let peer = try PeerProcess.launch(arguments.0, arguments.1, logPath: logPath, what: "the tus server")
        guard let port = Int(peer.firstLine.trimmingCharacters(in: .whitespaces)) else {
            peer.stop()
            throw PeerError(message: "the tus server did not start: \(peer.firstLine)")
        }
        self.port = port
        self.peer = peer
    }

    public struct PeerError: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// One upload as the server keeps it.
    public struct Upload: Sendable {
        public let id: String
        public let path: String
        public let size: Int64
        public let offset: Int64
        public let metadata: [String: String]
        /// How many requests carried its bytes.
        public let parts: Int
    }

    /// The uploads the server holds now.
    public var uploads: [Upload] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".info") }.sorted().compactMap { name in
            guard let data = FileManager.default.contents(atPath: directory + "/" + name),
                let info = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { return nil }
            let id = String(name.dropLast(5))
            return Upload(
                id: id, path: directory + "/" + id, size: (info["size"] as? NSNumber)?.int64Value ?? -1,
                offset: (info["offset"] as? NSNumber)?.int64Value ?? -1,
                metadata: info["metadata"] as? [String: String] ?? [:],
                parts: (info["upload_part"] as? NSNumber)?.intValue ?? 0)
        }
    }

    /// The requests it answered, as `METHOD /path STATUS` (uvicorn's access log).
    public var requests: [String] {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            // `INFO:     127.0.0.1:5555 - "PATCH /files/abc HTTP/1.1" 204 No Content`
            let parts = line.split(separator: "\"")
            guard parts.count >= 3 else { return nil }
            let request = parts[1].split(separator: " ")
            let status = parts[2].split(separator: " ").first ?? ""
            guard request.count >= 2 else { return nil }
            return "\(request[0]) \(request[1]) \(status)"
        }
    }

    /// Creates an upload of `length` bytes named `filename` (`filetype`) as another client would
    /// (curl), and gives its id.
    public func create(length: Int64, filename: String, filetype: String) throws -> String {
        let before = Set(uploads.map(\.id))
        let metadata = "filename \(Data(filename.utf8).base64EncodedString()),filetype \(Data(filetype.utf8).base64EncodedString())"
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        curl.arguments = [
            "curl", "-s", "-o", "/dev/null", "-X", "POST", "-H", "Tus-Resumable: 1.0.0", "-H", "Upload-Length: \(length)",
            "-H", "Upload-Metadata: \(metadata)", url,
        ]
        try curl.run()
        curl.waitUntilExit()
        guard let id = uploads.map(\.id).first(where: { !before.contains($0) }) else { throw PeerError(message: "curl created no upload") }
        return id
    }

    /// Whether a request holds the upload `id` now (tuspyserver locks an upload for the whole of
    /// a request on it, with `flock` on `.locks/<id>.lock`): a cut request's handler may hold
    /// it for a while after the cut, and writes the upload's record down when it lets go.
    public func busy(_ id: String) -> Bool {
        let fd = open(directory + "/.locks/" + id + ".lock", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return true }
        flock(fd, LOCK_UN)
        return false
    }

    /// Makes the upload `id` expired, as if its time had passed (the server keeps uploads for
    /// days at least).
    public func expire(_ id: String) throws {
        let path = directory + "/" + id + ".info"
        guard let data = FileManager.default.contents(atPath: path),
            var info = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        else {
            throw PeerError(message: "no upload \(id)")
        }
        info["expires"] = "Mon, 01 Jan 2001 00:00:00 GMT"
        try JSONSerialization.data(withJSONObject: info).write(to: URL(fileURLWithPath: path))
    }

    /// Stops the server at once (SIGKILL: uvicorn's graceful stop waits for its connections,
    /// and the end of its standard input may never come while another child process of this
    /// one holds the pipe).
    public func stop() { peer.stop() }

}
