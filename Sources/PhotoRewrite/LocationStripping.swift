/// One change to a file's bytes as sent: the original bytes `range` replaced by `replacement`.
public struct ByteEdit: Sendable, Equatable {
    public var range: Range<Int64>
    public var replacement: [UInt8]

    public init(range: Range<Int64>, replacement: [UInt8]) {
        self.range = range
        self.replacement = replacement
    }
}

/// A file as it is sent with some of its bytes changed: edits sorted and apart, every other
/// byte the file's own. Deterministic from the file, so its length is known before sending and
/// a retried or resumed upload makes the same bytes again.
public struct EditedFile: Sendable, Equatable {
    public let edits: [ByteEdit]
    public let originalSize: Int64

    public init(edits: [ByteEdit], originalSize: Int64) {
        self.edits = edits.sorted { $0.range.lowerBound < $1.range.lowerBound }
        self.originalSize = originalSize
    }

    public var size: Int64 {
        edits.reduce(originalSize) { $0 - Int64($1.range.count) + Int64($1.replacement.count) }
    }

    /// Where the bytes of `virtual..<virtual + count` come from: runs of the original file and of
    /// replacement bytes, in order. Past the end, the original file's own bytes past its end (so
    /// a file that grew still shows as having grown).
    public enum Piece: Equatable {
        case file(offset: Int64, count: Int)
        case bytes([UInt8])
    }

    public func pieces(at virtual: Int64, count: Int) -> [Piece] {
        var pieces: [Piece] = []
        var want = count
        var position = virtual
        var originalAt: Int64 = 0  // original offset of the current run's start
        var virtualAt: Int64 = 0  // virtual offset of the same point
        for edit in edits {
            // The untouched run before this edit.
            let runLength = edit.range.lowerBound - originalAt
            if want > 0, position < virtualAt + runLength {
                let start = position - virtualAt
                let n = Int(min(Int64(want), runLength - start))
                pieces.append(.file(offset: originalAt + start, count: n))
                want -= n
                position += Int64(n)
            }
            virtualAt += runLength
            // The replacement.
            let length = Int64(edit.replacement.count)
            if want > 0, position < virtualAt + length {
                let start = Int(position - virtualAt)
                let n = min(want, edit.replacement.count - start)
                pieces.append(.bytes(Array(edit.replacement[start..<start + n])))
                want -= n
                position += Int64(n)
            }
            virtualAt += length
            originalAt = edit.range.upperBound
        }
        if want > 0 {
            pieces.append(.file(offset: originalAt + (position - virtualAt), count: want))
        }
        return pieces
    }
}
