/// The steps of an ordinary upload under an `Idempotency-Key`, as values: what the key's lookup
/// means for this request, and what the key keeps once the request has ended. The endpoint
/// does the steps (reading the body, storing, answering); `IdempotencyKeys` remembers.
enum IdempotentUpload {
    enum Start: Equatable {
        /// Receive the upload as new (the key is in progress now).
        case receive
        /// The key's upload was stored at `path`: read this body without storing it; the same
        /// file (a client that never heard the answer) gets `answer` again, another is refused.
        case compare(path: String, answer: IdempotencyKeys.Answer)
        /// The key's stored file was moved away, so there is nothing to compare with: forget
        /// the key's answer and take the key again; the body is received as a new upload (at
        /// worst a second copy, never a file lost).
        case forgetAndRetake
        case refuse(Refusal)
    }

    /// What `lookup` (the key taken for this request) means; `exists` says whether a stored file is still there.
    static func start(_ lookup: IdempotencyKeys.Lookup, directory: String, exists: (String) -> Bool) -> Start {
        switch lookup {
        case .new:
            return .receive
        case .completed(let answer, let stored):
            let path = directory + "/" + stored
            return exists(path) ? .compare(path: path, answer: answer) : .forgetAndRetake
        case .inProgress, .otherBody:
            return .refuse(IdempotencyKeys.refusal(for: lookup)!)
        }
    }

    /// What the key is taken again after `.forgetAndRetake` may still say: only a refusal (another
    /// request took it in between) stops this one.
    static func retaken(_ lookup: IdempotencyKeys.Lookup) -> Refusal? {
        IdempotencyKeys.refusal(for: lookup)
    }

    /// A compared body: the same file gets the key's answer again, another is refused.
    static func compared(sameFile: Bool, answer: IdempotencyKeys.Answer) -> Result<IdempotencyKeys.Answer, Refusal> {
        sameFile ? .success(answer) : .failure(IdempotencyKeys.otherBody("another file"))
    }

    /// What the key keeps once the request has ended: the answer to a whole body is the key's
    /// for good (stored as `stored` when it was); an upload cut short leaves the key free.
    static func kept(_ outcome: Result<String, Refusal>, bodyRead: Bool) -> (answer: IdempotencyKeys.Answer?, stored: String?) {
        switch outcome {
        case .success(let stored):
            return (.init(status: 200, body: UploadEndpoint.json(["filename": stored])), stored)
        case .failure(let refusal):
            return (bodyRead ? .init(status: Int(refusal.status.code), body: UploadEndpoint.json(["error": refusal.message])) : nil, nil)
        }
    }
}
