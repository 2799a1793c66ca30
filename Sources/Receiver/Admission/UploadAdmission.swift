import Foundation
import HTTPTypes
import Hummingbird
import UploadCore
import UploadProtocols

/// What the receiver decides from a request's head alone, before a byte of its body is read:
/// refusals that need no body (wrong path or method, not multipart, no boundary, a declared
/// length over the limit, an expectation it cannot meet, a resumable request without the fields
/// it must carry) are answered at once, so a client that sent `Expect: 100-continue` never sends
/// the body and one that did not is stopped early.
enum UploadAdmission {
    enum Decision: Equatable {
        /// Take the request; `expectsContinue` when the client waits for `100 Continue` first.
        case accept(Route, expectsContinue: Bool)
        case refuse(Refusal)
    }

    /// What an accepted request asks for.
    enum Route: Equatable {
        /// `POST <path>`: a multipart upload; `resumable` when it carries `Upload-Complete`
        /// (it creates an upload resource that an interrupted transfer can continue).
        case upload(boundary: String, resumable: Creation?)
        /// `OPTIONS <path>` (or `*`): what the endpoint supports, resumable uploads included.
        case options(version: Int?)
        /// `HEAD <resource>`: the offset of a resumable upload.
        case offset(token: String, version: Int?)
        /// `PATCH <resource>`: append to a resumable upload.
        case append(token: String, Append)
        /// `DELETE <resource>`: cancel a resumable upload.
        case cancel(token: String, version: Int?)
        /// `GET <resource>`: a completed upload's final answer again (for a client that lost it).
        case answer(token: String, version: Int?)
    }

    struct Creation: Equatable {
        var complete: Bool
        /// The representation's length, when the request says it.
        var length: Int64?
        /// The interop version asked for, when this receiver speaks it (104 is sent only then).
        var version: Int?
    }

    struct Append: Equatable {
        var offset: Int64
        var complete: Bool
        var length: Int64?
        var contentLength: Int64?
        var version: Int?
    }

    /// Upload resources live at `<prefix><token>`; tokens are 32 lowercase hex digits.
    static let resourcePrefix = "/resumable/"

    static func decide(_ head: HTTPRequest, configuration: ReceiverConfiguration) -> Decision {
        let fields = head.headerFields
        var expectsContinue = false
        if let expectation = fields[.expect] {
            guard expectation.trimmingSpaces().lowercased() == "100-continue" else {
                return .refuse(Refusal(.expectationFailed, "cannot meet the expectation '\(expectation)'; only 100-continue is supported"))
            }
            expectsContinue = true
        }
        let version = fields[ResumableHeaders.interopVersion].flatMap(ResumableFields.version)
        let spoken = version.flatMap { ResumableFields.supportedVersions.contains($0) ? $0 : nil }
        let declared: Int64?
        switch BoundedNumber.length(fields[.contentLength]) {
        case .none: declared = nil
        case .bytes(let bytes): declared = bytes
        case .beyondLimit:
            return .refuse(
                Refusal(.contentTooLarge, "the declared Content-Length is beyond any upload; the limit is \(configuration.maxSize) bytes")
                    .adding([ResumableFields.limit: configuration.uploadLimit().fieldValue]))
        case .malformed:
            return .refuse(Refusal(.badRequest, "Content-Length must be a non-negative decimal integer"))
        }
        let path = Self.path(of: head)
        if let token = Self.token(in: path) {
            switch decideResource(head, token: token, version: version, spoken: spoken, declared: declared, configuration: configuration) {
            case .success(let route): return .accept(route, expectsContinue: expectsContinue)
            case .failure(let refusal): return .refuse(refusal)
            }
        }
        if head.method == .options, path == configuration.path || path == "*" {
            return .accept(.options(version: spoken), expectsContinue: expectsContinue)
        }
        guard path == configuration.path else {
            return .refuse(Refusal(.notFound, "no such endpoint: \(path) (uploads go to POST \(configuration.path))"))
        }
        guard head.method == .post else {
            return .refuse(Refusal(.methodNotAllowed, "\(head.method.rawValue) is not allowed here; use POST").adding(["Allow": "POST, OPTIONS"]))
        }
        let contentType = fields[.contentType] ?? ""
        guard let parsed = ContentDisposition(parsing: contentType), parsed.type == "multipart/form-data" else {
            return .refuse(Refusal(.unsupportedMediaType, "expected multipart/form-data, got \(contentType.isEmpty ? "no Content-Type" : contentType)"))
        }
        guard let boundary = parsed.parameters["boundary"], !boundary.isEmpty, boundary.utf8.count <= 70 else {
            return .refuse(Refusal(.badRequest, "the multipart Content-Type has no valid boundary"))
        }
        if let declared, declared > configuration.maxSize {
            return .refuse(
                Refusal(.contentTooLarge, "the upload is \(declared) bytes; the limit is \(configuration.maxSize)")
                    .adding([ResumableFields.limit: configuration.uploadLimit().fieldValue]))
        }
        // A request without Upload-Complete (or with a value that is not a Boolean, which the
        // draft says to ignore) is an ordinary upload.
        guard let complete = ResumableFields.boolean(fields[ResumableHeaders.complete]) else {
            return .accept(.upload(boundary: boundary, resumable: nil), expectsContinue: expectsContinue)
        }
        var length = ResumableFields.integer(fields[ResumableHeaders.length])
        if complete, let declared {
            if let stated = length, stated != declared {
                return .refuse(inconsistentLength("Upload-Length says \(stated) bytes, Content-Length \(declared)"))
            }
            length = declared
        }
        if let length, length > configuration.maxSize {
            return .refuse(
                Refusal(.contentTooLarge, "the upload is \(length) bytes; the limit is \(configuration.maxSize)")
                    .adding([ResumableFields.limit: configuration.uploadLimit().fieldValue]))
        }
        if let refusal = appendTooLarge(declared, configuration) { return .refuse(refusal) }
        return .accept(
            .upload(boundary: boundary, resumable: Creation(complete: complete, length: length, version: spoken)),
            expectsContinue: expectsContinue)
    }

    /// A resumable request (a creation with content, an append) larger than the receiver's
    /// `max-append-size` is refused before any of it is read, with the limit, so the client can
    /// send it again in parts.
    private static func appendTooLarge(_ declared: Int64?, _ configuration: ReceiverConfiguration) -> Refusal? {
        guard let limit = configuration.resumableMaxAppend, let declared, declared > limit else { return nil }
        return Refusal(.contentTooLarge, "one request may carry at most \(limit) bytes of an upload (max-append-size); this one has \(declared)")
            .adding([ResumableFields.limit: configuration.uploadLimit().fieldValue])
    }

    private static func decideResource(
        _ head: HTTPRequest, token: String, version: Int?, spoken: Int?, declared: Int64?, configuration: ReceiverConfiguration
    ) -> Result<Route, Refusal> {
        let fields = head.headerFields
        if let version, spoken == nil {
            return .failure(
                Refusal(.badRequest, "this receiver speaks interop versions \(ResumableFields.spokenVersions) of resumable uploads, not \(version)")
                    .adding([ResumableFields.interopVersion: String(ResumableFields.currentVersion)]))
        }
        switch head.method {
        case .head: return .success(.offset(token: token, version: spoken))
        case .delete: return .success(.cancel(token: token, version: spoken))
        case .get:
            // From version 9 on `GET` retrieves the offset as `HEAD` does (a lost final answer is
            // had again by the valid append); before, it repeats a completed upload's answer.
            return .success(ResumableFields.replaysByAppend(spoken) ? .offset(token: token, version: spoken) : .answer(token: token, version: spoken))
        case .patch:
            guard let offset = ResumableFields.integer(fields[ResumableHeaders.offset]) else {
                return .failure(Refusal(.badRequest, "an append needs Upload-Offset (a non-negative integer)"))
            }
            guard let complete = ResumableFields.boolean(fields[ResumableHeaders.complete]) else {
                return .failure(Refusal(.badRequest, "an append needs Upload-Complete (?0 or ?1)"))
            }
            let type = (fields[.contentType] ?? "").prefix { $0 != ";" }.trimmingSpaces().lowercased()
            guard type == ResumableFields.partialUploadType else {
                return .failure(
                    Refusal(.unsupportedMediaType, "an append's Content-Type must be \(ResumableFields.partialUploadType), not \(type.isEmpty ? "none" : type)")
                )
            }
            // Both numbers are bounded when parsed; the sum is checked all the same.
            let end = declared.map { BoundedNumber.sum(offset, $0) ?? .max }
            if let end, end > configuration.maxSize {
                return .failure(
                    Refusal(.contentTooLarge, "the upload would be \(end == .max ? "beyond any" : String(end)) bytes; the limit is \(configuration.maxSize)")
                        .adding([ResumableFields.limit: configuration.uploadLimit().fieldValue]))
            }
            if let refusal = appendTooLarge(declared, configuration) { return .failure(refusal) }
            var length = ResumableFields.integer(fields[ResumableHeaders.length])
            if complete, let end {
                if let stated = length, stated != end {
                    return .failure(inconsistentLength("Upload-Length says \(stated) bytes, the offset and Content-Length \(end)"))
                }
                length = end
            }
            return .success(.append(token: token, Append(offset: offset, complete: complete, length: length, contentLength: declared, version: spoken)))
        default:
            return .failure(
                Refusal(.methodNotAllowed, "\(head.method.rawValue) is not allowed on an upload resource; use HEAD, PATCH or DELETE")
                    .adding(["Allow": "HEAD, PATCH, DELETE, GET"]))
        }
    }

    static func inconsistentLength(_ detail: String) -> Refusal {
        Refusal(.inconsistentLength, .badRequest, detail)
    }

    /// The token of an upload resource's path, if it is one.
    static func token(in path: String) -> String? {
        guard path.hasPrefix(resourcePrefix) else { return nil }
        let token = path.dropFirst(resourcePrefix.count)
        guard token.utf8.count == 32, token.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        return String(token)
    }

    /// The absolute URL of an upload resource, on the host the request named.
    static func location(_ token: String, head: HTTPRequest, scheme: String) -> String {
        let path = resourcePrefix + token
        guard let authority = head.authority, !authority.isEmpty else { return path }
        return "\(scheme)://\(authority)\(path)"
    }

    /// The request target's path, without query or fragment.
    static func path(of head: HTTPRequest) -> String {
        let target = head.path ?? "/"
        return String(target.prefix { $0 != "?" && $0 != "#" })
    }
}

/// The draft's fields as names for HTTPTypes.
enum ResumableHeaders {
    static let interopVersion = HTTPField.Name(ResumableFields.interopVersion)!
    static let complete = HTTPField.Name(ResumableFields.complete)!
    static let offset = HTTPField.Name(ResumableFields.offset)!
    static let length = HTTPField.Name(ResumableFields.length)!
    static let limit = HTTPField.Name(ResumableFields.limit)!
    static let acceptPatch = HTTPField.Name("Accept-Patch")!
}
