import Foundation
import Testing
@testable import Receiver

/// Who holds a resumable upload, who waits, and when it goes: the lease table input by input.
struct ResumableLeasesTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func record(_ token: String, age: Double = 3600, complete: Bool = false, client: String = "10.0.0.1") -> ResumableRecord {
        var record = ResumableRecord(
            token: token, createdAt: t0, expiresAt: t0.addingTimeInterval(age), boundary: "b", length: complete ? 10 : nil, client: client)
        if complete { record.answer = StoredAnswer(status: 200, body: "{}") }
        return record
    }

    func table(idle: Duration? = .seconds(60)) -> ResumableLeases {
        var leases = ResumableLeases(idleAge: idle)
        leases.add(Self.record("a"), offset: 5, touched: false, now: Self.t0)
        return leases
    }

    @Test func oneRequestHoldsAnUploadAndTheNextIsToldWhoToEnd() {
        var leases = table()
        let ended = ManagedFlag()
        guard case .taken(_, let offset) = leases.take("a", fresh: true, interrupt: { ended.set() }, now: Self.t0) else {
            Issue.record("a fresh upload was not taken")
            return
        }
        #expect(offset == 5)
        #expect(leases.snapshot("a", now: Self.t0)?.busy == true)
        guard case .held(let interrupt) = leases.take("a", fresh: false, interrupt: nil, now: Self.t0) else {
            Issue.record("a held upload was taken twice")
            return
        }
        interrupt?()
        #expect(ended.value)
        // A creation's request may take only an upload no request used.
        _ = leases.letGo("a", offset: nil, record: nil, now: Self.t0)
        guard case .absent = leases.take("a", fresh: true, interrupt: nil, now: Self.t0) else {
            Issue.record("a used upload was taken as fresh")
            return
        }
    }

    @Test func lettingGoKeepsTheOffsetAndWakesTheWaitersInOrder() {
        var leases = table()
        _ = leases.take("a", fresh: false, interrupt: nil, now: Self.t0)
        let first = leases.newID()
        let second = leases.newID()
        let waitingFirst = leases.wait("a", id: first)
        let waitingSecond = leases.wait("a", id: second)
        #expect(waitingFirst && waitingSecond)
        #expect(leases.waiting("a") == 2)
        let stopped = leases.stopWaiting("a", id: first)
        let stoppedAgain = leases.stopWaiting("a", id: first)
        #expect(stopped && !stoppedAgain, "only once")
        let woken = leases.letGo("a", offset: 42, record: nil, now: Self.t0.addingTimeInterval(5))
        #expect(woken == [second])
        #expect(leases.snapshot("a", now: Self.t0) == .init(record: Self.record("a"), offset: 42, busy: false))
        // Nobody holds it: nothing to wait for.
        let late = leases.newID()
        let waits = leases.wait("a", id: late)
        #expect(!waits)
        let none = leases.letGo("nosuch", offset: 1, record: nil, now: Self.t0)
        #expect(none.isEmpty)
    }

    @Test func anUnfinishedUploadGoesWhenIdleButNotWhileHeldAndAnyGoesAtItsAge() {
        var leases = table()
        leases.add(Self.record("done", age: 600, complete: true), offset: 10, touched: true, now: Self.t0)
        #expect(leases.snapshot("a", now: Self.t0.addingTimeInterval(59)) != nil)
        #expect(leases.snapshot("a", now: Self.t0.addingTimeInterval(60)) == nil, "idle 60 s")
        // Held, it is not idle however long the request takes; letting go starts the idle clock.
        _ = leases.take("a", fresh: false, interrupt: nil, now: Self.t0.addingTimeInterval(30))
        let whileHeld = leases.sweep(now: Self.t0.addingTimeInterval(300))
        #expect(whileHeld.isEmpty)
        _ = leases.letGo("a", offset: nil, record: nil, now: Self.t0.addingTimeInterval(300))
        let beforeIdle = leases.sweep(now: Self.t0.addingTimeInterval(359))
        #expect(beforeIdle.isEmpty)
        // A complete one is not idle-expired; both go at their age.
        let idle = leases.sweep(now: Self.t0.addingTimeInterval(360))
        #expect(idle == ["a"])
        let beforeAge = leases.sweep(now: Self.t0.addingTimeInterval(599))
        #expect(beforeAge.isEmpty)
        let aged = leases.sweep(now: Self.t0.addingTimeInterval(600))
        #expect(aged == ["done"])
        #expect(leases.count == 0)
    }

    @Test func theQuotaSeesUnfinishedUploadsWithWhoseTheyAreAndWhetherInUse() {
        var leases = table()
        leases.add(Self.record("b", client: "10.0.0.2"), offset: 0, touched: true, now: Self.t0.addingTimeInterval(10))
        leases.add(Self.record("c", complete: true), offset: 10, touched: true, now: Self.t0)
        _ = leases.take("b", fresh: false, interrupt: nil, now: Self.t0.addingTimeInterval(20))
        let holdings = leases.holdings(now: Self.t0.addingTimeInterval(30)).sorted { $0.token < $1.token }
        #expect(holdings.map(\.token) == ["a", "b"])
        #expect(holdings.map(\.client) == ["10.0.0.1", "10.0.0.2"])
        #expect(holdings.map(\.inUse) == [false, true])
        #expect(holdings.map(\.lastActive) == [Self.t0, Self.t0.addingTimeInterval(20)])
        // Removed, its waiters are woken.
        _ = leases.take("a", fresh: false, interrupt: nil, now: Self.t0)
        let waiter = leases.newID()
        let waits = leases.wait("a", id: waiter)
        let woken = leases.remove("a")
        #expect(waits && woken == [waiter])
        #expect(leases.snapshot("a", now: Self.t0) == nil)
    }
}
