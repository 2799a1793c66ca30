import Foundation
import TerminalCanvas
import UploadCore
import PreviewModel
/// Which pane keys go to.
public enum Pane: Sendable, Equatable { case browser, queue }

/// A dialog on top of the panes; it takes every key until closed.
public enum Modal: Sendable, Equatable {
    /// The keys, scrolled this many lines (a short terminal shows a part at a time).
    case help(scroll: Int)
    case rename(path: String, original: String, input: TextInput)
    case confirmQuit
    /// The agent's scheduled jobs; any key closes.
    case jobs
    /// The saved destinations to choose where the next uploads go (`D`); the row under the cursor.
    case destinations(selected: Int)
}

/// A saved destination the monitor can switch to: its name, its URL as shown, and why it
/// cannot be used when it cannot (a header file gone, a bad value).
public struct DestinationEntry: Sendable, Equatable {
    public var name: String
    public var shown: String
    public var refusal: String?
    /// How it writes photos before they go (its `--convert`…); nil: as they are.
    public var conversion: PhotoConversion?

    public init(name: String, shown: String, refusal: String? = nil, conversion: PhotoConversion? = nil) {
        (self.name, self.shown, self.refusal, self.conversion) = (name, shown, refusal, conversion)
    }
}

/// A short message in the status line; errors stay until the next key.
public struct StatusMessage: Sendable, Equatable {
    public var text: String
    public var isError: Bool
    public init(_ text: String, isError: Bool = false) {
        self.text = text
        self.isError = isError
    }
}

/// Everything the monitor shows. Changed only by `MonitorReducer`; drawn by `MonitorView`.
public struct MonitorState: Sendable {
    /// The last mouse press (a second one there soon after is a double click).
    public var lastClick: Click?
    /// The saved destinations `D` offers, and the one the next uploads go to (nil: the
    /// command line's URL).
    public var destinations: [DestinationEntry] = []
    public var destinationName: String?
    public var width: Int
    public var height: Int
    public var endpoint: String {
        didSet { queue.endpoint = endpoint }
    }
    public var browser: BrowserState
    public var queue = QueueState()
    public var log: [LogEntry] = []
    public var focus: Pane = .browser
    public var modal: Modal?
    public var message: StatusMessage?
    public var hasQuit = false
    /// True when the uploads belong to the background agent: quitting leaves them running.
    public var uploadsOutliveMonitor = false
    public var jobs = JobsState()
    public var preview = PreviewState()
    /// The browser's files by content, for "sent" under another name or path.
    public var contents = ContentState()
    /// Photos go without where they were taken unless a file says otherwise (`--strip-location`;
    /// `L` turns it on or off for the marked files).
    public var stripLocation = false
    /// How photos are written before they go (`--convert`…), as the destination says; nil: as they are.
    public var conversion: PhotoConversion?
    /// How the user chose to write photos queued from now on (`F`), over the destination's.
    public var conversionChoice: PhotoConversion?
    /// How photos queued now are written.
    public var sendsAs: PhotoConversion? { conversionChoice ?? conversion }

    /// The ways `F` goes through, the destination's own first when it is none of them.
    public var conversionChoices: [PhotoConversion] {
        var choices = [
            PhotoConversion(format: .keep), PhotoConversion(format: .jpeg), PhotoConversion(format: .jpeg, maxDimension: 2048),
            PhotoConversion(format: .webp, maxDimension: 2048),
        ]
        if let conversion, conversion.changesAnything, !choices.contains(conversion) { choices.insert(conversion, at: 0) }
        return choices
    }

    /// The photo in the preview, when the next upload would write it anew (not as it is, not
    /// refused): what to measure for its exact size.
    public var measureRequest: ConversionMeasure? {
        guard let wanted = preview.wanted, let conversion = sendsAs, conversion.changesAnything else { return nil }
        let info: PreviewInfo?
        switch preview.shown {
        case .success(let shown)?: info = shown.info
        case .failure(let problem)?: info = problem.info
        case nil: info = nil
        }
        guard let info, let format = info.format,
            case .written = conversion.outcome(source: format.rawValue, width: info.width, height: info.height, fileSize: info.fileSize ?? 0)
        else { return nil }
        return ConversionMeasure(path: wanted.path, size: wanted.size, conversion: conversion, stripLocation: strips(wanted.path))
    }

    /// Whether the file at `path` would be sent without its location.
    public func strips(_ path: String) -> Bool { browser.stripChoices[path] ?? stripLocation }
    /// The terminal's pixel protocol and cell size, when it shows real pixels: previews are
    /// then decoded to the pane's size in pixels instead of two pixels a cell.
    public var pixelGraphics: PixelGraphics?
    /// The monitor's clock (seconds) at the latest event that carried a time.
    public var now: Double = 0
    /// The wall clock at `now`: the upload records' times are read against it.
    public var date = Date(timeIntervalSince1970: 0)

    /// Log lines kept; older ones scroll away.
    public static let logLimit = 1000

    public init(width: Int, height: Int, endpoint: String, directory: String, home: String) {
        self.width = width
        self.height = height
        self.endpoint = endpoint
        queue.endpoint = endpoint
        browser = BrowserState(path: directory, home: home)
    }

    /// Rows the browser and queue panes have for entries at the current size (for paging).
    public var listPageSize: Int { max(1, browserRows) }
}
