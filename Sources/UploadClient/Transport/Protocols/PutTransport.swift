import Foundation
import NIOCore
import NIOHTTP1
import UploadCore
import UploadProtocols

extension HTTPUploadTransport {
    /// `PUT` bodies larger than this ask `Expect: 100-continue` first (curl's threshold).
    static let expectContinueAbove: Int64 = 1 << 20

    /// The file's raw bytes in a `PUT` (curl's `-T`), as `PutUploadMachine` decides: to the URL
    /// or, when it ends in `/`, to the URL and the file's name; redirects followed as for the
    /// ordinary upload; missing WebDAV folders made first with `--create-dirs`. `Content-Type`
    /// is the file's type unless the user gave one (a presigned URL may have signed it).
    func sendPut(
        _ request: UploadRequest, _ prepared: Prepared, inOneWrite: Bool, eventLoop: EventLoop, observer: AttemptObserver
    ) async -> AttemptResult {
        if let s3 = prepared.s3 {
            if let refusal = PutUploadMachine.s3Refusal(size: prepared.source.isPipe ? nil : prepared.source.size) {
                return AttemptResult(outcome: .failed(UploadFailure(.other, refusal)), response: nil, bytesSent: 0)
            }
            if let size = prepared.source.size, size > S3MultipartMachine.threshold || request.resume?.kind == .s3 {
                return await sendS3Multipart(request, prepared, s3: s3, size: size, eventLoop: eventLoop, observer: observer)
            }
        }
        let layout = MultipartLayout.bare(contentType: prepared.media, fileSize: prepared.source.size)
        let inMemory = inMemoryDigests(layout, prepared, url: prepared.endpoint.url)
        let upFront = inMemory?.value
        let contentType = request.headers.last { $0.name.lowercased() == "content-type" }?.value ?? prepared.media.mime
        var machine = PutUploadMachine(
            endpoint: prepared.endpoint, fileName: prepared.uploadName, headers: request.headers,
            canSendAgain: !prepared.source.isPipe, createDirs: createDirs, signed: prepared.s3 != nil,
            followsOtherOrigins: followsRedirectsElsewhere)
        var next = machine.start()
        var last: Endpoint?
        // S3 checks each object by its CRC-32C: worked out before the head goes, and the object
        // sent once more if S3 refused what arrived for it.
        var checksum: CRC32C?
        if prepared.s3 != nil, s3Checksums(prepared), let size = prepared.source.size {
            switch await crc32c(of: prepared, 0..<size, size: size) {
            case .success(let crc): checksum = crc
            case .failure(let failure): return AttemptResult(outcome: .failed(failure), response: nil, bytesSent: 0)
            }
        }
        var resentForChecksum = false
        while true {
            switch next {
            case .finish(let result):
                if prepared.s3 != nil, let response = result.response, let words = S3Access.explained(response) {
                    return AttemptResult(outcome: .failed(UploadFailure(.other, words)), response: response, bytesSent: result.bytesSent)
                }
                return PutUploadMachine.explained(result, contentType: contentType)
            case .request(.makeCollection(let collection, let headers)):
                let made = await exchanger.exchange(
                    Exchange(method: .MKCOL, endpoint: collection, headers: baseHeaders(headers)),
                    eventLoop: eventLoop, observer: .init())
                next = machine.collectionAnswered(made)
            case .request(.put(let endpoint, let headers)):
                if let last, last != endpoint { observer.redirected(endpoint.url) }
                last = endpoint
                observer.started(endpoint.url, layout.contentLength)
                var fields = baseHeaders(headers)
                fields.replaceOrAdd(name: "Content-Type", value: contentType)
                Self.addDigestFields(&fields, content: upFront, want: digests)
                if let checksum {
                    for (name, value) in S3Checksum.fields(checksum) { fields.replaceOrAdd(name: name, value: value) }
                }
                if let s3 = prepared.s3 {
                    for (name, value) in s3.signingFields(method: "PUT", endpoint: endpoint, headers: fields.map { ($0.name, $0.value) }, date: clock.wall()) {
                        fields.replaceOrAdd(name: name, value: value)
                    }
                }
                // As curl does for a body over 1 MiB: the head first, the body once the server says
                // go on (or after a second's silence), so that a missing folder, a refused login or
                // an expired URL is answered before the file crosses the link.
                if let length = layout.contentLength, length > Self.expectContinueAbove, seesInterimAnswers(endpoint.url) {
                    fields.add(name: "Expect", value: "100-continue")
                }
                let (result, sent, content) = await sendBody(
                    .PUT, to: endpoint, fields: fields, layout: layout, prepared, inOneWrite: inOneWrite,
                    inMemory: inMemory, pipePrefix: prepared.pipePrefix, eventLoop: eventLoop, observer: observer)
                prepared.content(content, observer)
                var answered = result
                if let checksum, let response = result.response {
                    if S3Checksum.refusedForChecksum(response), !resentForChecksum {
                        resentForChecksum = true
                        last = nil
                        continue
                    }
                    switch S3Checksum.verdict(of: response, sent: checksum) {
                    case .verified: answered = S3Checksum.marked(result)
                    case .mismatch(let said): answered.outcome = .failed(S3Checksum.mismatch("the object", said: said, sent: checksum))
                    case .none: break
                    }
                }
                next = machine.answered(await judged(answered, sent: sent, url: endpoint.url, layout: layout, prepared))
            }
        }
    }
}
