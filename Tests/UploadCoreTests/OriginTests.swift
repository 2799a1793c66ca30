import Testing
import UploadCore

/// Credentials belong to an origin: scheme, host and port, never a host name alone.
@Suite struct OriginTests {
    @Test func theSameOriginCarriesTheHeaders() {
        for (endpoint, target) in [
            ("https://Photos.example.com/upload", "https://photos.example.com:443/files/7"),
            ("http://127.0.0.1:3000/photo", "http://127.0.0.1:3000/resumable/abc"),
            ("http://[::1]:8080/photo", "http://[::1]:8080/x"),
            ("http://host/photo", "http://host:80/elsewhere?q=1"),
        ] {
            #expect(CredentialScope.carries(to: target, givenFor: endpoint), "\(endpoint) → \(target)")
        }
    }

    @Test func anotherPortSchemeOrHostDoesNot() {
        for (endpoint, target) in [
            ("http://127.0.0.1:3000/photo", "http://127.0.0.1:3001/photo"),
            ("https://photos.example.com/upload", "http://photos.example.com/upload"),
            ("https://photos.example.com/upload", "https://photos.example.com:8443/upload"),
            ("http://photos.example.com/upload", "http://evil.example.com/upload"),
            ("http://photos.example.com/upload", "http://photos.example.com.evil.net/upload"),
            ("http://photos.example.com/upload", "ftp://photos.example.com/upload"),
            ("http://photos.example.com/upload", "not a url"),
        ] {
            #expect(!CredentialScope.carries(to: target, givenFor: endpoint), "\(endpoint) → \(target)")
            #expect(
                Endpoint(endpoint).map { own in Endpoint(target).map { own.headers([RequestHeader(name: "Authorization", value: "Bearer t")], to: $0) } ?? [] }?
                    .isEmpty ?? true)
        }
    }

    @Test func anOriginIsShownWithItsPort() {
        #expect(Origin("https://Example.com/x")?.description == "https://example.com:443")
        #expect(Origin("http://[::1]:81/")?.description == "http://[::1]:81")
        #expect(CredentialScope.redirectNote(to: "http://h:2/", givenFor: "http://h:1/").contains("http://h:2 is not the endpoint's origin"))
        #expect(CredentialScope.redirectNote(to: "http://h:1/other", givenFor: "http://h:1/") == "")
    }
}
