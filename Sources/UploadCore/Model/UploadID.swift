/// Identifies one upload for its whole life, across retries (the seed's task identifier).
public struct UploadID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: Int

    public init(_ rawValue: Int) { self.rawValue = rawValue }

    public static func < (lhs: UploadID, rhs: UploadID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "#\(rawValue)" }

    /// A plain number in JSON (the journal's event log, the agent's protocol).
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
