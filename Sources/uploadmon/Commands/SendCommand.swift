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
        discussion: """
        Each file is sent as multipart/form-data: the -F text fields first, then the file in --field; \
        to an endpoint that speaks tus 1.0.0 (found by --protocol auto, or --protocol tus) as its raw \
        bytes, the -F fields, name and type in Upload-Metadata, resumed from the server's offset. \
        Only images are sent unless --any-file is given. '-' reads standard input and sends it chunked \
        (by tus: --chunk-size at a time, its length said at its end, where the server takes that).

        Output: on a terminal, one line per file redrawn in place; otherwise one line per event; \
        with --json, one JSON object per event. NO_COLOR turns colour off.

        Ctrl-C cancels the uploads still running or queued (the lines say so) and exits 130; a \
        second Ctrl-C stops at once. SIGTERM does the same as the first Ctrl-C and exits 143.

        A folder among the files sends the images in it (-r: in its subfolders too; --include and \
        --exclude choose among them). A file that cannot be sent (missing, unreadable, not an image) \
        is said and the others go; --strict sends none then.

        Exit status: 0 every upload got a 2xx answer; 1 an answer was not 2xx; 2 an upload got no \
        answer (connection, timeout, file error) or a file was refused and the others sent; 3 every upload got a 2xx answer but one was cut \
        off before its end (--answer-timeout, a closed connection: the file arrived, the answer \
        did not all arrive); 64 bad command line, or every file refused (with --strict: any); 130/143 interrupted.

        Examples:
          uploadmon send cat.jpg --to http://127.0.0.1:3000/photo
          uploadmon send *.png --to https://example.com/upload --field file \\
              -H 'Authorization: Bearer …'
          uploadmon send photo.heic --name holiday --to http://127.0.0.1:3000/photo
            (sent as holiday.heic)
          uploadmon send key.jpg -F key=uploads/key.jpg -F policy=… \\
              --to https://bucket.example.com/
          cat shot.png | uploadmon send - --name shot.png \\
              --to http://127.0.0.1:3000/photo
          uploadmon send *.jpg --to http://host/photo --json --retries 3
          uploadmon send clip.jpg --to https://tus.example.com/files/ --chunk-size 5MiB --retries 5
          uploadmon send clip.jpg --to https://api.example.com/ --upload-url https://up.example.com/u/ab12
          uploadmon send ~/DCIM -r --include '*.jpg' --to https://host/photo --dry-run
          uploadmon send ~/photos/*.jpg --to https://host/photo --background
            (then: uploadmon status)
          find ~/photos -name '*.jpg' -print0 | \\
              uploadmon send --files-from - --null --to https://host/photo --background

        More: Docs/sending.md (folders, globs, PUT, S3, lists, digests) and privacy.md in the source tree.
        """
    )

    @Argument(help: ArgumentHelp("Files to upload; '-' reads standard input.", valueName: "file"))
    var files: [String] = []

    @Option(name: .long, help: ArgumentHelp("Also send the files named in this list, one per line ('-': standard input): as many as there are, where a command line stops at the system's size limit (`find … | uploadmon send --files-from - …`).", valueName: "list"))
    var filesFrom: String?

    @Flag(name: .customLong("null"), help: "The --files-from list is separated by NUL bytes (find -print0) instead of lines.")
    var nullSeparated = false

    @OptionGroup var upload: UploadOptions

    @Option(name: .long, help: "Upload under this name (one file only); the original extension is kept when the name has none.")
    var name: String?

    @Flag(name: .long, help: "Print one JSON object per event.")
    var json = false

    @Option(name: .long, help: ArgumentHelp("Send the one file to this tus upload URL, handed out by another service (Vimeo's API, for one): continued from the server's offset (HEAD, then PATCH), never created (--to names the service's endpoint all the same).", valueName: "url"))
    var uploadURL: String?

    @Flag(name: .long, help: "Skip files whose content was already sent to this endpoint (by a send or the agent, under any name or path), saying so for each: matched by the SHA-256 of the bytes as they would be sent.")
    var skipSent = false

    @Flag(name: .long, help: "Hand the files to the background agent (started when none runs) and return at once; the uploads continue after this command, the terminal or the SSH session end.")
    var background = false

    @Flag(name: [.customShort("r"), .long], help: "A folder among the files: its subfolders' images too (without: the images directly in it).")
    var recursive = false

    @Option(name: .long, help: ArgumentHelp("Of a folder's files, only those that match (repeatable): a glob on the name (*.jpg), or with a / on the path under the folder (2026/**/*.heic), as rclone reads them.", valueName: "glob"))
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
