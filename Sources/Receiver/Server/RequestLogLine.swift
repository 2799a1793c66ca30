import UploadCore

/// One line per request: method, path, status, bytes received, duration, stored name or error.
public struct RequestLogLine: Sendable, CustomStringConvertible {
    public var method: String
    public var path: String
    public var status = 0
    public var bytes: Int64 = 0
    public var duration: Duration = .zero
    public var storedName: String?
    public var error: String?

    public var description: String {
        var text = "\(method) \(path) \(status) \(ByteFormat.bytes(bytes)) \(ByteFormat.fixed(duration.seconds * 1000, digits: 1)) ms"
        if let storedName { text += " → \(storedName)" }
        if let error { text += " (\(error))" }
        return text
    }
}
