import ArgumentParser
import Foundation
import UploadCommands
import UploadCore

/// `uploadmon convert FILE… -o DIR`: the photos as `send` would send them with these options.
struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Write photos into a folder as send would send them with --convert, --max-dimension, --max-bytes and --strip-location."
    )

    @Argument(help: ArgumentHelp("The photos.", valueName: "file"))
    var files: [String]

    @Option(
        name: [.customShort("o"), .long],
        help: ArgumentHelp("The folder the photos are written into (named as they would be sent; a file there is not overwritten).", valueName: "folder"))
    var outputDir: String

    @OptionGroup var conversion: ConversionOptions

    @Flag(name: .long, help: "Write the photos without where they were taken.")
    var stripLocation = false

    var choices: UploadChoices {
        var c = UploadChoices(to: "http://localhost/")
        conversion.apply(to: &c)
        return c
    }

    func validate() throws {
        if let refusal = choices.conversionRefusal { throw ValidationError(refusal) }
        if choices.conversion?.changesAnything != true, !stripLocation {
            throw ValidationError("nothing to do: give --convert jpeg|webp, --max-dimension, --max-bytes or --strip-location")
        }
    }

    func run() throws {
        let session = ConvertSession(
            files: files, outputDirectory: outputDir, conversion: choices.conversion ?? PhotoConversion(),
            stripLocation: stripLocation)
        let status = session.run(output: { print($0) }, errors: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })
        if status != 0 { throw ExitCode(status) }
    }
}
