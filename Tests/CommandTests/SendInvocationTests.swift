import Testing
import UploadCommands
import UploadCore

/// `send`'s command line read without ArgumentParser (`SendInvocation.quick`): the usual shapes
/// read as the declaration reads them, anything else left to ArgumentParser. (That both read
/// the same is checked by the debug binary itself on every `send` the CLI tests run.)
@Suite struct SendInvocationTests {
    @Test func theUsualShapesAreRead() throws {
        let plain = try #require(SendInvocation.quick(["cat.jpg", "--to", "http://h/photo"]))
        #expect(plain.files == ["cat.jpg"])
        #expect(plain.options == UploadChoices(to: "http://h/photo"))
        #expect(!plain.json && plain.name == nil && plain.filesFrom == nil)

        let full = try #require(
            SendInvocation.quick([
                "--to=http://h/u?a=b", "a.jpg", "-F", "k=v", "--form", "k2=v2", "-H", "X-A: 1", "--header=@-", "b.png",
                "--json", "--no-digest", "--concurrency", "3", "--retries=2", "--field", "file", "--protocol", "tus",
                "--connect-timeout", "5s", "--limit-rate", "500k", "--strip-location", "--skip-sent", "-",
            ]))
        #expect(full.files == ["a.jpg", "b.png", "-"])
        #expect(full.options.to == "http://h/u?a=b")
        #expect(full.options.formFields == ["k=v", "k2=v2"])
        #expect(full.options.headers == ["X-A: 1", "@-"])
        #expect(full.options.headersFromStandardInput)
        #expect(full.json && full.skipSent && full.options.noDigest && full.options.stripLocation)
        #expect(full.options.concurrency == 3 && full.options.retries == 2)
        #expect(full.options.field == "file" && full.options.protocol == .tus)
        #expect(full.options.connectTimeout == "5s" && full.options.limitRate == "500k")

        // The photo conversion options: read here, checked by UploadChoices as declared.
        let convert = try #require(
            SendInvocation.quick([
                "IMG.HEIC", "--to", "http://h/p", "--convert", "jpeg", "--quality=90",
                "--max-dimension", "2048", "--max-bytes", "2MB",
            ]))
        #expect(convert.options.convert == "jpeg" && convert.options.quality == 90 && convert.options.maxDimension == 2048)
        #expect(convert.options.maxBytes == "2MB")
        #expect(convert.options.conversion == PhotoConversion(format: .jpeg, quality: 90, maxDimension: 2048, maxBytes: 2_000_000))
        #expect(SendInvocation.quick(["a.jpg", "--quality", "-5", "--to", "http://h/p"]) == nil, "a negative number: ArgumentParser says it")

        let list = try #require(SendInvocation.quick(["--files-from", "-", "--null", "--to", "http://h/p", "--background"]))
        #expect(list.filesFrom == "-" && list.nullSeparated && list.background && list.files.isEmpty)
    }

    @Test func anythingElseIsLeftToArgumentParser() {
        let to = ["--to", "http://h/p"]
        for arguments in [
            ["a.jpg"],  // no --to
            ["a.jpg", "--to"],  // a value missing at the end
            ["a.jpg", "--", "-b.jpg"] + to,  // the end of options
            ["a.jpg", "-Fk=v"] + to,  // a short option's value attached
            ["a.jpg", "-F", "-x"] + to,  // a value that looks like an option
            ["a.jpg", "--concurrency", "+2"] + to,  // a number ArgumentParser reads its own way
            ["a.jpg", "--protocol", "ftp"] + to,  // not one of the protocols
            ["a.jpg", "--json", "--json"] + to,  // a flag twice
            ["a.jpg", "--field", "a", "--field", "b"] + to,  // a single value twice
            ["a.jpg", "--json=yes"] + to,  // a flag with a value
            ["a.jpg", "--verbose"] + to,  // not an option of send's the table knows
            ["a.jpg", "--help"] + to, ["a.jpg", "-h"] + to, ["a.jpg", "--version"] + to,
            ["a.jpg", "--answer-timeout"] + to,  // "--to" taken as the value would start with -
            ["", "a.jpg"] + to,  // an empty operand
        ] {
            #expect(SendInvocation.quick(arguments) == nil, "\(arguments)")
        }
    }

    @Test func theChecksAreTheDeclaredCommandsChecks() throws {
        let two = try #require(SendInvocation.quick(["a.jpg", "b.jpg", "--name", "x", "--to", "http://h/p"]))
        #expect(two.arguments.refusal() == "--name applies to a single file; 2 were given")
        let none = try #require(SendInvocation.quick(["--to", "http://h/p"]))
        #expect(none.arguments.refusal() == "name at least one file to send")
        let zero = try #require(SendInvocation.quick(["a.jpg", "--concurrency", "0", "--to", "http://h/p"]))
        #expect(zero.options.commandLineRefusal(environment: [:]) == "--concurrency must be at least 1")
        let background = try #require(SendInvocation.quick(["a.jpg", "--concurrency", "4", "--background", "--to", "http://h/p"]))
        #expect(background.arguments.refusal() == SendArguments.agentConcurrencyNote)
    }
}
