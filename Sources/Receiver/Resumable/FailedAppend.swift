import UploadCore

/// What becomes of a resumable upload when a request bringing it bytes fails, and what the
/// client is told, decided from what went wrong alone (the endpoint then does it).
struct FailedAppend: Equatable {
    enum Fate: Equatable {
        /// The bytes that arrived are kept: the upload goes on from `offset`.
        case keep(offset: Int64)
        /// The upload is invalid from now on (the draft), or its body cannot be a valid upload:
        /// its bytes and record go now.
        case remove
        /// This request's bytes are taken back (the draft: content that does not match its
        /// digest is not appended): the upload stays at `offset`, or goes if they cannot be.
        case cutBack(to: Int64)
    }

    let fate: Fate
    let refusal: Refusal
    /// Whether the request's body was read to its end before it failed.
    let bodyRead: Bool

    /// `error` ended the request that started at `start` after `received` bytes of content.
    init(_ error: any Error, start: Int64, received: Int64) {
        switch error {
        case let failure as TransferFailure:
            bodyRead = failure.bodyRead
            refusal = failure.refusal
            switch failure {
            case .beyondLength, .endedShort: fate = .remove
            case .refused: fate = .keep(offset: start + received)
            case .rejectedContent: fate = .cutBack(to: start)
            }
        case let error as ReceiveError:
            (fate, refusal, bodyRead) = (.remove, Refusal(error), false)
        case let interruption as ConnectionInterruption:
            (fate, refusal, bodyRead) = (.keep(offset: start + received), interruption.refusal, false)
        default:
            (fate, refusal, bodyRead) = (
                .keep(offset: start + received),
                Refusal(.badRequest, "the upload was interrupted at offset \(start + received): \(error)"), false
            )
        }
    }
}

/// How moving a request's content into a resumable upload can fail, besides the body's own
/// errors (`ReceiveError`, `ConnectionInterruption`, a cut stream).
enum TransferFailure: Error {
    /// The content goes past the upload's length.
    case beyondLength(Int64)
    /// The request said the upload complete at an offset (first) short of its length (second).
    case endedShort(Int64, Int64)
    /// Over a limit: nothing past it was taken.
    case refused(Refusal)
    /// The content does not match the request's `Content-Digest`.
    case rejectedContent(Refusal)

    var bodyRead: Bool {
        switch self {
        case .endedShort, .rejectedContent: true
        case .beyondLength, .refused: false
        }
    }

    var refusal: Refusal {
        switch self {
        case .beyondLength(let length):
            UploadAdmission.inconsistentLength("the content goes past the upload's length of \(length) bytes")
        case .endedShort(let offset, let length):
            UploadAdmission.inconsistentLength("the upload was said complete at \(offset) bytes; its length is \(length)")
        case .refused(let refusal), .rejectedContent(let refusal):
            refusal
        }
    }
}
