import Foundation
import Receiver
import Testing
import UploadCommands
import UploadCore
import UploadTesting

/// The options every sending command shares, and `serve`'s, checked in process: each refusal
/// in the words the command prints, and what the accepted ones make.
@Suite struct OptionChoicesTests {
    static func refusal(
        _ to: String = "http://127.0.0.1:3000/photo", environment: [String: String] = [:],
        _ change: (inout UploadChoices) -> Void = { _ in }
    ) -> String? {
        var choices = UploadChoices(to: to)
        change(&choices)
        return choices.refusal(environment: environment)
    }

    @Test func everySendingOptionIsRefusedByNameWithWhatItTakes() {
        #expect(Self.refusal() == nil)
        #expect(Self.refusal("ftp://h/x") == "'ftp://h/x' is not an http, https or s3 URL")
        #expect(Self.refusal { $0.limitRate = "fast" }?.hasPrefix("--limit-rate") == true)
        #expect(Self.refusal { $0.limitRate = "10" }?.contains("500k or 20MB") == true, "under 1024 bytes a second")
        #expect(Self.refusal { $0.chunkSize = "0" }?.hasPrefix("--chunk-size") == true)
        #expect(Self.refusal { $0.concurrency = 0 } == "--concurrency must be at least 1")
        #expect(Self.refusal { $0.retries = -1 } == "--retries cannot be negative")
        #expect(Self.refusal { $0.retries = 1001 }?.contains("allowed 0 to 1000") == true)
        #expect(Self.refusal { $0.connectTimeout = "soon" }?.hasPrefix("--connect-timeout") == true)
        #expect(Self.refusal { $0.answerTimeout = "-1s" }?.hasPrefix("--answer-timeout") == true)
        #expect(Self.refusal { $0.proxy = "ftp://proxy:21" } != nil, "a proxy of no scheme it speaks")
        #expect(Self.refusal { $0.createDirs = true }?.contains("--create-dirs") == true, "only with --put")
        #expect(
            Self.refusal {
                $0.put = true
                $0.formFields = ["a=b"]
            }?.contains("-F") == true, "a PUT has no form")
    }

    @Test func aDestinationListIsNotOneURLAndTakesNoNetrc() {
        #expect(Self.refusal("@urls.txt") == nil, "the list's URLs are checked as it is read")
        #expect(Self.refusal("@urls.txt") { $0.netrc = true } == DestinationList.netrcRefusal)
        #expect(UploadChoices(to: "@urls.txt").destinationList == "urls.txt")
        #expect(UploadChoices(to: "http://h/p").destinationList == nil)
        // A URL without a scheme is http://, as curl reads it; lists and paths stay as written.
        #expect(UploadChoices(to: "127.0.0.1:3000/photo").to == "http://127.0.0.1:3000/photo")
        #expect(UploadChoices(to: "example.com").to == "http://example.com")
        #expect(UploadChoices(to: "[::1]:80/p").to == "http://[::1]:80/p")
        for kept in ["@urls.txt", "s3://bucket/key", "https://h/p", "/photo", ""] { #expect(UploadChoices(to: kept).to == kept) }
    }

    @Test func aProxyFromTheEnvironmentIsCheckedAsOneGivenIs() {
        #expect(Self.refusal("https://example.com/photo", environment: ["https_proxy": "gopher://p:70"]) != nil)
        #expect(Self.refusal("https://example.com/photo", environment: ["https_proxy": "http://p:3128"]) == nil)
    }

    @Test func theSettingsCarryWhatWasChosen() {
        var choices = UploadChoices(to: "https://example.com/photo")
        (choices.limitRate, choices.chunkSize, choices.connectTimeout, choices.retries) = ("500k", "6MiB", "1m30s", 3)
        (choices.noResume, choices.noDigest, choices.stripLocation, choices.insecure) = (true, true, true, true)
        choices.put = true
        let settings = choices.transportSettings(for: choices.to, environment: ["https_proxy": "http://p:3128"])
        #expect(settings.rateLimit == 512_000, "k is 1024, as curl reads it")
        #expect(settings.chunkSize == 6 << 20)
        #expect(settings.connectTimeout == 90)
        #expect(settings.retries == 3)
        #expect(!settings.resume && !settings.digests && settings.stripLocation && settings.insecure)
        #expect(settings.uploadProtocol == .put, "--put is the put protocol")
        #expect(settings.proxy == "http://p:3128")
        #expect(choices.transportSettings(for: choices.to, environment: [:]).proxy == nil)
        // The no-proxy list travels with the proxy (read per request, so a redirect is routed by
        // its own host); a list of every host leaves no proxy at all.
        let listed = choices.transportSettings(for: choices.to, environment: ["https_proxy": "http://p:3128", "no_proxy": "example.com"])
        #expect(listed.proxy == "http://p:3128" && listed.noProxy == "example.com")
        choices.noProxy = "*"
        #expect(choices.transportSettings(for: choices.to, environment: ["https_proxy": "http://p:3128"]).proxy == nil)
        #expect(UploadChoices.standard.transportSettings(for: "http://h/p", environment: [:]).uploadProtocol == .auto)
    }

    static func serving(_ change: (inout ServeArguments) -> Void) -> Result<ReceiverConfiguration, RangeError> {
        var arguments = ServeArguments()
        change(&arguments)
        return Result { () throws(RangeError) in try arguments.configuration() }
    }

    static func refused(_ change: (inout ServeArguments) -> Void) -> String? {
        if case .failure(let error) = serving(change) { return error.message }
        return nil
    }

    @Test func serveRefusesEachOptionByName() {
        #expect(Self.refused { $0.maxSize = "big" }?.hasPrefix("--max-size") == true)
        #expect(Self.refused { $0.port = 70000 } == "--port must be between 0 and 65535")
        #expect(Self.refused { $0.field = "" } == "--field cannot be empty")
        #expect(Self.refused { $0.tlsCert = "cert.pem" } == "HTTPS needs both --tls-cert and --tls-key")
        #expect(Self.refused { $0.maxConnections = 0 } == "--max-connections must be between 1 and 1000000")
        #expect(Self.refused { $0.headerTimeout = "never" }?.hasPrefix("--header-timeout") == true)
        #expect(Self.refused { $0.shutdownGrace = "-5s" }?.hasPrefix("--shutdown-grace") == true)
        #expect(Self.refused { $0.resumeMaxAge = "forever" }?.hasPrefix("--resume-max-age") == true)
        #expect(Self.refused { $0.resumeIdle = "x" }?.hasPrefix("--resume-idle") == true)
        #expect(Self.refused { $0.resumePerClient = 5000 } == "--resume-per-client must be between 1 and 4096")
        #expect(Self.refused { $0.resumeMaxAppend = "0" }?.hasPrefix("--resume-max-append") == true)
    }

    @Test func serveMakesTheConfigurationItsOptionsSay() throws {
        let standard = try ServeArguments.standard.configuration()
        #expect((standard.host, standard.port, standard.directory, standard.path, standard.field) == ("127.0.0.1", 3000, "./uploads", "/photo", "photo"))
        #expect(standard.maxSize == 1 << 30 && standard.tls == nil && standard.resumableMaxAppend == nil)
        let chosen = try Self.serving {
            ($0.port, $0.path, $0.maxSize, $0.imagesOnly, $0.tlsCert, $0.tlsKey) = (0, "up", "200MB", true, "c.pem", "k.pem")
            ($0.headerTimeout, $0.resumeIdle, $0.resumeMaxAppend, $0.resumePerClient) = ("3s", "10m", "8MiB", 9)
        }.get()
        #expect(chosen.port == 0 && chosen.path == "/up" && chosen.maxSize == 200_000_000 && chosen.imagesOnly)
        #expect(chosen.tls?.certificateChain == "c.pem" && chosen.tls?.privateKey == "k.pem" && chosen.scheme == "https")
        #expect(chosen.limits.headerTimeout == .seconds(3) && chosen.resumableIdleAge == .seconds(600))
        #expect(chosen.resumableMaxAppend == 8 << 20 && chosen.resumablePerClient == 9)
    }

    @Test func theMonitorBrowsesOnlyAFolderThatIsThere() throws {
        let root = TestFiles.makeTemporaryDirectory("monitor-directory")
        let file = root + "/a.jpg"
        FileManager.default.createFile(atPath: file, contents: Data([1]))
        #expect(MonitorSession.refusal(directory: root) == nil)
        #expect(MonitorSession.refusal(directory: file) == "'\(file)' is not a directory")
        #expect(MonitorSession.refusal(directory: root + "/gone") == "'\(root)/gone' does not exist")
    }
}
