/// Short names for transport failures, as the panel title and the log say them.
public enum FailureText {
    /// The kind and the message in one line, the kind left out where the message starts with
    /// it ("cannot connect: Connection refused", not "cannot connect: cannot connect: …").
    public static func line(_ failure: UploadFailure) -> String {
        let title = title(failure.kind)
        return failure.description.lowercased().hasPrefix(title) ? failure.description : "\(title): \(failure.description)"
    }

    public static func title(_ kind: UploadFailure.Kind) -> String {
        switch kind {
        case .cannotConnect: "cannot connect"
        case .certificateRejected: "certificate rejected"
        case .connectTimeout: "connect timed out"
        case .stalled: "stalled"
        case .noAnswer: "no answer"
        case .connectionLost: "connection lost"
        case .cancelled: "cancelled"
        case .fileError: "file error"
        case .preparationStalled: "file stalled"
        case .tooManyRedirects: "too many redirects"
        case .answeredEarly: "answered early"
        case .integrityMismatch: "integrity mismatch"
        case .other: "failed"
        }
    }
}
