import Glibc
/// A multipart boundary: random `[A-Za-z0-9]`, long enough that it cannot plausibly occur in a file.
public struct Boundary: Sendable, Hashable, CustomStringConvertible {
    public let value: String

    public static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    public static let randomLength = 32
    private static let alphabetBytes = alphabet.map { $0.asciiValue! }
    private static let prefix = Array("uploadmon".utf8)

    /// A fixed boundary, for golden tests and callers that need reproducible bodies.
    public init(_ value: String) {
        precondition(!value.isEmpty && value.utf8.count <= 70, "RFC 2046 allows 1 to 70 boundary characters")
        self.value = value
    }

    /// A new random boundary; every upload gets its own. Each 64-bit draw gives eight characters
    /// (a byte each, reduced modulo the alphabet: the slight bias does not matter for a boundary),
    /// so the system generator is asked 4 times, not once per character (a syscall each).
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> Boundary {
        // Bytes, not Characters: a boundary is ASCII, and building it from Characters cost more
        // than the rest of a small upload's multipart layout.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(prefix.count + randomLength)
        bytes.append(contentsOf: prefix)
        while bytes.count < prefix.count + randomLength {
            var bits = generator.next()
            for _ in 0..<8 where bytes.count < prefix.count + randomLength {
                bytes.append(alphabetBytes[Int(bits & 0xFF) % alphabetBytes.count])
                bits >>= 8
            }
        }
        return Boundary(String(decoding: bytes, as: UTF8.self))
    }

    /// A boundary from the system's randomness, all of it drawn in one system call (a system
    /// call per 64-bit draw was a visible part of sending thousands of small files).
    public static func random() -> Boundary {
        var generator = DrawnRandomWords(count: (randomLength + 7) / 8)
        return random(using: &generator)
    }

    public var description: String { value }
}

/// Random words drawn from the system's randomness in one call (`arc4random_buf`: one
/// `getrandom` in glibc), handed out one by one; the system generator once they are used up.
struct DrawnRandomWords: RandomNumberGenerator {
    private var words: [UInt64]
    private var system = SystemRandomNumberGenerator()

    init(count: Int) {
        words = [UInt64](repeating: 0, count: count)
        words.withUnsafeMutableBytes { raw in
            if let base = raw.baseAddress { arc4random_buf(base, raw.count) }
        }
    }

    mutating func next() -> UInt64 {
        words.popLast() ?? system.next()
    }
}
