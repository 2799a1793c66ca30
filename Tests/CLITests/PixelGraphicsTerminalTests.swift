import Foundation
import ImagePreview
import Testing
import UploadTesting

/// The monitor against terminals that answer its graphics questions (a pseudo-terminal driven
/// by `Resources/fake_terminal.py`): kitty gets the photo as kitty graphics and has it deleted
/// when the cursor moves on and at exit; a sixel terminal gets sixel that libsixel's own decoder
/// (`sixel2png`) reads back as the photo; a terminal that answers nothing, or says nothing of
/// graphics, or runs inside tmux, gets half blocks.
@Suite(.serialized, .timeLimit(.minutes(5))) struct PixelGraphicsTerminalTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources/fake_terminal.py").path

    /// Runs the monitor on a JPEG and a PNG (red left, blue right) in a terminal of `mode`;
    /// returns everything it wrote and its exit status.
    func run(_ mode: String) async throws -> (output: [UInt8], status: Int32) {
        let root = try PreviewTmuxTests().folder()
        let out = root + "/terminal.out"
        let status = try await offPool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "python3", Self.script, mode, out, "--", CLIRun.binary, root,
                "--to", "http://127.0.0.1:9/photo", "--notify", "none", "--no-agent",
            ]
            process.standardInput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        return (Array(try Data(contentsOf: URL(fileURLWithPath: out))), status)
    }

    struct KittyImage {
        var width: Int
        var height: Int
        var rgb: [UInt8]
    }

    /// Kitty commands in order: each picture sent (its chunks joined) and each delete.
    static func kittyCommands(_ output: [UInt8]) -> (images: [KittyImage], order: [String], keys: [String]) {
        let text = String(decoding: output, as: UTF8.self)
        var images: [KittyImage] = []
        var order: [String] = []
        var keys: [String] = []
        var current: (width: Int, height: Int, compressed: Bool, payload: String)?
        for piece in text.components(separatedBy: "\u{1B}_G").dropFirst() {
            guard let end = piece.range(of: "\u{1B}\\") else { continue }
            let command = piece[..<end.lowerBound]
            let parts = command.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
            let control = Dictionary(
                parts[0].split(separator: ",").map { kv in
                    let pair = kv.split(separator: "=", maxSplits: 1)
                    return (String(pair[0]), pair.count > 1 ? String(pair[1]) : "")
                }, uniquingKeysWith: { a, _ in a })
            keys.append(String(parts[0]))
            if control["a"] == "T" {
                current = (Int(control["s"] ?? "") ?? 0, Int(control["v"] ?? "") ?? 0, control["o"] == "z", "")
            } else if control["a"] == "d" {
                order.append("delete")
            }
            if current != nil, parts.count > 1 { current!.payload += parts[1] }
            if let image = current, control["m"] == "0" {
                let data = Array(Data(base64Encoded: image.payload) ?? Data())
                let rgb = image.compressed ? PictureWriter.inflate(data, size: image.width * image.height * 3) ?? [] : data
                images.append(KittyImage(width: image.width, height: image.height, rgb: rgb))
                order.append("show")
                current = nil
            }
        }
        return (images, order, keys)
    }

    /// Red in the left tenth of the middle row, blue in the right tenth.
    static func expectRedLeftOfBlue(width: Int, height: Int, rgb: [UInt8], _ what: String) {
        guard width > 10, height > 2, rgb.count == width * height * 3 else {
            Issue.record("\(what): \(width)x\(height) with \(rgb.count) bytes")
            return
        }
        func pixel(_ x: Int) -> (Int, Int) {
            let i = ((height / 2) * width + x) * 3
            return (Int(rgb[i]), Int(rgb[i + 2]))
        }
        let left = pixel(width / 10)
        let right = pixel(width - 1 - width / 10)
        #expect(left.0 - left.1 > 100 && right.1 - right.0 > 100, "\(what): left \(left), right \(right)")
    }

    static func halfBlocks(_ output: [UInt8]) -> Int {
        String(decoding: output, as: UTF8.self).filter { $0 == "▀" }.count
    }

    @Test func kittyShowsThePhotoInPixelsAndDeletesItWhenTheCursorMovesOnAndAtExit() async throws {
        let (output, status) = try await run("kitty")
        #expect(status == 0)
        let (images, order, keys) = Self.kittyCommands(output)
        #expect(images.count == 2, "a picture for the JPEG and one for the PNG")
        // Pixels 1:1 in the pane's 10x20-pixel cells: the 400x300 JPEG fits its box, the
        // 300x200 PNG is shown at its own size.
        for (image, what) in zip(images, ["JPEG", "PNG"]) {
            Self.expectRedLeftOfBlue(width: image.width, height: image.height, rgb: image.rgb, what)
        }
        #expect(images.last.map { ($0.width, $0.height) } ?? (0, 0) == (300, 200))
        #expect(order == ["show", "delete", "show", "delete"], "\(order)")
        #expect(keys.filter { $0.hasPrefix("a=T") }.allSatisfy { $0.contains("o=z") }, "photos go compressed: \(keys.prefix(4))")
        // Every command after the question asks for no answer: nothing arrives as a key.
        #expect(keys.dropFirst().allSatisfy { $0.contains("q=2") || $0.hasPrefix("m=") }, "\(keys.prefix(4))")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sixel2png"), "needs libsixel-bin"))
    func aSixelTerminalGetsSixelThatLibsixelDecodesToThePhoto() async throws {
        let (output, status) = try await run("sixel")
        #expect(status == 0)
        let text = String(decoding: output, as: UTF8.self)
        let sixels = text.components(separatedBy: "\u{1B}P0;0;0q").dropFirst().compactMap { piece in
            piece.range(of: "\u{1B}\\").map { "\u{1B}P0;0;0q" + piece[..<$0.upperBound] }
        }
        #expect(sixels.count == 2, "a picture for the JPEG and one for the PNG")
        let root = TestFiles.makeTemporaryDirectory("sixel-decoded")
        for (i, sixel) in sixels.enumerated() {
            let input = root + "/\(i).six"
            let png = root + "/\(i).png"
            try Data(sixel.utf8).write(to: URL(fileURLWithPath: input))
            let decoder = Process()
            decoder.executableURL = URL(fileURLWithPath: "/usr/bin/sixel2png")
            decoder.arguments = ["-i", input, "-o", png]
            try decoder.run()
            decoder.waitUntilExit()
            #expect(decoder.terminationStatus == 0)
            let image = try PreviewDecoder.decode(path: png, fitting: 4000, 4000).get().image
            Self.expectRedLeftOfBlue(width: image.width, height: image.height, rgb: image.rgb, "sixel \(i)")
        }
        #expect(!text.contains("\u{1B}_Ga=T"))
    }

    /// `slow` answers after the wait: its answer reaches the monitor's keyboard input and must
    /// not act as keys (`?` would open the help, and the `j` and `q` that follow would go to it).
    @Test(arguments: ["plain", "mute", "slow", "tmux", "screen"])
    func withoutPixelsThePhotoIsDrawnInHalfBlocks(mode: String) async throws {
        let (output, status) = try await run(mode)
        #expect(status == 0)
        let text = String(decoding: output, as: UTF8.self)
        #expect(Self.halfBlocks(output) > 100, "\(mode): half blocks")
        #expect(!text.contains("\u{1B}_Ga=T") && !text.contains("\u{1B}P0;0;0q"), "\(mode): no pixels")
        if mode == "tmux" { #expect(!text.contains("\u{1B}_Gi=31"), "a tmux that passes nothing on: the terminal is not asked") }
        if mode == "screen" {
            #expect(text.contains("\u{1B}[>q"), "a multiplexer known by TERM is asked its name")
            #expect(!text.contains("\u{1B}Ptmux;") && !text.contains("\u{1B}_Gi=31"), "screen gets no tmux passthrough, nothing else asked")
        }
    }

    /// The monitor walked through a folder longer than its list (the list scrolls), with a key
    /// held, into the help and out, to the queue pane and back, resized to the narrow layout
    /// (the list beside the picture) and back, to the end and the start, then every photo queued
    /// and failing (the log scrolls beside the picture), in a terminal whose
    /// screen is modelled cell by cell (`Resources/screen_model.py`): after every step, nothing
    /// of an earlier picture may show and the last one must be whole (sixel: pixels are replaced
    /// by whatever is written into their cells; kitty: images stay over the cells until deleted,
    /// hiding text). `kitty-slow` answers the frame question as a link of 1 Mbit/s would, so
    /// frames are skipped and pictures go lighter (kitty: halved twice) until the link has been quiet a while, then
    /// whole. Without the removal of a sixel picture's rows, or of kitty's images, this fails on
    /// the first step.
    /// Walks the monitor on the photos in `root` through `steps` in `Resources/walk_terminal.py`
    /// (`mode`: sixel, kitty, with -slow or -veryslow); its exit status and report lines.
    func walk(_ mode: String, _ root: String, steps: String) async throws -> (status: Int32, lines: [String]) {
        let out = root + "/walk.out"
        let script = URL(fileURLWithPath: Self.script).deletingLastPathComponent().appendingPathComponent("walk_terminal.py").path
        let status = try await offPool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "python3", script, mode, out, steps, "--", CLIRun.binary, root,
                "--to", "http://127.0.0.1:9/photo", "--notify", "none", "--no-agent",
            ]
            process.standardInput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        return (status, try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").map(String.init))
    }

    /// A folder of 45 small photos, each its own colour beside a white strip: longer than the
    /// list, so walking it scrolls. The colour is grainy, as a photo is: flat, it would compress
    /// to almost nothing and cost a slow link no more than a light picture does.
    static func walkFolder(_ name: String) throws -> String {
        let root = TestFiles.makeTemporaryDirectory(name)
        for i in 0..<45 {
            var rgb: [UInt8] = []
            let colour: [UInt8] = [UInt8(i * 37 % 256), UInt8(255 - i * 5), UInt8(i * 91 % 256)]
            var grain: UInt32 = UInt32(i + 1) &* 2_654_435_761
            for _ in 0..<150 {
                for x in 0..<200 {
                    if x < 50 {
                        rgb += [250, 250, 250]
                        continue
                    }
                    for c in colour {
                        grain = grain &* 1_664_525 &+ 1_013_904_223
                        rgb.append(UInt8(clamping: Int(c) + Int(grain >> 26) - 32))
                    }
                }
            }
            try PictureWriter.jpeg(RGBImage(width: 200, height: 150, rgb: rgb), to: root + String(format: "/photo-%02d.jpg", i))
        }
        return root
    }

    /// On a link of 120 kbit/s even a light picture takes seconds: once the first picture's
    /// answer shows it, the preview goes in half blocks (and nothing of the pictures in pixels
    /// is left on the screen).
    @Test func aLinkTooSlowEvenForLightPicturesGetsHalfBlocks() async throws {
        let root = TestFiles.makeTemporaryDirectory("pixel-veryslow")
        for i in 0..<3 {
            // A gradient with a fine texture: dithered, it costs sixel bytes as a photo does.
            var rgb: [UInt8] = []
            rgb.reserveCapacity(480 * 360 * 3)
            for y in 0..<360 {
                for x in 0..<480 {
                    rgb += [UInt8((x * 255 / 480 + i * 40) % 256), UInt8(y * 255 / 360), UInt8(((x ^ y) * 7 + i * 50) % 256)]
                }
            }
            try PictureWriter.jpeg(RGBImage(width: 480, height: 360, rgb: rgb), to: root + "/photo-\(i).jpg")
        }
        let (status, lines) = try await walk("sixel-veryslow", root, steps: "wait:3,j,wait:4,k,wait:3")
        #expect(status == 0)
        let pictures = lines.first.flatMap { Int($0.replacing("pictures ", with: "")) } ?? 0
        let halves = lines.dropFirst(2).first.flatMap { Int($0.replacing("halfblocks ", with: "")) } ?? 0
        #expect(pictures >= 1, "the first picture goes in pixels: \(lines.prefix(3))")
        #expect(halves > 100, "the last in half blocks: \(lines.prefix(3))")
        #expect(lines.count == 3, "nothing left behind:\n\(lines.dropFirst(3).prefix(12).joined(separator: "\n"))")
    }

    @Test(arguments: ["sixel", "kitty-slow"])
    func nothingAPictureDrewIsLeftBehind(mode: String) async throws {
        let root = try Self.walkFolder("pixel-walk")
        let slow = mode.hasSuffix("-slow")
        // Last, every photo queued to a port where nothing listens: failures fill the log (it
        // scrolls beside the picture) while the cursor rests.
        let steps =
            "j*3,j~12,j*12,?,Escape,Tab,Tab,k,PageUp,resize:96x40,j*4,k~6,resize:120x40,G,g,j"
            + (slow ? ",wait:7" : "") + ",Star,u,wait:3"
        let (status, lines) = try await walk(mode, root, steps: steps)
        #expect(status == 0)
        let pictures = lines.first.flatMap { Int($0.replacing("pictures ", with: "")) } ?? 0
        // At least some steps ended with a picture in pixels (how many depends on how soon the
        // machine decodes: a step moves on after 0.6 s of quiet).
        #expect(pictures >= 8, "\(mode): pictures drawn in pixels: \(pictures)")
        let widths = lines.dropFirst().first.map { $0.split(separator: " ").dropFirst().compactMap { Int($0.split(separator: "x")[0]) } } ?? []
        let problems = lines.dropFirst(3).prefix(12).joined(separator: "\n")
        #expect(lines.count == 3, "\(mode):\n\(problems)")
        #expect(widths.count == pictures, "a size for every picture: \(lines.prefix(2))")
        if slow, let widest = widths.max() {
            let firstLight = widths.firstIndex { $0 * 2 <= widest + 1 }
            #expect(firstLight != nil, "on a slow link pictures go lighter: \(widths)")
            #expect(firstLight.map { widths[$0...].contains(widest) } ?? false, "and whole again once the link has been quiet: \(widths)")
        }
    }
}
