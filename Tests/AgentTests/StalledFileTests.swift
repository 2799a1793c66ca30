import Foundation
import Glibc
import NIOConcurrencyHelpers
import NIOCore
import Testing
@testable import UploadAgent
import UploadClient
import UploadCore
import UploadJournal
import UploadTesting

/// A FUSE file system (fusepy) whose one file, `stalled.jpg`, can be listed and opened but
/// whose reads never return: a network file system whose server went away (sshfs on a dead
/// link, a hung NFS mount), where a reader waits in the kernel and no signal ends the wait.
struct StalledFileSystem {
    let mountPoint: String
    let server: Process

    static let script = #"""
        import errno, stat, sys, threading, time
        from fuse import FUSE, Operations, FuseOSError
        # stalled.jpg: every read waits. stalls-later.jpg: read as a JPEG through its first open,
        # then every read waits (a link that died between a check and the upload).
        HEAD = b"\xff\xd8\xff\xe0" + bytes(39996)
        class Stalled(Operations):
            def __init__(self):
                self.lock = threading.Lock()
                self.opens = 0
            def getattr(self, path, fh=None):
                now = time.time()
                if path == "/":
                    return dict(st_mode=stat.S_IFDIR | 0o755, st_nlink=2, st_ctime=now, st_mtime=now, st_atime=now)
                if path in ("/stalled.jpg", "/stalls-later.jpg"):
                    return dict(st_mode=stat.S_IFREG | 0o644, st_nlink=1, st_size=len(HEAD), st_ctime=1e9, st_mtime=1e9, st_atime=1e9)
                raise FuseOSError(errno.ENOENT)
            def readdir(self, path, fh):
                return [".", "..", "stalled.jpg", "stalls-later.jpg"]
            def open(self, path, flags):
                if path != "/stalls-later.jpg":
                    return 0
                with self.lock:
                    self.opens += 1
                    return self.opens
            def read(self, path, size, offset, fh):
                if path == "/stalls-later.jpg" and fh == 1:
                    return HEAD[offset:offset + size]
                time.sleep(3600)
                return b""
        FUSE(Stalled(), sys.argv[1], foreground=True, allow_other=True, direct_io=True)
        """#

    /// Where one can be mounted: /dev/fuse, fusepy and a `python3` to run it.
    static let available: Bool = {
        guard FileManager.default.fileExists(atPath: "/dev/fuse") else { return false }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import fuse"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()

    static func mount(in folder: String) async throws -> StalledFileSystem {
        let mountPoint = folder + "/stalled-mount"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        try script.write(toFile: folder + "/stalled_fs.py", atomically: true, encoding: .utf8)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = ["python3", folder + "/stalled_fs.py", mountPoint]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        let system = StalledFileSystem(mountPoint: mountPoint, server: server)
        // Mounted when the file shows (a stat is answered; only reads stall).
        for _ in 0..<200 {
            if FileManager.default.fileExists(atPath: system.file) { return system }
            guard server.isRunning else { break }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        system.unmount()
        throw AgentError("the stalled file system did not mount at \(mountPoint)")
    }

    /// Every read of it waits.
    var file: String { mountPoint + "/stalled.jpg" }
    /// Read through its first open (the agent's check as it is queued), then every read waits.
    var laterFile: String { mountPoint + "/stalls-later.jpg" }

    /// Ends the server (its pending reads then fail) and takes the mount away.
    func unmount() {
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        for tool in ["/usr/bin/fusermount3", "/usr/bin/fusermount"] where FileManager.default.isExecutableFile(atPath: tool) {
            let unmount = Process()
            unmount.executableURL = URL(fileURLWithPath: tool)
            unmount.arguments = ["-u", "-z", mountPoint]
            unmount.standardError = FileHandle.nullDevice
            try? unmount.run()
            unmount.waitUntilExit()
            break
        }
    }
}

/// A file whose reads never return (a network file system that stopped answering) must hold
/// neither the agent nor its other uploads: checked as it is queued, it is refused with the
/// reason; stalling later, as it is prepared for sending, it is given up after its limit,
/// tried once more, then left out with the reason, while the rest is sent.
@Suite(
    .serialized, .timeLimit(.minutes(2)),
    .enabled(if: StalledFileSystem.available, "needs /dev/fuse and fusepy (python3 -m pip install fusepy; Debian's fuse3)"))
struct StalledFileTests {
    @Test func aFileWhoseReadsNeverReturnIsLeftOutAndTheQueueGoesOn() async throws {
        let receiver = try await ReceiverHarness.start()
        let root = receiver.root
        let stalled = try await StalledFileSystem.mount(in: TestFiles.makeTemporaryDirectory("stalled-fs"))
        defer { stalled.unmount() }
        var photos: [String] = []
        for index in 0..<6 { photos.append(try TestFiles.writeImage(at: root + "/good-\(index).jpg", size: 3_000)) }
        // One upload at a time: the stalled file must not hold the only slot either.
        let running = try await RunningAgent.start(root: root, concurrency: 1, preparationLimit: .milliseconds(700))
        let client = try await running.connect("test")
        let items = try ([stalled.file, stalled.laterFile] + photos).map { path in
            EnqueueItem(request: try UploadRequest.forPath(path, url: receiver.url), settings: TransportSettings(), origin: "test")
        }
        let reply = try await offPool { try client.request(.enqueue(items: EnqueueBatch(items))) }
        guard case .enqueued(let results) = reply else {
            Issue.record("\(reply)")
            return
        }
        // Checked as it is queued: refused with the reason, the rest of the batch taken.
        guard case .refused(let path, let reason) = results[0] else {
            Issue.record("\(results[0])")
            return
        }
        #expect(path == stalled.file)
        #expect(reason.hasPrefix("reading \(stalled.file) took longer than 0.7s and was given up"), "\(reason)")
        let ids = results.compactMap { if case .queued(let upload) = $0 { upload.id } else { nil } }
        #expect(ids.count == 7)
        try await running.waitFinished(ids)
        let left = try #require(try running.journal.snapshot(ids[0]))
        #expect(left.state == .failed)
        guard case .failed(let failure)? = left.outcome else {
            Issue.record("\(String(describing: left.outcome))")
            return
        }
        #expect(failure.kind == .preparationStalled)
        #expect(failure.message.contains("reading \(stalled.laterFile) took longer than"), "\(failure.message)")
        #expect(failure.message.contains("twice, so it is left out"), "\(failure.message)")
        for id in ids.dropFirst() { #expect(try running.journal.snapshot(id)?.state == .succeeded) }
        #expect(receiver.storedNames().count == 6)
        #expect(try String(contentsOfFile: running.paths.preparing, encoding: .utf8) == "", "nothing is counted as stopping the agent")
        client.close()
        await running.stop()
        await receiver.cleanUp()
    }
}
