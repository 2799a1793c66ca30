import Dispatch
import Foundation
import Monitor
import NIOConcurrencyHelpers
import UploadClient
import UploadJournal

/// Hashes the browser's files off the monitor's loop, one after another at utility priority. A
/// newer list replaces what of the last one is still waiting (the folder changed). Digests are
/// kept by path, size, modification time and inode change time: for the life of the monitor in memory and, given
/// a journal, across runs, so a folder of 10,000 photos is read once, not at every look.
public final class ContentHashWorker: Sendable {
    private struct State {
        var waiting: [ContentHashRequest] = []
        /// The next of `waiting` to hash (taken by index: removing the first of 20,000 each
        /// time moved the rest, the square of the folder's size).
        var next = 0
        /// Bumped with every new list: the kept digests are looked up once per list.
        var generation = 0
        var running = false
        /// While uploads run: no file is read (a digest already known is still given).
        var paused = false
        var cache: [ContentHashRequest: String] = [:]
    }

    private let state = NIOLockedValueBox(State())
    private let queue = DispatchQueue(label: "uploadmon-content-hash", qos: .utility)
    private let stripLocation: Bool
    private let journal: Journal?
    private let deliver: @Sendable (ContentHashRequest, String?, Int) -> Void

    /// `stripLocation`: hash the bytes as they would be sent with `--strip-location`. `journal`:
    /// where digests are kept across runs (nil: in memory only).
    public init(stripLocation: Bool, journal: Journal? = nil, deliver: @escaping @Sendable (ContentHashRequest, String?, Int) -> Void) {
        self.stripLocation = stripLocation
        self.journal = journal
        self.deliver = deliver
    }

    /// Reading files stops while `paused` (uploads run: they need the disk and the cores more
    /// than "sent under another name" needs an answer) and goes on where it was after.
    public func pause(_ paused: Bool) {
        state.withLockedValue { $0.paused = paused }
    }

    public func request(_ files: [ContentHashRequest]) {
        let start = state.withLockedValue { state -> Bool in
            state.waiting = files
            state.next = 0
            state.generation += 1
            defer { state.running = true }
            return !state.running
        }
        if start { queue.async { self.drain() } }
    }

    private func drain() {
        var kept: [String: CachedContent] = [:]
        var keptGeneration = -1
        var toKeep: [CachedContent] = []
        defer { try? journal?.cacheContents(toKeep) }
        while true {
            let next: (ContentHashRequest, String?, Int, [ContentHashRequest]?)? = state.withLockedValue { state in
                guard state.next < state.waiting.count else {
                    state.running = false
                    state.waiting = []
                    state.next = 0
                    return nil
                }
                // A new list: its paths are looked up among the kept digests once.
                let fresh = state.generation != keptGeneration ? state.waiting : nil
                keptGeneration = state.generation
                let file = state.waiting[state.next]
                state.next += 1
                return (file, state.cache[file], state.waiting.count - state.next, fresh)
            }
            guard let (file, cached, remaining, fresh) = next else { return }
            if let fresh, let journal {
                kept = (try? journal.cachedContents(fresh.map(\.path), stripped: stripLocation)) ?? [:]
            }
            if let cached {
                deliver(file, cached, remaining)
                continue
            }
            if let earlier = kept[file.path], earlier.size == file.size, earlier.mtimeNs == file.modified, file.modified != 0,
                earlier.ctimeNs == file.changed, file.changed != 0
            {
                state.withLockedValue { $0.cache[file] = earlier.sha256 }
                deliver(file, earlier.sha256, remaining)
                continue
            }
            // Uploads run: wait (this queue's thread, at utility priority) until they are done.
            while state.withLockedValue({ $0.paused && $0.generation == keptGeneration }) {
                Thread.sleep(forTimeInterval: 0.1)
            }
            let digest = try? ContentIdentity.sha256(of: file.path, stripLocation: stripLocation).hex
            if let digest {
                state.withLockedValue { $0.cache[file] = digest }
                toKeep.append(
                    CachedContent(
                        path: file.path, size: file.size, mtimeNs: file.modified, ctimeNs: file.changed == 0 ? nil : file.changed,
                        stripped: stripLocation, sha256: digest))
                if toKeep.count >= 200 {
                    try? journal?.cacheContents(toKeep)
                    toKeep = []
                }
            }
            deliver(file, digest, remaining)
        }
    }
}
