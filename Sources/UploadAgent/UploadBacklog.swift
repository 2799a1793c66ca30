import UploadClient
import UploadCore

/// Which of the agent's uploads its queue holds, as a value: the journal keeps every upload
/// handed over, and the queue gets them a window at a time, so what the agent keeps in memory
/// per upload waiting is an id, however many thousands wait (a queue entry holds the request,
/// its headers and its record). Inputs return what to do; `Agent` does it.
struct UploadBacklog {
    /// The most uploads the queue holds at once (queued, sending or waiting to retry): enough
    /// that the queue never runs dry between two feeds (`window(concurrency:)`).
    var window: Int
    /// Handed over, kept by the journal as queued, not yet in the queue; oldest first.
    private(set) var waiting = IDQueue()
    /// In the queue and not finished.
    private(set) var inQueue: Set<UploadID> = []
    /// Fed from `waiting`: their `queued` from the queue repeats what the journal and clients
    /// were told when they were handed over, and is neither recorded nor sent again.
    private var announced: Set<UploadID> = []

    init(window: Int) {
        precondition(window >= 2, "a window of at least two uploads")
        self.window = window
    }

    /// The window for a queue running `concurrency` uploads at once.
    static func window(concurrency: Int) -> Int { max(256, concurrency * 8) }

    var isEmpty: Bool { waiting.isEmpty }
    var waitingCount: Int { waiting.count }

    /// Uploads handed over (the journal has them, queued), oldest first.
    mutating func add(_ ids: [UploadID]) {
        for id in ids where !inQueue.contains(id) { waiting.append(id) }
    }

    /// The uploads to give the queue now: none while it holds more than half the window (so
    /// that feeding is one journal read per half a window, not one per upload), else as many
    /// as fill it. Each is counted in the queue from here on.
    mutating func take() -> [UploadID] {
        guard !waiting.isEmpty, inQueue.count * 2 <= window else { return [] }
        var ids: [UploadID] = []
        while inQueue.count < window, let id = waiting.popFirst() {
            inQueue.insert(id)
            announced.insert(id)
            ids.append(id)
        }
        return ids
    }

    /// Uploads taken but not given to the queue after all (the journal no longer has them
    /// queued, or could not be read): they are no longer counted.
    mutating func dropped(_ ids: [UploadID]) {
        for id in ids {
            inQueue.remove(id)
            announced.remove(id)
        }
    }

    /// Uploads taken whose rows could not be read: they wait again, first.
    mutating func putBack(_ ids: [UploadID]) {
        for id in ids.reversed() {
            inQueue.remove(id)
            announced.remove(id)
            waiting.prepend(id)
        }
    }

    /// An upload given to the queue directly (a retry by hand).
    mutating func queuedDirectly(_ id: UploadID) {
        inQueue.insert(id)
    }

    /// The queue said `queued` for `id`: true when that only repeats the hand-over.
    mutating func isRepeatedQueued(_ id: UploadID) -> Bool {
        announced.remove(id) != nil
    }

    /// The upload ended: room for another.
    mutating func finished(_ id: UploadID) {
        inQueue.remove(id)
        announced.remove(id)
    }

    /// Takes `id` out of `waiting` when it is there (a cancel before the queue had it): true
    /// when it was; it is then counted in the queue until its end comes back.
    mutating func cancel(_ id: UploadID) -> Bool {
        guard waiting.remove(id) else { return false }
        inQueue.insert(id)
        announced.insert(id)
        return true
    }
}
