import Foundation
import Testing
import UploadCore

/// Secrets off the command line: headers from a file (`-H @FILE`) and logins from a netrc file,
/// read by curl's rules.
@Suite struct CredentialsTests {
    @Test func aNetrcFileIsReadAsCurlReadsIt() throws {
        let netrc = try Netrc(parsing: """
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
}
