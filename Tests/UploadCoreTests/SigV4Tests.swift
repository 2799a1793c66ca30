import Foundation
import Testing
import UploadCore
import UploadProtocols

/// Signature Version 4 against AWS's published test suite (aws4_testsuite: the example key,
/// `us-east-1`, service `service`, 2015-08-30 12:36:00 UTC): the canonical request and the
/// `Authorization` field of each case, character for character.
@Suite struct SigV4Tests {
    static let credentials = AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    static let stamp = "20150830T123600Z"
    static let host = ("Host", "example.amazonaws.com")
    static let date = ("X-Amz-Date", stamp)

    static func authorization(_ request: SigV4.Request, credentials: AWSCredentials = credentials) -> String {
        SigV4.authorization(request, credentials: credentials, region: "us-east-1", service: "service", timestamp: stamp)
    }

    static func signature(_ authorization: String) -> String { String(authorization.split(separator: "=").last ?? "") }

    @Test func getVanilla() {
        let request = SigV4.Request(method: "GET", path: "/", headers: [Self.host, Self.date], payloadHash: SigV4.emptyPayload)
        #expect(
            SigV4.canonicalRequest(request).text
                == "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" + SigV4.emptyPayload)
        #expect(
            Self.authorization(request) == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
                + "SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
    }

    @Test(arguments: [
        ("Param2=value2&Param1=value1", "Param1=value1&Param2=value2", "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"),
        ("Param1=value2&Param1=value1", "Param1=value1&Param1=value2", "5772eed61e12b33fae39ee5e7012498b51d56abc0abb7c60486157bd471c4694"),
        ("Param1=value1", "Param1=value1", "a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb"),
        (
            "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz=-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
            "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz=-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
            "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197"
        ),
    ])
    func queriesAreSortedAndEncoded(query: String, canonical: String, signature: String) {
        let request = SigV4.Request(method: "GET", path: "/", query: query, headers: [Self.host, Self.date], payloadHash: SigV4.emptyPayload)
        #expect(SigV4.canonicalRequest(request).text.split(separator: "\n", omittingEmptySubsequences: false)[2] == Substring(canonical))
        #expect(Self.signature(Self.authorization(request)) == signature)
    }

    @Test func aPostWithABodyAndItsType() {
        let body = Array("Param1=value1".utf8)
        let hash = "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e"
        #expect(SigV4Tests.sha256Hex(body) == hash)
        let request = SigV4.Request(
            method: "POST", path: "/", headers: [("Content-Type", "application/x-www-form-urlencoded"), Self.host, Self.date],
            payloadHash: hash)
        #expect(
            Self.authorization(request).hasSuffix(
                "SignedHeaders=content-type;host;x-amz-date, Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"))
    }

    @Test func fieldValuesAreTrimmedAndTheirSpacesCollapsed() {
        let request = SigV4.Request(
            method: "GET", path: "/", headers: [Self.host, ("My-Header1", " value1"), ("My-Header2", " \"a   b   c\""), Self.date],
            payloadHash: SigV4.emptyPayload)
        #expect(SigV4.canonicalRequest(request).text.contains("my-header1:value1\nmy-header2:\"a b c\"\n"))
        #expect(Self.signature(Self.authorization(request)) == "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736")
    }

    @Test func aUTF8PathIsSignedAsSentEncoded() {
        let request = SigV4.Request(method: "GET", path: "/%E1%88%B4", headers: [Self.host, Self.date], payloadHash: SigV4.emptyPayload)
        #expect(Self.signature(Self.authorization(request)) == "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85")
    }

    @Test func aSessionTokenIsSignedToo() {
        let temporary = AWSCredentials(
            accessKeyID: "AKIDEXAMPLE", secretAccessKey: Self.credentials.secretAccessKey,
            sessionToken: "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267")
        let date = try! #require(ISO8601DateFormatter().date(from: "2015-08-30T12:36:00Z"))
        let request = SigV4.Request(method: "GET", path: "/", headers: [Self.host], payloadHash: SigV4.emptyPayload)
        let added = SigV4.sign(request, credentials: temporary, region: "us-east-1", service: "service", date: date, contentHashField: false)
        #expect(added.map(\.name) == ["X-Amz-Date", "X-Amz-Security-Token", "Authorization"])
        #expect(added.first?.value == Self.stamp)
        #expect(Self.signature(added.last!.value) == "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8")
        #expect(!"\(temporary)".contains(temporary.secretAccessKey))
    }

    static func sha256Hex(_ bytes: [UInt8]) -> String {
        var digester = Digester([.sha256])
        digester.update(bytes)
        return digester.finalize()[.sha256].map(Digester.hex) ?? ""
    }
}
