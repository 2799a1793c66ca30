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

    /// A new random boundary; every upload gets its own. Each 64-bit draw gives eight characters
    /// (a byte each, reduced modulo the alphabet: the slight bias does not matter for a boundary),
    /// so the system generator is asked 4 times, not once per character (a syscall each).
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> Boundary {
        var characters: [Character] = []
        characters.reserveCapacity(randomLength)
        while characters.count < randomLength {
            var bits = generator.next()
            for _ in 0..<8 where characters.count < randomLength {
                characters.append(alphabet[Int(bits & 0xFF) % alphabet.count])
                bits >>= 8
            }
        }
        return Boundary("uploadmon" + String(characters))
    }

    public static func random() -> Boundary {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    public var description: String { value }
}
