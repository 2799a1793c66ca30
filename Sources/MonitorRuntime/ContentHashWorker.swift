import Dispatch
import Monitor
import NIOConcurrencyHelpers
import UploadClient

/// Hashes the browser's files off the monitor's loop, one after another at utility priority. A
/// newer list replaces what of the last one is still waiting (the folder changed). Digests are
/// cached by path, size and modification time for the life of the monitor, so coming back to a
/// folder of 10,000 photos costs nothing the second time.
public final class ContentHashWorker: Sendable {
    private struct State {
        var waiting: [ContentHashRequest] = []
        var running = false
        var cache: [ContentHashRequest: String] = [:]
    }

    private let state = NIOLockedValueBox(State())
    private let queue = DispatchQueue(label: "uploadmon-content-hash", qos: .utility)
    private let stripLocation: Bool
    private let deliver: @Sendable (ContentHashRequest, String?, Int) -> Void

    /// `stripLocation`: hash the bytes as they would be sent with `--strip-location`.
    public init(stripLocation: Bool, deliver: @escaping @Sendable (ContentHashRequest, String?, Int) -> Void) {
        self.stripLocation = stripLocation
        self.deliver = deliver
    }

    public func request(_ files: [ContentHashRequest]) {
        let start = state.withLockedValue { state -> Bool in
            state.waiting = files
            defer { state.running = true }
            return !state.running
        }
        if start { queue.async { self.drain() } }
    }

    private func drain() {
        while true {
            let next: (ContentHashRequest, String?, Int)? = state.withLockedValue { state in
                guard !state.waiting.isEmpty else {
                    state.running = false
                    return nil
                }
                let file = state.waiting.removeFirst()
                return (file, state.cache[file], state.waiting.count)
            }
            guard let (file, cached, remaining) = next else { return }
            if let cached {
                deliver(file, cached, remaining)
                continue
            }
            let digest = try? ContentIdentity.sha256(of: file.path, stripLocation: stripLocation).hex
            if let digest { state.withLockedValue { $0.cache[file] = digest } }
            deliver(file, digest, remaining)
        }
    }
}
