import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import UploadCore

// Proof that an upload arrived intact (RFC 9530). Every upload asks for the digest of what the
// server received (`Want-Repr-Digest`); when the answer's `Repr-Digest` is the SHA-256 of what
// was sent, the upload is verified; when it is not, the attempt failed and is sent again. A
// server that says nothing of digests gets no claim — and costs no digest of the body: it is
// worked out only for an origin that showed it verifies (an answer with `Repr-Digest`, or an
// `OPTIONS` answer asking for digests), as the body is read to be sent; an origin not yet known
// to has the body hashed once after its answer came with a digest, and is known from then on.
// A body held in memory for such an origin also carries its digest up front (`Content-Digest`),
// so the receiver refuses it, keeping nothing, if what arrived differs; a larger one does not,
// because its digest is known only once its last byte was read. The file's own SHA-256 (what
// "already sent" is matched by) is worked out in the same read, whatever the server.
extension HTTPUploadTransport {
    /// Whether an upload to `url` works out its body's digest as it goes: its origin showed it
    /// verifies (this process learnt it), and digests are on.
    func bodyDigestWanted(_ url: String) -> Bool {
        guard digests, let origin = origin(of: url) else { return false }
        return support.verifies(origin)
    }

    /// The digests of a body held in memory for an origin that verifies, worked out at once
    /// (nil: not in memory, not such an origin, `--no-digest`).
    func inMemoryDigests(_ layout: MultipartLayout, _ prepared: Prepared, url: String) -> BodyDigest? {
        guard let preloaded = prepared.preloaded, bodyDigestWanted(url), let digest = streamDigest(layout, prepared, url: url) else { return nil }
        digest.updateWhole(layout, file: preloaded)
        return digest
    }

    /// The digests to compute while the body streams to `url`: the file's unless it is left
    /// to later (`contentIdentity`), the body's for an origin that verifies; nil when neither,
    /// for `--no-digest` and a pipe.
    func streamDigest(_ layout: MultipartLayout, _ prepared: Prepared, url: String) -> BodyDigest? {
        guard digests, !prepared.source.isPipe, let length = layout.contentLength, let size = layout.fileSize else { return nil }
        let body = bodyDigestWanted(url)
        guard body || contentIdentity else { return nil }
        return BodyDigest(length: length, fileLength: size, bodyToo: body, fileToo: contentIdentity)
    }

    /// The file's SHA-256 (hex) of a body held in memory, when digests are on and it is wanted now.
    func inMemoryContent(_ prepared: Prepared) -> String? {
        guard digests, contentIdentity, let preloaded = prepared.preloaded else { return nil }
        var digester = Digester([.sha256])
        preloaded.withUnsafeReadableBytes { digester.update($0) }
        return digester.finalize()[.sha256].map(Digester.hex)
    }

    /// The attempt to `url` as its answer's `Repr-Digest` judges it. `sent`: the body's digest
    /// when it was worked out as the body went. An answer that carries a digest shows its origin
    /// verifies (noted for the uploads after it); when the body was not hashed, it is now, once
    /// (from memory, or the file read again off the event loop), and judged by that.
    func judged(_ result: AttemptResult, sent: [UInt8]?, url: String, layout: MultipartLayout?, _ prepared: Prepared) async -> AttemptResult {
        guard digests, let response = result.response, response.header(DigestFields.representation) != nil else {
            return Self.judged(result, sent: sent)
        }
        if let origin = origin(of: url) { support.noteVerifies(origin) }
        var sent = sent
        if sent == nil, response.isSuccess, let layout, !prepared.source.isPipe, let length = layout.contentLength, let size = layout.fileSize {
            let digest = BodyDigest(length: length, fileLength: size, fileToo: false)
            if let preloaded = prepared.preloaded {
                digest.updateWhole(layout, file: preloaded)
            } else {
                let source = prepared.source
                _ = try? await threadPool.runIfActive { try digest.hashPrefix(of: layout, source, upTo: length) }
            }
            sent = digest.value
        }
        return Self.judged(result, sent: sent)
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
            judged.outcome = .failed(
                UploadFailure(
                    .integrityMismatch,
                    "integrity mismatch: the server's \(DigestFields.representation) (\(algorithm.rawValue)) is not that of what was sent"))
            return judged
        }
    }
}

/// The SHA-256s of a body as it streams: of the whole body (every byte from 0 to its length, in
/// order: what the server's `Repr-Digest` is compared with) and of the file's bytes alone (what
/// "already sent" is matched by), whichever thread hands the bytes in. Each is known only once
/// all of its bytes went through.
final class BodyDigest: Sendable {
    private struct State {
        var body = Digester([.sha256])
        var bodyCount: Int64 = 0
        var file = Digester([.sha256])
        var fileCount: Int64 = 0
    }

    private let state = NIOLockedValueBox(State())
    let length: Int64
    let fileLength: Int64

    /// Whether the body's digest is worked out beside the file's (a tus body is the file, and
    /// no tus server answers with a digest: the file's alone then).
    let bodyToo: Bool
    /// Whether the file's own digest is worked out (not when it is left to later).
    let fileToo: Bool

    init(length: Int64, fileLength: Int64, bodyToo: Bool = true, fileToo: Bool = true) {
        self.length = length
        self.fileLength = fileLength
        self.bodyToo = bodyToo
        self.fileToo = fileToo
    }

    /// Bytes of the multipart framing (head, tail): the body's only.
    func updateFraming(_ bytes: [UInt8]) {
        state.withLockedValue { state in
            state.body.update(bytes)
            state.bodyCount += Int64(bytes.count)
        }
    }

    /// Bytes of the file: the body's and the file's.
    func updateFile(_ buffer: ByteBuffer) {
        state.withLockedValue { state in
            buffer.withUnsafeReadableBytes { bytes in
                if bodyToo { state.body.update(bytes) }
                if fileToo { state.file.update(bytes) }
            }
            state.bodyCount += Int64(buffer.readableBytes)
            state.fileCount += Int64(buffer.readableBytes)
        }
    }

    /// A whole body whose file is in memory: its framing and its file, in order.
    func updateWhole(_ layout: MultipartLayout, file: ByteBuffer) {
        updateFraming(layout.head)
        updateFile(file)
        updateFraming(layout.tail)
    }

    /// The body's bytes before `offset` (a resumed body sends only the rest) that this digest
    /// has not yet seen: the file's part of them read once more, once for both digests. A
    /// digest that already went through them (the chunks before, in one attempt) reads nothing.
    func hashPrefix(of layout: MultipartLayout, _ source: FileSource, upTo offset: Int64) throws {
        let from = bodyCount
        guard from < offset else { return }
        let head = Int64(layout.head.count)
        if from < head { updateFraming(Array(layout.head[Int(from)..<Int(min(offset, head))])) }
        guard offset > head, let size = layout.fileSize else { return }
        let fileEnd = min(offset - head, size)
        try source.forEachPiece(min(max(from - head, 0), fileEnd)..<fileEnd, expected: size) { updateFile($0) }
        if offset > head + size {
            let tailFrom = Int(max(from - head - size, 0))
            updateFraming(Array(layout.tail[tailFrom..<Int(offset - head - size)]))
        }
    }

    /// The digest for a request that sends the body from `offset` on, when a body goes out in
    /// several (parts, chunks, resumed attempts): `digest` while it has gone through exactly the
    /// bytes before `offset`, else `fresh()` (which reads those bytes again for it).
    static func continuing(_ digest: BodyDigest?, at offset: Int64, else fresh: () -> BodyDigest?) -> BodyDigest? {
        digest?.bodyCount == offset ? digest : fresh()
    }

    /// Bytes of the body this digest went through so far.
    var bodyCount: Int64 { state.withLockedValue { $0.bodyCount } }

    /// The whole body's SHA-256, once every byte of it went through; nil before.
    var value: [UInt8]? {
        guard bodyToo else { return nil }
        return state.withLockedValue { $0.bodyCount == length ? $0.body.finalize()[.sha256] : nil }
    }

    /// The file's SHA-256 in lowercase hex, once every byte of it went through; nil before.
    var fileHex: String? {
        guard fileToo else { return nil }
        return state.withLockedValue { state in
            guard state.fileCount == fileLength, let bytes = state.file.finalize()[.sha256] else { return nil }
            return Digester.hex(bytes)
        }
    }
}

extension FileSource {
    /// Hands `range` of what is sent (the edited bytes where there are some) to `body`, a
    /// mebibyte at a time; stops with a cancellation when `cancelled` says so, and with a
    /// file error when the file ends before the range does (`expected`: its size, as said).
    func forEachPiece(
        _ range: Range<Int64>, expected: Int64? = nil, cancelled: () -> Bool = { false }, _ body: (ByteBuffer) -> Void
    ) throws {
        let allocator = ByteBufferAllocator()
        var at = range.lowerBound
        while at < range.upperBound {
            if cancelled() { throw CancellationError() }
            let count = Int(min(Int64(1 << 20), range.upperBound - at))
            let piece = try read(offset: at, count: count, allocator: allocator)
            guard piece.readableBytes > 0 else { throw sizeChanged(expected: expected ?? range.upperBound, endedAt: at) }
            body(piece)
            at += Int64(piece.readableBytes)
        }
    }

    /// Feeds `range` of what is sent to `digester`.
    func hash(_ range: Range<Int64>, into digester: inout Digester, cancelled: () -> Bool) throws {
        try forEachPiece(range, cancelled: cancelled) { piece in piece.withUnsafeReadableBytes { digester.update($0) } }
    }
}
