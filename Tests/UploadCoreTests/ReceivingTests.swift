import Testing
@testable import UploadCore

@Suite struct MultipartStreamParserTests {
    struct Part: Equatable {
        var headers: [String: String]
        var body: [UInt8]
        /// Where the part's body starts in the stream, as the parser says (compared across splits too).
        var start: Int64 = 0
    }

    func parse(_ body: [UInt8], boundary: String, splitAt splits: [Int]) throws -> ([Part], Bool) {
        var parser = MultipartStreamParser(boundary: boundary)
        var parts: [Part] = []
        var current: Part?
        var cuts = splits.filter { $0 > 0 && $0 < body.count }.sorted()
        cuts.append(body.count)
        var start = 0
        for cut in cuts {
            try body[start..<cut].withUnsafeBytes { raw in
                try parser.feed(raw) { event in
                    switch event {
                    case .partBegin(let headers, let start): current = Part(headers: headers, body: [], start: start)
                    case .body(let bytes): current?.body.append(contentsOf: bytes)
                    case .partEnd:
                        parts.append(current!)
                        current = nil
                    }
                }
            }
            start = cut
        }
        return (parts, parser.isComplete)
    }

    static let fileBytes: [UInt8] = Array("line\r\n--not-the-boundary\r\n\r\n--XyZ12 almost\r".utf8) + (0..<300).map { UInt8($0 & 0xFF) }

    var sampleBody: [UInt8] {
        let layout = MultipartLayout(
            boundary: Boundary("XyZ123"), fields: [FormField(name: "k", value: "v")],
            fileField: "photo", fileName: "a.png", contentType: .png, fileSize: Int64(Self.fileBytes.count))
        return layout.head + Self.fileBytes + layout.tail
    }

    @Test func parsesWholeBody() throws {
        let (parts, complete) = try parse(sampleBody, boundary: "XyZ123", splitAt: [])
        #expect(complete)
        #expect(parts.count == 2)
        #expect(parts[0].body == Array("v".utf8))
        #expect(parts[1].headers["content-disposition"] == "form-data; name=\"photo\"; filename=\"a.png\"")
        #expect(parts[1].headers["content-type"] == "image/png")
        #expect(parts[1].body == Self.fileBytes)
        // The file's bytes start right after the layout's head: where a receiver can split the stream.
        #expect(parts[1].start == Int64(sampleBody.firstRange(of: Self.fileBytes)!.lowerBound))
        #expect(parts[0].start == Int64(sampleBody.firstRange(of: Array("\r\n\r\nv".utf8))!.lowerBound + 4))
    }

    @Test func anySingleSplitGivesTheSameParts() throws {
        let body = sampleBody
        let (expected, _) = try parse(body, boundary: "XyZ123", splitAt: [])
        for cut in 1..<body.count {
            let (parts, complete) = try parse(body, boundary: "XyZ123", splitAt: [cut])
            #expect(parts == expected, "split at \(cut)")
            #expect(complete, "split at \(cut)")
        }
    }

    @Test func byteByByteFeedingWorks() throws {
        let body = sampleBody
        let (parts, complete) = try parse(body, boundary: "XyZ123", splitAt: Array(1..<body.count))
        #expect(parts.count == 2 && parts[1].body == Self.fileBytes && complete)
    }

    @Test func truncatedBodyIsNotComplete() throws {
        let body = Array(sampleBody.dropLast(4))  // "--\r\n" missing: the file part ended, the body did not
        let (parts, complete) = try parse(body, boundary: "XyZ123", splitAt: [])
        #expect(!complete)
        #expect(parts.count == 2)
        let cutInFile = Array(sampleBody.prefix(200))
        let (partsCut, completeCut) = try parse(cutInFile, boundary: "XyZ123", splitAt: [])
        #expect(partsCut.count == 1 && !completeCut)
    }

    @Test func garbageAfterDelimiterIsAnError() {
        let body = Array("--XyZ123XX\r\n".utf8)
        #expect(throws: MultipartStreamParser.ParseError.malformedDelimiter) {
            _ = try parse(body, boundary: "XyZ123", splitAt: [])
        }
    }

    @Test func headerWithoutColonIsAnError() {
        let body = Array("--XyZ123\r\nnot a header\r\n\r\nbody\r\n--XyZ123--".utf8)
        #expect(throws: MultipartStreamParser.ParseError.self) { _ = try parse(body, boundary: "XyZ123", splitAt: []) }
    }
}

@Suite struct ContentDispositionTests {
    @Test func parsesQuotedAndEscapedValues() {
        let d = ContentDisposition(parsing: "form-data; name=\"photo\"; filename=\"a%22b%0D%0Ac.jpg\"")
        #expect(d?.type == "form-data")
        #expect(d?.name == "photo")
        #expect(d?.filename == "a\"b\r\nc.jpg")
    }

    @Test func extendedFilenameWins() {
        let d = ContentDisposition(parsing: "form-data; name=photo; filename=\"fallback.jpg\"; filename*=UTF-8''%E5%A4%95%E7%84%BC%E3%81%91.jpg")
        #expect(d?.name == "photo")
        #expect(d?.filename == "夕焼け.jpg")
    }

    @Test func parsesContentTypeBoundary() {
        #expect(ContentDisposition(parsing: "multipart/form-data; boundary=----WebKitFormBoundaryabc")?.parameters["boundary"] == "----WebKitFormBoundaryabc")
        #expect(ContentDisposition(parsing: "multipart/form-data; boundary=\"quoted b\"")?.parameters["boundary"] == "quoted b")
    }
}

@Suite struct SafeFileNameTests {
    func safe(_ raw: String) -> String { SafeFileName.sanitize(raw) { "generated" } }

    @Test(arguments: [
        ("cat.jpg", "cat.jpg"),
        ("../../etc/passwd", "passwd"),
        ("..\\..\\windows\\evil.png", "evil.png"),
        ("/abs/path/x.png", "x.png"),
        (".hidden.png", "hidden.png"),
        ("...", "generated"),
        ("", "generated"),
        ("a\r\nb\u{0}c.png", "abc.png"),
        ("\u{202E}gnp.exe", "gnp.exe"),
        ("a\u{202A}\u{202B}\u{202C}\u{202D}b\u{2066}\u{2067}\u{2068}\u{2069}c\u{200E}\u{200F}\u{061C}d.png", "abcd.png"),
        ("\u{FEFF}zero\u{200B}width\u{2060}.png", "zerowidth.png"),
        ("\u{202E}", "generated"),
        ("family👨\u{200D}👩\u{200D}👧.png", "family👨\u{200D}👩\u{200D}👧.png"),
        ("写真\u{200C}.jpg", "写真\u{200C}.jpg"),
        ("x..y.png", "xy.png"),
        ("quote\"d.png", "quote\"d.png"),
        ("夕焼け.png", "夕焼け.png"),
        ("dir/", "generated"),
    ])
    func sanitises(raw: String, expected: String) {
        #expect(safe(raw) == expected)
    }

    @Test func longNamesFitIn255BytesWithExtension() {
        let long = String(repeating: "日", count: 100) + ".jpg"  // 304 bytes
        let name = safe(long)
        #expect(name.utf8.count <= 255)
        #expect(name.hasSuffix(".jpg"))
        #expect(name.hasPrefix("日日"))
    }

    @Test func numberedNamesKeepExtensionAndLimit() {
        #expect(SafeFileName.numbered("a.jpg", 2) == "a-2.jpg")
        #expect(SafeFileName.numbered("noext", 1) == "noext-1")
        let long = String(repeating: "x", count: 251) + ".jpg"
        #expect(SafeFileName.numbered(long, 12).utf8.count <= 255)
    }
}

@Suite struct InvisibleCharactersTests {
    @Test func hiddenCharactersAreEscapedAndOthersKept() {
        #expect(InvisibleCharacters.escaped("\u{202E}gnp.exe") == "<U+202E>gnp.exe")
        #expect(InvisibleCharacters.escaped("a\u{7}b\u{85}c\u{E0001}") == "a<U+0007>b<U+0085>c<U+E0001>")
        #expect(InvisibleCharacters.escaped("写真 👨\u{200D}👩 e\u{301}") == "写真 👨\u{200D}👩 e\u{301}")
    }
}

@Suite struct RedactedURLTests {
    @Test(arguments: [
        ("http://user:PW@host/photo", "http://***@host/photo"),
        ("https://tok3n@host:8443/p?x=1", "https://***@host:8443/p?x=1"),
        ("https://host/p?token=abc&name=cat&X-Amz-Signature=f00&sig=1#frag", "https://host/p?token=***&name=cat&X-Amz-Signature=***&sig=***#frag"),
        ("https://host/p?access%5Ftoken=abc", "https://host/p?access%5Ftoken=***"),
        ("http://127.0.0.1:3000/photo", "http://127.0.0.1:3000/photo"),
        ("http://host/a@b?x", "http://host/a@b?x"),
        ("not a url", "not a url"),
    ])
    func secretsAreHiddenAndTheRestKept(url: String, shown: String) {
        #expect(RedactedURL.display(url) == shown)
    }
}
