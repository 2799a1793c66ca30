import TerminalCanvas
import UploadCore

/// The monitor's only way to change state: one event in, the new state and a list of effects
/// out. It performs no I/O; the run loop carries out the effects and feeds back their results.
public enum MonitorReducer {
    /// Applies `event` to `state` and returns what the run loop must do for it, in order.
    public static func reduce(_ state: inout MonitorState, _ event: MonitorEvent) -> [MonitorEffect] {
        var effects = apply(event, &state)
        state.keepSelectionsVisible()
        // The folder's images by content, off the loop, when there is something to match them
        // with: "sent" under another name or path shows.
        switch event {
        case .directoryLoaded, .directoryChanged, .sentContentsKnown, .attached, .upload(.finished, _):
            effects += state.hashListedImages()
        default:
            break
        }
        // Whatever moved the cursor, the focus or the layout: the preview follows.
        let wanted = state.previewRequest
        if wanted != state.preview.wanted {
            state.preview.wanted = wanted
            if let wanted, state.preview.needsDecoding(wanted) { effects.append(.loadPreview(wanted)) }
            if let wanted, wanted.inPixels { effects.append(.awaitPreviewRest(wanted)) }
        }
        // The photo under the cursor, as the next upload would write it: its exact size.
        let measure = state.measureRequest
        if measure != state.preview.measureWanted {
            state.preview.measureWanted = measure
            if let measure, state.preview.measured(measure) == nil { effects.append(.measureConversion(measure)) }
        }
        return effects
    }

    static func apply(_ event: MonitorEvent, _ state: inout MonitorState) -> [MonitorEffect] {
        switch event {
        case .key(let key, let time):
            return handleKey(key, at: time, &state)
        case .resize(let width, let height):
            state.width = max(0, width)
            state.height = max(0, height)
            return []
        case .directoryLoaded(let listing):
            state.browser.load(listing)
            if let error = listing.error { state.message = StatusMessage(error, isError: true) }
            // A new listing asks afresh (a newer list replaces what the worker still had).
            state.contents.listingAsked = false
            state.contents.remaining = 0
            return []
        case .directoryChanged(let listing):
            // A listing of a folder left since is stale.
            guard listing.path == state.browser.path, !state.browser.loading else { return [] }
            state.browser.refresh(listing)
            state.contents.listingAsked = false
            state.contents.remaining = 0
            return []
        case .contentHashed(let request, let sha256, let remaining):
            state.contents.hashed(request, sha256: sha256, remaining: remaining)
            return []
        case .sentContentsKnown(let contents):
            state.contents.sentElsewhere = contents
            return []
        case .upload(let upload, let time):
            return handleUpload(upload, at: time, &state)
        case .enqueueRefused(let name, let reason, let time):
            appendLog(&state, LogEntry(clock: time.clock, text: "✗ \(name) not queued: \(reason)", kind: .failed))
            state.message = StatusMessage("\(name) not queued: \(reason)", isError: true)
            return []
        case .tick(let time):
            state.now = time.seconds
            state.date = time.date
            state.queue.sampleRates(now: time.seconds)
            return []
        case .attached(let attachment, let time):
            return handleAttached(attachment, at: time, &state)
        case .notice(let text, let isError, let time):
            appendLog(&state, LogEntry(clock: time.clock, text: text, kind: isError ? .failed : .info))
            state.message = StatusMessage(text, isError: isError)
            return []
        case .jobs(let jobs, let time):
            state.now = time.seconds
            state.date = time.date
            state.jobs.jobs = jobs
            state.jobs.receivedAt = time.seconds
            return []
        case .previewLoaded(let request, let result):
            state.preview.store(result, for: request)
            return []
        case .previewRested(let request):
            if request == state.preview.wanted { state.preview.rested = true }
            return []
        case .conversionMeasured(let request, let found):
            if let found { state.preview.storeMeasure(request, found) }
            return []
        }
    }

    static func handleKey(_ key: Key, at time: EventTime, _ state: inout MonitorState) -> [MonitorEffect] {
        if case .mouse(let action, let x, let y) = key { return handleMouse(action, x: x, y: y, at: time, &state) }
        if let modal = state.modal { return handleModalKey(key, modal: modal, &state) }
        if state.browser.isFiltering, state.focus == .browser, let effects = handleFilterKey(key, &state) {
            return effects
        }
        state.message = nil
        switch key {
        case .character("?"):
            state.modal = .help(scroll: 0)
            return []
        case .character("J"):
            state.modal = .jobs
            return []
        case .character("D"):
            guard !state.destinations.isEmpty else {
                state.message = StatusMessage("No saved destinations to switch to: uploadmon destinations add NAME --to URL", isError: true)
                return []
            }
            state.modal = .destinations(selected: state.destinations.firstIndex { $0.name == state.destinationName } ?? 0)
            return []
        case .character("C"):
            return resendConverted(&state)
        case .character("F"):
            // The next way of writing photos, for the files queued from now on.
            let choices = state.conversionChoices
            let now = state.sendsAs.flatMap { $0.changesAnything ? $0 : nil } ?? PhotoConversion(format: .keep)
            let next = choices[((choices.firstIndex(of: now) ?? -1) + 1) % choices.count]
            state.conversionChoice = next
            state.message = StatusMessage(next.changesAnything ? "Photos queued from now on go \(next.words)" : "Photos queued from now on go as they are")
            return []
        case .character("p"):
            state.preview.enabled.toggle()
            state.message = StatusMessage(
                state.preview.enabled
                    ? (state.layout.preview.isEmpty ? "preview on (it needs a larger terminal)" : "preview on")
                    : "preview off")
            return []
        case .character("q"), .control("c"):
            return requestQuit(&state)
        case .tab, .backTab:
            state.focus = state.focus == .browser ? .queue : .browser
            return []
        default:
            return state.focus == .browser ? handleBrowserKey(key, at: time, &state) : handleQueueKey(key, &state)
        }
    }

    static func requestQuit(_ state: inout MonitorState) -> [MonitorEffect] {
        if state.queue.activeCount > 0 && !state.uploadsOutliveMonitor {
            state.modal = .confirmQuit
            return []
        }
        state.hasQuit = true
        return [.quit]
    }

    static func handleModalKey(_ key: Key, modal: Modal, _ state: inout MonitorState) -> [MonitorEffect] {
        switch modal {
        case .help(let scroll):
            // Scrolled where it does not all show; any other key closes it.
            let help = MonitorView.helpLayout(in: Rect(x: 0, y: 0, width: state.width, height: state.height))
            let step: Int? =
                switch key {
                case .down, .character("j"): 1
                case .up, .character("k"): -1
                case .pageDown, .character(" "): help.visible
                case .pageUp: -help.visible
                default: nil
                }
            guard let step, help.maxScroll > 0 else {
                state.modal = nil
                return []
            }
            state.modal = .help(scroll: min(help.maxScroll, max(0, scroll + step)))
            return []
        case .jobs:
            state.modal = nil
            return []
        case .destinations(let selected):
            return handleDestinationKey(key, selected: selected, &state)
        case .confirmQuit:
            switch key {
            case .character("y"), .character("Y"), .character("q"), .control("c"), .enter:
                state.modal = nil
                state.hasQuit = true
                return [.quit]
            case .character("n"), .character("N"), .escape:
                state.modal = nil
            default:
                break
            }
            return []
        case .rename(let path, let original, var input):
            switch key {
            case .escape:
                state.modal = nil
            case .enter:
                do throws(UploadInputError) {
                    let name = try UploadName.resolve(originalFileName: original, requested: input.text)
                    if name.contains("/") {
                        state.message = StatusMessage("an upload name cannot contain '/'", isError: true)
                        return []
                    }
                    if name == original { state.browser.renames[path] = nil } else { state.browser.renames[path] = name }
                    state.modal = nil
                    state.message = StatusMessage("\(original) will be sent as \(name)")
                } catch {
                    state.message = StatusMessage(error.description, isError: true)
                }
            default:
                if input.apply(key) {
                    state.message = nil
                    state.modal = .rename(path: path, original: original, input: input)
                }
            }
            return []
        }
    }

    /// Keys while typing a filter; `nil` lets the key fall through to normal handling.
    static func handleFilterKey(_ key: Key, _ state: inout MonitorState) -> [MonitorEffect]? {
        switch key {
        case .escape:
            state.browser.isFiltering = false
            state.browser.filter = TextInput()
            return []
        case .enter:
            state.browser.isFiltering = false
            return []
        case .up, .down, .pageUp, .pageDown, .tab, .backTab, .control("c"):
            state.browser.isFiltering = false
            return nil
        default:
            var input = state.browser.filter
            if input.apply(key) {
                state.browser.filter = input
                state.browser.selected = 0
            }
            return []
        }
    }

    static func appendLog(_ state: inout MonitorState, _ entry: LogEntry) {
        state.log.append(entry)
        if state.log.count > MonitorState.logLimit { state.log.removeFirst(state.log.count - MonitorState.logLimit) }
    }
}

/// Moving a selection through a list of `count` rows by a navigation key.
enum ListNavigation {
    static func move(_ selected: Int, count: Int, key: Key, page: Int) -> Int? {
        guard count > 0 else { return nil }
        let target: Int
        switch key {
        case .up, .character("k"): target = selected - 1
        case .down, .character("j"): target = selected + 1
        case .pageUp: target = selected - page
        case .pageDown: target = selected + page
        case .home, .character("g"): target = 0
        case .end, .character("G"): target = count - 1
        default: return nil
        }
        return min(max(0, target), count - 1)
    }
}
