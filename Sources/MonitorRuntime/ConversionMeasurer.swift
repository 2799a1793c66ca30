import Dispatch
import Foundation
import Monitor
import NIOConcurrencyHelpers
import PhotoRewrite
import UploadCore

/// Writes the photo under the cursor as it would leave (`F`, the destination's `--convert`), off
/// the monitor's loop, to tell its exact size. One at a time: a request waits `settle` seconds
/// for the cursor to stop (a newer one replaces it), so holding `j` through a folder writes
/// only the photo the cursor stops on. A photo whose writing takes longer than `limit` (a file
/// on a network file system that stopped answering: its read never returns) is answered so, and
/// the next one is written on a thread of its own, the stuck one left with its read.
public final class ConversionMeasurer: Sendable {
    public typealias Measure = @Sendable (ConversionMeasure) -> ConversionMeasure.Found?

    private struct State {
        var next: ConversionMeasure?
        /// Bumped by every request: a wait that sees another number was overtaken.
        var generation = 0
        var running = false
    }

    private let state = NIOLockedValueBox(State())
    private let measure: Measure
    private let settle: Double
    private let limit: Double
    private let deliver: @Sendable (ConversionMeasure, ConversionMeasure.Found?) -> Void

    /// The usual measure: the converter's output, its length; a photo that goes as it is, its
    /// own size; one the converter refuses, its reason.
    public static let writeFile: Measure = { request in
        do throws(PhotoConverter.Refusal) {
            let written = try PhotoConverter.convert(path: request.path, request.conversion, stripLocation: request.stripLocation)
            return .bytes(written.map { Int64($0.bytes.count) } ?? request.size)
        } catch {
            return .refused(error.description)
        }
    }

    public init(
        settle: Double = 0.25, limit: Double = 30, measure: @escaping Measure = ConversionMeasurer.writeFile,
        deliver: @escaping @Sendable (ConversionMeasure, ConversionMeasure.Found?) -> Void
    ) {
        self.settle = settle
        self.limit = limit
        self.measure = measure
        self.deliver = deliver
    }

    public func request(_ request: ConversionMeasure) {
        let start = state.withLockedValue { state -> Bool in
            state.next = request
            state.generation += 1
            guard !state.running else { return false }
            state.running = true
            return true
        }
        if start { DispatchQueue.global(qos: .utility).async { [self] in run() } }
    }

    private func run() {
        while true {
            let seen = state.withLockedValue { $0.generation }
            Thread.sleep(forTimeInterval: settle)
            enum Step {
                case wait, stop
                case measure(ConversionMeasure)
            }
            let step = state.withLockedValue { state -> Step in
                guard state.generation == seen else { return .wait }  // overtaken: the cursor still moves
                guard let job = state.next else {
                    state.running = false
                    return .stop
                }
                state.next = nil
                return .measure(job)
            }
            switch step {
            case .wait: continue
            case .stop: return
            case .measure(let job): deliver(job, measureWithin(job))
            }
        }
    }

    /// `measure(job)` on a thread of its own, waited for at most `limit`.
    private func measureWithin(_ job: ConversionMeasure) -> ConversionMeasure.Found? {
        let done = DispatchSemaphore(value: 0)
        let found = NIOLockedValueBox<ConversionMeasure.Found?>(nil)
        let measure = self.measure
        Thread.detachNewThread {
            let result = measure(job)
            found.withLockedValue { $0 = result }
            done.signal()
        }
        guard done.wait(timeout: .now() + limit) == .success else {
            return .refused("writing it took longer than \(DurationText.describe(limit)) (a network file system that stopped answering?)")
        }
        return found.withLockedValue { $0 }
    }
}
