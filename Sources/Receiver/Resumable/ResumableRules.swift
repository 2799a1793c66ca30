import HTTPTypes
import UploadCore
import UploadProtocols

/// What the resumable protocol allows against an upload's state, decided in one place: by the
/// gate from a request's head before its body is read (when no request holds the upload), and
/// by the endpoint once it holds the upload. `fields` are the answer's fields so far (the
/// interop version echoed).
enum ResumableRules {
    /// An answer's fields to begin with: the interop version the request named, echoed.
    static func fields(echoing version: Int?) -> [String: String] {
        version.map { [ResumableFields.interopVersion: String($0)] } ?? [:]
    }

    /// The request names an upload this receiver does not have (never had, expired, cancelled).
    static func noSuchUpload(_ fields: [String: String]) -> Refusal {
        Refusal(.notFound, "no such upload (it may have expired or been cancelled)").adding(fields)
    }

    /// Why `append` cannot go to an upload at `offset` (`complete`: its last byte is in), or nil
    /// when it may.
    static func appendRefusal(_ append: UploadAdmission.Append, complete: Bool, offset: Int64, fields: [String: String]) -> Refusal? {
        if replaysAnswer(append, complete: complete, offset: offset) { return nil }
        if complete {
            return append.contentLength == 0
                ? Refusal(.completedUpload, .badRequest, "the upload is already complete").adding(fields)
                : Refusal(.inconsistentLength, .badRequest, "the upload is already complete; nothing can be appended").adding(fields)
        }
        guard append.offset == offset else {
            var fields = fields
            fields[ResumableFields.offset] = String(offset)
            fields[ResumableFields.complete] = ResumableFields.boolean(false)
            return Refusal(
                .mismatchingOffset, .conflict, "the upload is at offset \(offset), not \(append.offset)",
                members: ["expected-offset": offset, "provided-offset": append.offset]
            ).adding(fields)
        }
        return nil
    }

    /// Whether `append` is the valid append to a completed upload that gets its final answer
    /// again (interop versions 9 and 10: how a client that lost that answer learns it): at the upload's
    /// end, completing it, with no content.
    static func replaysAnswer(_ append: UploadAdmission.Append, complete: Bool, offset: Int64) -> Bool {
        complete && ResumableFields.replaysByAppend(append.version) && append.complete && append.offset == offset
            && (append.contentLength ?? 0) == 0
    }

}

extension ResumableStore {
    /// Makes the upload resource for a creation request the gate announces before its body, and
    /// the `104 Upload Resumption Supported` that says where it is and its limits; nil when it
    /// cannot be made.
    func announce(
        _ announcement: GateMachine.Announcement, head: HTTPRequest, client: String, configuration: ReceiverConfiguration
    ) -> (token: String, answer: HTTPResponse)? {
        guard let record = try? create(boundary: announcement.boundary, length: announcement.length, client: client, now: clock.wall()) else {
            return nil
        }
        var response = HTTPResponse(status: .init(code: 104, reasonPhrase: "Upload Resumption Supported"))
        response.headerFields[ResumableHeaders.interopVersion] = String(announcement.version)
        response.headerFields[.location] = UploadAdmission.location(record.token, head: head, scheme: configuration.scheme)
        response.headerFields[ResumableHeaders.limit] = configuration.uploadLimit(maxAge: advertisedAge).fieldValue
        return (record.token, response)
    }
}
