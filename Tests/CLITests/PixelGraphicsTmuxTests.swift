import Foundation
import ImagePreview
import TerminalCanvas
import Testing
import UploadTesting

/// The monitor inside a real tmux, inside a terminal that answers as kitty would
/// (`Resources/outer_terminal.py`): through tmux's passthrough it asks the terminal around tmux,
/// and where that terminal draws Unicode placeholders (kitty 0.28 and later) the photo goes as a
/// virtual placement, shown by placeholder cells tmux keeps as text; an older kitty, or a tmux
/// that passes nothing on, gets half blocks.
@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: TmuxSession.isAvailable))
struct PixelGraphicsTmuxTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources/outer_terminal.py").path

    struct Run {
        var output: [UInt8]
        var panes: [String]
        var status: Int32
        var text: String { String(decoding: output, as: UTF8.self) }
    }

    /// Runs the monitor on a JPEG and a PNG (red left, blue right) in tmux (`passthrough` its
    /// `allow-passthrough`) in a terminal that calls itself `version`; once the photo is
    /// `shown` (`pixels` or `cells`) moves to the second
    /// photo and quits. Returns what tmux wrote to the terminal and the pane as tmux held it
    /// at each photo.
    func run(
        version: String, passthrough: String, shown: String, folder: String? = nil, steps: String = "",
        byNameOnly: Bool = false
    ) async throws -> Run {
        let root = try folder ?? PreviewTmuxTests().folder()
        let out = root + "/terminal.out"
        let conf = root + "/tmux.conf"
        try "set -g allow-passthrough \(passthrough)\nset -g status off\n".write(toFile: conf, atomically: true, encoding: .utf8)
        let socket = "uploadmon-pixels-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        // The shell outlives the monitor a moment: tmux passes on everything the pane wrote.
        // `byNameOnly`: as on the far side of an SSH link, only TERM says tmux.
        // The terminal here is a Python script: on a loaded machine it may answer later than a
        // real terminal's 150 ms, so the least wait after tmux's answer is raised.
        let prefix = byNameOnly ? "env -u TMUX -u TMUX_PANE TERM=tmux-256color UPLOADMON_TMUX_NEIGHBOUR_MS=1000 " : ""
        let inner = "\(prefix)\(CLIRun.binary) '\(root)' --to http://127.0.0.1:9/photo --notify none --no-agent; sleep 1"
        // Not through Foundation's Process: the tmux server started below would inherit its
        // exit-watch pipe (`TmuxSession.spawnAndWait`).
        let status = try await offPool {
            try TmuxSession.spawnAndWait([
                "python3", Self.script, version, shown, out, "tmux -L \(socket) capture-pane -t pixels", steps, "--",
                "tmux", "-L", socket, "-f", conf, "new-session", "-s", "pixels", "-x", "120", "-y", "40", inner,
            ])
        }
        let panes = Array((1...).lazy.map { (try? String(contentsOfFile: out + ".pane\($0)", encoding: .utf8)) }.prefix { $0 != nil }.map { $0! })
        if status != 0 {
            // Where the walk was and the last of what tmux wrote: what a walk that hit its limit leaves to go on.
            let phase = (try? String(contentsOfFile: out + ".phase", encoding: .utf8)) ?? "?"
            let written = (try? Data(contentsOf: URL(fileURLWithPath: out))).map { String(decoding: $0.suffix(3000), as: UTF8.self) } ?? ""
            print("PixelGraphicsTmuxTests: exit \(status) while \(phase)the last of what tmux wrote: \(written.debugDescription)")
        }
        if let unsettled = try? String(contentsOfFile: out + ".unsettled", encoding: .utf8) {
            // Not a failure by itself (the panes are checked as they are), but said.
            print("PixelGraphicsTmuxTests: the screen did not settle:\n\(unsettled.debugDescription.prefix(2000))")
        }
        return Run(output: Array(try Data(contentsOf: URL(fileURLWithPath: out))), panes: panes, status: status)
    }

    struct Placeholder: Equatable {
        var row: Int
        var column: Int
        var high: Int
        var colour: Int
        var line: Int
        /// The pane column it is in.
        var x: Int
    }

    /// The placeholder cells in a pane captured with its colours (`capture-pane -e`), each with
    /// the row, column and high byte its diacritics say and its 256-colour foreground.
    static func placeholders(_ pane: String) -> [Placeholder] {
        let index = Dictionary(uniqueKeysWithValues: KittyPlaceholders.diacritics.enumerated().map { ($1, $0) })
        var cells: [Placeholder] = []
        for (number, line) in pane.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var colour = -1
            let scalars = Array(line.unicodeScalars)
            var x = 0
            var i = 0
            while i < scalars.count {
                if scalars[i] == "\u{1B}", i + 1 < scalars.count, scalars[i + 1] == "[" {
                    var j = i + 2
                    while j < scalars.count, !("@"..."~").contains(scalars[j]) { j += 1 }
                    if j < scalars.count, scalars[j] == "m" {
                        let fields = String(String.UnicodeScalarView(scalars[(i + 2)..<j])).split(separator: ";").map { Int($0) ?? -1 }
                        var k = 0
                        while k < fields.count {
                            if fields[k] == 38, k + 2 < fields.count, fields[k + 1] == 5 {
                                colour = fields[k + 2]
                                k += 3
                                continue
                            }
                            if fields[k] == 0 || fields[k] == 39 || fields.isEmpty { colour = -1 }
                            k += 1
                        }
                        if fields.isEmpty { colour = -1 }
                    }
                    i = j + 1
                    continue
                }
                if scalars[i].value == 0x10EEEE {
                    var marks: [Int] = []
                    var j = i + 1
                    while j < scalars.count, let n = index[scalars[j].value] {
                        marks.append(n)
                        j += 1
                    }
                    cells.append(
                        Placeholder(
                            row: marks.count > 0 ? marks[0] : -1, column: marks.count > 1 ? marks[1] : -1,
                            high: marks.count > 2 ? marks[2] : 0, colour: colour, line: number, x: x))
                    x += 1
                    i = j
                    continue
                }
                if scalars[i].properties.generalCategory != .nonspacingMark { x += 1 }
                i += 1
            }
        }
        return cells
    }

    /// The control keys of every kitty command tmux passed on, in order.
    static func kittyKeys(_ text: String) -> [[String: String]] {
        text.components(separatedBy: "\u{1B}_G").dropFirst().map { piece in
            let control = piece.prefix { $0 != ";" && $0 != "\u{1B}" }
            return Dictionary(
                control.split(separator: ",").map { kv in
                    let pair = kv.split(separator: "=", maxSplits: 1)
                    return (String(pair[0]), pair.count > 1 ? String(pair[1]) : "")
                }, uniquingKeysWith: { a, _ in a })
        }
    }

    @Test func kittyWithPlaceholdersGetsThePhotoAsPlaceholderCellsTmuxKeeps() async throws {
        let run = try await run(version: "kitty(0.35.2)", passthrough: "on", shown: "pixels")
        #expect(run.status == 0, "exit status \(run.status)")
        let commands = Self.kittyKeys(run.text)
        #expect(commands.first?["a"] == "q", "the question passed through tmux")
        // Every picture is a virtual placement, never placed at tmux's cursor; nothing answers.
        let placements = commands.filter { $0["a"] == "T" }
        #expect(placements.count == 2, "a picture for the JPEG and one for the PNG")
        #expect(placements.allSatisfy { $0["U"] == "1" && $0["q"] == "2" && $0["i"] != nil && $0["o"] == "z" }, "\(placements)")
        #expect(commands.dropFirst().allSatisfy { $0["q"] == "2" }, "no command asks for an answer")
        let images = PixelGraphicsTerminalTests.kittyCommands(run.output).images
        for (image, what) in zip(images, ["JPEG", "PNG"]) {
            PixelGraphicsTerminalTests.expectRedLeftOfBlue(width: image.width, height: image.height, rgb: image.rgb, what)
        }
        // The picture on screen is deleted, by its id only, when the cursor moves on and at exit.
        let order = commands.compactMap { c -> String? in c["a"] == "T" ? "show" : c["a"] == "d" ? "delete \(c["d"] ?? "")" : nil }
        #expect(order == ["show", "delete I", "show", "delete I"], "\(order)")

        for (pane, placement) in zip(run.panes, placements) {
            let id = Int(placement["i"] ?? "") ?? -1
            let columns = Int(placement["c"] ?? "") ?? -1
            let rows = Int(placement["r"] ?? "") ?? -1
            let cells = Self.placeholders(pane)
            #expect(cells.count == columns * rows && columns > 10 && rows > 5, "\(cells.count) placeholder cells for \(columns)x\(rows)")
            #expect(cells.allSatisfy { $0.colour == id & 0xFF && $0.high == id >> 24 }, "every cell carries the id \(id)")
            // Row by row, left to right, each pane line one row of the picture.
            let expected = (0..<rows).flatMap { row in (0..<columns).map { (row, $0) } }
            #expect(cells.map { [$0.row, $0.column] } == expected.map { [$0.0, $0.1] })
            #expect(Set(cells.map(\.line)).count == rows)
        }
    }

    /// Whether the placeholder cells are one whole picture (every row and column once, rows on
    /// consecutive lines, each starting at the same column, one id) or none.
    static func wholeOrNone(_ cells: [Placeholder]) -> Bool {
        guard let first = cells.first else { return true }
        let rows = (cells.map(\.row).max() ?? 0) + 1
        let columns = (cells.map(\.column).max() ?? 0) + 1
        guard cells.count == rows * columns else { return false }
        for (n, cell) in cells.enumerated() {
            let row = n / columns
            let column = n % columns
            guard cell.row == row, cell.column == column, cell.line == first.line + row, cell.x == first.x + column,
                cell.colour == first.colour, cell.high == first.high
            else { return false }
        }
        return true
    }

    /// A walk through a folder longer than the list (it scrolls), with a key held, into the
    /// help and out, to the queue pane and back, to the end and the start, resized and back:
    /// after every step the pane holds one whole picture of placeholders or none, never a piece.
    @Test func aWalkLeavesNoPieceOfAPictureInThePane() async throws {
        let root = try PixelGraphicsTerminalTests.walkFolder("pixels-tmux-walk")
        let steps = "j~12,j,j,?,Escape,Tab,Tab,G,g,resize:96x40,j,resize:120x40,k"
        let run = try await run(version: "kitty(0.35.2)", passthrough: "on", shown: "pixels", folder: root, steps: steps)
        #expect(run.status == 0, "exit status \(run.status)")
        let names = ["first", "j"] + steps.split(separator: ",").map(String.init)
        #expect(run.panes.count == names.count, "a capture after every step")
        for (pane, name) in zip(run.panes, names) {
            let cells = Self.placeholders(pane)
            let rows = Set(cells.map(\.row)).sorted()
            let lines = Set(cells.map(\.line)).sorted()
            #expect(Self.wholeOrNone(cells), "after \(name): \(cells.count) placeholder cells, not one whole picture (picture rows \(rows) on lines \(lines))")
        }
        // Resting on a photo at the end: its picture is there.
        #expect(run.panes.last.map { Self.placeholders($0).count > 20 } ?? false)
    }

    /// The monitor on a remote host, tmux on this side: TMUX is not set where the monitor runs,
    /// TERM says tmux. Tmux is asked its name, then the terminal through it.
    @Test(arguments: ["on", "off"])
    func aTmuxKnownOnlyByNameIsAskedWhatItIs(passthrough: String) async throws {
        let run = try await run(version: "kitty(0.35.2)", passthrough: passthrough, shown: passthrough == "on" ? "pixels" : "cells", byNameOnly: true)
        #expect(run.status == 0, "exit status \(run.status)")
        if passthrough == "on" {
            #expect(run.panes.allSatisfy { Self.placeholders($0).count > 20 && Self.wholeOrNone(Self.placeholders($0)) }, "placeholders")
        } else {
            #expect(!run.text.contains("\u{1B}_G"), "tmux passed nothing on")
            #expect(run.panes.allSatisfy { $0.filter { $0 == "▀" }.count > 100 }, "half blocks in the pane")
        }
    }

    /// A tmux known only by name that names itself after the wait for it ended (a slow link, a
    /// loaded machine): its late `ESC P > | tmux 3.3a ESC \\` must not reach the keys, where
    /// `m`, `u` and the space would mark and upload the photo under the cursor. Here the script
    /// plays the tmux itself (no tmux between), naming itself 1.5 s late.
    @Test func aLateNameFromTmuxIsNotTakenForKeys() async throws {
        let asked = S3RedirectTests.Seen()
        let server = try S3RedirectTests.server(asked) { "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" }
        defer { server.stop() }
        let root = try PreviewTmuxTests().folder()
        let out = root + "/terminal.out"
        let monitor =
            "env -u TMUX -u TMUX_PANE TERM=tmux-256color \(CLIRun.binary) '\(root)' --to http://127.0.0.1:\(server.port)/photo --notify none --no-agent"
        let status = try await offPool {
            try TmuxSession.spawnAndWait([
                "env", "OUTER_LATE_NAME_MS=1500", "python3", Self.script, "tmux 3.3a", "cells", out, "true", "resize:100x30",
                "--", "sh", "-c", monitor,
            ])
        }
        let written = String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: out))) ?? Data(), as: UTF8.self)
        #expect(status == 0, "exit status \(status)")
        #expect(written.contains("▀"), "the photo in half blocks")
        #expect(asked.all.isEmpty, "the late answer was taken for keys: \(asked.all)")
    }

    @Test func kittyWithoutPlaceholdersGetsHalfBlocksInsideTmux() async throws {
        let run = try await run(version: "kitty(0.26.5)", passthrough: "on", shown: "cells")
        #expect(run.status == 0, "exit status \(run.status)")
        #expect(run.text.contains("\u{1B}_Gi=31"), "the terminal around tmux was asked")
        #expect(!run.text.contains("\u{1B}_Ga=T"), "no pictures tmux cannot keep")
        #expect(run.panes.allSatisfy { $0.filter { $0 == "▀" }.count > 100 }, "half blocks in the pane")
    }

    @Test func aTmuxThatPassesNothingOnIsNotAsked() async throws {
        let run = try await run(version: "kitty(0.35.2)", passthrough: "off", shown: "cells")
        #expect(run.status == 0, "exit status \(run.status)")
        #expect(!run.text.contains("\u{1B}_G"), "nothing asked, nothing sent")
        #expect(run.panes.allSatisfy { $0.filter { $0 == "▀" }.count > 100 }, "half blocks in the pane")
    }
}
