import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import UploadCore
import UploadProtocols

extension HTTPUploadTransport {
    /// A file over `S3MultipartMachine.threshold` to S3: a multipart upload, as the machine
    /// decides; every request signed as it goes, parts side by side within the attempt's share
    /// of the concurrency (one at a time under a per-upload rate limit, which each part's
    /// stream would otherwise apply on its own). The parts S3 has survive the attempt (the
    /// point rides on the request), so a cut, an exit or a killed agent costs at most the
    /// parts in flight.
    func sendS3Multipart(
        _ request: UploadRequest, _ prepared: Prepared, s3: S3Access, size: Int64, eventLoop: EventLoop, observer: AttemptObserver
    ) async -> AttemptResult {
        guard let opened = prepared.source.openedAs else {
            return AttemptResult(outcome: .failed(UploadFailure(.other, "S3 needs an object's length before its bytes")), response: nil, bytesSent: 0)
        }
        let object = prepared.endpoint.appendingName(prepared.uploadName)
        let contentType = request.headers.last { $0.name.lowercased() == "content-type" }?.value ?? prepared.media.mime
        var machine = S3MultipartMachine(
            objectURL: object.url, file: opened, size: size, point: resume ? request.resume : nil,
            checksums: s3Checksums(prepared))
        let share = observer.share
        let alone = rateLimit != nil
        let width: @Sendable () -> Int = { alone ? 1 : share() }
        let tally = PartTally(observer: observer, size: size)
        observer.started(object.url, size)
        return await withTaskGroup(of: (Int, AttemptResult, CRC32C?).self, returning: AttemptResult.self) { parts -> AttemptResult in
            await runS3Multipart(
                &machine, parts: &parts, request, prepared, object: object, contentType: contentType, s3: s3, size: size,
                width: width, tally: tally, eventLoop: eventLoop, observer: observer)
        }
    }

    private func runS3Multipart(
        _ machine: inout S3MultipartMachine, parts: inout TaskGroup<(Int, AttemptResult, CRC32C?)>, _ request: UploadRequest, _ prepared: Prepared,
        object: Endpoint, contentType: String, s3: S3Access, size: Int64, width: @Sendable () -> Int, tally: PartTally,
        eventLoop: EventLoop, observer: AttemptObserver
    ) async -> AttemptResult {
        var decision = machine.start()
        while true {
            relay(decision.reports, url: object.url, observer: observer)
            tally.follow(decision.reports)
            switch decision.next {
            case .finish(let result):
                if let response = result.response, let words = S3Access.explained(response) {
                    return AttemptResult(outcome: .failed(UploadFailure(.other, words)), response: response, bytesSent: result.bytesSent, resume: result.resume)
                }
                // The parts go side by side, so no one digest of the whole is made here; a photo
                // converted on the way was hashed as it was written, and is remembered by that.
                if result.outcome.isSuccess { prepared.content(nil, observer) }
                return result
            case .request(.create):
                var fields = baseHeaders(request.headers)
                fields.replaceOrAdd(name: "Content-Type", value: contentType)
                if machine.sendsChecksums {
                    for (name, value) in S3Checksum.creationFields { fields.replaceOrAdd(name: name, value: value) }
                }
                decision = machine.created(
                    await signedExchange(
                        .POST, object, query: "uploads", fields: fields, body: .buffers([]),
                        s3: s3, eventLoop: eventLoop, observer: .init()), width: width())
            case .request(.listParts(let uploadID, let after)):
                let page = after.map { "part-number-marker=\($0)&" } ?? ""
                decision = machine.listed(
                    await signedExchange(
                        .GET, object, query: page + "uploadId=" + Endpoint.percentEncoded(uploadID),
                        fields: baseHeaders([]), body: .none, s3: s3, eventLoop: eventLoop, observer: .init()),
                    width: width())
            case .parts(let uploadID, let starting):
                let checked = machine.sendsChecksums
                for part in starting {
                    parts.addTask {
                        await self.sendS3Part(
                            part, of: object, uploadID: uploadID, prepared, s3: s3, size: size, checked: checked,
                            eventLoop: eventLoop, observer: tally.observer(for: part))
                    }
                }
                guard let (number, result, sent) = await parts.next() else {
                    return AttemptResult(outcome: .failed(UploadFailure(.other, "internal error: no S3 part in flight")), response: nil, bytesSent: 0)
                }
                // A part kept with another CRC than sent goes again: its bytes are not counted twice.
                tally.ended(number, kept: S3MultipartMachine.keptPart(result, sent: sent) != nil)
                decision = machine.partUploaded(number, result, sent: sent, width: width())
            case .request(.confirm):
                var fields = baseHeaders([])
                fields.replaceOrAdd(name: "x-amz-checksum-mode", value: "ENABLED")
                decision = machine.confirmed(
                    await signedExchange(
                        .HEAD, object, query: "", fields: fields, body: .none,
                        s3: s3, eventLoop: eventLoop, observer: .init()))
            case .request(.complete(let uploadID, let body, let whole)):
                var fields = baseHeaders([])
                fields.replaceOrAdd(name: "Content-Type", value: "application/xml")
                if let whole {
                    for (name, value) in S3Checksum.completionFields(whole) { fields.replaceOrAdd(name: name, value: value) }
                }
                decision = machine.completed(
                    await signedExchange(
                        .POST, object, query: "uploadId=" + Endpoint.percentEncoded(uploadID),
                        fields: fields, body: .buffers([ByteBuffer(string: body)]),
                        s3: s3, eventLoop: eventLoop, observer: .init()))
            }
        }
    }

    /// One part: the file's bytes `part.from ..< part.to`, streamed; `checked`: with its
    /// CRC-32C, worked out first (returned with the answer: what the part carried).
    func sendS3Part(
        _ part: S3MultipartMachine.Part, of object: Endpoint, uploadID: String, _ prepared: Prepared, s3: S3Access, size: Int64,
        checked: Bool, eventLoop: EventLoop, observer: AttemptObserver
    ) async -> (Int, AttemptResult, CRC32C?) {
        var fields = baseHeaders([])
        fields.replaceOrAdd(name: "Content-Type", value: "application/octet-stream")
        var sent: CRC32C?
        if checked {
            switch await crc32c(of: prepared, part.from..<part.to, size: size) {
            case .success(let crc):
                sent = crc
                for (name, value) in S3Checksum.fields(crc) { fields.replaceOrAdd(name: name, value: value) }
            case .failure(let failure):
                return (part.number, AttemptResult(outcome: .failed(failure), response: nil, bytesSent: 0), nil)
            }
        }
        var streamer = makeStreamer(.bare(contentType: prepared.media, fileSize: size), prepared, pipePrefix: nil, startOffset: part.from, eventLoop: eventLoop)
        streamer.endOffset = part.to
        let result = await signedExchange(
            .PUT, object, query: "partNumber=\(part.number)&uploadId=" + Endpoint.percentEncoded(uploadID),
            fields: fields, body: .streamed(streamer), progressBase: part.from, progressTotal: size,
            s3: s3, eventLoop: eventLoop, observer: observer)
        return (part.number, result, sent)
    }

    /// Whether uploads to S3 carry CRC-32Cs for S3 to check: not with `--no-digest`, nor for a
    /// pipe (its bytes cannot be read ahead of sending them).
    func s3Checksums(_ prepared: Prepared) -> Bool {
        digests && !prepared.source.isPipe
    }

    /// The CRC-32C of `range` of what is sent, read off the event loop (a second read of bytes
    /// the page cache holds once the first has been made; the processor's CRC instruction
    /// keeps both well under the cost of sending them).
    func crc32c(of prepared: Prepared, _ range: Range<Int64>, size: Int64) async -> Result<CRC32C, UploadFailure> {
        if let preloaded = prepared.preloaded, range.upperBound <= Int64(preloaded.readableBytes) {
            var crc = CRC32C()
            preloaded.withUnsafeReadableBytes { bytes in
                crc.update(UnsafeRawBufferPointer(rebasing: bytes[Int(range.lowerBound)..<Int(range.upperBound)]))
            }
            return .success(crc)
        }
        let source = prepared.source
        do {
            let crc = try await threadPool.runIfActive { () throws -> CRC32C in
                var crc = CRC32C()
                try source.scan(range, expected: size) { crc.update($0) }
                return crc
            }
            return .success(crc)
        } catch let failure as UploadFailure {
            return .failure(failure)
        } catch {
            return .failure(UploadFailure(.fileError, "cannot read the file to work out its checksum: \(error)"))
        }
    }

    /// One request to `object` with `query`, signed for S3 as it leaves.
    func signedExchange(
        _ method: HTTPMethod, _ object: Endpoint, query: String, fields: HTTPHeaders, body: ExchangeBody,
        progressBase: Int64 = 0, progressTotal: Int64? = nil, s3: S3Access, eventLoop: EventLoop, observer: AttemptObserver
    ) async -> AttemptResult {
        guard let endpoint = endpoints(query.isEmpty ? object.url : object.url + "?" + query) else {
            return AttemptResult(outcome: .failed(UploadFailure(.other, "cannot make an S3 request to \(object.shown)")), response: nil, bytesSent: 0)
        }
        var fields = fields
        for (name, value) in s3.signingFields(method: method.rawValue, endpoint: endpoint, headers: fields.map { ($0.name, $0.value) }, date: clock.wall()) {
            fields.replaceOrAdd(name: name, value: value)
        }
        return await exchanger.exchange(
            Exchange(
                method: method, endpoint: endpoint, headers: fields, body: body,
                progressBase: progressBase, progressTotal: progressTotal),
            eventLoop: eventLoop, observer: observer)
    }

    /// What S3 keeps of a multipart upload that will not go on goes (`AbortMultipartUpload`).
    func abortS3(_ point: ResumePoint, eventLoop: EventLoop) async -> String {
        guard let uploadID = point.uploadID, let object = endpoints(point.uploadURL) else { return "not removed: no upload id" }
        let s3: S3Access
        do throws(UploadInputError) { s3 = try s3Access.access() } catch { return "not removed: \(error.description)" }
        let result = await signedExchange(
            .DELETE, object, query: "uploadId=" + Endpoint.percentEncoded(uploadID), fields: baseHeaders([]),
            body: .none, s3: s3, eventLoop: eventLoop, observer: .init())
        return ResumableUploadMachine.removal(result)
    }
}

/// The bytes of an S3 upload's parts, as one progress: the parts S3 has, plus what each part in
/// flight has sent so far (a part that fails takes its bytes back).
final class PartTally: Sendable {
    private let observer: AttemptObserver
    private let size: Int64
    private let counts = NIOLockedValueBox<(kept: Int64, inFlight: [Int: Int64])>((0, [:]))

    init(observer: AttemptObserver, size: Int64) {
        self.observer = observer
        self.size = size
    }

    /// What S3 has before this attempt's parts: what it listed, or nothing when it starts over.
    func follow(_ reports: [ResumableUploadMachine.Report]) {
        for report in reports {
            switch report {
            case .resumed(let offset, _): counts.withLockedValue { $0.kept = offset }
            case .resumable(nil, _?): counts.withLockedValue { $0.kept = 0 }
            default: break
            }
        }
    }

    /// The observer part `part` reports its progress to (from its own start).
    func observer(for part: S3MultipartMachine.Part) -> AttemptObserver {
        var each = observer
        each.progress = { [self] delta, sent, _ in
            let total = counts.withLockedValue { counts -> Int64 in
                counts.inFlight[part.number] = sent - part.from
                return counts.kept + counts.inFlight.values.reduce(0, +)
            }
            observer.progress(delta, total, size)
        }
        return each
    }

    func ended(_ number: Int, kept: Bool) {
        counts.withLockedValue { counts in
            let sent = counts.inFlight.removeValue(forKey: number) ?? 0
            if kept { counts.kept += sent }
        }
    }
}
