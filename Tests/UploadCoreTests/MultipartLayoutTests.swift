import Testing
@testable import UploadCore

@Suite struct MultipartLayoutTests {
    let boundary = Boundary("XyZ123")

    func body(_ layout: MultipartLayout, _ file: [UInt8]) -> [UInt8] { layout.head + file + layout.tail }

    @Test func goldenBodyWithFieldsAndFile() {
        let layout = MultipartLayout(
            boundary: boundary,
            fields: [FormField(name: "key", value: "uploads/a.jpg"), FormField(name: "acl", value: "private")],
            fileField: "photo", fileName: "a.jpg", contentType: .jpeg, fileSize: 3
        )
        let expected =
            "--XyZ123\r\n"
            + "Content-Disposition: form-data; name=\"key\"\r\n\r\n"
            + "uploads/a.jpg\r\n"
            + "--XyZ123\r\n"
            + "Content-Disposition: form-data; name=\"acl\"\r\n\r\n"
            + "private\r\n"
            + "--XyZ123\r\n"
            + "Content-Disposition: form-data; name=\"photo\"; filename=\"a.jpg\"\r\n"
            + "Content-Type: image/jpeg\r\n\r\n"
            + "abc\r\n"
            + "--XyZ123--\r\n"
        #expect(body(layout, Array("abc".utf8)) == Array(expected.utf8))
        #expect(layout.contentLength == Int64(expected.utf8.count))
        #expect(layout.contentTypeHeader == "multipart/form-data; boundary=XyZ123")
    }

    @Test(arguments: [0, 1, 262_143, 262_144, 262_145, 5_000_000_000])
    func contentLengthIsHeadPlusFilePlusTail(size: Int64) {
        let layout = MultipartLayout(boundary: boundary, fileField: "photo", fileName: "x.png", contentType: .png, fileSize: size)
        #expect(layout.contentLength == Int64(layout.head.count + layout.tail.count) + size)
    }

    @Test func segmentsCoverEveryOffset() {
        let layout = MultipartLayout(boundary: boundary, fileField: "f", fileName: "n", contentType: .png, fileSize: 10)
        let h = Int64(layout.head.count)
        #expect(layout.segment(at: 0) == .head(0))
        #expect(layout.segment(at: h - 1) == .head(Int(h - 1)))
        #expect(layout.segment(at: h) == .file(0))
        #expect(layout.segment(at: h + 9) == .file(9))
        #expect(layout.segment(at: h + 10) == .tail(0))
        #expect(layout.segment(at: layout.contentLength! - 1) == .tail(layout.tail.count - 1))
        #expect(layout.segment(at: layout.contentLength!) == .end)
    }

    @Test func unknownLengthHasNoContentLength() {
        let layout = MultipartLayout(boundary: boundary, fileField: "f", fileName: "n", contentType: .png, fileSize: nil)
        #expect(layout.contentLength == nil)
    }

    @Test func escapedNamesInPartHeaders() {
        let layout = MultipartLayout(
            boundary: boundary, fields: [FormField(name: "a\"b", value: "v")],
            fileField: "ph\"oto", fileName: "we\"ird\r\nname.jpg", contentType: .jpeg, fileSize: 0)
        let head = String(decoding: layout.head, as: UTF8.self)
        #expect(head.contains("name=\"a%22b\""))
        #expect(head.contains("name=\"ph%22oto\"; filename=\"we%22ird%0D%0Aname.jpg\""))
        #expect(!head.contains("ird\r\n"))
    }

    @Test func randomBoundariesAreLongAlphanumericAndFresh() {
        var seen = Set<String>()
        for _ in 0..<200 {
            let b = Boundary.random().value
            #expect(b.count >= 24 && b.count <= 70)
            #expect(b.allSatisfy { Boundary.alphabet.contains($0) })
            seen.insert(b)
        }
        #expect(seen.count == 200)
    }
}

@Suite struct EscapingTests {
    @Test(arguments: [
        ("plain.jpg", "plain.jpg"),
        ("a\"b", "a%22b"),
        ("cr\rlf\n", "cr%0Dlf%0A"),
        ("日本語 ファイル.png", "日本語 ファイル.png"),
        ("back\\slash;semi", "back\\slash;semi"),
    ])
    func escapesLikeBrowsersAndCurl(input: String, expected: String) {
        #expect(HeaderEscaping.escapeQuoted(input) == expected)
        #expect(HeaderEscaping.unescapeQuoted(expected) == input)
    }
}

@Suite struct UploadNameTests {
    @Test func defaultsToOwnName() throws {
        #expect(try UploadName.resolve(originalFileName: "IMG_1.jpg", requested: nil) == "IMG_1.jpg")
    }

    @Test func keepsExtensionWhenRenameHasNone() throws {
        #expect(try UploadName.resolve(originalFileName: "IMG_1.jpg", requested: "holiday") == "holiday.jpg")
        #expect(try UploadName.resolve(originalFileName: "IMG_1.jpg", requested: "holiday.png") == "holiday.png")
        #expect(try UploadName.resolve(originalFileName: "README", requested: "notes") == "notes")
    }

    @Test func refusesEmptyName() {
        #expect(throws: UploadInputError.emptyUploadName) { try UploadName.resolve(originalFileName: "a.jpg", requested: "  ") }
    }

    @Test func requestForStandardInput() throws {
        let request = try UploadRequest.forPath("-", url: "http://h/p", requestedName: "shot.png")
        #expect(request.source == .standardInput)
        #expect(request.uploadName == "shot.png")
        let file = try UploadRequest.forPath("/tmp/dir/cat.jpg", url: "http://h/p")
        #expect(file.uploadName == "cat.jpg")
    }
}

@Suite struct ArgumentParsingTests {
    @Test func formFieldsKeepEqualsInValues() throws {
        #expect(try FormField(parsing: "policy=a=b") == FormField(name: "policy", value: "a=b"))
        #expect(throws: UploadInputError.self) { try FormField(parsing: "novalue") }
        #expect(throws: UploadInputError.self) { try FormField(parsing: "=x") }
    }

    @Test func headersParseAndHideTheirValues() throws {
        let header = try RequestHeader(parsing: "Authorization:  Bearer s3cret ")
        #expect(header.name == "Authorization")
        #expect(header.value == "Bearer s3cret")
        #expect(!header.description.contains("s3cret"))
        #expect(throws: UploadInputError.self) { try RequestHeader(parsing: "No colon") }
        #expect(throws: UploadInputError.self) { try RequestHeader(parsing: "Bad Name: x") }
    }

    @Test func badHeaderErrorDoesNotEchoTheValue() {
        let error = UploadInputError.badHeader("Bad Name: s3cret")
        #expect(error.description.contains("Bad Name"))
        #expect(!error.description.contains("s3cret"))
    }

    @Test(arguments: ["http://127.0.0.1:3000/photo", "https://example.com/up"])
    func acceptsHTTPURLs(url: String) throws {
        _ = try Endpoint(parsing: url)
    }

    @Test(arguments: ["ftp://example.com/x", "file:///etc/passwd", "example.com/photo", "http://", "::"])
    func refusesOtherURLs(url: String) {
        #expect(throws: UploadInputError.self) { try Endpoint(parsing: url) }
    }

    @Test(arguments: [("1GiB", Int64(1) << 30), ("200MB", 200_000_000), ("5000000", 5_000_000), ("1.5k", 1536), ("64 MiB", 64 << 20)])
    func sizes(text: String, bytes: Int64) {
        #expect(ByteSize.parse(text) == bytes)
    }

    @Test(arguments: ["", "abc", "1 parsec", "-5"])
    func badSizes(text: String) {
        #expect(ByteSize.parse(text) == nil)
    }
}
