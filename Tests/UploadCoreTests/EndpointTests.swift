import Testing
import UploadCore

/// A URL parsed once: its parts, how a `Location` resolves against it, and where the user's
/// credentials may follow it.
@Suite struct EndpointTests {
    @Test(arguments: [
        ("http://127.0.0.1:3000/photo", "http", "127.0.0.1", 3000, "/photo", "127.0.0.1:3000", "http://127.0.0.1:3000"),
        (
            "https://Photos.Example.com/up?x=1&y=%20", "https", "photos.example.com", 443, "/up?x=1&y=%20", "photos.example.com",
            "https://photos.example.com:443"
        ),
        ("http://[::1]:8080", "http", "::1", 8080, "/", "[::1]:8080", "http://[::1]:8080"),
        ("HTTPS://h:443/a%2Fb", "https", "h", 443, "/a%2Fb", "h", "https://h:443"),
        ("http://h:443/", "http", "h", 443, "/", "h:443", "http://h:443"),
    ])
    func partsOfAnEndpoint(url: String, scheme: String, host: String, port: Int, target: String, hostField: String, origin: String) throws {
        let endpoint = try Endpoint(parsing: url)
        #expect(endpoint.url == url)
        #expect(endpoint.scheme == scheme)
        #expect(endpoint.host == host)
        #expect(endpoint.port == port)
        #expect(endpoint.target == target)
        #expect(endpoint.hostField == hostField)
        #expect(endpoint.origin == Origin(scheme: scheme, host: host, port: port))
        #expect(endpoint.origin.description == origin)
    }

    @Test func eachRefusalSaysWhy() {
        #expect(throws: UploadInputError.unsupportedScheme(url: "ftp://h/x")) { try Endpoint(parsing: "ftp://h/x") }
        #expect(throws: UploadInputError.badURL("http://")) { try Endpoint(parsing: "http://") }
        #expect(throws: UploadInputError.badURL("http://h:0/")) { try Endpoint(parsing: "http://h:0/") }
        #expect(throws: UploadInputError.badURL("photos.example.com/up")) { try Endpoint(parsing: "photos.example.com/up") }
    }

    @Test(arguments: [
        ("/files/7", "http://h:1/files/7"),
        ("7", "http://h:1/up/7"),
        ("../x?y=1", "http://h:1/x?y=1"),
        ("//other:2/r", "http://other:2/r"),
        ("https://elsewhere/r/9", "https://elsewhere/r/9"),
    ])
    func aLocationResolvesAsRFC3986Says(location: String, resolved: String) throws {
        let base = try Endpoint(parsing: "http://h:1/up/photo")
        #expect(base.resolve(location)?.url == resolved)
    }

    @Test func aLocationThatIsNoHTTPURLGoesNowhere() throws {
        let base = try Endpoint(parsing: "http://h/up")
        #expect(base.resolve("ftp://h/x") == nil)
        #expect(base.resolve("file:///etc/passwd") == nil)
        #expect(base.resolve("javascript:alert(1)") == nil)
    }

    @Test func credentialsStayWithTheOrigin() throws {
        let own = try Endpoint(parsing: "https://Photos.example.com/upload")
        let header = [RequestHeader(name: "Authorization", value: "Bearer t")]
        for same in ["https://photos.example.com:443/files/7", "https://PHOTOS.example.com/x?q=1"] {
            let other = try Endpoint(parsing: same)
            #expect(own.sharesCredentials(with: other), "\(same)")
            #expect(own.headers(header, to: other) == header)
        }
        for elsewhere in [
            "http://photos.example.com/upload", "https://photos.example.com:8443/upload",
            "https://evil.example.com/upload", "https://photos.example.com.evil.net/upload",
        ] {
            let other = try Endpoint(parsing: elsewhere)
            #expect(!own.sharesCredentials(with: other), "\(elsewhere)")
            #expect(own.headers(header, to: other).isEmpty)
        }
    }

    @Test func itIsShownWithoutItsSecrets() throws {
        let endpoint = try Endpoint(parsing: "https://user:pw@h/up?token=s3cret&x=1")
        #expect(endpoint.shown == "https://***@h/up?token=***&x=1")
        #expect("\(endpoint)" == endpoint.shown)
    }
}

/// curl `-T`'s rule for a URL that names a folder, and the folders on the way to a file.
@Suite struct EndpointPathTests {
    @Test(arguments: [
        ("http://h/dav/", "photo 1.jpg", "http://h/dav/photo%201.jpg"),
        ("http://h/dav/", "写真.jpg", "http://h/dav/%E5%86%99%E7%9C%9F.jpg"),
        ("http://h/dav/x.jpg", "other.jpg", "http://h/dav/x.jpg"),
        ("https://b.s3.test/up/?X-Amz-Signature=abc", "a&b.jpg", "https://b.s3.test/up/a%26b.jpg?X-Amz-Signature=abc"),
        ("http://h", "a.jpg", "http://h/a.jpg"),
        ("http://h:8080/", "../a.jpg", "http://h:8080/..%2Fa.jpg"),
    ])
    func aFolderURLGetsTheFilesName(url: String, name: String, expected: String) throws {
        #expect(try Endpoint(parsing: url).appendingName(name).url == expected)
    }

    @Test func theFoldersOnTheWayDeepestFirst() throws {
        let endpoint = try Endpoint(parsing: "http://u:p@h:81/dav/a/b/x.jpg?q=1")
        #expect(endpoint.collections.map(\.url) == ["http://u:p@h:81/dav/a/b/", "http://u:p@h:81/dav/a/", "http://u:p@h:81/dav/"])
        #expect(try Endpoint(parsing: "http://h/x.jpg").collections.isEmpty)
        #expect(try Endpoint(parsing: "http://h/a/").collections.map(\.url) == ["http://h/a/"])
    }
}
