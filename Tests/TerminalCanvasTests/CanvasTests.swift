import Testing
@testable import TerminalCanvas

@Suite struct DisplayWidthTests {
    @Test(arguments: [
        ("a", 1), ("夕", 2), ("ｱ", 1), ("Ａ", 2), ("😀", 2), ("é", 1), ("e\u{301}", 1),
        ("👍🏽", 2), ("🇯🇵", 2), ("👨‍👩‍👧", 2), ("❤️", 2), ("\u{7}", 0), ("한", 2),
    ])
    func characterWidths(text: String, width: Int) {
        #expect(DisplayWidth.of(Character(text)) == width)
    }

    @Test func stringWidth() {
        #expect(DisplayWidth.of("夕焼け.png") == 10)
        #expect(DisplayWidth.of("") == 0)
    }
}

@Suite struct CanvasTests {
    @Test func wideCharactersTakeTwoCellsAndNeverSplitAtTheEdge() {
        var canvas = Canvas(width: 5, height: 1)
        let used = canvas.write("ab夕焼", x: 0, y: 0)
        #expect(used == 5)
        #expect(canvas.line(0) == "ab夕 ")
        #expect(canvas[3, 0].isContinuation)
    }

    @Test func writingOverHalfAWideCharacterBlanksTheOtherHalf() {
        var canvas = Canvas(width: 4, height: 1)
        canvas.write("夕焼", x: 0, y: 0)
        canvas.write("x", x: 1, y: 0)
        #expect(canvas.line(0) == " x焼")
        canvas.write("y", x: 2, y: 0)
        #expect(canvas.line(0) == " xy ")
    }

    @Test func controlCharactersCannotReachTheTerminal() {
        var canvas = Canvas(width: 8, height: 1)
        canvas.write("a\u{1B}[2Jb", x: 0, y: 0)
        #expect(canvas.line(0) == "a?[2Jb  ")
    }

    /// A name with a right-to-left override shows what it is, not what it pretends to be.
    @Test func invisibleFormatCharactersAreShownEscaped() {
        var canvas = Canvas(width: 20, height: 1)
        canvas.write("\u{202E}gnp.exe", x: 0, y: 0)
        #expect(canvas.line(0) == "<U+202E>gnp.exe     ")
        var narrow = Canvas(width: 5, height: 1)
        narrow.write("\u{2066}ab", x: 0, y: 0)
        #expect(narrow.line(0) == "<U+20")
        var joined = Canvas(width: 4, height: 1)
        joined.write("👨\u{200D}👩", x: 0, y: 0)
        #expect(!joined.line(0).contains("<U+"))
    }

    @Test func clippingAndZeroSizes() {
        var canvas = Canvas(width: 6, height: 2)
        canvas.write("hello world", x: 2, y: 1, clip: Rect(x: 2, y: 0, width: 3, height: 2))
        #expect(canvas.line(1) == "  hel ")
        canvas.write("x", x: 0, y: 5)
        canvas.write("x", x: -3, y: 0)
        var empty = Canvas(width: 0, height: 0)
        empty.write("anything", x: 0, y: 0)
        empty.fill(Rect(x: 0, y: 0, width: 3, height: 3))
        #expect(empty.text == "")
        var one = Canvas(width: 1, height: 1)
        one.frame(one.bounds, title: "t", glyphs: .unicode)
        one.write("夕", x: 0, y: 0)
        #expect(one.text == " ")
    }

    @Test func framesAndBars() {
        var canvas = Canvas(width: 12, height: 3)
        let inside = canvas.frame(canvas.bounds, title: "Queue", glyphs: .unicode)
        #expect(inside == Rect(x: 1, y: 1, width: 10, height: 1))
        canvas.progressBar(x: 1, y: 1, width: 10, fraction: 0.55, fill: .plain, track: .plain, glyphs: .unicode)
        #expect(
            canvas.text == """
                ┌ Queue ───┐
                │█████▌░░░░│
                └──────────┘
                """)
        var ascii = Canvas(width: 4, height: 1)
        ascii.progressBar(x: 0, y: 0, width: 4, fraction: 0.5, fill: .plain, track: .plain, glyphs: .ascii)
        #expect(ascii.text == "##..")
    }
}

@Suite struct TextLayoutTests {
    @Test func truncateByDisplayWidth() {
        #expect(TextLayout.truncate("夕焼け.png", width: 6) == "夕焼…")
        #expect(TextLayout.truncate("short", width: 10) == "short")
        #expect(TextLayout.truncate("abc", width: 0) == "")
        #expect(TextLayout.fit("夕", width: 4) == "夕  ")
        #expect(TextLayout.truncateHead("/home/me/写真/2024", width: 12) == "…e/写真/2024")
    }

    @Test func wrapAtSpacesAndInsideLongWords() {
        #expect(TextLayout.wrap("the quick brown fox", width: 10) == ["the quick", "brown fox"])
        #expect(TextLayout.wrap("abcdefghij", width: 4) == ["abcd", "efgh", "ij"])
        #expect(TextLayout.wrap("a\n\nb", width: 4) == ["a", "", "b"])
        #expect(TextLayout.wrap("夕焼け夕焼け", width: 5) == ["夕焼", "け夕", "焼け"])
    }

    @Test func scrollWindowKeepsSelectionVisible() {
        #expect(ScrollWindow.offset(selected: 0, count: 100, visible: 10, current: 0) == 0)
        #expect(ScrollWindow.offset(selected: 10, count: 100, visible: 10, current: 0) == 1)
        #expect(ScrollWindow.offset(selected: 5, count: 100, visible: 10, current: 8) == 5)
        #expect(ScrollWindow.offset(selected: 99, count: 100, visible: 10, current: 0) == 90)
        #expect(ScrollWindow.offset(selected: 3, count: 5, visible: 10, current: 2) == 0)
    }

    @Test func splitRowsNeverExceedsTheHeight() {
        for height in 0..<20 {
            let parts = Rect(x: 0, y: 0, width: 5, height: height).splitRows(weights: [3, 2, 2, 2], minimum: 3)
            #expect(parts.map(\.height).reduce(0, +) == height)
        }
    }
}
