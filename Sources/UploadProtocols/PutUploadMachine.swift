import UploadCore

/// A raw `PUT` of the file, as curl's `-T` sends it: to the URL, or to the URL and the file's
/// name when the URL ends in `/`; redirects as for the ordinary upload (`PlainUploadMachine`).
/// With `createDirs`, a `409 Conflict` (WebDAV: a collection on the way is missing) makes the
/// missing collections with `MKCOL`, from the deepest that can be made down to the file's
/// folder, and sends the file once more.
public struct PutUploadMachine: Sendable {
    /// A request the transport sends for the machine.
    public enum Request: Sendable, Equatable {
        /// The file, in a `PUT` to this endpoint with these of the user's headers.
        case put(Endpoint, headers: [RequestHeader])
        /// `MKCOL` on this collection (a folder), with these of the user's headers.
        case makeCollection(Endpoint, headers: [RequestHeader])
    }

    /// What the transport does next: send a request, or end the attempt with this result.
    public enum Next: Sendable {
        case request(Request)
        case finish(AttemptResult)
    }

    /// Collections made at most for one file (a deeper path is refused with the reason).
    public static let deepest = 32

    private var plain: PlainUploadMachine
    private let endpoint: Endpoint
    private let headers: [RequestHeader]
    private let createDirs: Bool
    private var state = State.putting
    private var madeCollections = false

    private enum State: Sendable {
        case putting
        /// `MKCOL` on `trying`; `above`: the ones further up not tried yet; `below`: the ones
        /// under it still to make once it exists (the file's folder last); `conflict`: the
        /// `PUT`'s answer that started it.
        case making(trying: Endpoint, above: [Endpoint], below: [Endpoint], conflict: AttemptResult)
        case done
    }

    /// A `PUT` to `endpoint` (a URL ending in `/` gets `fileName`, percent-encoded) with the
    /// user's `headers`; `canSendAgain`: the body can be made again (a file, not a pipe);
    /// `signed`: each request is signed for the endpoint's origin (S3), so no redirect leaves it.
    public init(
        endpoint: Endpoint, fileName: String, headers: [RequestHeader], canSendAgain: Bool, createDirs: Bool, signed: Bool = false,
        followsOtherOrigins: Bool = false
    ) {
        let target = endpoint.appendingName(fileName)
        self.endpoint = target
        self.headers = headers
        self.createDirs = createDirs
        plain = PlainUploadMachine(endpoint: target, headers: headers, canSendAgain: canSendAgain, signed: signed, followsOtherOrigins: followsOtherOrigins)
    }

    /// Where the file goes (its name appended where the URL asked for it).
    public var target: Endpoint { endpoint }

    /// The first request.
    public func start() -> Next {
        .request(.put(endpoint, headers: headers))
    }

    /// What the `PUT` came back with.
    public mutating func answered(_ result: AttemptResult) -> Next {
        guard case .putting = state else { return .finish(ResumableUploadMachine.misuse) }
        if createDirs, !madeCollections, result.response?.status == 409 {
            let collections = plain.target.collections
            guard let deepest = collections.first else { return follow(plain.answered(result)) }
            guard collections.count <= Self.deepest else {
                return finish(
                    AttemptResult(
                        outcome: .failed(
                            UploadFailure(
                                .other,
                                "the server is missing a folder on the way to \(plain.target.shown), "
                                    + "and it is more than \(Self.deepest) folders deep: uploadmon makes at most \(Self.deepest) (--create-dirs)")),
                        response: result.response, bytesSent: result.bytesSent))
            }
            madeCollections = true
            state = .making(trying: deepest, above: Array(collections.dropFirst()), below: [], conflict: result)
            return makeCollection(deepest)
        }
        return follow(plain.answered(result))
    }

    /// What a `MKCOL` came back with: made (`201`) or already there (`405`: RFC 4918 §9.3.1),
    /// the one above missing too (`409`), or refused.
    public mutating func collectionAnswered(_ result: AttemptResult) -> Next {
        guard case .making(let trying, var above, var below, let conflict) = state else { return .finish(ResumableUploadMachine.misuse) }
        guard let response = result.response else {
            return finish(AttemptResult(outcome: result.outcome, response: nil, bytesSent: conflict.bytesSent))
        }
        switch response.status {
        case 200..<300, 405:
            // The folder is there (made now, or by another upload meanwhile: files going to
            // one new folder at once all find it missing). The file goes once more; a conflict
            // then is the answer.
            guard let next = below.popLast() else {
                state = .putting
                return follow(plain.again(after: conflict))
            }
            state = .making(trying: next, above: above, below: below, conflict: conflict)
            return makeCollection(next)
        case 409 where !above.isEmpty:
            below.append(trying)
            let next = above.removeFirst()
            state = .making(trying: next, above: above, below: below, conflict: conflict)
            return makeCollection(next)
        default:
            return finish(
                AttemptResult(
                    outcome: .failed(UploadFailure(.other, "cannot make the folder \(trying.shown) (--create-dirs): MKCOL answered \(response.status)")),
                    response: response, bytesSent: conflict.bytesSent))
        }
    }

    /// An object store's refusal of a presigned `PUT`, said in words the user can act on: a
    /// signature that does not match (a presigned URL signs the method, the path and the
    /// headers it was made with, `Content-Type` most often) or one that has expired. The
    /// answer itself stays with the result for the panel. Any other result is as it came.
    public static func explained(_ result: AttemptResult, contentType: String) -> AttemptResult {
        guard let response = result.response, response.status == 403 else { return result }
        let body = String(decoding: response.body, as: UTF8.self)
        let reason: String
        if body.contains("<Code>SignatureDoesNotMatch</Code>") {
            reason =
                "403 SignatureDoesNotMatch: the server's signature of this request is not the URL's. A presigned URL signs the "
                + "method, the path and the headers it was made with, often Content-Type: this upload sent Content-Type: \(contentType); "
                + "give the one the URL was signed with (-H 'Content-Type: ...'), or make the URL again for this file"
        } else if body.contains("<Code>AccessDenied</Code>"), body.lowercased().contains("expired") {
            reason = "403 AccessDenied: the presigned URL has expired; make a new one"
        } else {
            return result
        }
        return AttemptResult(outcome: .failed(UploadFailure(.other, reason)), response: response, bytesSent: result.bytesSent)
    }

    /// The most one S3 object holds (a multipart upload's 10,000 parts of at most 5 GiB).
    public static let s3MultipartLimit: Int64 = 5 << 40

    /// Why a body of `size` bytes (nil: a pipe's, unknown) cannot go to S3, or nil.
    public static func s3Refusal(size: Int64?) -> String? {
        guard let size else {
            return "S3 needs an object's length before its bytes, and standard input has none: save it to a file first"
        }
        guard size <= s3MultipartLimit else {
            return "S3 takes at most 5 TiB in one object and this file is \(ByteFormat.bytes(size))"
        }
        return nil
    }

    private func makeCollection(_ collection: Endpoint) -> Next {
        .request(.makeCollection(collection, headers: endpoint.headers(headers, to: collection)))
    }

    private mutating func follow(_ next: PlainUploadMachine.Next) -> Next {
        switch next {
        case .send(let to, let headers):
            return .request(.put(to, headers: headers))
        case .finish(let result):
            return finish(result)
        }
    }

    private mutating func finish(_ result: AttemptResult) -> Next {
        state = .done
        return .finish(result)
    }
}
