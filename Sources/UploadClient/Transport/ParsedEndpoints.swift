import NIOConcurrencyHelpers
import UploadCore

/// The URLs a transport's requests go to, each parsed into its `Endpoint` once: a batch sends
/// every file to the same endpoint, an upload's requests go to the same resource, and
/// Foundation's URL parser costs more than a small upload's own work.
final class ParsedEndpoints: Sendable {
    /// Distinct URLs kept at most; past it the cache starts again (a run names few).
    static let limit = 64
    private let known = NIOLockedValueBox<[String: Endpoint?]>([:])

    /// The endpoint `url` names, or nil when it is not an `http`/`https` URL with a host.
    func callAsFunction(_ url: String) -> Endpoint? {
        if let parsed = known.withLockedValue({ $0[url] }) { return parsed }
        let parsed = Endpoint(url)
        known.withLockedValue { cache in
            if cache.count >= Self.limit { cache.removeAll() }
            cache[url] = .some(parsed)
        }
        return parsed
    }
}
