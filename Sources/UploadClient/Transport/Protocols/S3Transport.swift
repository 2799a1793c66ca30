import Foundation
import NIOCore
import NIOHTTP1
import UploadCore
import UploadProtocols

extension HTTPUploadTransport {
    /// A file over `S3MultipartMachine.threshold` to S3: a multipart upload, as the machine
    /// decides; every request signed as it goes. The parts S3 has survive the attempt (the
    /// point rides on the request), so a cut, an exit or a killed agent costs at most the part
    /// in flight.
    func sendS3Multipart(
        _ request: UploadRequest, _ prepared: Prepared, s3: S3Access, size: Int64, eventLoop: EventLoop, observer: AttemptObserver
    ) async -> AttemptResult {
        guard let opened = prepared.source.openedAs else {
            return AttemptResult(outcome: .failed(UploadFailure(.other, "S3 needs an object's length before its bytes")), response: nil, bytesSent: 0)
        }
        let object = prepared.endpoint.appendingName(request.uploadName)
        let layout = MultipartLayout.bare(contentType: prepared.media, fileSize: size)
        let contentType = request.headers.last { $0.name.lowercased() == "content-type" }?.value ?? prepared.media.mime
        var machine = S3MultipartMachine(objectURL: object.url, file: opened, size: size, point: resume ? request.resume : nil)
        var decision = machine.start()
        observer.started(object.url, size)
        while true {
            relay(decision.reports, url: object.url, observer: observer)
            switch decision.next {
            case .finish(let result):
                if let response = result.response, let words = S3Access.explained(response) {
                    return AttemptResult(outcome: .failed(UploadFailure(.other, words)), response: response, bytesSent: result.bytesSent, resume: result.resume)
                }
                return result
            case .request(.create):
                var fields = baseHeaders(request.headers)
                fields.replaceOrAdd(name: "Content-Type", value: contentType)
                decision = machine.created(await signedExchange(.POST, object, query: "uploads", fields: fields, body: .buffers([]),
                                                                s3: s3, eventLoop: eventLoop, observer: .init()))
            case .request(.listParts(let uploadID)):
                decision = machine.listed(await signedExchange(.GET, object, query: "uploadId=" + Endpoint.percentEncoded(uploadID),
                                                               fields: baseHeaders([]), body: .none, s3: s3, eventLoop: eventLoop, observer: .init()))
            case .request(.uploadPart(let uploadID, let number, let from, let to)):
                var streamer = makeStreamer(layout, prepared, pipePrefix: nil, startOffset: from, eventLoop: eventLoop)
                streamer.endOffset = to
                var fields = baseHeaders([])
                fields.replaceOrAdd(name: "Content-Type", value: "application/octet-stream")
                let result = await signedExchange(.PUT, object, query: "partNumber=\(number)&uploadId=" + Endpoint.percentEncoded(uploadID),
                                                  fields: fields, body: .streamed(streamer), progressBase: from, progressTotal: size,
                                                  s3: s3, eventLoop: eventLoop, observer: observer)
                decision = machine.partUploaded(result)
            case .request(.complete(let uploadID, let body)):
                var fields = baseHeaders([])
                fields.replaceOrAdd(name: "Content-Type", value: "application/xml")
                decision = machine.completed(await signedExchange(.POST, object, query: "uploadId=" + Endpoint.percentEncoded(uploadID),
                                                                  fields: fields, body: .buffers([ByteBuffer(string: body)]),
                                                                  s3: s3, eventLoop: eventLoop, observer: .init()))
            }
        }
    }

    /// One request to `object` with `query`, signed for S3 as it leaves.
    func signedExchange(
        _ method: HTTPMethod, _ object: Endpoint, query: String, fields: HTTPHeaders, body: ExchangeBody,
        progressBase: Int64 = 0, progressTotal: Int64? = nil, s3: S3Access, eventLoop: EventLoop, observer: AttemptObserver
    ) async -> AttemptResult {
        guard let endpoint = endpoints(object.url + "?" + query) else {
            return AttemptResult(outcome: .failed(UploadFailure(.other, "cannot make an S3 request to \(object.shown)")), response: nil, bytesSent: 0)
        }
        var fields = fields
        for (name, value) in s3.signingFields(method: method.rawValue, endpoint: endpoint, headers: fields.map { ($0.name, $0.value) }, date: Date()) {
            fields.replaceOrAdd(name: name, value: value)
        }
        return await exchanger.exchange(Exchange(method: method, endpoint: endpoint, headers: fields, body: body,
                                                 progressBase: progressBase, progressTotal: progressTotal),
                                        eventLoop: eventLoop, observer: observer)
    }

    /// What S3 keeps of a multipart upload that will not go on goes (`AbortMultipartUpload`).
    func abortS3(_ point: ResumePoint, eventLoop: EventLoop) async -> String {
        guard let uploadID = point.uploadID, let object = endpoints(point.uploadURL) else { return "not removed: no upload id" }
        let s3: S3Access
        do throws(UploadInputError) { s3 = try s3Access.access() } catch { return "not removed: \(error.description)" }
        let result = await signedExchange(.DELETE, object, query: "uploadId=" + Endpoint.percentEncoded(uploadID), fields: baseHeaders([]),
                                          body: .none, s3: s3, eventLoop: eventLoop, observer: .init())
        return ResumableUploadMachine.removal(result)
    }
}
