import Foundation
import UploadClient
import UploadCore
import UploadJournal

/// Taking files from clients: each is checked as the queue will send it, the accepted ones are
/// added to the journal in one transaction and only then queued.
extension Agent {
    /// Checks one file as the queue will send it (absolute path, readable, an image unless any
    /// file is allowed, a usable transport) and returns the upload, or why it is refused.
    func admit(_ item: EnqueueItem, inspected: Result<FileFingerprint, AdmissionRefusal>) -> Result<NewUpload, AdmissionRefusal> {
        let fingerprint: FileFingerprint
        switch inspected {
        case .success(let found): fingerprint = found
        case .failure(let refusal): return .failure(refusal)
        }
        do {
            _ = try transport(for: item.settings)
        } catch {
            return .failure(AdmissionRefusal("\(error)", mayPass: true))
        }
        return .success(NewUpload(request: item.request, fingerprint: fingerprint, settings: item.settings, origin: item.origin))
    }

    /// Each item's file checked (`UploadPreflight.inspect`: opened, its head read and sniffed),
    /// off the agent's own thread on `PreparationThreads`, each within the preparation limit:
    /// a file whose read never returns (a network file system that stopped answering) is
    /// refused with the reason and the rest of the batch is checked after it.
    func inspectAll(_ items: [EnqueueItem]) async -> [Result<FileFingerprint, AdmissionRefusal>] {
        await PreparationThreads.shared.each(items, limit: configuration.preparationLimit, path: \.path, check: Self.inspect) { _, why in
            .failure(AdmissionRefusal(why, mayPass: true))
        }
    }

    /// One item's file checked.
    static func inspect(_ item: EnqueueItem) -> Result<FileFingerprint, AdmissionRefusal> {
        guard item.path.hasPrefix("/") else {
            return .failure(AdmissionRefusal("the agent needs an absolute path (it does not share your working directory)"))
        }
        do throws(UploadInputError) {
            guard let inspected = try UploadPreflight.inspect(item.request) else {
                return .failure(AdmissionRefusal("the agent uploads files, not standard input"))
            }
            return .success(inspected)
        } catch {
            if case .cannotRead = error { return .failure(AdmissionRefusal("\(error)", mayPass: true)) }
            return .failure(AdmissionRefusal("\(error)"))
        }
    }

    /// Uploads the journal just added: clients watching are told they are queued, and they
    /// wait in the backlog for room in the queue.
    func launch(_ added: [UploadRecord]) async {
        let now = clock.wall()
        for record in added { broadcast(.event(seq: nil, event: .queued(record), at: now)) }
        backlog.add(added.map(\.id))
        await feed()
    }

    /// Gives the queue the uploads its window has room for, as the journal has them.
    func feed() async {
        let ids = backlog.take()
        guard !ids.isEmpty else { return }
        let pending: [PendingUpload]
        do {
            pending = try journal.pending(ids)
        } catch {
            backlog.putBack(ids)
            log("journal: cannot read the uploads to start next: \(error)")
            return
        }
        if pending.count < ids.count {
            let read = Set(pending.map(\.id))
            backlog.dropped(ids.filter { !read.contains($0) })
        }
        await queue.enqueue(pending.map(queueItem))
    }

    func enqueue(_ items: [EnqueueItem], brief: Bool = false) async -> [EnqueueResult] {
        var accepted: [(NewUpload, Int)] = []
        var results: [EnqueueResult?] = Array(repeating: nil, count: items.count)
        let inspections = await inspectAll(items)
        for (index, item) in items.enumerated() {
            switch admit(item, inspected: inspections[index]) {
            case .success(let upload): accepted.append((upload, index))
            case .failure(let refusal): results[index] = .refused(path: item.path, reason: refusal.reason)
            }
        }
        let added: [UploadRecord]
        do {
            added = try journal.add(accepted.map(\.0), at: clock.wall())
        } catch {
            for (_, index) in accepted {
                results[index] = .refused(path: items[index].path, reason: "cannot write the journal: \(error)")
            }
            added = []
        }
        for (snapshot, (_, index)) in zip(added, accepted) {
            results[index] = brief ? .accepted(QueuedUpload(snapshot)) : .queued(snapshot)
        }
        await launch(added)
        return results.map { $0 ?? .refused(path: "", reason: "not handled") }
    }

    func retry(_ id: UploadID) async -> AgentReply {
        let pending: PendingUpload?
        do {
            pending = try journal.pendingForRetry(id)
        } catch let cleared as Journal.HeadersCleared {
            return .error(message: cleared.description)
        } catch {
            return .error(message: "cannot read the journal: \(error)")
        }
        guard let pending else { return .error(message: "\(id) has not failed, so there is nothing to retry") }
        backlog.queuedDirectly(id)
        if await !queue.retry(id) {
            // Not in this agent's memory (it failed before a restart): queue it anew, same id.
            await queue.forgetFinished([id])
            await startUpload(pending)
        }
        return .ok
    }
}

extension Agent {
    /// Cancels a queued or running upload, also one still waiting in the backlog (it ends
    /// "cancelled before it started", as in the queue).
    func cancel(_ id: UploadID) async -> AgentReply {
        if await queue.cancel(id) { return .ok }
        guard backlog.cancel(id) else { return .error(message: "\(id) is not queued or running") }
        do {
            guard let pending = try journal.pending([id]).first else {
                backlog.dropped([id])
                return .error(message: "\(id) is not queued or running")
            }
            await queue.enqueueCancelled(queueItem(pending))
            return .ok
        } catch {
            backlog.putBack([id])
            return .error(message: "cannot read the journal: \(error)")
        }
    }
}

/// Why the agent does not take a file.
struct AdmissionRefusal: Error {
    let reason: String
    /// Whether the refusal may not hold for long (unreadable for now, a CA file missing), as
    /// opposed to what the file is (not an image).
    let mayPass: Bool
    init(_ reason: String, mayPass: Bool = false) {
        self.reason = reason
        self.mayPass = mayPass
    }
}
