import Foundation
import Hummingbird
import UploadCore

/// What the receiver decides from a request's head alone, before a byte of its body is read:
/// refusals that need no body (wrong path or method, not multipart, no boundary, a declared
/// length over the limit, an expectation it cannot meet) are answered at once, so a client that
/// sent `Expect: 100-continue` never sends the body and one that did not is stopped early.
enum UploadAdmission {
    enum Decision: Equatable {
        /// Take the body; `expectsContinue` when the client waits for `100 Continue` first.
        case accept(boundary: String, expectsContinue: Bool)
        case refuse(Refusal)
    }

    static func decide(_ head: HTTPRequest, configuration: ReceiverConfiguration) -> Decision {
        let fields = head.headerFields
        var expectsContinue = false
        if let expectation = fields[.expect] {
            guard expectation.trimmingCharacters(in: .whitespaces).lowercased() == "100-continue" else {
                return .refuse(Refusal(.expectationFailed, "cannot meet the expectation '\(expectation)'; only 100-continue is supported"))
            }
            expectsContinue = true
        }
        let path = Self.path(of: head)
        guard path == configuration.path else {
            return .refuse(Refusal(.notFound, "no such endpoint: \(path) (uploads go to POST \(configuration.path))"))
        }
        guard head.method == .post else {
            return .refuse(Refusal(.methodNotAllowed, "\(head.method.rawValue) is not allowed here; use POST"))
        }
        let contentType = fields[.contentType] ?? ""
        guard let parsed = ContentDisposition(parsing: contentType), parsed.type == "multipart/form-data" else {
            return .refuse(Refusal(.unsupportedMediaType, "expected multipart/form-data, got \(contentType.isEmpty ? "no Content-Type" : contentType)"))
        }
        guard let boundary = parsed.parameters["boundary"], !boundary.isEmpty, boundary.utf8.count <= 70 else {
            return .refuse(Refusal(.badRequest, "the multipart Content-Type has no valid boundary"))
        }
        if let declared = fields[.contentLength].flatMap({ Int64($0) }), declared > configuration.maxSize {
            return .refuse(Refusal(.contentTooLarge, "the upload is \(declared) bytes; the limit is \(configuration.maxSize)"))
        }
        return .accept(boundary: boundary, expectsContinue: expectsContinue)
    }

    /// The request target's path, without query or fragment.
    static func path(of head: HTTPRequest) -> String {
        let target = head.path ?? "/"
        return String(target.prefix { $0 != "?" && $0 != "#" })
    }
}
