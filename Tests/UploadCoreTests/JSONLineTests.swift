import Foundation
import Testing
import UploadCore

/// `--json`'s lines: valid JSON that reads back to the same values, as Foundation would write them.
struct JSONLineTests {
    @Test func writesWhatFoundationWouldAndReadsBack() throws {
        var line = JSONLine()
        line["event"] = .string("finished")
        line["id"] = .int(12)
        line["ok"] = .bool(false)
        line["seconds"] = .number(1.25)
        line["whole"] = .number(3)
        line["error"] = .string("quote \" backslash \\ slash / newline \n tab \t bell \u{7} 日本語")
        let object: [String: Any] = [
            "event": "finished", "id": 12, "ok": false, "seconds": 1.25, "whole": 3,
            "error": "quote \" backslash \\ slash / newline \n tab \t bell \u{7} 日本語",
        ]
        let foundation = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        #expect(line.text == String(decoding: foundation, as: UTF8.self))
        let back = try #require(try JSONSerialization.jsonObject(with: Data(line.text.utf8)) as? [String: Any])
        #expect(back["error"] as? String == object["error"] as? String)
        #expect(back["seconds"] as? Double == 1.25)
    }

    /// Invisible format characters are escaped, so a line shown on a terminal cannot reorder
    /// itself; the value reads back unchanged, beyond the BMP too.
    @Test func invisibleCharactersAreEscapedAndReadBack() throws {
        let name = "\u{202E}gnp.exe \u{2066}x\u{2069} \u{E0001}tag 👨\u{200D}👩"
        var line = JSONLine()
        line["name"] = .string(name)
        #expect(line.text == #"{"name":"\u202egnp.exe \u2066x\u2069 \udb40\udc01tag 👨\#u{200D}👩"}"#)
        let back = try #require(try JSONSerialization.jsonObject(with: Data(line.text.utf8)) as? [String: String])
        #expect(back["name"] == name)
    }

    @Test func aKeySetTwiceKeepsTheLastValueAndNonFiniteNumbersAreNull() {
        var line = JSONLine()
        line["a"] = .int(1)
        line["a"] = .int(2)
        line["b"] = .number(.nan)
        #expect(line.text == #"{"a":2,"b":null}"#)
    }
}
