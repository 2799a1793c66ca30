import NIOCore
import NIOHTTP1
import UploadCore
import UploadProtocols

/// What one request that uploads nothing showed of a destination: that the URL answers (its
/// name resolves, the connection and TLS work, the proxy carries it) and whether the
/// credentials were taken, in words that say how far that proves it.
public struct DestinationCheck: Sendable, Equatable {
    /// Whether the destination can be expected to take uploads.
    public var passed: Bool
    /// The request, as said: `OPTIONS https://…` or `HEAD` of an S3 bucket.
    public var request: String
    /// The answer's status line, or nil when none came.
    public var status: String?
    /// What it means, in a sentence or two.
    public var verdict: String

    public init(passed: Bool, request: String, status: String?, verdict: String) {
        (self.passed, self.request, self.status, self.verdict) = (passed, request, status, verdict)
    }

    /// What an `OPTIONS` answer (or its absence) says of an upload endpoint.
    public static func reading(options result: AttemptResult, request: String) -> DestinationCheck {
        guard let response = result.response else {
            let reason: String
            if case .failed(let failure) = result.outcome { reason = FailureText.line(failure) } else { reason = "no answer" }
            return DestinationCheck(passed: false, request: request, status: nil, verdict: "cannot reach it: \(reason)")
        }
        let status = HTTPStatus.line(response.status, reason: response.reason)
        let check = { (passed: Bool, verdict: String) in DestinationCheck(passed: passed, request: request, status: status, verdict: verdict) }
        switch response.status {
        case 200..<300:
            if let tus = TusCapabilities(options: response) {
                let creation = tus.extensions.contains("creation") ? "" : " (without creation: send needs --upload-url)"
                return check(true, "it answers and speaks tus 1.0.0\(creation); uploads resume where a connection broke")
            }
            if let version = response.header(ResumableFields.interopVersion).flatMap(Int.init)
                ?? response.header("Upload-Draft-Interop-Version").flatMap(Int.init)
            {
                return check(true, "it answers and resumes uploads (the resumable-upload draft, version \(version)); credentials, if it needs any, were taken")
            }
            return check(true, "it answers, and took the request with the credentials given (a plain upload endpoint checks them again on each upload)")
        case 401, 407:
            let who = response.status == 407 ? "the proxy" : "the server"
            return check(
                false,
                "\(who) wants credentials it did not get or did not take: give them with netrc = true (~/.netrc), or a header file (headers = [\"@FILE\"])")
        case 403:
            return check(false, "the server refused the request: the credentials are not taken, or they may not upload here")
        case 404, 410:
            return check(false, "there is no such endpoint on the server: check the URL's path")
        case 405, 501:
            return check(
                true, "the server is there (it does not answer OPTIONS, which many upload endpoints do not); the credentials are checked only by an upload")
        case 300..<400:
            let location = response.header("Location").map { " to \(RedactedURL.display($0))" } ?? ""
            return check(false, "the server sends requests elsewhere\(location): give that URL")
        default:
            return check(false, "the server answered with an error; an upload would likely get the same")
        }
    }

    /// What a signed `HEAD` of an S3 bucket says.
    public static func reading(bucket result: AttemptResult, request: String, bucket: String) -> DestinationCheck {
        guard let response = result.response else { return reading(options: result, request: request) }
        let status = HTTPStatus.line(response.status, reason: response.reason)
        switch response.status {
        case 200..<300:
            return DestinationCheck(passed: true, request: request, status: status, verdict: "the bucket \(bucket) is there and the credentials are taken")
        case 403:
            return DestinationCheck(
                passed: false, request: request, status: status,
                verdict:
                    "the credentials are refused, or they may not look at the bucket \(bucket) (s3:ListBucket): a key that may only upload cannot be checked without uploading"
            )
        case 404:
            return DestinationCheck(passed: false, request: request, status: status, verdict: "there is no bucket \(bucket) at this endpoint")
        case 301, 307, 400:
            let region = response.header("x-amz-bucket-region").map { " (it is in \($0): set AWS_REGION)" } ?? ""
            return DestinationCheck(
                passed: false, request: request, status: status, verdict: "the bucket \(bucket) is in another region than the one signed for\(region)")
        default:
            return reading(options: result, request: request)
        }
    }
}

extension HTTPUploadTransport {
    /// One request that proves what it can of `url` without uploading: an `OPTIONS` with the
    /// headers an upload would carry (and the resumable protocols' version fields, so a tus or
    /// draft server says what it speaks), or for `s3://` a signed `HEAD` of the bucket.
    public func check(url: String, headers: [RequestHeader]) async -> DestinationCheck {
        let eventLoop = eventLoopGroup.any()
        if S3Location.isS3(url) {
            let shown = "HEAD " + RedactedURL.display(url)
            let location: S3Location
            let s3: S3Access
            do throws(UploadInputError) {
                location = try S3Location(parsing: url)
                s3 = try s3Access.access()
            } catch {
                return DestinationCheck(passed: false, request: shown, status: nil, verdict: error.description)
            }
            guard let bucketLocation = try? S3Location(parsing: "s3://\(location.bucket)/"), let bucket = endpoints(s3.url(for: bucketLocation)) else {
                return DestinationCheck(passed: false, request: shown, status: nil, verdict: "cannot make an S3 request for \(url)")
            }
            let result = await signedExchange(
                .HEAD, bucket, query: "", fields: baseHeaders(headers), body: .none, s3: s3, eventLoop: eventLoop, observer: .init())
            return DestinationCheck.reading(bucket: result, request: "HEAD " + bucket.shown, bucket: location.bucket)
        }
        var fields = baseHeaders(headers)
        fields.add(name: ResumableFields.interopVersion, value: String(ResumableFields.currentVersion))
        fields.add(name: TusFields.resumable, value: TusFields.protocolVersion)
        let result = await send(url: url, method: .OPTIONS, headers: fields, eventLoop: eventLoop, observer: .init())
        return DestinationCheck.reading(options: result, request: "OPTIONS " + RedactedURL.display(url))
    }
}
