/// One line of the notification log.
public struct LogEntry: Sendable, Equatable {
    /// How the line is marked: an upload that succeeded, one that failed, or a notice.
    public enum Kind: Sendable, Equatable { case ok, failed, info }
    public var clock: String
    public var text: String
    public var kind: Kind

    public init(clock: String, text: String, kind: Kind) {
        self.clock = clock
        self.text = text
        self.kind = kind
    }
}
