import Foundation
import UploadCore

extension ResumableStore {
    /// One request's exclusive use of an upload. Its file calls block: run them off the
    /// cooperative pool. Every lease must end in exactly one of `release`, `complete`, `remove`.
    final class Lease: @unchecked Sendable {
        private let store: ResumableStore
        private(set) var record: ResumableRecord
        /// The offset when the lease was taken.
        let offset: Int64
        private var ended = false

        init(store: ResumableStore, record: ResumableRecord, offset: Int64) {
            self.store = store
            self.record = record
            self.offset = offset
        }

        deinit {
            if !ended { store.letGo(record.token, offset: nil, record: nil, now: store.clock.wall()) }
        }

        var token: String { record.token }
        var partPath: String { store.partPath(record.token) }

        var bodyPath: String { store.bodyPath(record.token) }

        /// Appends to the stream at the current offset (anything past it, from a write the
        /// previous holder did not count, is cut off first).
        func appender() throws -> StreamAppender {
            try StreamAppender(partPath: partPath, bodyPath: bodyPath, offset: offset)
        }

        /// Stores the completed upload's file part as `content.name` in `uploads` and returns
        /// the name it got. When the body file begins where the file part does, as it does when
        /// the stream was split on arrival, the body file cut to the part's length becomes the
        /// stored file; otherwise the part's bytes are copied out of the stream.
        func store(_ content: FormDataReceiver.Content, from appender: StreamAppender, into uploads: UploadStore) throws -> String {
            try appender.close()
            if appender.bodyStart == content.start {
                guard truncate(bodyPath, off_t(content.length)) == 0 else {
                    throw UploadStore.StoreError.io("cannot cut \(bodyPath) to its file: \(String(cString: strerror(errno)))")
                }
                return try uploads.commit(temporary: bodyPath, as: content.name)
            }
            let writer = try uploads.createTemporary()
            do {
                try StreamAppender.copy(
                    from: [(partPath, 0), (bodyPath, appender.bodyStart ?? .max)], range: content.start..<content.start + content.length, into: writer)
            } catch {
                uploads.discard(writer)
                throw error
            }
            return try uploads.commit(writer, as: content.name)
        }

        /// Records the representation's length (said by this request for the first time).
        /// Keeps what a request claimed or asked for the whole upload's digest (RFC 9530): a
        /// later claim or want replaces an earlier one of the same algorithm.
        func keepDigests(_ digests: DigestCheck) throws {
            guard !digests.representation.isEmpty || digests.wanted != nil else { return }
            var claims = record.representationDigest ?? [:]
            for (algorithm, bytes) in digests.representation { claims[algorithm.rawValue] = Data(bytes).base64EncodedString() }
            record.representationDigest = claims.isEmpty ? nil : claims
            if let wanted = digests.wanted { record.wantedDigest = wanted.rawValue }
            try store.save(record)
        }

        /// Cuts the stream back to `offset` (a request's content refused after it was written).
        func cutBack(to offset: Int64) throws {
            try StreamAppender(partPath: partPath, bodyPath: bodyPath, offset: offset).close()
        }

        func setLength(_ length: Int64) throws {
            record.length = length
            try store.save(record)
        }

        /// Lets go with `offset` bytes kept, and where a later request may skip to, when known.
        func release(offset: Int64, checkpoint: Int64? = nil) {
            guard !ended else { return }
            ended = true
            if let checkpoint, checkpoint <= offset, checkpoint != record.checkpoint {
                record.checkpoint = checkpoint
                try? store.save(record)
            }
            store.letGo(record.token, offset: offset, record: record, now: store.clock.wall())
        }

        /// The upload is complete: its bytes go, its record keeps `answer` until its age.
        func complete(answer: StoredAnswer, length: Int64) {
            guard !ended else { return }
            ended = true
            record.answer = answer
            record.length = length
            unlink(partPath)
            unlink(bodyPath)
            try? store.save(record)
            store.letGo(record.token, offset: length, record: record, now: store.clock.wall())
        }

        /// Cancels the upload: its files and its entry go.
        func remove() {
            guard !ended else { return }
            ended = true
            store.forget(record.token)
        }
    }
}
