import NIOCore
import NIOPosix
import UploadCore

// An attempt's file made ready before anything is sent: opened, checked against what was
// queued, stripped of its location when asked, sniffed, and held in memory when small.
extension HTTPUploadTransport {
    /// An opened file, checked, ready to become a body (with whichever boundary).
    struct Prepared {
        /// Where the upload goes, parsed once.
        let endpoint: Endpoint
        let source: FileSource
        let media: MediaType
        let pipePrefix: ByteBuffer?
        let preloaded: ByteBuffer?

        func layout(_ boundary: Boundary, for request: UploadRequest) -> MultipartLayout {
            MultipartLayout(
                boundary: boundary, fields: request.formFields, fileField: request.field,
                fileName: request.uploadName, contentType: media, fileSize: source.size
            )
        }
    }

    func prepare(_ request: UploadRequest, eventLoop: EventLoop) async throws(UploadFailure) -> Prepared {
        guard let endpoint = endpoints(request.url) else {
            throw UploadFailure(.other, UploadInputError.badURL(RedactedURL.display(request.url)).description)
        }
        let source: FileSource
        let prefix: [UInt8]
        var pipePrefix: ByteBuffer?
        var preloaded: ByteBuffer?
        switch request.source {
        case .file(let path):
            var opened = try FileSource.open(path: path)
            if let expected = request.expectedFile, let fingerprint = opened.openedAs, let change = expected.change(to: fingerprint) {
                throw UploadFailure(.fileError, "\(path) \(change)")
            }
            if stripLocation { opened = try opened.withoutLocation() }
            source = opened
            if let size = source.size, size <= Int64(streamChunkSize) {
                // Small enough to hold: one read serves the sniffing, the size check and the body.
                let whole = try source.readWhole(size: size)
                prefix = Array(whole.readableBytesView.prefix(MediaSniffer.prefixLength))
                preloaded = whole
            } else {
                prefix = try source.prefix()
            }
        case .standardInput:
            source = FileSource.standardInput()
            let size = chunkSize
            let first: ByteBuffer
            // The first read waits for whoever writes to the pipe, maybe for long: cancelling
            // must not wait with it (the read itself cannot be interrupted; its result is dropped).
            let read = eventLoop.makePromise(of: ByteBuffer.self)
            threadPool.runIfActive(eventLoop: eventLoop) {
                try source.read(offset: 0, count: size, allocator: ByteBufferAllocator())
            }.cascade(to: read)
            do {
                first = try await withTaskCancellationHandler {
                    try await read.futureResult.get()
                } onCancel: {
                    read.fail(CancellationError())
                }
            } catch is CancellationError {
                throw FailureClassifier.cancelled(bodySent: false)
            } catch {
                throw (error as? UploadFailure) ?? UploadFailure(.fileError, "cannot read standard input: \(error)")
            }
            pipePrefix = first
            prefix = Array(first.readableBytesView.prefix(MediaSniffer.prefixLength))
        }
        let media: MediaType
        do throws(UploadInputError) {
            media = try UploadPreflight.acceptedMediaType(prefix: prefix, path: source.path, request: request)
        } catch {
            throw UploadFailure(.fileError, error.description)
        }
        return Prepared(endpoint: endpoint, source: source, media: media, pipePrefix: pipePrefix, preloaded: preloaded)
    }
}
