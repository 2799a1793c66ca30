import AsyncHTTPClient
import UploadCore

extension HTTPClient.Configuration.Proxy {
    /// AsyncHTTPClient's proxy for a proxy URL read: HTTP with its Basic login (CONNECT for every
    /// request), or SOCKS5 (the name resolved at the proxy).
    init(_ proxy: ProxyTarget) {
        switch proxy.kind {
        case .http:
            self = .server(host: proxy.host, port: proxy.port, authorization: proxy.login.map { .basic(username: $0, password: proxy.password ?? "") })
        case .socks5:
            self = .socksServer(host: proxy.host, port: proxy.port)
        }
    }
}
