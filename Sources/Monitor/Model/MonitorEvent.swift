import Foundation
import PreviewModel
import TerminalCanvas
import UploadCore

/// When something happened: a monotonic time for rates and durations, and the wall-clock time
/// of day for the notification log. Passed in so the reducer stays pure.
public struct EventTime: Sendable, Hashable {
    /// On the run loop's monotonic clock.
    public var seconds: Double
    /// The local time of day, as the log shows it.
    public var clock: String
    /// The wall clock, for what records keep (when an upload started or finished).
    public var date: Date

    public init(seconds: Double, clock: String, date: Date) {
        self.seconds = seconds
        self.clock = clock
        self.date = date
    }
}

/// Everything the monitor reacts to; the run loop merges them from the terminal, the upload
/// queue and a timer.
public enum MonitorEvent: Sendable, Equatable {
    case key(Key, EventTime)
    case resize(width: Int, height: Int)
    case directoryLoaded(DirectoryListing)
    /// The open folder read again (it changed, or Ctrl-R): the cursor, marks and filter stay.
    case directoryChanged(DirectoryListing)
    case upload(UploadEvent, EventTime)
    /// A file could not be queued (not an image, unreadable…): said in the log, nothing is lost.
    case enqueueRefused(name: String, reason: String, EventTime)
    case tick(EventTime)
    /// Attached (again) to the background agent: the uploads as they stand, and which of them
    /// finished while no monitor was watching.
    case attached(Reattachment, EventTime)
    /// Something about the connection to the agent worth a log line.
    case notice(String, isError: Bool, EventTime)
    /// The agent's scheduled jobs, on attach and whenever one changes or runs.
    case jobs([JobSummary], EventTime)
    /// A picture asked for with `loadPreview` is decoded (or cannot be).
    case previewLoaded(PreviewRequest, Result<Preview, PreviewProblem>)
    /// The cursor has stayed on this picture for `PreviewState.restBeforePixels`.
    case previewRested(PreviewRequest)
    /// A file asked for with `hashContents` is hashed (nil: it could not be read); `remaining`
    /// of the list are still to come.
    case contentHashed(ContentHashRequest, sha256: String?, remaining: Int)
    /// What was sent to this endpoint by content, from the journal (sends from a shell, pruned uploads).
    case sentContentsKnown(Set<String>)
    /// A photo asked for with `measureConversion` is written, or refused (nil: it could not be read).
    case conversionMeasured(ConversionMeasure, ConversionMeasure.Found?)
}

extension MonitorEvent {
    /// Whether the user is waiting to see this: what a key asked for (a key itself, a folder
    /// opened, a picture under the cursor), a resize, the first look at the agent. Such a frame
    /// is drawn at once; what only the uploads changed waits for the slower background rate.
    public var isTheUsers: Bool {
        switch self {
        case .key, .resize, .directoryLoaded, .previewLoaded, .previewRested, .attached, .conversionMeasured: true
        case .directoryChanged, .upload, .enqueueRefused, .tick, .notice, .jobs, .contentHashed, .sentContentsKnown: false
        }
    }
}

/// What the monitor learns when it attaches to the agent.
public struct Reattachment: Sendable, Equatable {
    /// The agent's uploads, each the record every view reads; the monitor shows them as they
    /// are, quietly (no log lines, no notifications).
    public var records: [UploadRecord]
    /// When the agent's records were read, on the wall clock: their times are moved onto the
    /// monitor's clock from here.
    public var date: Date
    /// Uploads that finished while no monitor was attached, oldest first: each gets a log line
    /// and a terminal notification, after one "While you were away" summary.
    public var finishedWhileAway: [UploadID]
    /// How many finished while away, ok and failed, counted from the agent's log of them (the
    /// records are the recent uploads and the failed ones: after a camera roll of 20,000, most
    /// of what finished has no row); nil: count the rows of `finishedWhileAway`.
    public var awayTotals: AwayTotals?

    public init(records: [UploadRecord], at date: Date, finishedWhileAway: [UploadID], awayTotals: AwayTotals? = nil) {
        self.records = records
        self.date = date
        self.finishedWhileAway = finishedWhileAway
        self.awayTotals = awayTotals
    }
}

/// Uploads that finished while no monitor watched, by how they ended.
public struct AwayTotals: Sendable, Equatable {
    public var ok: Int
    public var failed: Int
    public var total: Int { ok + failed }

    public init(ok: Int, failed: Int) {
        self.ok = ok
        self.failed = failed
    }
}

/// What the reducer asks the run loop to do; data only, so tests can check decisions.
public enum MonitorEffect: Sendable, Equatable {
    case loadDirectory(path: String, select: String?)
    /// Read the open folder again (Ctrl-R); its listing comes back as `directoryChanged`.
    case refreshDirectory(path: String)
    /// The uploads queued from now on go to this saved destination (those queued go on as they are).
    case switchDestination(name: String)
    case enqueue([QueueItem])
    case cancel(UploadID)
    case retry(UploadID)
    /// Tell the terminal (bell or desktop notification, as configured).
    case notify(title: String, body: String)
    /// Decode a picture for the preview pane, off the loop; the newest request replaces any
    /// still running. Its result comes back as `previewLoaded`.
    case loadPreview(PreviewRequest)
    /// Report `previewRested` once this picture has been wanted for `PreviewState.restBeforePixels`
    /// (a newer request replaces the wait).
    case awaitPreviewRest(PreviewRequest)
    /// Hash these files off the loop (by their content as they would be sent), in order; a newer
    /// list replaces what of the last one is still waiting. Results come back as `contentHashed`.
    case hashContents([ContentHashRequest])
    /// Write the photo under the cursor as it would leave, off the loop, to tell its size; a
    /// newer request replaces one waiting. The size comes back as `conversionMeasured`.
    case measureConversion(ConversionMeasure)
    case quit
}

/// One file to queue, with the name it is sent under.
public struct QueueItem: Sendable, Hashable {
    public var path: String
    public var uploadName: String
    /// Sent without where it was taken (`--strip-location`, or `L` on the file).
    public var stripLocation: Bool
    /// The modification time the file was listed with (ns since 1970), so the browser can tell
    /// a file changed since it was sent.
    public var modified: Int64?
    /// The inode's change time it was listed with (ns since 1970).
    public var changed: Int64?
    /// How the photo is written before it goes, when not as the destination says (`C`: a
    /// photo the server refused for its format, sent again converted).
    public var conversion: PhotoConversion?

    public init(
        path: String, uploadName: String, stripLocation: Bool = false, modified: Int64? = nil, changed: Int64? = nil,
        conversion: PhotoConversion? = nil
    ) {
        self.conversion = conversion
        self.path = path
        self.uploadName = uploadName
        self.stripLocation = stripLocation
        self.modified = modified
        self.changed = changed
    }
}
