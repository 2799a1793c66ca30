/// Host names as URLs write them.
public enum HostName {
    /// An IPv6 address without the brackets a URL puts around it (`[::1]` → `::1`); any other
    /// host as it is.
    public static func bare<S: StringProtocol>(_ host: S) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : String(host)
    }

    /// Whether a bare host is an IPv6 address (the only hosts with a colon), which a URL and a
    /// `Host` field put in brackets.
    public static func isIPv6(_ host: String) -> Bool {
        host.utf8.contains(UInt8(ascii: ":"))
    }
}
