import Foundation
import NIOCore

/// Who may hold how many unfinished resumable uploads, and which one goes when a new one needs
/// room. One client (one address; for IPv6 one /64 network) must never deny the service to the
/// others, and nothing a client starts and abandons may be kept long:
/// - an unfinished upload that no request has touched for the idle age is removed (the idle age
///   is far shorter than the total age a slow upload may take);
/// - one client holds at most `perClient` unfinished uploads: its next creation removes its own
///   least recently active one that no request is using;
/// - over all clients at most `total`: a creation then removes the least recently active unused
///   upload of the client that holds the most;
/// - a creation is refused (503) only when every upload that could go is in use by a request.
struct ResumableQuota: Sendable, Equatable {
    var total: Int
    var perClient: Int

    static let standard = ResumableQuota(total: 4096, perClient: 64)

    /// One unfinished upload as the quota sees it.
    struct Holding: Sendable, Equatable {
        var token: String
        var client: String
        var lastActive: Date
        /// A request is using it now: it is never taken away.
        var inUse: Bool
    }

    enum Decision: Sendable, Equatable {
        case admit
        /// Admit after removing this upload (one no request uses).
        case evict(String)
        case refuse(String)
    }

    /// What to do when `client` creates an upload while `unfinished` are held.
    func decide(for client: String, unfinished: [Holding]) -> Decision {
        let own = unfinished.filter { $0.client == client }
        if own.count >= perClient {
            guard let oldest = own.filter({ !$0.inUse }).min(by: Self.lessActive) else {
                return .refuse("this client has \(own.count) unfinished uploads in progress, the most one client may have; finish or cancel one first")
            }
            return .evict(oldest.token)
        }
        guard unfinished.count >= total else { return .admit }
        var counts: [String: Int] = [:]
        for holding in unfinished { counts[holding.client, default: 0] += 1 }
        let candidate = unfinished.filter { !$0.inUse }.min { a, b in
            let ca = counts[a.client, default: 0]
            let cb = counts[b.client, default: 0]
            return ca != cb ? ca > cb : Self.lessActive(a, b)
        }
        guard let candidate else {
            return .refuse("the receiver holds \(unfinished.count) unfinished uploads, all in progress; try again later")
        }
        return .evict(candidate.token)
    }

    private static func lessActive(_ a: Holding, _ b: Holding) -> Bool {
        a.lastActive != b.lastActive ? a.lastActive < b.lastActive : a.token < b.token
    }

    /// The quota's name for a peer: its IPv4 address, its IPv6 /64 network (one host usually
    /// has a whole /64 to pick addresses from), or "local" for a Unix socket.
    static func client(of address: SocketAddress?) -> String {
        switch address {
        case .v4(let v4)?:
            return withUnsafeBytes(of: v4.address.sin_addr) { $0.map(String.init).joined(separator: ".") }
        case .v6(let v6)?:
            var addr = v6.address.sin6_addr
            let bytes = withUnsafeBytes(of: &addr) { Array($0) }
            // An IPv4-mapped address is its IPv4 client.
            if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
                return bytes[12..<16].map(String.init).joined(separator: ".")
            }
            return stride(from: 0, to: 8, by: 2).map { String(format: "%x", Int(bytes[$0]) << 8 | Int(bytes[$0 + 1])) }.joined(separator: ":") + "::/64"
        case .unixDomainSocket?:
            return "local"
        case nil:
            return unknownClient
        }
    }

    /// The name of a client whose address is not known (a request that came without a gate).
    static let unknownClient = "unknown"
}
