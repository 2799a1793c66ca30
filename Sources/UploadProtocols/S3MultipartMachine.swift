import Foundation
import UploadCore

/// An S3 multipart upload, answer by answer: create it (`POST ?uploads`), send the parts
/// (`PUT ?partNumber=N&uploadId=…`; up to `width` side by side, each part's `ETag` reported as it
/// arrives, so the journal keeps it), put them together (`POST ?uploadId=…` with the list; its
/// `200` may still carry an `<Error>`). What S3 keeps of an upload that cannot go on is removed
/// by the shell (`DELETE ?uploadId=…`, as for the other resumable protocols). A later attempt
/// continues from the parts S3 says it has (`GET ?uploadId=…`, ListParts), or from the ones
/// reported when it cannot say.
///
/// `width` is given with every answer (the upload's share of the queue's concurrency, which
/// changes as other uploads start and end): no new part starts while that many are in flight.
/// When a part fails, no other starts; the attempt ends once the parts in flight have answered,
/// so every part S3 took is kept.
public struct S3MultipartMachine: Sendable {
    /// An S3 request the transport sends for the machine.
    public enum Request: Sendable, Equatable {
        case create
        /// One page of the parts S3 has: from the first, or after part `after` (a truncated
        /// answer's `NextPartNumberMarker`).
        case listParts(uploadID: String, after: Int? = nil)
        /// The parts put together; `body` is the `CompleteMultipartUpload` XML; `whole`: the
        /// object's CRC-32C, for S3 to check (when every part was sent with its own).
        case complete(uploadID: String, body: String, whole: CRC32C? = nil)
        /// `HeadObject` asking for the object's checksum (`x-amz-checksum-mode: ENABLED`): what
        /// S3 kept, when the completion's answer did not name it.
        case confirm
    }

    /// Part `number`: the file's bytes `from ..< to`.
    public struct Part: Sendable, Equatable {
        public var number: Int
        public var from: Int64
        public var to: Int64
        public var size: Int64 { to - from }

        public init(number: Int, from: Int64, to: Int64) {
            self.number = number
            self.from = from
            self.to = to
        }
    }

    /// What the transport does next.
    public enum Next: Sendable {
        /// One request on its own: nothing else is in flight.
        case request(Request)
        /// Start these parts beside the ones in flight (none: wait for one of those to answer,
        /// and say so with `partUploaded`).
        case parts(uploadID: String, [Part])
        case finish(AttemptResult)
    }

    /// What one input decided: what to report (in order), then what to do next.
    public struct Decision: Sendable {
        public var reports: [ResumableUploadMachine.Report]
        public var next: Next
    }

    /// S3's smallest part (all but the last), its most parts, and the part size used.
    public static let smallestPart: Int64 = 5 << 20
    public static let mostParts = 10_000
    public static let defaultPart: Int64 = 8 << 20

    /// Files up to this size go in one `PUT` (the AWS CLI's `multipart_threshold`).
    public static let threshold: Int64 = 8 << 20

    /// The part size for a file of `size` bytes: `preferred` (at least 5 MiB), larger when the
    /// file would need more than 10,000 parts.
    public static func partSize(for size: Int64, preferred: Int64 = defaultPart) -> Int64 {
        let least = (size + Int64(mostParts) - 1) / Int64(mostParts)
        let mebibyte: Int64 = 1 << 20
        return max(max(preferred, smallestPart), (least + mebibyte - 1) / mebibyte * mebibyte)
    }

    private let objectURL: String
    private let file: FileFingerprint
    private let size: Int64
    private let partSize: Int64
    private var point: ResumePoint?
    private var state = State.idle
    private var reports: [ResumableUploadMachine.Report] = []
    private var startedOver = false
    private var bytesSent: Int64 = 0
    /// The parts still to send, in order, and how many of them have been started.
    private var pending: [Int] = []
    private var started = 0
    private var inFlight: Set<Int> = []
    /// A part failed: how the attempt ends once the parts in flight have answered.
    private var ending: Ending?
    /// Whether uploads this machine creates are checked by CRC-32C (`S3Checksum`).
    private let checksums: Bool
    /// Parts S3 refused for their checksum, to be sent once more, and those already sent again.
    private var resend: [Int] = []
    private var resent: Set<Int> = []
    /// A part's answer named the CRC-32C S3 kept: the server keeps checksums, so what it kept
    /// of the whole object is worth asking when the completion does not say (a server that
    /// keeps none, rclone's, would read the whole object again only to answer the question).
    private var keepsChecksums = false
    /// The pages of ListParts read so far, and the marker of the last one.
    private var listedParts: [S3Part] = []
    private var listedAfter: Int?

    private enum State: Sendable {
        case idle, creating, listing, uploading, completing
        case confirming(AttemptResult, whole: CRC32C)
        case done
    }

    private enum Ending: Sendable {
        case failed(AttemptResult)
        case startOver(String)
    }

    /// An upload of `size` bytes of `file` to `objectURL`, continuing `point` when it is an S3
    /// upload of the same file. `checksums`: an upload it creates is checked by CRC-32C, part
    /// by part and whole (one continued keeps what it was created with).
    public init(
        objectURL: String, file: FileFingerprint, size: Int64, point: ResumePoint?, preferredPart: Int64 = defaultPart,
        checksums: Bool = false
    ) {
        self.objectURL = objectURL
        self.checksums = checksums
        self.file = file
        self.size = size
        if let point, point.kind == .s3, point.uploadID != nil, point.file == file, point.bodyLength == size, point.uploadURL == objectURL,
            point.partSize >= Self.smallestPart
        {
            self.point = point
            partSize = point.partSize
        } else {
            partSize = Self.partSize(for: size, preferred: preferredPart)
            if point?.kind == .s3 { reports.append(.resumable(nil, startedOver: "the file or its destination changed since the upload began")) }
        }
    }

    /// The first request: a creation, or the list of parts when the upload is to be continued.
    public mutating func start() -> Decision {
        guard case .idle = state else { return decide(.finish(ResumableUploadMachine.misuse)) }
        if let uploadID = point?.uploadID {
            state = .listing
            return decide(.request(.listParts(uploadID: uploadID)))
        }
        state = .creating
        return decide(.request(.create))
    }

    /// Whether the parts carry their CRC-32C: the upload was created to be checked so. The
    /// creation's fields say so when this is true before `created`.
    public var sendsChecksums: Bool {
        if let point { return point.checksum == S3Checksum.name }
        return checksums
    }

    /// How many parts the file has.
    public var partCount: Int { size == 0 ? 1 : Int((size + partSize - 1) / partSize) }

    /// Part `number`'s bytes.
    public func part(_ number: Int) -> Part {
        let from = Int64(number - 1) * partSize
        return Part(number: number, from: from, to: min(from + partSize, size))
    }

    /// The parts there are, in order.
    public var plannedParts: [Part] { (1...partCount).map(part) }

    public mutating func created(_ result: AttemptResult, width: Int = 1) -> Decision {
        guard case .creating = state else { return decide(.finish(ResumableUploadMachine.misuse)) }
        bytesSent += result.bytesSent
        guard let response = result.response, (200..<300).contains(response.status) else { return finish(result) }
        guard let uploadID = Self.element("UploadId", in: response.body) else {
            // A success that names no upload has made nothing the parts can go to: a protocol
            // error, never the upload's success (nothing of the file was sent).
            let failure = UploadFailure(
                .other,
                "S3 answered \(response.status) to starting the multipart upload without an UploadId "
                    + "(\(ByteFormat.bytes(Int64(response.body.count))) of answer read): nothing of the file was sent")
            return finish(AttemptResult(outcome: .failed(failure), response: response, bytesSent: result.bytesSent))
        }
        let created = ResumePoint.s3(
            objectURL: objectURL, uploadID: uploadID, partSize: partSize, bodyLength: size, file: file,
            checksum: checksums ? S3Checksum.name : nil)
        point = created
        reports.append(.resumable(created, startedOver: nil))
        return beginParts(width: width)
    }

    /// ListParts' answer: the parts S3 has that are the size this upload sends are kept (their
    /// `ETag`s from S3), page after page (S3 answers at most 1,000 parts a page); a `404`
    /// (`NoSuchUpload`: completed, aborted or expired) starts over.
    public mutating func listed(_ result: AttemptResult, width: Int = 1) -> Decision {
        guard case .listing = state, var current = point, let uploadID = current.uploadID else { return decide(.finish(ResumableUploadMachine.misuse)) }
        bytesSent += result.bytesSent
        guard let response = result.response else { return finish(result, keeping: current) }
        if response.status == 404 { return startOver("S3 no longer has the upload (NoSuchUpload)") }
        if (200..<300).contains(response.status) {
            let page = Self.parts(in: response.body).filter { $0.number >= 1 && $0.number <= partCount && part($0.number).size == $0.size }
            listedParts += page
            if Self.element("IsTruncated", in: response.body) == "true",
                let next = Self.element("NextPartNumberMarker", in: response.body).flatMap(Int.init), next > (listedAfter ?? 0), next < partCount
            {
                listedAfter = next
                return decide(.request(.listParts(uploadID: uploadID, after: next)))
            }
            var seen = Set<Int>()
            current.parts = listedParts.filter { seen.insert($0.number).inserted }.sorted { $0.number < $1.number }
        }
        // Another answer: the parts reported before stand.
        current.offset = current.parts.reduce(0) { $0 + $1.size }
        point = current
        if current.offset > 0 { reports.append(.resumed(offset: current.offset, bodyLength: size)) }
        return beginParts(width: width)
    }

    /// Part `number`'s answer; `sent`: the CRC-32C it carried. A part S3 refused for its
    /// checksum (or kept with another value than the one sent) goes once more; a second
    /// refusal ends the upload with the reason.
    public mutating func partUploaded(_ number: Int, _ result: AttemptResult, sent: CRC32C? = nil, width: Int = 1) -> Decision {
        guard case .uploading = state, inFlight.remove(number) != nil, var current = point else {
            return decide(.finish(ResumableUploadMachine.misuse))
        }
        bytesSent += result.bytesSent
        if let response = result.response, let sent, case .verified = S3Checksum.verdict(of: response, sent: sent) { keepsChecksums = true }
        let damaged = Self.damaged(number, result, sent: sent)
        if let damaged {
            if !resent.contains(number), ending == nil {
                resent.insert(number)
                resend.append(number)
            } else if ending == nil {
                ending = .failed(
                    AttemptResult(
                        outcome: .failed(
                            UploadFailure(
                                .integrityMismatch,
                                damaged + " twice: the bytes read from the file did not arrive as they were read")), response: result.response,
                        bytesSent: result.bytesSent))
            }
        } else if let etag = Self.keptPart(result) {
            let size = part(number).size
            let at = current.parts.firstIndex { $0.number >= number } ?? current.parts.endIndex
            if at < current.parts.endIndex, current.parts[at].number == number {
                current.offset -= current.parts[at].size
                current.parts.remove(at: at)
            }
            current.parts.insert(S3Part(number: number, etag: etag, size: size, crc32c: sendsChecksums ? sent?.base64 : nil), at: at)
            current.offset += size
            point = current
            reports.append(.resumable(current, startedOver: nil))
        } else if ending == nil {
            ending = result.response?.status == 404 ? .startOver("S3 no longer has the upload (NoSuchUpload)") : .failed(result)
        }
        return nextParts(width: width)
    }

    /// The ETag S3 gave a part it kept (a 2xx answer naming one, and not another CRC-32C than
    /// the one `sent`); nil for a part it did not keep, or kept damaged.
    public static func keptPart(_ result: AttemptResult, sent: CRC32C? = nil) -> String? {
        guard damaged(0, result, sent: sent) == nil, let response = result.response, (200..<300).contains(response.status),
            let etag = response.header("ETag"), !etag.isEmpty
        else { return nil }
        return etag
    }

    /// Why part `number`'s answer says it did not arrive as sent with the CRC-32C `sent`: S3
    /// refused it for its checksum, or kept another value; nil otherwise.
    static func damaged(_ number: Int, _ result: AttemptResult, sent: CRC32C?) -> String? {
        guard let response = result.response, let sent else { return nil }
        if S3Checksum.refusedForChecksum(response) {
            return "S3 refused part \(number) for its checksum (\(element("Code", in: response.body) ?? "400"))"
        }
        if case .mismatch(let said) = S3Checksum.verdict(of: response, sent: sent) {
            return "S3 kept part \(number) with CRC-32C \(said), not \(sent.base64) as sent"
        }
        return nil
    }

    /// `CompleteMultipartUpload`'s answer: a `200` whose body is an `<Error>` failed (S3 says
    /// so only after it began answering); `InvalidPart`/`InvalidPartOrder`/`NoSuchUpload` start over.
    public mutating func completed(_ result: AttemptResult) -> Decision {
        guard case .completing = state, let current = point else { return decide(.finish(ResumableUploadMachine.misuse)) }
        bytesSent += result.bytesSent
        guard let response = result.response else { return finish(result, keeping: current) }
        let code = Self.element("Code", in: response.body)
        // Done when the answer names the object made (its ETag: S3's CompleteMultipartUploadResult,
        // moto's …Response alike); a 2xx that says nothing is not taken for it.
        if (200..<300).contains(response.status), code == nil, Self.element("ETag", in: response.body) != nil {
            reports.append(.resumable(nil, startedOver: nil))
            state = .done
            var done = AttemptResult(outcome: result.outcome, response: response, bytesSent: bytesSent)
            if let whole = wholeChecksum(current) {
                switch S3Checksum.verdict(ofCompletion: response, whole: whole) {
                case .verified: done = S3Checksum.marked(done)
                case .mismatch(let said): done.outcome = .failed(S3Checksum.mismatch("the object", said: said, sent: whole))
                case .none where keepsChecksums:
                    // The answer does not say (moto's does not), but the parts' did: ask what S3 kept.
                    state = .confirming(done, whole: whole)
                    return decide(.request(.confirm))
                case .none:
                    break
                }
            }
            return decide(.finish(done))
        }
        if let code, ["InvalidPart", "InvalidPartOrder", "NoSuchUpload"].contains(code) {
            return startOver("S3 would not put the parts together (\(code))")
        }
        let said = code.map { " (\($0))" } ?? ((200..<300).contains(response.status) ? " without naming the object it made (no ETag)" : "")
        let failure = UploadFailure(.other, "S3 answered \(response.status) to putting the parts together" + said)
        return finish(AttemptResult(outcome: .failed(failure), response: response, bytesSent: bytesSent), keeping: current)
    }

    /// `HeadObject`'s answer: the object's checksum as S3 kept it, compared with the whole one
    /// sent. An answer that names none (or none came) leaves the completed upload as it was.
    public mutating func confirmed(_ result: AttemptResult) -> Decision {
        guard case .confirming(var done, let whole) = state else { return decide(.finish(ResumableUploadMachine.misuse)) }
        state = .done
        bytesSent += result.bytesSent
        done.bytesSent = bytesSent
        if let response = result.response {
            switch S3Checksum.verdict(of: response, sent: whole) {
            case .verified: done = S3Checksum.marked(done)
            case .mismatch(let said): done.outcome = .failed(S3Checksum.mismatch("the object", said: said, sent: whole))
            case .none: break
            }
        }
        return decide(.finish(done))
    }

    /// The parts S3 does not have yet are the ones to send.
    private mutating func beginParts(width: Int) -> Decision {
        let have = Set(point?.parts.map(\.number) ?? [])
        pending = (1...partCount).filter { !have.contains($0) }
        started = 0
        inFlight = []
        ending = nil
        resend = []
        resent = []
        state = .uploading
        return nextParts(width: width)
    }

    private mutating func nextParts(width: Int) -> Decision {
        guard let current = point, let uploadID = current.uploadID else { return decide(.finish(ResumableUploadMachine.misuse)) }
        if let ending {
            guard inFlight.isEmpty else { return decide(.parts(uploadID: uploadID, [])) }
            self.ending = nil
            switch ending {
            case .failed(let result): return finish(result, keeping: current)
            case .startOver(let why): return startOver(why)
            }
        }
        let room = max(1, width) - inFlight.count
        if room > 0, !resend.isEmpty {
            let now = resend.prefix(room).map(part)
            resend.removeFirst(now.count)
            inFlight.formUnion(now.map(\.number))
            return decide(.parts(uploadID: uploadID, now))
        }
        if room > 0, started < pending.count {
            let now = pending[started..<min(pending.count, started + room)].map(part)
            started += now.count
            inFlight.formUnion(now.map(\.number))
            return decide(.parts(uploadID: uploadID, now))
        }
        if !inFlight.isEmpty { return decide(.parts(uploadID: uploadID, [])) }
        state = .completing
        let whole = wholeChecksum(current)
        let list = current.parts.map { part in
            let crc = whole != nil ? part.crc32c.map { "<ChecksumCRC32C>\($0)</ChecksumCRC32C>" } ?? "" : ""
            return "<Part><PartNumber>\(part.number)</PartNumber><ETag>\(Self.escaped(part.etag))</ETag>\(crc)</Part>"
        }.joined()
        return decide(.request(.complete(uploadID: uploadID, body: "<CompleteMultipartUpload>\(list)</CompleteMultipartUpload>", whole: whole)))
    }

    /// The whole object's CRC-32C, from its parts' in order, when the upload is checked so and
    /// every part's value is known (parts listed by a server that keeps none leave it unknown).
    private func wholeChecksum(_ current: ResumePoint) -> CRC32C? {
        guard current.checksum == S3Checksum.name, current.parts.count == partCount else { return nil }
        var whole: CRC32C?
        for part in current.parts {
            guard let text = part.crc32c, let crc = CRC32C(base64: text) else { return nil }
            whole = whole.map { $0.followed(by: crc, length: part.size) } ?? crc
        }
        return whole
    }

    private mutating func startOver(_ why: String) -> Decision {
        guard !startedOver else {
            return finish(AttemptResult(outcome: .failed(UploadFailure(.other, why)), response: nil, bytesSent: bytesSent))
        }
        startedOver = true
        point = nil
        reports.append(.resumable(nil, startedOver: why))
        state = .creating
        return decide(.request(.create))
    }

    private mutating func finish(_ result: AttemptResult, keeping kept: ResumePoint? = nil) -> Decision {
        state = .done
        var ended = result.keeping(kept)
        ended.bytesSent = bytesSent
        return decide(.finish(ended))
    }

    private mutating func decide(_ next: Next) -> Decision {
        defer { reports = [] }
        return Decision(reports: reports, next: next)
    }
}
