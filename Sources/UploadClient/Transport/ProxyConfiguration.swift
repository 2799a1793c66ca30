import AsyncHTTPClient
import UploadCore

extension HTTPClient.Configuration.Proxy {
    /// AsyncHTTPClient's proxy for an HTTP proxy URL read: its Basic login, CONNECT for every
    /// request. (A SOCKS5 proxy is reached through the transport's `SOCKSBridge`: AsyncHTTPClient's
    /// own SOCKS client has no login and always lets the proxy resolve.)
    init(httpProxy proxy: ProxyTarget) {
        self = .server(host: proxy.host, port: proxy.port, authorization: proxy.login.map { .basic(username: $0, password: proxy.password ?? "") })
    }
}
