import Foundation
import TerminalCanvas
import Testing

/// Asking a terminal what it shows, and the escapes that send real pixels.
@Suite struct TerminalRepliesTests {
    static let kitty = "\u{1B}_Gi=31;OK\u{1B}\\\u{1B}[6;20;10t\u{1B}[?62;22c"

    @Test func kittyAnswersOKAndItsCellSizeAndIsPreferred() throws {
        var replies = TerminalReplies()
        replies.feed(Array(Self.kitty.utf8))
        #expect(replies.complete && replies.kittyGraphics)
        #expect(replies.cellSize?.width == 10 && replies.cellSize?.height == 20)
        #expect(replies.graphics() == PixelGraphics(kind: .kitty, cellWidth: 10, cellHeight: 20))
    }

    @Test func answersSplitAnywhereAndKeysPressedMeanwhileAreJoinedOrPassedOver() {
        let bytes = Array(("jk" + Self.kitty).utf8)
        for cut in 0...bytes.count {
            var replies = TerminalReplies()
            replies.feed(bytes[..<cut])
            #expect(!replies.complete || cut == bytes.count)
            replies.feed(bytes[cut...])
            #expect(replies.complete && replies.kittyGraphics && replies.cellSize?.height == 20, "cut at \(cut)")
        }
    }

    @Test func sixelNeedsAttribute4AndEnoughColourRegisters() {
        var sixel = TerminalReplies()
        sixel.feed(Array("\u{1B}[?1;0;1024S\u{1B}[6;16;8t\u{1B}[?64;4;22c".utf8))
        #expect(sixel.sixelRegisters == 1024 && sixel.deviceAttributes == [64, 4, 22])
        #expect(sixel.graphics() == PixelGraphics(kind: .sixel, cellWidth: 8, cellHeight: 16))

        var few = TerminalReplies()
        few.feed(Array("\u{1B}[?1;0;16S\u{1B}[6;16;8t\u{1B}[?64;4;22c".utf8))
        #expect(few.graphics() == nil, "16 registers cannot show a photo")

        var silent = TerminalReplies()
        silent.feed(Array("\u{1B}[?62;4c".utf8))
        #expect(silent.graphics() == nil, "no cell size: no pixels")
        #expect(silent.graphics(windowCell: (9, 18)) == PixelGraphics(kind: .sixel, cellWidth: 9, cellHeight: 18))
    }

    @Test func aPlainTerminalOrAKittyRefusalGivesNoPixels() {
        var plain = TerminalReplies()
        plain.feed(Array("\u{1B}[?62;22c".utf8))
        #expect(plain.complete && plain.graphics(windowCell: (10, 20)) == nil)

        var refused = TerminalReplies()
        refused.feed(Array("\u{1B}_Gi=31;ENOTSUPPORTED:no direct transmission\u{1B}\\\u{1B}[?62c".utf8))
        #expect(!refused.kittyGraphics && refused.graphics(windowCell: (10, 20)) == nil)

        var nothing = TerminalReplies()
        nothing.feed(Array("abc".utf8))
        #expect(!nothing.complete)

        // Absurd cell sizes are not believed (they would overflow the pixel box).
        for answer in ["\u{1B}[6;0;10t", "\u{1B}[6;20;9223372036854775807t", "\u{1B}[6;99999999999999999999;10t", "\u{1B}[6;-20;10t", "\u{1B}[6;20t"] {
            var odd = TerminalReplies()
            odd.feed(Array((answer + "\u{1B}[?62;4c").utf8))
            #expect(odd.cellSize == nil && odd.graphics() == nil, "\(answer.dropFirst())")
        }
    }

    @Test func tmuxIsAskedThroughAndScreenAndConsolesAreNotAsked() {
        #expect(TerminalReplies.asking(environment: ["TERM": "xterm-kitty"]) == .direct)
        #expect(TerminalReplies.asking(environment: ["TERM": "xterm-256color", "COLORTERM": "truecolor"]) == .direct)
        #expect(TerminalReplies.asking(environment: ["TERM": "tmux-256color", "TMUX": "/tmp/tmux-0/default,1,0"]) == .throughTmux)
        #expect(TerminalReplies.asking(environment: ["TERM": "xterm-256color", "STY": "1.pts-0.host"]) == .no)
        #expect(TerminalReplies.asking(environment: ["TERM": "screen-256color", "TMUX": "/tmp/tmux-0/default,1,0", "STY": "1.pts-0.host"]) == .no)
        // A multiplexer known only by TERM is on the far side of an SSH link: asked what it is.
        #expect(TerminalReplies.asking(environment: ["TERM": "screen-256color"]) == .tmuxByName)
        #expect(TerminalReplies.asking(environment: ["TERM": "tmux-256color"]) == .tmuxByName)
        #expect(TerminalReplies.nameQuery == Array("\u{1B}[>q\u{1B}[c".utf8))
        // Tmux without the allow-passthrough option (before 3.3) passes everything on.
        for (version, passes) in [
            ("tmux 3.2a\n", true), ("tmux 2.9", true), ("tmux 3.3a", false), ("tmux 3.4", false),
            ("tmux next-3.5", false), ("tmux master", false), ("", false),
        ] {
            #expect(TerminalReplies.tmuxPassesEverything(version: version) == passes, "\(version)")
        }
        #expect(TerminalReplies.asking(environment: ["TERM": "linux"]) == .no)
        #expect(TerminalReplies.asking(environment: [:]) == .no)
    }

    @Test func throughTmuxEveryQuestionIsWrappedAndTheTerminalNamesItself() {
        let query = String(decoding: TerminalReplies.tmuxQuery(passthrough: true), as: UTF8.self)
        // First tmux's own Device Attributes, then five questions wrapped for the terminal around.
        #expect(query.hasPrefix("\u{1B}[c\u{1B}Ptmux;"), "\(query.debugDescription)")
        let wrapped = query.components(separatedBy: "\u{1B}Ptmux;").dropFirst()
        #expect(wrapped.count == 5)
        // Inside, every ESC doubled; the last question is Device Attributes, after XTVERSION.
        #expect(wrapped.allSatisfy { $0.hasPrefix("\u{1B}\u{1B}") && $0.hasSuffix("\u{1B}\\") })
        #expect(wrapped.last == "\u{1B}\u{1B}[c\u{1B}\\" && wrapped.dropLast().last == "\u{1B}\u{1B}[>q\u{1B}\\")
        #expect(TerminalReplies.tmuxQuery(passthrough: false) == Array("\u{1B}[c".utf8), "tmux alone is asked")

        let tmux33 = "\u{1B}[?1;2c"
        var kitty = TerminalReplies(insideTmux: true)
        kitty.feed(Array((tmux33 + "\u{1B}_Gi=31;OK\u{1B}\\\u{1B}P>|kitty(0.35.2)\u{1B}\\\u{1B}[6;20;10t").utf8))
        #expect(!kitty.complete, "the terminal's own Device Attributes are still to come")
        kitty.feed(Array("\u{1B}[?62;c".utf8))
        #expect(kitty.complete && kitty.tmuxAttributes == [1, 2] && kitty.deviceAttributes == [62])
        #expect(kitty.version == "kitty(0.35.2)" && kitty.drawsPlaceholders)
        #expect(kitty.graphics() == PixelGraphics(kind: .kitty, cellWidth: 10, cellHeight: 20, throughTmux: true))

        for (name, draws) in [
            ("kitty(0.26.5)", false), ("kitty(0.28.0)", true), ("kitty(1.0)", true), ("ghostty 1.1.3", true),
            ("WezTerm 20240203-110809-5046fc22", false), ("kitty(x)", false), ("XTerm(379)", false),
        ] {
            var replies = TerminalReplies(insideTmux: true)
            replies.feed(Array((tmux33 + "\u{1B}_Gi=31;OK\u{1B}\\\u{1B}P>|\(name)\u{1B}\\\u{1B}[6;20;10t\u{1B}[?62;c").utf8))
            #expect(replies.drawsPlaceholders == draws, "\(name)")
            #expect((replies.graphics() != nil) == draws, "\(name)")
            var direct = TerminalReplies()
            direct.feed(Array("\u{1B}_Gi=31;OK\u{1B}\\\u{1B}P>|\(name)\u{1B}\\\u{1B}[6;20;10t\u{1B}[?62;c".utf8))
            #expect(direct.graphics() == PixelGraphics(kind: .kitty, cellWidth: 10, cellHeight: 20), "outside tmux: \(name)")
        }
        // A sixel terminal around a tmux that keeps no sixel (3.3) gets no pixels; a tmux that
        // says it keeps sixel gets sixel, whether it passes escapes on or not.
        var sixel = TerminalReplies(insideTmux: true)
        sixel.feed(Array((tmux33 + "\u{1B}P>|XTerm(379)\u{1B}\\\u{1B}[6;20;10t\u{1B}[?63;4c").utf8))
        #expect(sixel.complete && sixel.graphics() == nil)
        var tmux34 = TerminalReplies(insideTmux: false)
        tmux34.feed(Array("\u{1B}[?1;2;4c".utf8))
        #expect(tmux34.complete && tmux34.graphics(windowCell: (9, 18)) == PixelGraphics(kind: .sixel, cellWidth: 9, cellHeight: 18))
        var tmuxAlone = TerminalReplies(insideTmux: false)
        tmuxAlone.feed(Array(tmux33.utf8))
        #expect(tmuxAlone.complete && tmuxAlone.graphics(windowCell: (9, 18)) == nil)
    }

}

@Suite struct PixelEncoderTests {
    /// Red on the left half, blue on the right.
    static func halves(_ width: Int, _ height: Int) -> PixelPicture {
        var rgb: [UInt8] = []
        for _ in 0..<height { for x in 0..<width { rgb += x < width / 2 ? [255, 0, 0] : [0, 0, 255] } }
        return PixelPicture(x: 4, y: 2, columns: 3, rows: 2, width: width, height: height, rgb: rgb)
    }

    @Test func base64MatchesFoundationForEveryTailLength() {
        for count in 0..<20 {
            let bytes = (0..<count).map { UInt8(($0 * 97 + 13) & 0xFF) }
            #expect(String(decoding: Base64.encode(bytes), as: UTF8.self) == Data(bytes).base64EncodedString())
        }
    }

    @Test func kittySendsTheRGBInChunksAtTheCellWithoutAnswersOrCursorMoves() throws {
        let picture = Self.halves(120, 50)  // 18,000 bytes: 24,000 of base64, six chunks
        let text = String(decoding: KittyEncoder.show(picture), as: UTF8.self)
        #expect(text.hasPrefix("\u{1B}[3;5H\u{1B}_Ga=T,f=24,s=120,v=50,C=1,q=2,m=1;"))
        let commands = text.split(separator: "\u{1B}_G").dropFirst()
        #expect(commands.count == 6)
        var payload = ""
        for (i, command) in commands.enumerated() {
            let body = command.dropLast(2)  // the string terminator
            #expect(command.hasSuffix("\u{1B}\\"))
            let parts = body.split(separator: ";", maxSplits: 1)
            #expect(parts[0].hasSuffix("m=\(i == commands.count - 1 ? 0 : 1)"))
            if i > 0 { #expect(parts[0] == "m=0" || parts[0] == "m=1", "later chunks carry only m") }
            #expect(parts[1].utf8.count <= KittyEncoder.chunkSize)
            payload += parts[1]
        }
        #expect(Data(base64Encoded: payload).map(Array.init) == picture.rgb)
        #expect(String(decoding: KittyEncoder.removeAll, as: UTF8.self) == "\u{1B}_Ga=d,d=A,q=2\u{1B}\\")
    }

    @Test func kittySendsWhatTheCompressorMadeSmallerAndSaysSo() throws {
        let picture = Self.halves(120, 50)
        // A stand-in for zlib: the payload is whatever it returns, marked `o=z`, when smaller.
        let squeezed: [UInt8] = Array("not really zlib".utf8)
        let text = String(decoding: KittyEncoder.show(picture, compress: { _ in squeezed }), as: UTF8.self)
        #expect(text == "\u{1B}[3;5H\u{1B}_Ga=T,f=24,s=120,v=50,C=1,q=2,o=z,m=0;\(Data(squeezed).base64EncodedString())\u{1B}\\")
        // No smaller, or nothing: the RGB as it is, not marked.
        let plain = KittyEncoder.show(picture)
        #expect(KittyEncoder.show(picture, compress: { $0 + [0] }) == plain)
        #expect(KittyEncoder.show(picture, compress: { _ in nil }) == plain)
        // Inside tmux the placement carries it too, in its first chunk only.
        let placed = String(
            decoding: KittyPlaceholders.place(picture, id: 7, over: (columns: 12, rows: 3), compress: { Array($0.prefix(5000)) }), as: UTF8.self)
        let heads = placed.components(separatedBy: "\u{1B}\u{1B}_G").dropFirst().map { $0.prefix { $0 != ";" } }
        #expect(heads.count == 2, "5,000 bytes: 6,668 of base64, two chunks")
        #expect(heads.first?.hasPrefix("a=T,U=1,i=7,f=24,s=120,v=50,c=12,r=3,q=2,o=z,m=1") == true, "\(heads)")
        #expect(heads.last == "q=2,m=0")
    }

    @Test func aHalvedPictureAveragesEachTwoByTwoBlockAndSitsInTheMiddleOfItsCells() throws {
        // 3 cells of 10x20 pixels across, 2 down; 25x34 pixels (odd: the last column and row go).
        var rgb: [UInt8] = []
        for y in 0..<34 { for x in 0..<25 { rgb += [UInt8(x * 10), UInt8(y * 7), x % 2 == 0 ? 255 : 0] } }
        let picture = PixelPicture(x: 4, y: 2, columns: 3, rows: 2, width: 25, height: 34, rgb: rgb)
        let half = try #require(picture.halved(cellWidth: 10, cellHeight: 20))
        #expect((half.width, half.height) == (12, 17))
        #expect((half.columns, half.rows) == (2, 1))
        #expect((half.x, half.y) == (4, 2), "(3 - 2) / 2 and (2 - 1) / 2 cells in: none")
        // Pixel (x, y) is the mean of source (2x...2x+1, 2y...2y+1), rounded.
        for (x, y) in [(0, 0), (5, 7), (11, 16)] {
            let i = (y * 12 + x) * 3
            #expect(half.rgb[i] == UInt8((2 * x * 10 + (2 * x + 1) * 10) / 2 + 0), "red at \(x),\(y)")
            #expect(half.rgb[i + 1] == UInt8((2 * y * 7 + (2 * y + 1) * 7 + 1) / 2), "green at \(x),\(y)")
            #expect(half.rgb[i + 2] == 128, "blue: one column of 255 and one of 0")
        }
        let wide = PixelPicture(x: 0, y: 0, columns: 8, rows: 4, width: 80, height: 80, rgb: [UInt8](repeating: 9, count: 80 * 80 * 3))
        let centred = try #require(wide.halved(cellWidth: 10, cellHeight: 20))
        #expect((centred.x, centred.y, centred.columns, centred.rows) == (2, 1, 4, 2))
        #expect(Self.halves(14, 14).halved(cellWidth: 10, cellHeight: 20) == nil, "too small to halve")
    }

    @Test func kittyStretchesAPictureOverTheCellsItIsGiven() {
        let text = String(decoding: KittyEncoder.show(Self.halves(20, 10), over: (columns: 6, rows: 3)), as: UTF8.self)
        #expect(text.hasPrefix("\u{1B}[3;5H\u{1B}_Ga=T,f=24,s=20,v=10,C=1,q=2,c=6,r=3,m=0;"))
    }

    @Test func sixelOfASmallPictureReadsAsExpected() {
        // Two red columns and a blue one, six rows: one band, one row of sixels per colour.
        var rgb: [UInt8] = []
        for _ in 0..<6 { rgb += [255, 0, 0, 255, 0, 0, 0, 0, 255] }
        let picture = PixelPicture(x: 0, y: 0, columns: 1, rows: 1, width: 3, height: 6, rgb: rgb)
        let text = String(decoding: SixelEncoder.bytes(picture), as: UTF8.self)
        #expect(text == "\u{1B}[1;1H\u{1B}P0;0;0q\"1;1;3;6#5;2;0;0;100#180;2;100;0;0#180~~$#5??~-\u{1B}\\")
    }

    @Test func sixelRunsAreCountedAndBandsCoverEveryRow() {
        let picture = Self.halves(40, 13)  // three bands, the last of one row
        let text = String(decoding: SixelEncoder.bytes(picture), as: UTF8.self)
        #expect(text.contains("\"1;1;40;13"))
        #expect(text.components(separatedBy: "-").count - 1 == 3)
        #expect(text.contains("#180!20~"), "twenty full red sixels as one run: \(text)")
        #expect(text.contains("#180!20@"), "the last band's single row: \(text)")
        #expect(SixelEncoder.palette.count == 240)
    }

    @Test func sixelQuantisationKeepsGreysGreyAndPrimariesPure() {
        var rgb: [UInt8] = []
        for v in stride(from: 0, through: 255, by: 17) { rgb += [UInt8(v), UInt8(v), UInt8(v)] }
        let picture = PixelPicture(x: 0, y: 0, columns: 1, rows: 1, width: rgb.count / 3, height: 1, rgb: rgb)
        for index in SixelEncoder.quantise(picture) {
            let colour = SixelEncoder.palette[Int(index)]
            #expect(colour.r == colour.g && colour.g == colour.b, "grey stays grey: \(colour)")
        }
    }
}

@Suite struct LateReplyFilterTests {
    static func keys(_ text: String) -> [Key] {
        text.map { $0 == "\u{1B}" ? Key.escape : .character($0) }
    }

    @Test func answersThatCameLateAreNotKeysAndTheFilterEndsWithTheLast() {
        var expiring = LateReplyFilter(active: true, until: 10)
        #expect(expiring.filter(Self.keys("\u{1B}[6;20;10t"), now: 5).isEmpty && expiring.active)
        #expect(
            expiring.filter(Self.keys("\u{1B}[6;20;10t"), now: 11) == Self.keys("\u{1B}[6;20;10t") && !expiring.active,
            "answers that never came are not waited for forever")
        var named = LateReplyFilter(active: true)
        #expect(named.filter(Self.keys("\u{1B}P>|kitty(0.35.2)\u{1B}\\j\u{1B}[?62;cq")) == Self.keys("jq"), "XTVERSION, asked through tmux")
        #expect(!named.active)
        var filter = LateReplyFilter(active: true)
        #expect(filter.filter(Self.keys("j\u{1B}_Gi=31;OK\u{1B}\\k")) == Self.keys("jk"))
        #expect(filter.active)
        #expect(filter.filter(Self.keys("\u{1B}[?1;0;1024S\u{1B}[6;20;10tq")) == Self.keys("q"))
        #expect(filter.filter(Self.keys("\u{1B}[?62;4;22c?")) == Self.keys("?"))
        #expect(!filter.active, "Device Attributes come last")
        #expect(filter.filter(Self.keys("\u{1B}[?62c")) == Self.keys("\u{1B}[?62c"))
    }

    @Test func realKeysPassUntouched() {
        var filter = LateReplyFilter(active: true)
        let typed: [Key] = [.escape, .character("q"), .up, .escape, .character("["), .character("x")]
        #expect(filter.filter(typed, now: 0) == typed)
        // An Escape last in a read may begin an answer: held a moment, then it is the key it was.
        #expect(filter.filter([.character("j"), .escape], now: 1) == [.character("j")])
        #expect(filter.wait(now: 1.1)! > 0)
        #expect(filter.filter([], now: 1.1) == [])
        #expect(filter.filter([], now: 1 + LateReplyFilter.holdSeconds) == [.escape])
        #expect(filter.wait(now: 2) == nil)
        var inactive = LateReplyFilter(active: false)
        #expect(inactive.filter(Self.keys("\u{1B}[?62c")) == Self.keys("\u{1B}[?62c"))
    }

    /// A late answer a read cut in two once moved the cursor with its `G` (kitty) or pressed
    /// `c` (Device Attributes): the start is held until the rest comes.
    @Test(arguments: [
        "\u{1B}_Gi=31;OK\u{1B}\\", "\u{1B}[?62;4;22c", "\u{1B}[6;20;10t", "\u{1B}[?1;0;1024S",
    ])
    func anAnswerSplitAcrossReadsIsStillNoKeys(answer: String) {
        let keys = Self.keys(answer)
        for cut in 1..<keys.count {
            var filter = LateReplyFilter(active: true)
            let first = filter.filter([.character("j")] + keys[..<cut], now: 0)
            let second = filter.filter(Array(keys[cut...]) + [.character("k")], now: 0.05)
            #expect(first + second == Self.keys("jk"), "cut after \(cut) keys")
        }
        // Three pieces, the middle one alone.
        var filter = LateReplyFilter(active: true)
        let a = filter.filter(Array(keys.prefix(2)), now: 0)
        let b = filter.filter(Array(keys.dropFirst(2).prefix(2)), now: 0.1)
        let c = filter.filter(Array(keys.dropFirst(4)), now: 0.2)
        #expect(a + b + c == [])
    }

    /// The monitor asks `CSI 5 n` after frames to learn when the terminal has shown them: the
    /// answers are counted and never reach the keys, only while owed, and only that answer.
    @Test func statusAnswersAreCountedWhileOwedAndOnlyThen() {
        var filter = LateReplyFilter(active: false)
        #expect(filter.filter(Self.keys("\u{1B}[0n")) == Self.keys("\u{1B}[0n"), "none owed: keys")
        filter.expectStatus()
        filter.expectStatus()
        #expect(filter.filter(Self.keys("j\u{1B}[0nk")) == Self.keys("jk"))
        #expect(filter.takeStatusAnswers() == 1)
        #expect(filter.takeStatusAnswers() == 0, "taken once")
        // Other answers are keys when only status answers are owed.
        #expect(filter.filter(Self.keys("\u{1B}[?62c\u{1B}[10n")) == Self.keys("\u{1B}[?62c\u{1B}[10n"))
        #expect(filter.filter(Self.keys("\u{1B}[3n")) == [], "malfunction is an answer too")
        #expect(filter.takeStatusAnswers() == 1)
        #expect(filter.statusOwed == 0)
        #expect(filter.filter(Self.keys("\u{1B}[0n")) == Self.keys("\u{1B}[0n"), "all answered: keys again")
    }

    @Test func aStatusAnswerCutInTwoIsHeldBrieflyAndALoneEscapeSoonPasses() {
        let answer = Self.keys("\u{1B}[0n")
        for cut in 1..<answer.count {
            var filter = LateReplyFilter(active: false)
            filter.expectStatus()
            let first = filter.filter([.character("j")] + answer[..<cut], now: 0)
            let second = filter.filter(Array(answer[cut...]), now: 0.01)
            #expect(first + second == [.character("j")], "cut after \(cut)")
            #expect(filter.takeStatusAnswers() == 1)
        }
        var filter = LateReplyFilter(active: false)
        filter.expectStatus()
        #expect(filter.filter([.escape], now: 5) == [])
        #expect(filter.wait(now: 5)! <= LateReplyFilter.statusHoldSeconds)
        #expect(filter.filter([], now: 5.001 + LateReplyFilter.statusHoldSeconds) == [.escape], "the Escape key, late by a moment")
        #expect(filter.statusOwed == 1)
    }

    /// What never ends is not held without bound: a long run after `ESC _` goes out as keys.
    @Test func anUnfinishedAnswerIsBounded() {
        var filter = LateReplyFilter(active: true)
        let opened = filter.filter(Self.keys("\u{1B}_G"), now: 0)
        #expect(opened.isEmpty)
        let flood = [Key](repeating: .character("x"), count: 9000)
        let out = filter.filter(flood, now: 0.01)
        #expect(out.count == 9003, "all of it is keys")
    }
}
