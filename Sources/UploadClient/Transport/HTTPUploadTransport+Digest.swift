import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import UploadCore

// Proof that an upload arrived intact (RFC 9530). A request carrying the whole upload gets its
// SHA-256 as `Content-Digest` (the receiver refuses it, keeping nothing, if what arrived
// differs) and asks for the digest of what the server received (`Want-Repr-Digest`); when the
// answer's `Repr-Digest` is that of what was sent, the upload is verified; when it is not, the
// attempt failed and is sent again. A server that says nothing of digests gets no claim.
extension HTTPUploadTransport {
    /// The SHA-256 of a whole multipart body (head, file, tail), or nil for a pipe or with
    /// `--no-digest`. A file held in memory costs no read; a larger one is read once more before
    /// its first byte is sent (a plain POST has nowhere to put a digest after its body).
    func bodyDigest(_ layout: MultipartLayout, _ prepared: Prepared, eventLoop: EventLoop) async throws(UploadFailure) -> [UInt8]? {
        guard digests, !prepared.source.isPipe, let size = prepared.source.size else { return nil }
        if let preloaded = prepared.preloaded {
            var digester = Digester([.sha256])
            digester.update(layout.head)
            preloaded.withUnsafeReadableBytes { digester.update($0) }
            digester.update(layout.tail)
            return digester.finalize()[.sha256]
        }
        let source = prepared.source
        let cancelled = NIOLockedValueBox(false)
        let work = threadPool.runIfActive(eventLoop: eventLoop) { () throws -> [UInt8]? in
            var digester = Digester([.sha256])
            digester.update(layout.head)
            try source.hash(0..<size, into: &digester) { cancelled.withLockedValue { $0 } }
            digester.update(layout.tail)
            return digester.finalize()[.sha256]
        }
        do {
            return try await withTaskCancellationHandler {
                try await work.get()
            } onCancel: {
                cancelled.withLockedValue { $0 = true }
            }
        } catch let failure as UploadFailure {
            throw failure
        } catch {
            throw Task.isCancelled ? FailureClassifier.cancelled(bodySent: false) : UploadFailure(.fileError, "cannot read \(source.path): \(error)")
        }
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

    /// The fields of a resumable upload's creation: the whole upload's digest (`Repr-Digest`,
    /// checked by the server once the upload is complete) and the ask for the server's.
    static func addWholeDigestFields(_ fields: inout HTTPHeaders, _ digest: [UInt8]?, want: Bool) {
        if let digest, fields[DigestFields.representation].isEmpty {
            fields.add(name: DigestFields.representation, value: DigestFields.value([.sha256: digest]))
        }
        addDigestFields(&fields, content: nil, want: want)
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
