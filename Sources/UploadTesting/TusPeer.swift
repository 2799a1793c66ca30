import Foundation

/// An independent tus 1.0.0 server for tests: `tuspyserver` (PyPI; a FastAPI router, run by
/// uvicorn) on 127.0.0.1 and a free port, keeping its uploads in a folder of its own. It is not
/// ours, so a client that gets along with it speaks tus and not only our reading of it. It
/// stops with `stop()`, and by itself when this process ends (it reads its standard input to
/// the end and then exits).
public final class TusPeer: @unchecked Sendable {
    public let port: Int
    public let directory: String
    private let process: Process
    private let input: Pipe
    private let logPath: String

    /// Whether python3 with tuspyserver and uvicorn is on this machine (`.ci/run` installs them).
    public static let available: Bool = {
        (try? PythonDigests.run(["-c", "import tuspyserver, uvicorn, fastapi"]))?.status == 0
    }()

    /// The creation URL.
    public var url: String { "http://127.0.0.1:\(port)/files/" }

    /// `maxSize`: the server's `Tus-Max-Size`.
    public init(maxSize: Int64? = nil) throws {
        let root = TestFiles.makeTemporaryDirectory("tus-peer")
        directory = root + "/files"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let script = root + "/server.py"
        try Self.script.write(toFile: script, atomically: true, encoding: .utf8)
        logPath = root + "/access.log"
        FileManager.default.createFile(atPath: logPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, directory, String(maxSize ?? 128 << 30), logPath]
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle(forWritingAtPath: logPath)
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw PeerError(message: "the tus server did not start: \(line) \((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")")
        }
        self.port = port
        self.process = process
        self.input = input
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
                  let info = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
            let id = String(name.dropLast(5))
            return Upload(id: id, path: directory + "/" + id, size: (info["size"] as? NSNumber)?.int64Value ?? -1,
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

    /// Makes the upload `id` expired, as if its time had passed (the server keeps uploads for
    /// days at least).
    public func expire(_ id: String) throws {
        let path = directory + "/" + id + ".info"
        guard let data = FileManager.default.contents(atPath: path),
              var info = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw PeerError(message: "no upload \(id)")
        }
        info["expires"] = "Mon, 01 Jan 2001 00:00:00 GMT"
        try JSONSerialization.data(withJSONObject: info).write(to: URL(fileURLWithPath: path))
    }

    public func stop() {
        try? input.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
    }

    private static let script = """
        import os, socket, sys, threading
        import uvicorn
        from fastapi import FastAPI
        from tuspyserver import create_tus_router

        files_dir, max_size, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
        app = FastAPI()
        app.include_router(create_tus_router(prefix="files", files_dir=files_dir, max_size=max_size))
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        print(sock.getsockname()[1], flush=True)
        # uvicorn's access log goes to standard output: into the log file, like the rest.
        out = os.open(log, os.O_WRONLY | os.O_APPEND)
        os.dup2(out, 1)
        os.dup2(out, 2)

        def watch_parent():
            sys.stdin.read()
            os._exit(0)

        threading.Thread(target=watch_parent, daemon=True).start()
        uvicorn.Server(uvicorn.Config(app, log_level="info", access_log=True)).run(sockets=[sock])
        """
}
