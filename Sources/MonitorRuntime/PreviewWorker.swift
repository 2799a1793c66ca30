import Dispatch
import ImagePreview
import Monitor
import NIOConcurrencyHelpers

/// Decodes previews off the monitor's loop, one at a time: a photo's embedded thumbnail first
/// when it has one (a first picture at once), then the photo itself. A newer request cancels the decode
/// still running (between scanlines) and replaces any waiting one, so holding `j` through a
/// folder of photos decodes the photo the cursor stops on, not every one it passed.
public final class PreviewWorker: Sendable {
    private struct State {
        var running: (request: PreviewRequest, flag: CancelFlag)?
        var next: PreviewRequest?
    }

    private let state = NIOLockedValueBox(State())
    private let queue = DispatchQueue(label: "uploadmon-preview", qos: .userInitiated)
    private let deliver: @Sendable (PreviewRequest, Result<Preview, PreviewProblem>) -> Void

    public init(deliver: @escaping @Sendable (PreviewRequest, Result<Preview, PreviewProblem>) -> Void) {
        self.deliver = deliver
    }

    public func request(_ request: PreviewRequest) {
        let start = state.withLockedValue { state -> Bool in
            state.running?.flag.cancel()
            state.next = request
            return state.running == nil
        }
        if start { queue.async { self.drain() } }
    }

    private func drain() {
        while true {
            let job: (PreviewRequest, CancelFlag)? = state.withLockedValue { state in
                guard let next = state.next else {
                    state.running = nil
                    return nil
                }
                let flag = CancelFlag()
                state.running = (next, flag)
                state.next = nil
                return (next, flag)
            }
            guard let (request, flag) = job else { return }
            let box = request.pixelBox
            func withCells(_ result: Result<Preview, PreviewProblem>) -> Result<Preview, PreviewProblem> {
                guard request.inPixels, case .success(var preview) = result else { return result }
                preview.cells = preview.image.fitted(request.columns, request.rows * 2)
                return .success(preview)
            }
            // The file's own thumbnail first, within a frame; then the photo itself.
            let result = withCells(PreviewDecoder.decode(path: request.path, fitting: box.width, box.height, cancel: flag) { first in
                if !flag.isCancelled { self.deliver(request, withCells(.success(first))) }
            })
            if !flag.isCancelled { deliver(request, result) }
        }
    }
}
