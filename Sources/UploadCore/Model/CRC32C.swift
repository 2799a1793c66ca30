import CChecksum
import Foundation

/// CRC-32C (Castagnoli) over bytes given in pieces, as S3 checks `x-amz-checksum-crc32c`: the
/// value of parts sent side by side combine into the whole object's (`combined`).
public struct CRC32C: Sendable, Hashable {
    public private(set) var value: UInt32

    public init(value: UInt32 = 0) {
        self.value = value
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        value = um_crc32c_update(value, base, bytes.count)
    }

    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The value of this piece followed by `next`, a piece of `length` bytes.
    public func followed(by next: CRC32C, length: Int64) -> CRC32C {
        CRC32C(value: um_crc32c_combine(value, next.value, UInt64(max(0, length))))
    }

    /// As S3 writes it: the four bytes, most significant first, in base64.
    public var base64: String {
        Data([UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]).base64EncodedString()
    }

    /// The value S3 wrote (base64 of four bytes); nil for anything else (a composite `…-N`).
    public init?(base64 text: String) {
        guard let data = Data(base64Encoded: text.trimmingCharacters(in: .whitespaces)), data.count == 4 else { return nil }
        value = data.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The value of `bytes` by table lookups alone, whatever the processor: what tests compare
    /// the instruction's result with.
    public static func portable(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { um_crc32c_update_portable(0, $0.baseAddress, $0.count) }
    }

    /// Whether the processor's instruction does the work (benchmarks say which they measured).
    public static var usesHardware: Bool { um_crc32c_hardware() != 0 }
}
