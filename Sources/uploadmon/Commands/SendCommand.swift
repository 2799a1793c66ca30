import ArgumentParser
import Foundation
import UploadClient
import UploadCore

struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Upload files without the monitor and print what happens.",
        discussion: """
        Each file is sent as multipart/form-data: the -F text fields first, then the file in --field.
        Only images are sent unless --any-file is given. '-' reads standard input and sends it chunked.

        Output: on a terminal, one line per file redrawn in place; otherwise one line per event;
        with --json, one JSON object per event. NO_COLOR turns colour off.

        Exit status: 0 every upload got a 2xx answer; 1 an answer was not 2xx; 2 an upload got no
        answer (connection, timeout, file error); 64 bad command line or refused file.

        Examples:
          uploadmon send cat.jpg --to http://127.0.0.1:3000/photo
          uploadmon send *.png --to https://example.com/upload --field file -H 'Authorization: Bearer …'
          uploadmon send photo.heic --name holiday --to http://127.0.0.1:3000/photo   (sent as holiday.heic)
          uploadmon send key.jpg -F key=uploads/key.jpg -F policy=… --to https://bucket.example.com/
          cat shot.png | uploadmon send - --name shot.png --to http://127.0.0.1:3000/photo
          uploadmon send *.jpg --to http://host/photo --json --retries 3
          uploadmon send ~/photos/*.jpg --to https://host/photo --background   (then: uploadmon status)
        """
    )

    @Argument(help: ArgumentHelp("Files to upload; '-' reads standard input.", valueName: "file"))
    var files: [String]

    @OptionGroup var upload: UploadOptions

    @Option(name: .long, help: "Upload under this name (one file only); the original extension is kept when the name has none.")
    var name: String?

    @Flag(name: .long, help: "Print one JSON object per event.")
    var json = false

    @Flag(name: .long, help: "Hand the files to the background agent (started when none runs) and return at once; the uploads continue after this command, the terminal or the SSH session end.")
    var background = false

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("name at least one file to send") }
        if name != nil && files.count > 1 { throw ValidationError("--name applies to a single file; \(files.count) were given") }
        if files.filter({ $0 == "-" }).count > 1 { throw ValidationError("standard input ('-') can be sent only once") }
        if background && files.contains("-") {
            throw ValidationError("standard input ('-') cannot be sent in the background: the agent cannot read this command's input after it exits")
        }
    }

    func run() async throws {
        var requests: [(UploadRequest, Int64?)] = []
        var refusals: [String] = []
        for path in files {
            do throws(UploadInputError) {
                let request = try UploadRequest.forPath(
                    background ? Self.absolute(path) : path, url: upload.to, field: upload.field, requestedName: name,
                    formFields: try upload.parsedFormFields(), headers: try upload.parsedHeaders(),
                    allowAnyFile: upload.anyFile
                )
                requests.append((request, try UploadPreflight.check(request)))
            } catch {
                refusals.append(error.description)
            }
        }
        guard refusals.isEmpty else {
            for refusal in refusals { FileHandle.standardError.write(Data("uploadmon: \(refusal)\n".utf8)) }
            FileHandle.standardError.write(Data("uploadmon: nothing was sent\n".utf8))
            throw SendExit.usage
        }

        if background {
            try BackgroundSend.run(requests.map(\.0), options: upload, json: json)
            return
        }
        let tracker = try await SendRunner.run(requests, options: upload, json: json)
        throw Self.exitCode(for: tracker)
    }

    /// The agent runs elsewhere: it gets absolute paths.
    static func absolute(_ path: String) -> String {
        guard path != "-" else { return path }
        return URL(fileURLWithPath: path).standardizedFileURL.path
    }

    static func exitCode(for tracker: TransferTracker) -> ExitCode {
        let outcomes = tracker.states.values.compactMap(\.outcome)
        if outcomes.contains(where: { if case .failed = $0 { true } else { false } }) { return SendExit.transportError }
        if outcomes.contains(where: { !$0.isSuccess }) { return SendExit.httpError }
        return SendExit.success
    }
}
