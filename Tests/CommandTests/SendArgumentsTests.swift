import Testing
import UploadCommands

/// `send`'s command line checked as a whole: each conflict said once, with what to do.
@Suite struct SendArgumentsTests {
    static func refusal(_ files: [String], _ change: (inout SendArguments) -> Void = { _ in }) -> String? {
        var arguments = SendArguments(files: files)
        change(&arguments)
        return arguments.refusal()
    }

    @Test func standardInputIsOneThingOnly() {
        #expect(Self.refusal([]) == "name at least one file to send")
        #expect(Self.refusal(["-"]) { $0.filesFrom = "-" }?.contains("both the --files-from list and a file to send") == true)
        #expect(
            Self.refusal(["a.jpg"]) {
                $0.filesFrom = "-"
                $0.headersFromStandardInput = true
            }?.contains("the -H @- headers and the --files-from list") == true)
        #expect(
            Self.refusal(["a.jpg"]) {
                $0.destinationList = "-"
                $0.headersFromStandardInput = true
            }?.contains("the destination list and the -H @- headers") == true)
        #expect(Self.refusal(["-"]) { $0.destinationList = "-" }?.contains("the destination list and a file to send") == true)
        #expect(Self.refusal(["a.jpg"]) { $0.nullSeparated = true }?.contains("--null describes the --files-from list") == true)
    }

    @Test func aDestinationListNeedsNoFileButRefusesOneDestinationsOptions() {
        #expect(Self.refusal([]) { $0.destinationList = "urls.txt" } == nil)
        #expect(
            Self.refusal([]) {
                $0.destinationList = "urls.txt"
                $0.skipSent = true
            }?.contains("--skip-sent knows what was sent by one destination") == true)
        #expect(
            Self.refusal(["a.jpg"]) {
                $0.destinationList = "urls.txt"
                $0.uploadURL = "https://h/u"
            }?.contains("--upload-url names one") == true)
    }

    @Test func anUploadURLTakesOneFileByTus() {
        #expect(Self.refusal(["a.jpg", "b.jpg"]) { $0.uploadURL = "https://h/u" } == "--upload-url takes one file; 2 were given")
        #expect(Self.refusal(["-"]) { $0.uploadURL = "https://h/u" }?.contains("standard input has none") == true)
        #expect(
            Self.refusal(["a.jpg"]) {
                $0.uploadURL = "https://h/u"
                $0.uploadProtocol = .put
            }?.contains("--put cannot send to it") == true)
        #expect(Self.refusal(["a.jpg"]) { $0.uploadURL = "ftp://h/u" }?.hasPrefix("--upload-url: ") == true)
        #expect(Self.refusal(["a.jpg"]) { $0.uploadURL = "https://h/u" } == nil)
    }

    @Test func theAgentChoosesItsOwnConcurrencyAndNameTakesOneFile() {
        #expect(
            Self.refusal(["a.jpg"]) {
                $0.background = true
                $0.concurrencyGiven = true
            } == SendArguments.agentConcurrencyNote)
        #expect(Self.refusal(["a.jpg", "b.jpg"]) { $0.name = "x" }?.contains("--name applies to a single file") == true)
    }
}
