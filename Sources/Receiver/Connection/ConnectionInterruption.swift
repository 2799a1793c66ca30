import NIOCore

/// Why the receiver ended a connection under a request whose body it was still reading. The
/// request's body stream fails with it, so the endpoint can say what happened.
enum ConnectionInterruption: Error, Equatable, CustomStringConvertible {
    case bodyStalled(TimeAmount)
    case stopping
    /// A newer request for the same resumable upload arrived (the client gave up on this one).
    case superseded

    var description: String {
        switch self {
        case .bodyStalled(let limit):
            "no body data from the client for \(Self.seconds(limit)); the upload was abandoned"
        case .stopping:
            "the receiver is stopping; the upload was abandoned"
        case .superseded:
            "a newer request for the same upload took over"
        }
    }

    var refusal: Refusal {
        switch self {
        case .bodyStalled: Refusal(.requestTimeout, description)
        case .stopping: Refusal(.serviceUnavailable, description)
        case .superseded: Refusal(.conflict, description)
        }
    }

    static func seconds(_ amount: TimeAmount) -> String {
        let value = Double(amount.nanoseconds) / 1e9
        return value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}
