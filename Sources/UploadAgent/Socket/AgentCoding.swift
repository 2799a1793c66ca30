import Foundation
import UploadCore

/// JSON as the protocol writes it: compact (one line), dates as seconds since 1970.
public enum AgentCoding {
    /// One line of the agent's protocol (no newline): compact JSON, dates as seconds.
    public static func encode<T: Encodable>(_ value: T) -> Data {
        // Every message type is plain data; encoding cannot fail.
        (try? JSONWriter.data(value, .compact, dates: .secondsSince1970)) ?? Data("{}".utf8)
    }

    /// A message as a line: an upload's everyday events by hand (`EventLines`), the rest as JSON.
    public static func encode(_ message: AgentMessage) -> Data {
        EventLines.write(message) ?? (try? JSONWriter.data(message, .compact, dates: .secondsSince1970)) ?? Data("{}".utf8)
    }

    /// Reads one message: an upload's everyday events by hand (`EventLines`), the rest as JSON.
    public static func decodeMessage(from line: [UInt8]) throws -> AgentMessage {
        if let message = EventLines.read(line) { return message }
        return try decode(AgentMessage.self, from: line)
    }

    /// Reads one line of the agent's protocol.
    public static func decode<T: Decodable>(_ type: T.Type, from line: [UInt8]) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode(type, from: Data(line))
    }
}
