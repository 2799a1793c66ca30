import Foundation
import NIOConcurrencyHelpers
import UploadCore
import UploadProtocols

/// Which origins resume uploads (draft-ietf-httpbis-resumable-upload), asked once per origin
/// with `OPTIONS` and remembered; uploads to the same origin at the same time share one question.
/// An origin that could not be asked (no answer) is asked again next time.
final class ResumeSupport: Sendable {
    typealias Answer = OriginSupport

    private let state = NIOLockedValueBox<[String: Task<Answer, Never>]>([:])
    /// The `Upload-Limit` each origin's `OPTIONS` answer said (this process only).
    private let limits = NIOLockedValueBox<[String: UploadLimit]>([:])
    /// Origins whose answer came from the store, not from asking in this process.
    private let rememberedOrigins = NIOLockedValueBox<Set<String>>([])
    /// Whether each origin showed it verifies what it receives (an answer with `Repr-Digest`,
    /// or an `OPTIONS` answer asking for digests): uploads there work out the body's digest as
    /// it goes; an origin not known to costs one digest after an answer that carries one.
    /// Known in this process, and remembered with the resume answers for a day (read once per
    /// origin and process).
    private let verifying = NIOLockedValueBox<[String: Bool]>([:])
    /// Where answers outlive the process (nil: they do not).
    let store: ResumeSupportStore?
    /// What the store said of each origin asked about in this process (nil: nothing fresh):
    /// the file is read once per origin, not once per upload.
    private let stored = NIOLockedValueBox<[String: Answer?]>([:])

    private func remembered(_ origin: String, now: Double) -> Answer? {
        if let said = stored.withLockedValue({ $0[origin] }) { return said }
        let said = store?.lookup(origin, now: now)
        stored.withLockedValue { $0[origin] = .some(said) }
        return said
    }

    func verifies(_ origin: String) -> Bool {
        let now = self.now
        if let known = verifying.withLockedValue({ $0[origin] }) { return known }
        let remembered = store?.verifies(origin, now: now) ?? false
        // What this process learnt meanwhile wins over the file; what the file said is kept,
        // so the file is read once per origin, not once per upload.
        return verifying.withLockedValue { known in
            if let learnt = known[origin] { return learnt }
            known[origin] = remembered
            return remembered
        }
    }

    func noteVerifies(_ origin: String) {
        let now = self.now
        let news = verifying.withLockedValue { known -> Bool in
            defer { known[origin] = true }
            return known[origin] != true
        }
        if news { store?.rememberVerifies(origin, now: now) }
    }

    /// What the answers' ages are read from.
    let clock: HouseClock

    init(store: ResumeSupportStore? = ResumeSupportStore.shared.withLockedValue { $0 }, clock: HouseClock) {
        self.store = store
        self.clock = clock
    }

    /// Now, as the store keeps its times (seconds since 1970).
    private var now: Double { clock.wall().timeIntervalSince1970 }

    /// What `origin` answers, asked once per process, or as remembered from an earlier one
    /// (`remembered`: then the origin may have changed since, and a refusal means that).
    func answer(for origin: String, ask: @escaping @Sendable () async -> Answer) async -> (Answer, remembered: Bool) {
        let now = self.now
        if rememberedOrigins.withLockedValue({ $0.contains(origin) }), let known = state.withLockedValue({ $0[origin] }) {
            return (await known.value, true)
        }
        if state.withLockedValue({ $0[origin] }) == nil, let remembered = remembered(origin, now: now) {
            // Read from the file once per process, not once per upload.
            state.withLockedValue { $0[origin] = Task { remembered } }
            rememberedOrigins.withLockedValue { _ = $0.insert(origin) }
            return (remembered, true)
        }
        let store = self.store
        let task = state.withLockedValue { known in
            if let task = known[origin] { return task }
            let task = Task {
                let answer = await ask()
                store?.remember(origin, answer, now: now)
                return answer
            }
            known[origin] = task
            return task
        }
        let answer = await task.value
        if answer == .unknown { state.withLockedValue { $0[origin] = nil } }
        return (answer, false)
    }

    /// The origin was believed to resume uploads and refused to create one: it does not (now).
    func refused(_ origin: String) {
        learned(origin, .unsupported)
    }

    /// The limits an origin said it sets on uploads (`Upload-Limit`), if it said.
    func limit(for origin: String) -> UploadLimit? { limits.withLockedValue { $0[origin] } }

    func noteLimit(_ limit: UploadLimit?, for origin: String) {
        limits.withLockedValue { $0[origin] = limit }
    }

    /// What is known of `origin` without asking it: from this process, or remembered.
    func known(_ origin: String) async -> Answer? {
        let now = self.now
        if let task = state.withLockedValue({ $0[origin] }) { return await task.value }
        return remembered(origin, now: now)
    }

    /// What the origin showed itself to be by another request than the question (a tus server
    /// refusing a multipart upload, or the draft's refusal of a creation).
    func learned(_ origin: String, _ answer: Answer) {
        let now = self.now
        state.withLockedValue { $0[origin] = Task { answer } }
        rememberedOrigins.withLockedValue { _ = $0.remove(origin) }
        store?.remember(origin, answer, now: now)
    }
}
