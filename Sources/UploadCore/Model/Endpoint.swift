import Foundation

/// An `http` or `https` URL, parsed once where it enters (the command line, the agent's
/// socket, the journal, a server's `Location`): what a request to it needs (the origin, the
/// request target, the `Host` field) and the rules that belong to URLs — how a `Location` is
/// resolved against it, and which other URLs the user's credentials may go to — each in one
/// place rather than re-derived from the text wherever they are needed.
public struct Endpoint: Hashable, Sendable, CustomStringConvertible {
    /// The absolute URL as requests are made to it.
    public let url: String
    /// `http` or `https`.
    public let scheme: String
    /// The host without IPv6 brackets, in lower case.
    public let host: String
    /// The port, the scheme's default when the URL names none.
    public let port: Int
    /// The request target in origin form: the percent-encoded path (`/` when empty) and query.
    public let target: String

    /// Parses `text`, refusing anything but an `http`/`https` URL with a host and a valid port.
    public init(parsing text: String) throws(UploadInputError) {
        guard let parsed = URL(string: text), let scheme = parsed.scheme?.lowercased() else { throw .badURL(text) }
        guard scheme == "http" || scheme == "https" else { throw .unsupportedScheme(url: text) }
        guard let rawHost = parsed.host, !rawHost.isEmpty else { throw .badURL(text) }
        let port = parsed.port ?? (scheme == "https" ? 443 : 80)
        guard (1...65535).contains(port) else { throw .badURL(text) }
        let components = URLComponents(url: parsed, resolvingAgainstBaseURL: false)
        let path = components?.percentEncodedPath ?? ""
        let query = components?.percentEncodedQuery
        self.url = text
        self.scheme = scheme
        // Foundation keeps IPv6 brackets on some paths and not others; and names ignore case.
        self.host = HostName.bare(rawHost).lowercased()
        self.port = port
        let origin = path.isEmpty ? "/" : path
        self.target = query.map { "\(origin)?\($0)" } ?? origin
    }

    /// nil where `init(parsing:)` refuses `text`.
    public init?(_ text: String) {
        guard let parsed = try? Endpoint(parsing: text) else { return nil }
        self = parsed
    }

    /// Scheme, host and port: what credentials belong to.
    public var origin: Origin { Origin(scheme: scheme, host: host, port: port) }

    /// Whether requests to it go over TLS.
    public var isSecure: Bool { scheme == "https" }

    /// The host as a `Host` field names it: IPv6 in brackets, the port only when not the default.
    public var hostField: String {
        let bracketed = HostName.isIPv6(host) ? "[" + host + "]" : host
        return port == (isSecure ? 443 : 80) ? bracketed : "\(bracketed):\(port)"
    }

    /// The URL as it may be shown: credentials in it and secret query parameters masked.
    public var shown: String { RedactedURL.display(url) }

    public var description: String { shown }

    /// Where `reference` (a `Location`, absolute or relative) points from here (RFC 3986 §5),
    /// or nil when that is not an `http`/`https` URL with a host.
    public func resolve(_ reference: String) -> Endpoint? {
        guard let base = URL(string: url), let resolved = URL(string: reference, relativeTo: base)?.absoluteURL else { return nil }
        return Endpoint(resolved.absoluteString)
    }

    /// The one rule for where the user's headers (`-H`, `--netrc`'s `Authorization`) may go: to
    /// this endpoint's origin, and nowhere else — not a redirect's target, not an upload resource
    /// the server names (a tus `Location`, the draft's `104`) on another port or scheme. As curl
    /// does without `--location-trusted`, but by origin rather than host name.
    public func sharesCredentials(with other: Endpoint) -> Bool {
        origin == other.origin
    }

    /// The user's `headers`, given for this endpoint, for a request to `other`: all of them on
    /// this endpoint's origin, none elsewhere.
    public func headers(_ headers: [RequestHeader], to other: Endpoint) -> [RequestHeader] {
        sharesCredentials(with: other) ? headers : []
    }

    /// This endpoint with `name` appended, percent-encoded, when its path ends in `/` (curl's
    /// `-T` rule: the URL names a folder); itself otherwise.
    public func appendingName(_ name: String) -> Endpoint {
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? target
        guard path.hasSuffix("/"), !name.isEmpty, let start = pathStart, let end = pathEnd else { return self }
        var text = url
        // `http://host` and `http://host?q` name the root without writing its `/`.
        text.insert(contentsOf: (start == end ? "/" : "") + Self.percentEncoded(name), at: end)
        return Endpoint(text) ?? self
    }

    /// The folders (WebDAV collections) the target's path goes through, deepest first, without
    /// the root: `/a/b/c.jpg` → `/a/b/`, `/a/`. Without the query.
    public var collections: [Endpoint] {
        guard let start = pathStart else { return [] }
        let prefix = String(url[..<start])
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? target
        var segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        guard !segments.isEmpty else { return [] }
        segments.removeLast()  // the file's own name (or the empty one after a last `/`)
        var folders: [Endpoint] = []
        while !segments.isEmpty {
            if let folder = Endpoint(prefix + "/" + segments.joined(separator: "/") + "/") { folders.append(folder) }
            segments.removeLast()
        }
        return folders
    }

    /// Where the path begins in `url`: the first `/` after the authority (or where it would).
    private var pathStart: String.Index? {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        return url[schemeEnd.upperBound...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? url.endIndex
    }

    /// Where the path ends in `url`: at the query, the fragment or the end.
    private var pathEnd: String.Index? {
        guard let start = pathStart else { return nil }
        return url[start...].firstIndex { $0 == "?" || $0 == "#" } ?? url.endIndex
    }

    /// `text` with every byte but RFC 3986's unreserved characters percent-encoded.
    public static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
