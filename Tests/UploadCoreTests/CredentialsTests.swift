import Foundation
import Testing
import UploadCore

/// Secrets off the command line: headers from a file (`-H @FILE`) and logins from a netrc file,
/// read by curl's rules.
@Suite struct CredentialsTests {
    @Test func aNetrcFileIsReadAsCurlReadsIt() throws {
        let netrc = try Netrc(
            parsing: """
                # curl ignores what it does not know, comments included
                machine upload.example.com login ann password "p a\\"ss"
                machine Other.Example login bob
                  password b0b
                macdef init
                cd /pub
                login mallory password evil

                default login anon password guest
                """)
        #expect(netrc.credentials(for: "upload.example.com")! == ("ann", "p a\"ss"))
        #expect(netrc.credentials(for: "other.example")! == ("bob", "b0b"), "host names match without case")
        #expect(netrc.credentials(for: "elsewhere.example")! == ("anon", "guest"), "default for any other host")
        #expect(netrc.credentials(for: "upload.example.com", user: "ann")! == ("ann", "p a\"ss"))
        #expect(netrc.credentials(for: "upload.example.com", user: "zoe") == nil, "a user in the URL narrows the search")
        #expect(!netrc.entries.contains { $0.login == "mallory" }, "a macro's lines are not entries")
        #expect(throws: NetrcError.self) { try Netrc(parsing: "machine h login \"open") }
        #expect(throws: NetrcError.self) { try Netrc(parsing: "login x") }
    }

    @Test func aHeaderFileHoldsOneHeaderALineAndErrorsNeverQuoteAValue() throws {
        let headers = try HeaderFile.parse("Authorization: Bearer s3cret\r\n\nX-Trace: 1\n", path: "h.txt")
        #expect(headers == [RequestHeader(name: "Authorization", value: "Bearer s3cret"), RequestHeader(name: "X-Trace", value: "1")])
        #expect { try HeaderFile.parse("X-Ok: 1\nnot a header s3cret\n", path: "h.txt") } throws: { error in
            "\(error)" == "line 2 of the header file h.txt is not of the form 'Name: value'"
        }
        #expect(BasicCredentials.header(login: "Aladdin", password: "open sesame").value == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==", "RFC 7617's example")
    }

    @Test func aChosenNetrcFileGivesTheEndpointItsLoginByCurlsRules() throws {
        let path = NSTemporaryDirectory() + "uploadmon-netrc-\(UUID().uuidString)"
        defer { unlink(path) }
        try Data("machine up.example login ann password pw\n".utf8).write(to: URL(fileURLWithPath: path))
        let required = NetrcChoice(path: path, optional: false)
        #expect(try required.credentials(for: "https://bob:urlpw@up.example/photo") == nil, "a URL user narrows the search")
        #expect(try required.credentials(for: "https://up.example/photo")! == ("ann", "pw"))
        #expect(required.endpoint("https://ann:urlpw@up.example/photo") == "https://up.example/photo", "the file's entry replaces the URL's password")
        let optional = NetrcChoice(path: path, optional: true)
        #expect(try optional.credentials(for: "https://ann:urlpw@up.example/photo") == nil, "optional: the URL's password wins")
        #expect(optional.endpoint("https://ann:urlpw@up.example/photo") == "https://ann:urlpw@up.example/photo")
        #expect(try NetrcChoice(path: path + "-missing", optional: true).credentials(for: "https://up.example/") == nil)
        #expect(throws: UploadInputError.self) { try NetrcChoice(path: path + "-missing", optional: false).credentials(for: "https://up.example/") }
    }
}
