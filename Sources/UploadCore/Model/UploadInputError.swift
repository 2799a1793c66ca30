/// Problems with what the user asked for, found before any byte is sent.
public enum UploadInputError: Error, Equatable, Sendable, CustomStringConvertible {
    case badFormField(String)
    case badHeader(String)
    /// A line of a `-H @FILE` file that is not a header (the value is never repeated).
    case badHeaderFile(path: String, line: Int)
    case emptyUploadName
    /// A `.netrc` file that cannot be used (the reason never quotes a secret).
    case netrc(path: String, reason: String)
    case unsupportedScheme(url: String)
    /// A proxy URL that cannot be used (shown without its login).
    case badProxy(String, String)
    case badURL(String)
    /// A destination that is neither http(s) nor s3.
    case unsupportedDestination(url: String)
    /// An `s3://` URL whose bucket name S3 does not allow.
    case badS3Bucket(String)
    /// `presign` was given a bucket or a prefix, not an object.
    case notAnS3Object(bucket: String)
    /// No AWS credentials in the environment or the profile's files.
    case noAWSCredentials(profile: String, files: [String])
    case notAnImage(path: String, looksLike: String)
    case notARegularFile(path: String)
    case cannotRead(path: String, reason: String)

    public var description: String {
        switch self {
        case .badFormField(let arg):
            return "form field '\(arg)' is not of the form name=value"
        case .badHeader(let arg):
            return "header '\(arg.prefix(while: { $0 != ":" }))' is not of the form 'Name: value'"
        case .badHeaderFile(let path, let line):
            return "line \(line) of the header file \(path) is not of the form 'Name: value'"
        case .emptyUploadName:
            return "the upload name is empty"
        case .netrc(let path, let reason):
            return "cannot use the netrc file \(path): \(reason)"
        case .badProxy(let url, let reason):
            return "the proxy \(url) cannot be used: \(reason)"
        case .unsupportedScheme(let url):
            return "'\(url)' is not an http or https URL"
        case .unsupportedDestination(let url):
            return "'\(url)' is not an http, https or s3 URL"
        case .badS3Bucket(let url):
            return "'\(url)': an S3 bucket name is 3 to 63 lower-case letters, digits, dots and hyphens, beginning and ending with a letter or digit"
        case .notAnS3Object(let bucket):
            return "presign needs an object's key, not a prefix: s3://\(bucket)/name.jpg"
        case .noAWSCredentials(let profile, let files):
            return "no AWS credentials for s3://: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give the profile '\(profile)' "
                + "aws_access_key_id and aws_secret_access_key in \(files.joined(separator: " or ")) (AWS_PROFILE names another)"
        case .badURL(let url):
            return "'\(url)' is not a valid URL"
        case .notAnImage(let path, let looksLike):
            return "\(path) is not an image (it looks like \(looksLike)); pass --any-file to send it anyway"
        case .notARegularFile(let path):
            return "\(path) is not a regular file"
        case .cannotRead(let path, let reason):
            return "cannot read \(path): \(reason)"
        }
    }
}
