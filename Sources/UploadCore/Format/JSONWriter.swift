import Foundation

/// The one way uploadmon writes a `Codable` value as JSON: keys sorted and slashes left as
/// they are everywhere, so that files, documents and protocol lines read alike; what differs
/// is only the form and how dates are written. (Flat lines on hot paths, `--json` events and
/// the receiver's answers, go through `JSONLine`.)
public enum JSONWriter {
    /// The layout of the text.
    public enum Form: Sendable {
        /// One line: the agent's protocol, files only programs read.
        case compact
        /// Indented: documents and files people read (`status --json`, the agent's settings).
        case indented
    }

    /// How dates are written.
    public enum Dates: Sendable {
        /// Seconds since 1970 as a number (the agent's protocol).
        case secondsSince1970
        /// ISO 8601 text.
        case iso8601
    }

    /// `value` as JSON, keys sorted.
    public static func data(_ value: some Encodable, _ form: Form = .compact, dates: Dates = .iso8601) throws -> Data {
        try encoder(form, dates).encode(value)
    }

    /// `value` as JSON text, keys sorted.
    public static func text(_ value: some Encodable, _ form: Form = .compact, dates: Dates = .iso8601) throws -> String {
        String(decoding: try data(value, form, dates: dates), as: UTF8.self)
    }

    private static let encoders: [JSONEncoder] = [Form.compact, .indented].flatMap { form in
        [Dates.secondsSince1970, .iso8601].map { dates in
            let encoder = JSONEncoder()
            encoder.outputFormatting = form == .indented ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = dates == .iso8601 ? .iso8601 : .secondsSince1970
            return encoder
        }
    }

    private static func encoder(_ form: Form, _ dates: Dates) -> JSONEncoder {
        encoders[(form == .indented ? 2 : 0) + (dates == .iso8601 ? 1 : 0)]
    }
}
