/// A multipart boundary: random `[A-Za-z0-9]`, long enough that it cannot plausibly occur in a file.
public struct Boundary: Sendable, Hashable, CustomStringConvertible {
    public let value: String

    public static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    public static let randomLength = 32

    /// A fixed boundary, for golden tests and callers that need reproducible bodies.
    public init(_ value: String) {
        precondition(!value.isEmpty && value.count <= 70, "RFC 2046 allows 1 to 70 boundary characters")
        self.value = value
    }

    /// A new random boundary; every upload gets its own.
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> Boundary {
        Boundary("uploadmon" + String((0..<randomLength).map { _ in alphabet.randomElement(using: &generator)! }))
    }

    public static func random() -> Boundary {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    public var description: String { value }
}
