import Foundation
import Testing
import UploadCore

/// Hand-written replacements for Foundation calls on the receiver's hot path, checked against
/// the Foundation calls they replace.
struct TextFormattingTests {
    @Test(arguments: [
        "", " ", "\t \t", "a", " a ", "\ta b\t", "\u{00A0}x\u{3000}", "\u{2003}\u{2003}",
        "form-data ", " multipart/form-data", "\nx\n", " \r\n ", "é ", " 写真.jpg ", "a\u{200B}",
        "\u{1680}a\u{205F}", "\u{FEFF}a", "\u{85}a", "\u{2028}a\u{202F}", "a\u{180E}", "\u{200C}a",
    ])
    func trimmingSpacesTrimsWhatFoundationsWhitespacesTrims(text: String) {
        #expect(text.trimmingSpaces() == text.trimmingCharacters(in: .whitespaces))
        #expect(text[...].trimmingSpaces() == text.trimmingCharacters(in: .whitespaces))
    }

    /// Every style of the one local-time formatter reads as `DateFormatter` writes it, in zones
    /// with half-hour offsets and summer time too.
    @Test(arguments: ["UTC", "Europe/Paris", "Asia/Kolkata", "America/St_Johns", "Pacific/Chatham"])
    func localTimesReadAsDateFormatterWritesThem(zone: String) throws {
        let timeZone = try #require(TimeZone(identifier: zone))
        let patterns: [(LocalTime.Style, String)] = [
            (.log, "yyyy-MM-dd HH:mm:ss.SSS"), (.seconds, "yyyy-MM-dd HH:mm:ss"), (.minutes, "yyyy-MM-dd HH:mm"),
            (.clock, "HH:mm:ss"), (.dayMonth, "d MMM HH:mm"),
        ]
        var generator = SeededGenerator(seed: 12)
        var dates = [
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_795_000_000.0005),
            Date(timeIntervalSince1970: 1_795_000_059.9994), Date(timeIntervalSince1970: 1_709_164_800.25),
            Date(timeIntervalSince1970: 4_102_444_799.999),
        ]
        for _ in 0..<200 { dates.append(Date(timeIntervalSince1970: Double(generator.next() % 4_000_000_000_000) / 1000)) }
        for (style, pattern) in patterns {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = timeZone
            formatter.dateFormat = pattern
            for date in dates {
                #expect(LocalTime.format(date, style, timeZone: timeZone) == formatter.string(from: date), "\(pattern) \(date.timeIntervalSince1970)")
            }
        }
    }

    /// JSON lines escape ASCII by bytes; the same text as the scalar way (which a string with
    /// one non-ASCII character at its end still takes), and JSON that Foundation reads back to
    /// the very string.
    @Test func jsonStringsOfASCIIReadAsTheScalarWayWritesThem() throws {
        func quoted(_ text: String) -> String {
            var line = JSONLine()
            line["k"] = .string(text)
            return line.text
        }
        var generator = SeededGenerator(seed: 11)
        var texts = ["", "{\"filename\":\"x.jpg\"}", "a\\b", "\u{7F}\u{00}\u{1B}[31m", String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self)]
        for _ in 0..<2_000 {
            texts.append(String(decoding: (0..<Int(generator.next() % 24)).map { _ in UInt8(generator.next() % 128) }, as: UTF8.self))
        }
        for text in texts {
            // `…"}` by bytes; `…é"}` the scalar way: the same once the é is taken out.
            let scalarWay = quoted(text + "é")
            #expect(quoted(text) == scalarWay.replacingOccurrences(of: "é\"}", with: "\"}"), "\(Array(text.utf8))")
            let decoded = try JSONSerialization.jsonObject(with: Data(quoted(text).utf8)) as? [String: String]
            #expect(decoded?["k"] == text)
        }
    }

    /// `oneLine` reads ASCII by bytes; it must join exactly what the Character way joins.
    @Test func oneLineJoinsAsTheCharacterSplitDoes() {
        func reference(_ text: String) -> String { text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ") }
        let pieces = [" ", "\t", "\n", "\r\n", "\r", "\u{0B}", "\u{0C}", "\u{1C}", "\u{1F}", "a", "{\"k\":", "\"v\"}", "x y", "\u{7F}", "~"]
        var generator = SeededGenerator(seed: 7)
        var texts = ["", " ", "\r\n", "{\"filename\": \"x.jpg\"}\n", "  a  b  ", "\té\t", "a\u{00A0}b", "a\u{2028}b", " \u{301}x"]
        for _ in 0..<3_000 {
            texts.append((0..<Int(generator.next() % 12)).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined())
        }
        for text in texts {
            #expect(ProgressText.oneLine(text) == reference(text), "\(Array(text.utf8))")
        }
    }
}

/// xorshift64*: the same numbers on every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }
}

/// The scalar-scanning `ContentDisposition` against the Character-walking parser it replaced,
/// on generated headers built from the characters that matter to it.
struct ContentDispositionEquivalenceTests {
    static let pieces = [
        "form-data", "multipart/form-data", ";", ";", "=", "=", "\"", "\"", "\\", " ", "\t", "name", "filename",
        "filename*", "boundary", "photo", "a.jpg", "%22", "%0D%0A", "UTF-8''", "%E5%A4%95", "'", "*", "写真",
        "\u{00A0}", "é", "\r\n", "x", "NAME", "Form-Data",
    ]

    @Test func generatedHeadersParseAsBefore() {
        var generator = SeededGenerator(seed: 7)
        func some(_ most: UInt64) -> String {
            (0..<Int(generator.next() % (most + 1))).map { _ in Self.pieces[Int(generator.next() % UInt64(Self.pieces.count))] }.joined()
        }
        func chance(_ percent: UInt64) -> Bool { generator.next() % 100 < percent }
        var withParameters = 0
        for _ in 0..<20_000 {
            // A type, then parameters that are mostly well formed, with noise anywhere.
            var header = some(1) + (chance(80) ? "form-data" : some(2))
            for _ in 0..<Int(generator.next() % 4) {
                header += ";" + (chance(50) ? " " : "") + (chance(70) ? ["name", "filename", "filename*", "boundary"][Int(generator.next() % 4)] : some(2))
                if chance(85) { header += "=" }
                if chance(50) {
                    header += "\"" + some(3) + (chance(80) ? "\"" : "") + (chance(30) ? some(2) : "")
                } else {
                    header += (chance(30) ? "UTF-8''" : "") + some(3)
                }
            }
            let new = ContentDisposition(parsing: header)
            let old = ReferenceDisposition(parsing: header)
            #expect(new?.type == old?.type && new?.parameters == old?.parameters, "\(header.debugDescription)")
            if (old?.parameters.count ?? 0) > 1 { withParameters += 1 }
        }
        #expect(withParameters > 2_000, "the generated headers carry several parameters")
    }
}

/// The parser as it was, kept as the reference.
struct ReferenceDisposition {
    let type: String
    let parameters: [String: String]

    init?(parsing header: String) {
        var scanner = Substring(header)
        func skipSpaces() { scanner = scanner.drop { $0 == " " || $0 == "\t" } }
        skipSpaces()
        let type = scanner.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces).lowercased()
        guard !type.isEmpty else { return nil }
        scanner = scanner.dropFirst(scanner.prefix { $0 != ";" }.count)
        var parameters: [String: String] = [:]
        while scanner.first == ";" {
            scanner = scanner.dropFirst()
            skipSpaces()
            let key = scanner.prefix { $0 != "=" && $0 != ";" }.trimmingCharacters(in: .whitespaces).lowercased()
            scanner = scanner.dropFirst(scanner.prefix { $0 != "=" && $0 != ";" }.count)
            guard scanner.first == "=" else { continue }
            scanner = scanner.dropFirst()
            skipSpaces()
            var value = ""
            if scanner.first == "\"" {
                scanner = scanner.dropFirst()
                var escaped = false
                while let c = scanner.first {
                    scanner = scanner.dropFirst()
                    if escaped {
                        value.append(c)
                        escaped = false
                        continue
                    }
                    if c == "\\" {
                        escaped = true
                        continue
                    }
                    if c == "\"" { break }
                    value.append(c)
                }
                value = value.replacingOccurrences(of: "%22", with: "\"").replacingOccurrences(of: "%0D", with: "\r")
                    .replacingOccurrences(of: "%0A", with: "\n")
                scanner = scanner.drop { $0 != ";" }
            } else {
                value = scanner.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces)
                scanner = scanner.dropFirst(scanner.prefix { $0 != ";" }.count)
            }
            if key.hasSuffix("*") {
                let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
                guard parts.count == 3, parts[0].lowercased() == "utf-8", let decoded = String(parts[2]).removingPercentEncoding else { continue }
                value = decoded
            }
            if !key.isEmpty { parameters[key] = value }
        }
        self.type = type
        self.parameters = parameters
    }
}
