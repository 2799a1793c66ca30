import Foundation
import Glibc
import Monitor
import NIOConcurrencyHelpers

/// Watches the folder open in the browser (inotify) and reads it again when files arrive, leave,
/// are renamed or finish being written, so a photo copied in shows without leaving the folder.
/// A burst of changes (a camera card being copied) is read once it quiets for a moment, and at
/// most once a `longest` while it goes on. Reading happens on the watcher's own thread: a slow
/// or huge folder never holds the monitor's loop.
final class DirectoryWatcher: Sendable {
    /// Quiet for this long after a change: read the folder.
    static let settle = 0.2
    /// While changes keep coming, read at most this often.
    static let longest = 1.0

    private let fd: Int32
    private let state = NIOLockedValueBox<(path: String?, watch: Int32, stopped: Bool)>((nil, -1, false))
    private let changed: @Sendable (DirectoryListing) -> Void
    /// Wakes the thread when the folder watched changes or the watcher stops.
    private let wake: (read: Int32, write: Int32)

    /// `changed` gets the folder's new listing, on the watcher's thread.
    init?(changed: @escaping @Sendable (DirectoryListing) -> Void) {
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        var pipe: [Int32] = [0, 0]
        guard Glibc.pipe(&pipe) == 0 else {
            close(fd)
            return nil
        }
        for end in pipe { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        wake = (pipe[0], pipe[1])
        self.changed = changed
        let thread = Thread { [self] in run() }
        thread.name = "uploadmon-folder-watch"
        thread.start()
    }

    /// Watches `path` from now on (the folder the browser opened), instead of the one before.
    func watch(_ path: String) {
        state.withLockedValue { state in
            guard state.path != path, !state.stopped else { return }
            if state.watch >= 0 { inotify_rm_watch(fd, state.watch) }
            let mask = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF
            state.watch = inotify_add_watch(fd, path, UInt32(mask))
            state.path = path
        }
    }

    func stop() {
        state.withLockedValue { $0.stopped = true }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var firstChange: Double?
        var lastChange = 0.0
        func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
        while true {
            var timeout: Int32 = -1
            if let first = firstChange {
                let due = min(lastChange + Self.settle, first + Self.longest)
                timeout = Int32(max(0, (due - now()) * 1000))
            }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 2, timeout)
            if state.withLockedValue({ $0.stopped }) { break }
            if fds[0].revents & Int16(POLLIN) != 0 {
                // Only that something changed matters: the whole folder is read again.
                while read(fd, &buffer, buffer.count) > 0 {}
                let moment = now()
                if firstChange == nil { firstChange = moment }
                lastChange = moment
                continue
            }
            guard let first = firstChange else { continue }
            let moment = now()
            guard moment >= lastChange + Self.settle || moment >= first + Self.longest else { continue }
            firstChange = nil
            guard let path = state.withLockedValue({ $0.path }) else { continue }
            changed(DirectoryReader.read(path, select: nil))
        }
        close(fd)
        close(wake.read)
        close(wake.write)
    }
}
