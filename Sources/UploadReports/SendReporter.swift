import Foundation
import Glibc
import NIOConcurrencyHelpers
import UploadCore

/// Shows `send`'s events. Each style decides how often progress is worth printing.
public protocol SendReporter {
    mutating func handle(_ event: UploadEvent, tracker: TransferTracker, now: Double)
    mutating func finish(tracker: TransferTracker)
}

/// Where reporters write: standard output in the program, a buffer in tests.
public protocol TextSink: Sendable {
    func write(_ text: String)
}

/// How `send` may write to its standard output.
public struct OutputStyle: Sendable {
    public var isTTY: Bool
    public var color: Bool
    public var width: Int

    public init(isTTY: Bool, color: Bool, width: Int) {
        self.isTTY = isTTY
        self.color = color
        self.width = width
    }

    public static func detect(environment: [String: String] = ProcessInfo.processInfo.environment) -> OutputStyle {
        let tty = isatty(STDOUT_FILENO) == 1
        let dumb = environment["TERM"] == "dumb"
        let color = tty && !dumb && environment["NO_COLOR"].map(\.isEmpty) ?? true
        var size = winsize()
        let width = tty && ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
        return OutputStyle(isTTY: tty && !dumb, color: color, width: width)
    }
}

/// Writes to standard output without Foundation's buffering surprises.
public struct Console: TextSink {
    public init() {}

    public func write(_ text: String) {
        Self.put(text, to: STDOUT_FILENO)
    }

    /// A message for a person on standard output, ending its line: anything in it that came
    /// from outside (a path, a URL, an answer, an error) is shown by the terminal escaping rule.
    public static func say(_ text: String) {
        put(InvisibleCharacters.escaped(text, keepingLineFeeds: true) + "\n", to: STDOUT_FILENO)
    }

    /// The same on standard error.
    public static func complain(_ text: String) {
        put(InvisibleCharacters.escaped(text, keepingLineFeeds: true) + "\n", to: STDERR_FILENO)
    }

    /// A JSON document on standard output: characters a terminal would act on or hide are
    /// written as JSON escapes (`\u001b`, `\u202e`), so the data read back is the same.
    public static func sayJSON(_ text: String) {
        put(InvisibleCharacters.jsonEscaped(text) + "\n", to: STDOUT_FILENO)
    }

    /// `text` written whole to `fd`; a descriptor that cannot take it (a terminal closed under
    /// the program, a pipe whose reader left) takes nothing more, and the program goes on:
    /// Foundation's `FileHandle.write` stops the process there, which a monitor whose window
    /// was closed while it handed files to the agent must not do.
    public static func put(_ text: String, to fd: Int32) {
        var bytes = Array(text.utf8)
        var at = 0
        while at < bytes.count {
            let wrote = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + at, $0.count - at) }
            if wrote > 0 {
                at += wrote
            } else if wrote < 0, errno == EINTR {
                continue
            } else if wrote < 0, errno == EAGAIN {
                var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                guard poll(&ready, 1, 1_000) > 0 else { return }
            } else {
                return
            }
        }
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
        state.outcome?.words(reason: state.response?.reason) ?? ""
    }

    static func body(_ state: TransferState) -> String {
        guard let response = state.response, !response.body.isEmpty else { return "" }
        guard let text = response.textBody else { return "<\(ByteFormat.bytes(response.bodyBytesTotal)) of binary data>" }
        return ProgressText.oneLine(text)
    }
}

/// Standard output for the line-per-event reporters (plain and `--json`): lines collect and go
/// out together, at the latest `interval` after they were written, when 64 KiB have gathered,
/// or when the run ends. One write(2) per line was a fifth of the system calls of sending
/// thousands of small files. A reader of the pipe sees each line within `interval`.
public final class LineOutput: TextSink, @unchecked Sendable {
    static let interval: Duration = .milliseconds(100)
    static let threshold = 64 * 1024
    /// Guards `pending` and the write itself, so flushes never reorder lines.
    private let lock = NIOLock()
    private var pending: [UInt8] = []

    public init() {}

    public func write(_ text: String) {
        let full = lock.withLock {
            pending.append(contentsOf: text.utf8)
            return pending.count >= Self.threshold
        }
        if full { flush() }
    }

    public func flush() {
        lock.withLock {
            guard !pending.isEmpty else { return }
            var offset = 0
            while offset < pending.count {
                let n = pending[offset...].withUnsafeBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                offset += n
            }
            pending.removeAll(keepingCapacity: true)
        }
    }

    /// Flushes every `interval` until the task is cancelled.
    public func flushPeriodically() -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.interval)
                flush()
            }
        }
    }
}
