import UploadClient
import UploadCore

extension Agent {
    /// Why an agent stops.
    public enum StopReason: Sendable, Equatable, CustomStringConvertible {
        case requested
        case idle(seconds: Double)
        case signal(Int32)

        public var description: String {
            switch self {
            case .requested: "asked to stop"
            case .idle(let seconds): "idle for \(ByteFormat.duration(seconds))"
            case .signal(let number): "signal \(number)"
            }
        }
    }
}

/// Fails every attempt with a fixed reason (an upload whose transport cannot be built).
struct FailingTransport: UploadTransport {
    let failure: UploadFailure
    func perform(_ request: UploadRequest, observer: AttemptObserver) async -> AttemptResult {
        AttemptResult(outcome: .failed(failure), response: nil, bytesSent: 0)
    }
}
