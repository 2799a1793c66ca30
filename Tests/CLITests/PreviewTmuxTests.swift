import Foundation
import ImagePreview
import Testing
import UploadTesting

/// The preview pane in a real terminal (tmux): the photo under the cursor drawn in text cells,
/// in 24-bit colour, in the 256-colour palette, and as shading without colour.
@Suite(.serialized, .timeLimit(.minutes(3))) struct PreviewTmuxTests {
    /// Red on the left half, blue on the right.
    static func halves(width: Int, height: Int) -> RGBImage {
        var rgb: [UInt8] = []
        for _ in 0..<height { for x in 0..<width { rgb += x < width / 2 ? [230, 20, 20] : [20, 20, 230] } }
        return RGBImage(width: width, height: height, rgb: rgb)
    }

    func folder() throws -> String {
        let root = TestFiles.makeTemporaryDirectory("preview-tmux")
        try PictureWriter.jpeg(
            Self.halves(width: 400, height: 300), to: root + "/a-halves.jpg",
            exif: PictureWriter.exif(orientation: 1, bigEndian: false, make: "Canon", model: "Canon EOS R5", dateTaken: "2024:05:01 10:22:03"))
        try PictureWriter.png(Self.halves(width: 300, height: 200), to: root + "/b-halves.png")
        return root
    }

    /// The foreground colours of the half blocks on the screen's rows, left to right.
    static func blockColours(_ screen: String) -> [[String]] {
        screen.split(separator: "\n").compactMap { line -> [String]? in
            var colours: [String] = []
            var current = ""
            var rest = Substring(line)
            while let escape = rest.firstIndex(where: { $0 == "\u{1B}" || $0 == "▀" }) {
                if rest[escape] == "▀" {
                    colours.append(current)
                    rest = rest[rest.index(after: escape)...]
                    continue
                }
                guard let end = rest[escape...].firstIndex(of: "m") else { break }
                let codes = rest[rest.index(escape, offsetBy: 2)..<end].split(separator: ";").map(String.init)
                var i = 0
                while i < codes.count {
                    if codes[i] == "38", i + 1 < codes.count {
                        let n = codes[i + 1] == "2" ? 5 : 3
                        current = codes[i..<min(codes.count, i + n)].joined(separator: ";")
                        i += n
                    } else if codes[i] == "48", i + 1 < codes.count {
                        i += codes[i + 1] == "2" ? 5 : 3
                    } else {
                        i += 1
                    }
                }
                rest = rest[rest.index(after: end)...]
            }
            return colours.isEmpty ? nil : colours
        }
    }

    /// Whether a foreground code is reddish (r over b) or bluish, in 24-bit or palette form.
    static func redness(_ code: String) -> Int? {
        let parts = code.split(separator: ";").compactMap { Int($0) }
        if parts.count == 5, parts[1] == 2 { return parts[2] - parts[4] }
        if parts.count == 3, parts[1] == 5, (16...231).contains(parts[2]) {
            let i = parts[2] - 16
            return (i / 36 - i % 6) * 51  // the cube steps of 0…5 on the same scale as 0…255
        }
        return nil
    }

    func expectRedLeftOfBlue(_ screen: String, _ what: String) {
        let rows = Self.blockColours(screen)
        #expect(rows.count >= 5, "\(what): no picture on screen:\n\(screen)")
        for row in rows {
            guard let first = row.first.flatMap(Self.redness), let last = row.last.flatMap(Self.redness) else {
                Issue.record("\(what): half blocks without a colour: \(row.prefix(3))")
                return
            }
            #expect(first > 100 && last < -100, "\(what): \(row.first ?? "") … \(row.last ?? "")")
        }
    }

    @Test func aJPEGAndAPNGShowRedCellsLeftOfBlueOnesIn24BitColour() async throws {
        let root = try folder()
        let tmux = try await TmuxSession.start(
            "env -u NO_COLOR COLORTERM=truecolor \(CLIRun.binary) '\(root)' --to http://127.0.0.1:9/photo --notify none --no-agent", width: 140, height: 45)
        defer { tmux.kill() }
        let screen = try await tmux.waitFor { $0.contains("400×300 · 2024-05-01 10:22 · Canon EOS R5") }
        #expect(screen.contains("Preview · a-halves.jpg"), "\(screen)")
        expectRedLeftOfBlue(try await tmux.coloredScreen(), "JPEG")
        // In 24-bit colour; a busy machine may make a frame look like a slow link, and the
        // picture then goes out in the palette until the link has been quiet a while.
        // The pacer forgets a slow judgement after 5 s without answers and draws the picture
        // in full colour again: under a loaded full run that can take a few rounds.
        let colored = try await tmux.waitFor(timeout: 60, colored: true) { $0.contains("38;2;") }
        #expect(
            colored.contains("38;2;"),
            """
            \(colored.components(separatedBy: "38;5;").count - 1) palette colours and no 24-bit one on screen; \
            picture rows: \(colored.split(separator: "\n").filter { $0.contains("▀") }.count)
            """)
        try await tmux.send("j")
        try await tmux.waitFor { $0.contains("300×200 ·") }
        expectRedLeftOfBlue(try await tmux.coloredScreen(), "PNG")
        // Off and on again: the picture goes, the panes it covered come back intact.
        try await tmux.send("p")
        let off = try await tmux.waitFor { !$0.contains("▀") }
        #expect(!off.contains("Preview ·") && off.contains("preview off"), "\(off)")
        try await tmux.send("p")
        try await tmux.waitFor { $0.contains("▀") }
        try await tmux.send("q")
        #expect(try await tmux.waitFor { $0.contains("EXITED") }.contains("EXITED 0"))
    }

    @Test func a256ColourTerminalGetsThePaletteAndNoColourGetsShading() async throws {
        let root = try folder()
        let palette = try await TmuxSession.start(
            "env -u NO_COLOR -u COLORTERM TERM=screen-256color \(CLIRun.binary) '\(root)' --to http://127.0.0.1:9/photo --notify none --no-agent", width: 140,
            height: 45)
        defer { palette.kill() }
        try await palette.waitFor { $0.contains("400×300") && $0.contains("▀") }
        let colored = try await palette.coloredScreen()
        #expect(!colored.contains("38;2;"))
        expectRedLeftOfBlue(colored, "JPEG in 256 colours")

        let plain = try await TmuxSession.start(
            "NO_COLOR=1 \(CLIRun.binary) '\(root)' --to http://127.0.0.1:9/photo --notify none --no-agent", width: 140, height: 45)
        defer { plain.kill() }
        let shaded = try await plain.waitFor { $0.contains("400×300") }
        #expect(!shaded.contains("▀"))
        // Red and blue are darkish: shading characters, a whole block of them.
        #expect(
            shaded.split(separator: "\n").filter { $0.contains("::::::::::") || $0.contains("----------") || $0.contains("..........") }.count >= 5,
            "\(shaded)")
    }

    /// A phone's formats, made by Debian's encoders: each upright, red left of blue, with the
    /// camera exiftool wrote into it on the line under the picture.
    @Test(.enabled(if: ["cwebp", "heif-enc", "avifenc", "exiftool"].allSatisfy { FileManager.default.isExecutableFile(atPath: "/usr/bin/" + $0) }))
    func phonePhotosInWebPHEICAndAVIFShowRedCellsLeftOfBlueOnes() async throws {
        let root = TestFiles.makeTemporaryDirectory("preview-tmux-phone")
        // The encoders' source lies elsewhere, so the folder holds the phone's files alone.
        let png = TestFiles.makeTemporaryDirectory("preview-tmux-source") + "/source.png"
        try PictureWriter.png(Self.halves(width: 400, height: 300), to: png)
        func run(_ tool: String, _ arguments: [String]) throws {
            let result = try ToolRun.run("/usr/bin/" + tool, arguments)
            #expect(result.status == 0, "\(tool) \(arguments)")
        }
        try run("cwebp", ["-quiet", "-q", "90", png, "-o", root + "/a.webp"])
        try run("heif-enc", ["-q", "90", png, "-o", root + "/b.heic"])
        try run("avifenc", ["-s", "10", png, root + "/c.avif"])
        for name in ["a.webp", "b.heic", "c.avif"] {
            try run("exiftool", ["-q", "-overwrite_original", "-Make=Apple", "-Model=iPhone 15", "-DateTimeOriginal=2024:05:01 10:22:03", root + "/" + name])
        }
        let tmux = try await TmuxSession.start(
            "env -u NO_COLOR COLORTERM=truecolor \(CLIRun.binary) '\(root)' --to http://127.0.0.1:9/photo --notify none --no-agent", width: 140, height: 45)
        defer { tmux.kill() }
        for (index, name) in ["a.webp", "b.heic", "c.avif"].enumerated() {
            if index > 0 { try await tmux.send("j") }
            let screen = try await tmux.waitFor { $0.contains("Preview · \(name)") && $0.contains("400×300 · 2024-05-01 10:22 · Apple iPhone 15") }
            #expect(screen.contains("Preview · \(name)") && screen.contains("400×300 · 2024-05-01 10:22 · Apple iPhone 15"), "\(screen)")
            expectRedLeftOfBlue(try await tmux.waitFor(colored: true) { $0.contains("▀") }, name)
        }
        try await tmux.send("q")
        #expect(try await tmux.waitFor { $0.contains("EXITED") }.contains("EXITED 0"))
    }
}
