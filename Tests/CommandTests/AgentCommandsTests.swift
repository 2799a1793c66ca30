import Foundation
import Testing
import UploadAgent
import UploadCommands
import UploadCore
import UploadJournal
import UploadTesting

@Suite("status, jobs, watch and agent config, without an agent")
struct AgentCommandsTests {
    static func paths(_ folder: String) -> StatePaths {
        StatePaths(stateDirectory: folder + "/state", runtimeDirectory: folder + "/run")
    }

    @Test("settings options that contradict or do not parse are refused with the reason")
    func settingsRefusals() {
        #expect(AgentSettingsChange(between: "09:00-18:00", allDay: true).refusal == "--between and --all-day contradict each other; give one")
        #expect(AgentSettingsChange(limitRate: "fast").refusal?.hasPrefix("--limit-rate 'fast' is not a rate") == true)
        #expect(AgentSettingsChange(between: "25:00-26:00").refusal != nil)
        #expect(AgentSettingsChange(limitRate: "none").refusal == nil)
        #expect(!AgentSettingsChange().changes)
    }

    @Test("a change applies to what is stored: none drops the window with the rate, --all-day drops the window")
    func settingsChanged() throws {
        var stored = AgentSettings()
        stored = try AgentSettingsChange(concurrency: 4, limitRate: "2MB", between: "09:00-18:00").changed(stored)
        #expect(stored.concurrency == 4 && stored.rateLimit == 2_000_000 && stored.limitWindow != nil)
        #expect(try AgentSettingsChange(allDay: true).changed(stored).limitWindow == nil)
        let unlimited = try AgentSettingsChange(limitRate: "none").changed(stored)
        #expect(unlimited.rateLimit == nil && unlimited.limitWindow == nil)
    }

    @Test("config stores the change and says no agent runs to take it; a second look shows it")
    func configRun() throws {
        let folder = TestFiles.makeTemporaryDirectory("config")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let paths = Self.paths(folder)
        let recorder = OutputRecorder()
        try AgentSettingsChange(concurrency: 3).run(paths: paths, output: recorder.output, now: Date())
        #expect(try AgentSettings.load(paths.agentSettings).concurrency == 3)
        #expect(recorder.said().last == "No agent is running; it starts with these.")
        try AgentSettingsChange().run(paths: paths, output: recorder.output, now: Date())
        #expect(recorder.said().last == "No agent is running; these apply when it starts.")
    }

    @Test("status and jobs with no journal yet say how to begin; --json is one document")
    func statusEmpty() throws {
        let folder = TestFiles.makeTemporaryDirectory("status")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recorder = OutputRecorder()
        let report = StatusReport(paths: Self.paths(folder), output: recorder.output)
        try report.run(json: false, limit: 50, now: Date())
        #expect(recorder.said().last?.hasPrefix("No background uploads yet.") == true)
        try report.jobs(json: false, now: Date())
        #expect(recorder.said().last?.hasPrefix("No jobs yet") == true)
        try report.run(json: true, limit: 50, now: Date())
        let document = try #require(recorder.said("json").first)
        let object = try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any]
        #expect((object?["uploads"] as? [Any])?.isEmpty == true)
        #expect(object?["journal"] as? String == Self.paths(folder).journal)
        #expect(throws: CommandFailure.usage("no watch of /nowhere; `uploadmon jobs` lists the jobs")) { try report.jobID("/nowhere") }
        #expect(try report.jobID("12") == 12)
    }

    @Test("a watched folder is one absolute path with links resolved; a file cannot be watched")
    func watchFolder() throws {
        let folder = TestFiles.makeTemporaryDirectory("watch")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/real", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: folder + "/real")
        let resolved = try WatchSetup.folderPath(folder + "/link/../link")
        #expect(resolved.hasSuffix("/real"))
        try Data().write(to: URL(fileURLWithPath: folder + "/file"))
        #expect(throws: CommandFailure.usage("cannot watch \(folder)/file: it is not a folder")) { try WatchSetup.folderPath(folder + "/file") }
        #expect(throws: CommandFailure.self) { try WatchSetup.folderPath(folder + "/missing") }
    }

    @Test("what send --background says of each file the agent took or refused")
    func backgroundWording() throws {
        let recorder = OutputRecorder()
        let record = UploadRecord(id: UploadID(7), name: "cat.jpg", path: "/p/cat.jpg", url: "http://h/photo", origin: "send", fileSize: 10, createdAt: Date())
        let send = BackgroundSend(settings: TransportSettings(), json: false, output: recorder.output)
        let refused = send.report([.queued(record), .refused(path: "/p/x.txt", reason: "not an image")])
        send.sayContinuing(agentPID: 99, started: true)
        #expect(refused == 1)
        #expect(recorder.said().first == "queued #7 cat.jpg → http://h/photo")
        #expect(
            recorder.said().last == "The uploads continue in the background (started the agent (pid 99)). Follow them with `uploadmon status` or the monitor.")
        #expect(recorder.said("err") == ["uploadmon: /p/x.txt: not an image"])

        let json = OutputRecorder()
        let quiet = BackgroundSend(settings: TransportSettings(), json: true, output: json.output)
        _ = quiet.report([.queued(record)])
        quiet.sayContinuing(agentPID: 99, started: false)
        let line = try #require(json.said("json").first)
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(object?["event"] as? String == "queued" && object?["id"] as? Int == 7 && object?["file"] as? String == "/p/cat.jpg")
        #expect(json.said().isEmpty)
    }
}

@Suite("the demo's samples")
struct DemoSamplesTests {
    @Test("real PNGs, a Japanese name, a subfolder, and a text file named like a JPEG; written once, reused after")
    func samples() throws {
        let folder = TestFiles.makeTemporaryDirectory("demo")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let files = try DemoSamples.write(into: folder, bigBytes: 300_000)
        #expect(
            files.map { ($0 as NSString).lastPathComponent } == ["sunrise.png", "夕焼け.png", "city-night.png", "mountain-large.png", "tiny.png", "notes.jpg"])
        for file in files.dropLast() {
            let head = try #require(FileHandle(forReadingAtPath: file)?.readData(ofLength: 8))
            #expect(Array(head) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "\(file)")
        }
        #expect(MediaSniffer.sniff(Array(try Data(contentsOf: URL(fileURLWithPath: files.last!)))) == nil)
        let before = try FileManager.default.attributesOfItem(atPath: files[3])[.modificationDate] as? Date
        _ = try DemoSamples.write(into: folder, bigBytes: 300_000)
        #expect(try FileManager.default.attributesOfItem(atPath: files[3])[.modificationDate] as? Date == before)
    }
}
