import Foundation

/// The proxy an upload goes through, chosen as curl chooses it: `--proxy` (an empty one: none),
/// else `http_proxy` for http:// (lower case only, as curl reads it), `https_proxy` or
/// `HTTPS_PROXY` for https:// (lower case first), then `all_proxy`/`ALL_PROXY`; and not for a
/// host that `--noproxy` or else `no_proxy`/`NO_PROXY` names (comma-separated: `*` for all, a
/// name that matches itself and its subdomains, with or without a leading dot, an IP address,
/// an IPv4 CIDR block).
public struct ProxyRules: Sendable, Equatable {
    public var explicitProxy: String?
    public var explicitNoProxy: String?
    public var environment: [String: String]

    public init(proxy: String? = nil, noProxy: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.explicitProxy = proxy
        self.explicitNoProxy = noProxy
        self.environment = environment
    }

    /// The proxy URL for `url`, or nil to go direct.
    public func proxy(for url: String) -> String? {
        guard let chosen = proxyForScheme(of: url), let host = URLComponents(string: url)?.host?.lowercased() else { return nil }
        if let list = bypassList, Self.bypasses(host: host, list: list) { return nil }
        return chosen
    }

    /// The proxy for `url`'s scheme before the no-proxy list is read: what a request to any
    /// host of an upload to `url` goes through unless `bypassList` names that host
    /// (`ProxyRoute`), so a redirect is routed by where it goes, as curl routes it.
    public func proxyForScheme(of url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            components.host != nil
        else { return nil }
        let chosen: String?
        if let explicitProxy {
            chosen = explicitProxy
        } else if scheme == "http" {
            chosen = env("http_proxy", upperToo: false) ?? env("all_proxy")
        } else {
            chosen = env("https_proxy") ?? env("all_proxy")
        }
        guard let chosen, !chosen.isEmpty else { return nil }
        return chosen
    }

    /// The hosts to reach directly: `--noproxy`, else `no_proxy`/`NO_PROXY`.
    public var bypassList: String? { explicitNoProxy ?? env("no_proxy") }

    private func env(_ name: String, upperToo: Bool = true) -> String? {
        if let value = environment[name], !value.isEmpty { return value }
        if upperToo, let value = environment[name.uppercased()], !value.isEmpty { return value }
        return nil
    }

    /// Whether a no-proxy list names every host (`*`).
    public static func bypassesEveryHost(_ list: String) -> Bool {
        list.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == "*" }
    }

    /// Whether `host` is on a no-proxy list.
    public static func bypasses(host: String, list: String) -> Bool {
        let host = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        for raw in list.split(separator: ",") {
            var entry = raw.trimmingCharacters(in: .whitespaces).lowercased()
            if entry == "*" { return true }  // (`bypassesEveryHost`)
            if entry.isEmpty { continue }
            entry = HostName.bare(entry)
            if let slash = entry.firstIndex(of: "/"), let bits = Int(entry[entry.index(after: slash)...]),
                let network = ipv4(String(entry[..<slash])), let address = ipv4(host), (0...32).contains(bits)
            {
                let mask: UInt32 = bits == 0 ? 0 : ~UInt32(0) << (32 - UInt32(bits))
                if network & mask == address & mask { return true }
                continue
            }
            if entry.hasPrefix(".") { entry.removeFirst() }
            if host == entry || host.hasSuffix("." + entry) { return true }
        }
        return false
    }

    static func ipv4(_ text: String) -> UInt32? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard let byte = UInt8(part) else { return nil }
            value = value << 8 | UInt32(byte)
        }
        return value
    }
}

/// Which proxy each request of an upload goes through, chosen from the request's own host:
/// the proxy, unless the no-proxy list names the host. A redirect to a listed host goes
/// direct, a redirect from one to an unlisted host goes through the proxy (curl's way).
public struct ProxyRoute: Sendable, Hashable {
    public var proxy: ProxyTarget?
    /// `ProxyRules.bypasses`' list, or nil.
    public var bypass: String?

    public init(proxy: ProxyTarget? = nil, bypass: String? = nil) {
        self.proxy = proxy
        self.bypass = bypass
    }

    /// The proxy a request to `host` goes through, or nil to go direct.
    public func proxy(forHost host: String) -> ProxyTarget? {
        guard let proxy else { return nil }
        if let bypass, ProxyRules.bypasses(host: host, list: bypass) { return nil }
        return proxy
    }

    /// Whether some host goes direct while others go through the proxy.
    public var bypassesSome: Bool { proxy != nil && !(bypass ?? "").trimmingCharacters(in: .whitespaces).isEmpty }
}

/// A proxy URL read: its kind, where it is, and its login (never shown).
public struct ProxyTarget: Sendable, Hashable {
    /// An HTTP proxy (CONNECT, or absolute-form for plain http) or a SOCKS5 one.
    public enum Kind: Sendable, Equatable { case http, socks5 }

    public var kind: Kind
    public var host: String
    public var port: Int
    public var login: String?
    public var password: String?
    /// For SOCKS5: whether the proxy resolves the server's name (`socks5h://`) or it is resolved
    /// here and the proxy is given the address (`socks5://`, as curl does).
    public var resolvesAtProxy = true

    /// curl's reading: no scheme means http://; the port defaults to 1080.
    public init(parsing text: String) throws(UploadInputError) {
        let withScheme = text.contains("://") ? text : "http://" + text
        guard let components = URLComponents(string: withScheme), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else {
            throw .badProxy(RedactedURL.display(text), "it is not a proxy URL like http://proxy:3128 or socks5h://proxy:1080")
        }
        switch scheme {
        case "http": kind = .http
        case "socks5", "socks5h":
            kind = .socks5
            resolvesAtProxy = scheme == "socks5h"
        case "https":
            throw .badProxy(
                RedactedURL.display(text),
                "a proxy reached over TLS (https://) is not supported; use http:// (uploads to https:// still go through it encrypted, with CONNECT)")
        default:
            throw .badProxy(RedactedURL.display(text), "\(scheme):// proxies are not supported; use http://, socks5:// or socks5h://")
        }
        self.host = host
        port = components.port ?? 1080
        login = components.user?.removingPercentEncoding
        password = components.password?.removingPercentEncoding
        if kind == .socks5, let login {
            // RFC 1929: each part is 1 to 255 bytes.
            guard (1...255).contains(login.utf8.count), (password ?? "").utf8.count <= 255 else {
                throw .badProxy(RedactedURL.display(text), "a SOCKS5 login's user name must be 1 to 255 bytes and its password at most 255")
            }
        }
    }

    /// How it is named in messages: no login.
    public var display: String { "\(scheme)://\(host):\(port)" }

    /// The scheme as written: `http`, `socks5` or `socks5h`.
    public var scheme: String {
        switch kind {
        case .http: "http"
        case .socks5: resolvesAtProxy ? "socks5h" : "socks5"
        }
    }
}
