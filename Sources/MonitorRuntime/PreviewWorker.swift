import Dispatch
import Foundation
import ImagePreview
import Monitor
import NIOConcurrencyHelpers
import UploadCore

/// Decodes previews off the monitor's loop, one at a time: a photo's embedded thumbnail first
/// when it has one (a first picture at once), then the photo itself. A newer request cancels the decode
/// still running (between scanlines) and replaces any waiting one, so holding `j` through a
/// folder of photos decodes the photo the cursor stops on, not every one it passed.
///
/// A decode that takes longer than `limit` (a file on a network file system that stopped
/// answering: its read never returns, and no flag reaches it) is given up: its request is
/// answered "took longer than …", and the next request is decoded on a new thread (a lane),
/// the stuck one left with its read and its result dropped.
public final class PreviewWorker: Sendable {
    public typealias Decode = @Sendable (PreviewRequest, CancelFlag, _ first: @escaping (Preview) -> Void) -> Result<Preview, PreviewProblem>

    private struct State {
        var running: (request: PreviewRequest, flag: CancelFlag, job: Int)?
        var next: PreviewRequest?
        /// The lane decoding now; a lane whose number is not this one stops.
        var lane = 0
        var jobs = 0
    }

    private let state = NIOLockedValueBox(State())
    private let deliver: @Sendable (PreviewRequest, Result<Preview, PreviewProblem>) -> Void
    private let decode: Decode
    private let limit: Double

    /// The usual decode: the file's own thumbnail first, then the photo, fitted to the request.
    public static let decodeFile: Decode = { request, flag, first in
        let box = request.pixelBox
        return PreviewDecoder.decode(path: request.path, fitting: box.width, box.height, cancel: flag, first: first)
    }

    public init(
        limit: Double = 30, decode: @escaping Decode = PreviewWorker.decodeFile,
        deliver: @escaping @Sendable (PreviewRequest, Result<Preview, PreviewProblem>) -> Void
    ) {
        self.limit = limit
        self.decode = decode
        self.deliver = deliver
    }

    /// How long a cancelled decode may take to stop before it is taken for stuck.
    static let cancelGrace = 2.0

    public func request(_ request: PreviewRequest) {
        let (lane, cancelled) = state.withLockedValue { state -> (Int?, Int?) in
            state.next = request
            guard let running = state.running else {
                state.lane += 1
                return (state.lane, nil)
            }
            running.flag.cancel()
            return (nil, running.job)
        }
        if let lane { start(lane) }
        // A decode stops at its next scanline once cancelled; one that does not is held by a read.
        if let cancelled {
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.cancelGrace) { [self] in giveUp(cancelled, answering: nil) }
        }
    }

    /// Gives job `number` up if it still runs: `answering` (its request) is told why, and what
    /// waits is decoded on a new lane.
    private func giveUp(_ number: Int, answering request: PreviewRequest?) {
        let restart = state.withLockedValue { state -> Int?? in
            guard let running = state.running, running.job == number else { return .none }
            running.flag.cancel()
            state.lane += 1
            state.running = nil
            return .some(state.next == nil ? nil : state.lane)
        }
        guard case .some(let lane) = restart else { return }
        if let request {
            deliver(
                request,
                .failure(
                    .cannotPreview(
                        "reading it took longer than \(DurationText.describe(limit)) (a network file system that stopped answering?)", nil)))
        }
        if let lane { start(lane) }
    }

    private func start(_ lane: Int) {
        let thread = Thread { [self] in drain(lane) }
        thread.name = "uploadmon-preview"
        thread.stackSize = 8 << 20
        thread.start()
    }

    private func drain(_ lane: Int) {
        while true {
            let job: (PreviewRequest, CancelFlag, Int)? = state.withLockedValue { state in
                guard state.lane == lane, let next = state.next else {
                    if state.lane == lane { state.running = nil }
                    return nil
                }
                let flag = CancelFlag()
                state.jobs += 1
                state.running = (next, flag, state.jobs)
                state.next = nil
                return (next, flag, state.jobs)
            }
            guard let (request, flag, number) = job else { return }
            watch(number, request: request)
            func withCells(_ result: Result<Preview, PreviewProblem>) -> Result<Preview, PreviewProblem> {
                guard request.inPixels, case .success(var preview) = result else { return result }
                preview.cells = preview.image.fitted(request.columns, request.rows * 2)
                return .success(preview)
            }
            let result = withCells(
                decode(request, flag) { first in
                    if !flag.isCancelled { self.deliver(request, withCells(.success(first))) }
                })
            // Done, at once with the check: a lane given up meanwhile says nothing more (its
            // request was answered), and a watchdog after this finds nothing to give up.
            let current = state.withLockedValue { state -> Bool in
                guard state.lane == lane else { return false }
                state.running = nil
                return true
            }
            guard current else { return }
            if !flag.isCancelled { deliver(request, result) }
        }
    }

    /// Gives job `number` up if it is still running after `limit`.
    private func watch(_ number: Int, request: PreviewRequest) {
        DispatchQueue.global().asyncAfter(deadline: .now() + limit) { [self] in giveUp(number, answering: request) }
    }
}
