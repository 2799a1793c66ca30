import UploadCore

/// Ids waiting to start, first in first out, with O(1) taking from the front.
public struct IDQueue: Sendable {
    private var items: [UploadID] = []
    private var head = 0

    /// An empty queue.
    public init() {}

    /// True when no id waits.
    public var isEmpty: Bool { head == items.count }

    /// How many ids wait.
    public var count: Int { items.count - head }

    /// Puts an id last.
    public mutating func append(_ id: UploadID) { items.append(id) }

    /// Puts an id in front (a retry that came due goes before new uploads).
    public mutating func prepend(_ id: UploadID) {
        if head > 0 {
            head -= 1
            items[head] = id
        } else {
            items.insert(id, at: 0)
        }
    }

    /// Takes the first id, if any.
    public mutating func popFirst() -> UploadID? {
        guard head < items.count else { return nil }
        let id = items[head]
        head += 1
        if head > 1024 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return id
    }

    /// The first `count` ids, in order, left waiting.
    public func first(_ count: Int) -> ArraySlice<UploadID> { items[head..<min(items.count, head + max(0, count))] }

    /// Removes `id` if it waits; says whether it did.
    @discardableResult
    public mutating func remove(_ id: UploadID) -> Bool {
        guard let index = items[head...].firstIndex(of: id) else { return false }
        items.remove(at: index)
        return true
    }
}
