import Foundation
import UploadCore

/// Shows `send`'s events. Each style decides how often progress is worth printing.
protocol SendReporter {
    mutating func handle(_ event: UploadEvent, tracker: TransferTracker, now: Double)
    mutating func finish(tracker: TransferTracker)
}

/// How `send` may write to its standard output.
struct OutputStyle {
    var isTTY: Bool
    var color: Bool
    var width: Int

    static func detect(environment: [String: String] = ProcessInfo.processInfo.environment) -> OutputStyle {
        let tty = isatty(STDOUT_FILENO) == 1
        let dumb = environment["TERM"] == "dumb"
        let color = tty && !dumb && environment["NO_COLOR"].map(\.isEmpty) ?? true
        var size = winsize()
        let width = tty && ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
        return OutputStyle(isTTY: tty && !dumb, color: color, width: width)
    }
}

/// Writes to standard output without Foundation's buffering surprises.
struct Console {
    func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// Throttles per-upload progress output; the last progress of an upload always passes.
struct ProgressThrottle {
    let interval: Double
    private var lastShown: [UploadID: Double] = [:]

    init(interval: Double) { self.interval = interval }

    mutating func shouldShow(_ id: UploadID, now: Double, complete: Bool) -> Bool {
        if complete || now - (lastShown[id] ?? -Double.infinity) >= interval {
            lastShown[id] = now
            return true
        }
        return false
    }
}

enum AnswerText {
    /// `200 OK` / `413 Payload Too Large` / `cannot connect: … (code 111)`.
    static func status(_ state: TransferState) -> String {
        switch state.outcome {
        case .answered(let status):
            return HTTPStatus.line(status, reason: state.response?.reason)
        case .failed(let failure):
            return failure.description
        case nil:
            return ""
        }
    }

    static func body(_ state: TransferState) -> String {
        guard let response = state.response, !response.body.isEmpty else { return "" }
        let text = response.bodyText
        if text.unicodeScalars.contains(where: { $0.value < 0x09 || $0 == "\u{FFFD}" }) {
            return "<\(ByteFormat.bytes(response.bodyBytesTotal)) of binary data>"
        }
        return ProgressText.oneLine(text)
    }
}
