import Foundation
import Testing
import UploadCore

/// Which proxy an upload goes through, by curl's rules.
@Suite struct ProxyRulesTests {
    @Test func theEnvironmentIsReadAsCurlReadsIt() {
        func proxy(_ env: [String: String], _ url: String, flag: String? = nil, noproxy: String? = nil) -> String? {
            ProxyRules(proxy: flag, noProxy: noproxy, environment: env).proxy(for: url)
        }
        #expect(proxy(["http_proxy": "http://p:1"], "http://h/photo") == "http://p:1")
        #expect(proxy(["HTTP_PROXY": "http://p:1"], "http://h/photo") == nil, "curl ignores upper-case HTTP_PROXY")
        #expect(proxy(["HTTPS_PROXY": "http://p:2"], "https://h/photo") == "http://p:2")
        #expect(proxy(["https_proxy": "http://lower:2", "HTTPS_PROXY": "http://upper:2"], "https://h/photo") == "http://lower:2", "lower case first")
        #expect(proxy(["ALL_PROXY": "socks5h://s:1080"], "http://h/photo") == "socks5h://s:1080")
        #expect(proxy(["http_proxy": "http://p:1", "ALL_PROXY": "socks5h://s"], "http://h/photo") == "http://p:1", "the protocol's own first")
        #expect(proxy(["http_proxy": "http://p:1"], "http://h/photo", flag: "") == nil, "an empty --proxy goes direct")
        #expect(proxy([:], "http://h/photo", flag: "http://f:3") == "http://f:3")
        let env = ["https_proxy": "http://p:2", "no_proxy": "example.com, .internal,10.0.0.0/8,192.0.2.7,[::1]"]
        #expect(proxy(env, "https://example.com/x") == nil)
        #expect(proxy(env, "https://upload.example.com/x") == nil, "subdomains too")
        #expect(proxy(env, "https://notexample.com/x") == "http://p:2", "a suffix that is not a domain boundary")
        #expect(proxy(env, "https://svc.internal/x") == nil)
        #expect(proxy(env, "https://10.2.3.4/x") == nil && proxy(env, "https://11.2.3.4/x") == "http://p:2", "CIDR")
        #expect(proxy(env, "https://192.0.2.7:8443/x") == nil)
        #expect(proxy(env, "https://[::1]/x") == nil)
        #expect(proxy(env, "https://example.com/x", noproxy: "") == "http://p:2", "--noproxy replaces NO_PROXY")
        #expect(proxy(["https_proxy": "http://p", "NO_PROXY": "*"], "https://h/") == nil)
    }

    @Test func proxyURLsAreReadAndTheirLoginsNeverShown() throws {
        let plain = try ProxyTarget(parsing: "proxy.example:3128")
        #expect(plain.kind == .http && plain.host == "proxy.example" && plain.port == 3128)
        let login = try ProxyTarget(parsing: "http://ann:s%40cret@proxy.example")
        #expect(login.login == "ann" && login.password == "s@cret" && login.port == 1080)
        #expect(login.display == "http://proxy.example:1080")
        #expect(try ProxyTarget(parsing: "socks5h://s:9050").kind == .socks5)
        #expect { try ProxyTarget(parsing: "https://ann:pw@p:443") } throws: { "\($0)".contains("over TLS") && !"\($0)".contains("pw") }
        #expect(throws: UploadInputError.self) { try ProxyTarget(parsing: "socks4://p") }
        // SOCKS5: a login (RFC 1929's 1..255-byte user, password up to 255), and who resolves.
        let socks = try ProxyTarget(parsing: "socks5://u:p%3Ass@s:9050")
        #expect(socks.kind == .socks5 && socks.login == "u" && socks.password == "p:ss" && !socks.resolvesAtProxy)
        #expect(socks.display == "socks5://s:9050")
        let remote = try ProxyTarget(parsing: "socks5h://s")
        #expect(remote.resolvesAtProxy && remote.display == "socks5h://s:1080")
        #expect { try ProxyTarget(parsing: "socks5h://\(String(repeating: "u", count: 256)):pw@s") } throws: {
            "\($0)".contains("1 to 255 bytes") && !"\($0)".contains("pw")
        }
    }
}

/// A proxy chosen per request: the upload's proxy, unless the request's own host is listed.
@Suite struct ProxyRouteTests {
    @Test func eachHostIsRoutedByTheList() throws {
        let proxy = try ProxyTarget(parsing: "http://p:3128")
        let route = ProxyRoute(proxy: proxy, bypass: "localhost, .internal,10.0.0.0/8")
        #expect(route.proxy(forHost: "example.com") == proxy)
        #expect(route.proxy(forHost: "localhost") == nil)
        #expect(route.proxy(forHost: "svc.internal") == nil)
        #expect(route.proxy(forHost: "10.9.9.9") == nil)
        #expect(route.bypassesSome)
        #expect(ProxyRoute(proxy: proxy).proxy(forHost: "localhost") == proxy)
        #expect(!ProxyRoute(proxy: proxy, bypass: " ").bypassesSome)
        #expect(ProxyRoute(bypass: "x").proxy(forHost: "y") == nil && !ProxyRoute(bypass: "x").bypassesSome)
    }

    @Test func theSettingsKeepTheProxyAndTheListForEveryHostOfTheUpload() throws {
        let rules = ProxyRules(proxy: nil, noProxy: nil, environment: ["http_proxy": "http://p:1", "no_proxy": "127.0.0.1"])
        // The destination is listed, but a redirect elsewhere still needs the proxy.
        #expect(rules.proxy(for: "http://127.0.0.1:9/photo") == nil)
        #expect(rules.proxyForScheme(of: "http://127.0.0.1:9/photo") == "http://p:1")
        #expect(rules.bypassList == "127.0.0.1")
        #expect(ProxyRules.bypassesEveryHost(" * ") && ProxyRules.bypassesEveryHost("a,*") && !ProxyRules.bypassesEveryHost("a.b"))
        let settings = TransportSettings(proxy: "http://p:1", noProxy: "127.0.0.1")
        let decoded = try JSONDecoder().decode(TransportSettings.self, from: JSONEncoder().encode(settings))
        #expect(decoded == settings)
        #expect(try decoded.proxyRoute().proxy(forHost: "127.0.0.1") == nil)
        #expect(try decoded.proxyRoute().proxy(forHost: "localhost")?.port == 1)
    }
}
