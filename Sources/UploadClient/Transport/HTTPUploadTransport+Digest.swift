import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import UploadCore

// Proof that an upload arrived intact (RFC 9530). Every upload asks for the digest of what the
// server received (`Want-Repr-Digest`) and computes its own SHA-256 of what it sends in the pass
// that reads the file to send it; when the answer's `Repr-Digest` is that digest, the upload is
// verified; when it is not, the attempt failed and is sent again. A server that says nothing of
// digests gets no claim. A body held in memory (the common photo) also carries its digest up
// front (`Content-Digest`), so the receiver refuses it, keeping nothing, if what arrived
// differs; a larger one does not, because its digest is known only once its last byte was read
// (a digest before the first byte would cost a second read of the file, and on 1 GiB about
// half a second before anything is sent).
extension HTTPUploadTransport {
    /// The SHA-256 of a whole multipart body held in memory, or nil (not in memory, `--no-digest`).
    func inMemoryDigest(_ layout: MultipartLayout, _ prepared: Prepared) -> [UInt8]? {
        guard digests, let preloaded = prepared.preloaded else { return nil }
        var digester = Digester([.sha256])
        digester.update(layout.head)
        preloaded.withUnsafeReadableBytes { digester.update($0) }
        digester.update(layout.tail)
        return digester.finalize()[.sha256]
    }

    /// A digest to compute while the body streams, or nil (`--no-digest`, a pipe).
    func streamDigest(_ layout: MultipartLayout, _ prepared: Prepared) -> BodyDigest? {
        guard digests, !prepared.source.isPipe, let length = layout.contentLength else { return nil }
        return BodyDigest(length: length)
    }

    /// The fields that go with a body whose SHA-256 is `digest`: the user's own, if given, win.
    static func addDigestFields(_ fields: inout HTTPHeaders, content digest: [UInt8]?, want: Bool) {
        if let digest, fields[DigestFields.content].isEmpty {
            fields.add(name: DigestFields.content, value: DigestFields.value([.sha256: digest]))
        }
        if want, fields[DigestFields.wantRepresentation].isEmpty {
            fields.add(name: DigestFields.wantRepresentation, value: DigestFields.wantSHA256)
        }
    }

    /// The attempt as its answer's `Repr-Digest` judges it against `sent`, the digest of the
    /// whole upload as sent.
    static func judged(_ result: AttemptResult, sent: [UInt8]?) -> AttemptResult {
        guard let sent, var response = result.response else { return result }
        switch DigestFields.verdict(response.header(DigestFields.representation), sent: [.sha256: sent], success: response.isSuccess) {
        case .none:
            return result
        case .verified(let algorithm):
            response.verified = algorithm.rawValue
            var judged = result
            judged.response = response
            return judged
        case .mismatch(let algorithm):
            var judged = result
            judged.outcome = .failed(UploadFailure(
                .integrityMismatch,
                "integrity mismatch: the server's \(DigestFields.representation) (\(algorithm.rawValue)) is not that of what was sent"))
            return judged
        }
    }
}

/// The SHA-256 of a body as it streams: every byte from 0 to `length`, in order, whichever
/// thread hands them in. Its value is known only once all of them were.
final class BodyDigest: Sendable {
    private let state: NIOLockedValueBox<(digester: Digester, count: Int64)>
    let length: Int64

    init(length: Int64) {
        self.length = length
        state = NIOLockedValueBox((Digester([.sha256]), 0))
    }

    func update(_ buffer: ByteBuffer) {
        state.withLockedValue { state in
            buffer.withUnsafeReadableBytes { state.digester.update($0) }
            state.count += Int64(buffer.readableBytes)
        }
    }

    func update(_ bytes: [UInt8]) {
        state.withLockedValue { state in
            state.digester.update(bytes)
            state.count += Int64(bytes.count)
        }
    }

    /// The body's bytes before `offset` (a resumed body sends only the rest): read once more.
    func hashPrefix(of layout: MultipartLayout, _ source: FileSource, upTo offset: Int64) throws {
        let head = Int64(layout.head.count)
        update(Array(layout.head.prefix(Int(min(offset, head)))))
        guard offset > head, let size = layout.fileSize else { return }
        var digester = state.withLockedValue { $0.digester }
        let fileEnd = min(offset - head, size)
        try source.hash(0..<fileEnd, into: &digester) { false }
        state.withLockedValue { state in
            state.digester = digester
            state.count += fileEnd
        }
        if offset > head + size { update(Array(layout.tail.prefix(Int(offset - head - size)))) }
    }

    /// The SHA-256, once every byte of the body went through; nil before.
    var value: [UInt8]? {
        state.withLockedValue { $0.count == length ? $0.digester.finalize()[.sha256] : nil }
    }
}

extension FileSource {
    /// Feeds `range` of what is sent (the edited bytes where there are some) to `digester`, a
    /// mebibyte at a time; stops with a cancellation when `cancelled` says so.
    func hash(_ range: Range<Int64>, into digester: inout Digester, cancelled: () -> Bool) throws {
        let allocator = ByteBufferAllocator()
        var at = range.lowerBound
        while at < range.upperBound {
            if cancelled() { throw CancellationError() }
            let count = Int(min(Int64(1 << 20), range.upperBound - at))
            let piece = try read(offset: at, count: count, allocator: allocator)
            guard piece.readableBytes > 0 else { throw sizeChanged(expected: range.upperBound, endedAt: at) }
            piece.withUnsafeReadableBytes { digester.update($0) }
            at += Int64(piece.readableBytes)
        }
    }
}
