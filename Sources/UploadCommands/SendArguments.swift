import UploadCore

/// `send`'s command line as given, checked together before anything is read or sent: where
/// standard input can be only one thing, which options need which, and `--upload-url`'s rules.
public struct SendArguments: Sendable {
    public var files: [String]
    /// `--files-from`.
    public var filesFrom: String?
    /// `--null`.
    public var nullSeparated = false
    /// `--to @LIST`: the list's path.
    public var destinationList: String?
    /// `-H @-`.
    public var headersFromStandardInput = false
    public var skipSent = false
    public var uploadURL: String?
    public var uploadProtocol: UploadProtocol = .auto
    public var background = false
    /// `--concurrency` given with another value than its default.
    public var concurrencyGiven = false
    public var name: String?

    public init(files: [String], filesFrom: String? = nil) {
        self.files = files
        self.filesFrom = filesFrom
    }

    /// Said when --concurrency is given to a command whose uploads the agent runs.
    public static let agentConcurrencyNote =
        "--concurrency does not apply here: the background agent runs the uploads, as many at once as its settings say (`uploadmon agent config --concurrency N`)"

    /// Why these arguments cannot go together, or nil.
    public func refusal() -> String? {
        let stdinFile = files.contains("-")
        if files.isEmpty && filesFrom == nil && destinationList == nil { return "name at least one file to send" }
        if destinationList != nil, skipSent || uploadURL != nil {
            return "--to @LIST sends each file to its own URL; \(skipSent ? "--skip-sent knows what was sent by one destination" : "--upload-url names one")"
        }
        if destinationList == "-", filesFrom == "-" || stdinFile || headersFromStandardInput {
            return
                "standard input cannot be both the destination list and \(filesFrom == "-" ? "the --files-from list" : stdinFile ? "a file to send" : "the -H @- headers")"
        }
        if nullSeparated && filesFrom == nil { return "--null describes the --files-from list; there is none" }
        if filesFrom == "-" && stdinFile { return "standard input cannot be both the --files-from list and a file to send" }
        if headersFromStandardInput && (filesFrom == "-" || stdinFile) {
            return "standard input cannot be both the -H @- headers and \(filesFrom == "-" ? "the --files-from list" : "a file to send")"
        }
        if background && concurrencyGiven { return Self.agentConcurrencyNote }
        if let uploadURL {
            guard files.count == 1, filesFrom == nil else { return "--upload-url takes one file; \(files.count) were given" }
            guard !stdinFile else { return "--upload-url needs a file: tus sends the length before the bytes, and standard input has none" }
            guard uploadProtocol != .multipart, uploadProtocol != .put else {
                return "--upload-url is a tus upload URL; --\(uploadProtocol == .put ? "put" : "protocol multipart") cannot send to it"
            }
            do throws(UploadInputError) { _ = try Endpoint(parsing: uploadURL) } catch {
                return "--upload-url: \(error.description)"
            }
        }
        return SendSession.refusal(files: files, name: name, background: background)
    }
}
