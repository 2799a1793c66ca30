import Foundation
import NIOCore
import NIOPosix
import UploadCore
import UploadProtocols

// An attempt's file made ready before anything is sent: opened, checked against what was
// queued, stripped of its location when asked, sniffed, and held in memory when small.
extension HTTPUploadTransport {
    /// An opened file, checked, ready to become a body (with whichever boundary).
    struct Prepared {
        /// Where the upload goes, parsed once (for `s3://`, the bucket's URL for the key).
        let endpoint: Endpoint
        /// How requests to S3 are signed, for an `s3://` destination.
        let s3: S3Access?
        let source: FileSource
        let media: MediaType
        let pipePrefix: ByteBuffer?
        let preloaded: ByteBuffer?
        /// The name the file goes by: the request's, with the extension of the format it was
        /// converted to (`IMG_1234.HEIC` → `IMG_1234.jpg`).
        let uploadName: String
        /// For a photo converted on the way, the digest naming its original and the settings
        /// (`ContentIdentity.converted`): what "already sent" knows it by.
        let sourceIdentity: String?
        /// For a photo converted on the way, the SHA-256 of the bytes sent, worked out as it
        /// was prepared (the protocols' own digests are not always made).
        let convertedContent: String?

        /// The digests an attempt that read the whole file reports: the bytes sent (as the
        /// body's digest found them, or as preparing found them), and the source's identity.
        func content(_ found: String?, _ observer: AttemptObserver) {
            guard let sent = found ?? convertedContent else { return }
            // A converted photo's name (IMG_0001.jpg) is what "already sent … as" must say.
            observer.content(sent, sourceIdentity, sourceIdentity == nil ? nil : uploadName)
        }

        func layout(_ boundary: Boundary, for request: UploadRequest) -> MultipartLayout {
            MultipartLayout(
                boundary: boundary, fields: request.formFields, fileField: request.field,
                fileName: uploadName, contentType: media, fileSize: source.size
            )
        }
    }

    /// A file opened and checked, converted or stripped as asked, sniffed, and held when small.
    struct OpenedFile: @unchecked Sendable {
        let source: FileSource
        let prefix: [UInt8]
        let preloaded: ByteBuffer?
        let converted: Bool
        /// For a converted photo: its identity and the digest of the bytes sent.
        let identity: (source: String, sent: String)?
    }

    /// Opens `path` for an upload (blocking: on a preparation thread): checked against what was
    /// queued, converted (`conversion`) or stripped of its location, and read whole when it is
    /// at most `holdable` bytes.
    static func openFile(
        _ path: String, expected: FileFingerprint?, stripLocation strip: Bool, conversion: PhotoConversion?, holdable: Int64
    ) throws(UploadFailure) -> OpenedFile {
        var opened = try FileSource.open(path: path)
        if let expected, let fingerprint = opened.openedAs, let change = expected.change(to: fingerprint) {
            throw UploadFailure(.fileError, "\(path) \(change)")
        }
        var converted = false
        var source: String?
        if let conversion {
            // Known by its original and the settings, whether or not it needed converting.
            source = ContentIdentity.converted(original: try ContentIdentity.sha256(of: opened).hex, conversion, stripLocation: strip)
            (opened, converted) = try opened.converted(conversion, stripLocation: strip)
        }
        // A converted photo was written with only the metadata it may keep.
        if strip, !converted { opened = try opened.withoutLocation() }
        // What is sent hashed too: a converted photo is held in memory, and "already
        // sent" must never learn it by the file's bytes (as an upload not hashed is).
        var identity: (source: String, sent: String)?
        if let source { identity = (source, try ContentIdentity.sha256(of: opened).hex) }
        if let size = opened.size, size <= holdable {
            // Small enough to hold: one read serves the sniffing, the size check and the body.
            let whole = try opened.readWhole(size: size)
            return OpenedFile(
                source: opened, prefix: Array(whole.readableBytesView.prefix(MediaSniffer.prefixLength)), preloaded: whole,
                converted: converted, identity: identity)
        }
        return OpenedFile(source: opened, prefix: try opened.prefix(), preloaded: nil, converted: converted, identity: identity)
    }

    /// How many uploads next in line are made ready ahead of their turn: one per core, so
    /// conversions keep every core busy while the uploads wait on the network.
    static let aheadLimit = max(1, ProcessInfo.processInfo.activeProcessorCount)

    /// Starts making ready those of `requests` (next in line) that take long to: photos to
    /// convert. At most `aheadLimit` are held, done or not; an attempt takes its own.
    public func prepareAhead(_ requests: [UploadRequest]) {
        guard let conversion = self.conversion, conversion.changesAnything else { return }
        let (strip, holdable, limit, threads) = (stripLocation, Int64(streamChunkSize), preparationLimit, preparation)
        for request in requests {
            guard case .file(let path) = request.source else { continue }
            let expected = request.expectedFile
            ahead.start(path, expected: expected, limit: Self.aheadLimit) {
                do throws(UploadFailure) {
                    return .success(
                        try await threads.run(limit: limit, describing: path) { () throws(UploadFailure) in
                            try Self.openFile(path, expected: expected, stripLocation: strip, conversion: conversion, holdable: holdable)
                        })
                } catch {
                    return .failure(error)
                }
            }
        }
    }

    func prepare(_ request: UploadRequest, eventLoop: EventLoop) async throws(UploadFailure) -> Prepared {
        let (endpoint, s3) = try destination(request.url)
        let source: FileSource
        let prefix: [UInt8]
        var pipePrefix: ByteBuffer?
        var preloaded: ByteBuffer?
        var uploadName = request.uploadName
        var identity: (source: String, sent: String)?
        switch request.source {
        case .file(let path):
            // On a thread of its own, within a limit: a read from a file system that stopped
            // answering never returns, and must hold neither an event loop nor the queue.
            let conversion = self.conversion.flatMap { $0.changesAnything ? $0 : nil }
            let file: OpenedFile
            if let ready = ahead.take(path, expected: request.expectedFile) {
                // Made ready while the uploads before it went (converted ahead of its turn).
                guard let made = await PreparedAhead.value(of: ready) else { throw FailureClassifier.cancelled(bodySent: false) }
                file = try made.get()
            } else {
                let (expected, strip, holdable) = (request.expectedFile, stripLocation, Int64(streamChunkSize))
                file = try await preparation.run(limit: preparationLimit, clockOn: eventLoop, describing: path) { () throws(UploadFailure) in
                    try Self.openFile(path, expected: expected, stripLocation: strip, conversion: conversion, holdable: holdable)
                }
            }
            (source, prefix, preloaded, identity) = (file.source, file.prefix, file.preloaded, file.identity)
            let converted = file.converted
            if converted, let conversion { uploadName = Self.convertedName(request.uploadName, conversion, prefix: prefix) }
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
        return Prepared(
            endpoint: endpoint, s3: s3, source: source, media: media, pipePrefix: pipePrefix, preloaded: preloaded,
            uploadName: uploadName, sourceIdentity: identity?.source, convertedContent: identity?.sent)
    }

    /// The name a converted photo goes by: its extension follows what was written (with
    /// `--convert keep`, the photo's own format).
    static func convertedName(_ name: String, _ conversion: PhotoConversion, prefix: [UInt8]) -> String {
        guard conversion.format == .keep else { return conversion.sentName(name) }
        return name
    }

    /// Where requests for `url` go: its endpoint, or for `s3://bucket/key` the bucket's URL for
    /// the key and how to sign (credentials and region read as the AWS tools read them).
    func destination(_ url: String) throws(UploadFailure) -> (Endpoint, S3Access?) {
        guard S3Location.isS3(url) else {
            guard let endpoint = endpoints(url) else { throw UploadFailure(.other, UploadInputError.badURL(RedactedURL.display(url)).description) }
            return (endpoint, nil)
        }
        do throws(UploadInputError) {
            let location = try S3Location(parsing: url)
            let access = try s3Access.access()
            guard let endpoint = endpoints(access.url(for: location)) else { throw UploadInputError.badURL(access.url(for: location)) }
            return (endpoint, access)
        } catch {
            throw UploadFailure(.other, error.description)
        }
    }
}
