import ArgumentParser
import UploadCommands
import UploadCore

struct SendCommand: AsyncParsableCommand {
    // Named as part of `uploadmon` (ArgumentParser's "super-command"): parsed on its own (the
    // fast path in `Uploadmon.parse`), it then skips asking two more commands whether the
    // arguments request a completion script (each built by reflection: a tenth of a small
    // upload's start). The root, which every other parse goes through, still answers that.
    static let configuration = CommandConfiguration(
        commandName: "send",
        _superCommandName: "uploadmon",
        abstract: "Upload files without the monitor and print what happens.",
        discussion: CommandHelp.send
    )

    @Argument(help: ArgumentHelp("Files to upload; '-' reads standard input.", valueName: "file"))
    var files: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Also send the files named in this list, one per line ('-': standard input): as many as there are, where a command line stops at the system's size limit (`find … | uploadmon send --files-from - …`).",
            valueName: "list"))
    var filesFrom: String?

    @Flag(name: .customLong("null"), help: "The --files-from list is separated by NUL bytes (find -print0) instead of lines.")
    var nullSeparated = false

    @OptionGroup var upload: UploadOptions

    @Option(name: .long, help: "Upload under this name (one file only); the original extension is kept when the name has none.")
    var name: String?

    @Flag(name: .long, help: "Print one JSON object per event.")
    var json = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Send the one file to this tus upload URL, handed out by another service (Vimeo's API, for one): continued from the server's offset (HEAD, then PATCH), never created (--to names the service's endpoint all the same).",
            valueName: "url"))
    var uploadURL: String?

    @Flag(
        name: .long,
        help:
            "Skip files whose content was already sent to this endpoint (by a send or the agent, under any name or path), saying so for each: matched by the SHA-256 of the bytes as they would be sent."
    )
    var skipSent = false

    @Flag(
        name: .long,
        help:
            "Hand the files to the background agent (started when none runs) and return at once; the uploads continue after this command, the terminal or the SSH session end."
    )
    var background = false

    @Flag(name: [.customShort("r"), .long], help: "A folder among the files: its subfolders' images too (without: the images directly in it).")
    var recursive = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Of a folder's files, only those that match (repeatable): a glob on the name (*.jpg), or with a / on the path under the folder (2026/**/*.heic), as rclone reads them.",
            valueName: "glob"))
    var include: [String] = []

    @Option(name: .long, help: ArgumentHelp("Of a folder's files, not those that match (repeatable; wins over --include).", valueName: "glob"))
    var exclude: [String] = []

    @Flag(name: .long, help: "Send nothing when a file is refused (without: the others are sent, each refused one said, exit 2).")
    var strict = false

    @Flag(name: .long, help: "Say what would be sent where (each file, its size, the URL) and send nothing.")
    var dryRun = false

    /// The command line as values: what `SendInvocation.quick` reads without this declaration.
    var invocation: SendInvocation {
        var invocation = SendInvocation(options: upload.choices)
        (invocation.files, invocation.filesFrom, invocation.nullSeparated, invocation.name) = (files, filesFrom, nullSeparated, name)
        (invocation.json, invocation.uploadURL, invocation.skipSent, invocation.background) = (json, uploadURL, skipSent, background)
        (invocation.strict, invocation.dryRun, invocation.recursive, invocation.include, invocation.exclude) = (strict, dryRun, recursive, include, exclude)
        return invocation
    }

    func validate() throws {
        if let refusal = invocation.arguments.refusal() { throw ValidationError(refusal) }
    }

    func run() async throws {
        throw ExitCode(try await invocation.run())
    }
}
