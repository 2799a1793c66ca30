import Foundation
import Testing
import UploadCore
import UploadTesting
@testable import Receiver

/// Who may hold how many unfinished resumable uploads: one client cannot deny the others.
@Suite(.timeLimit(.minutes(2))) struct ResumableQuotaTests {
    let start = Date(timeIntervalSince1970: 2_000_000_000)

    func holding(_ token: String, _ client: String, at seconds: Double, inUse: Bool = false) -> ResumableQuota.Holding {
        .init(token: token, client: client, lastActive: start.addingTimeInterval(seconds), inUse: inUse)
    }

    @Test func aClientAtItsLimitGivesUpItsOwnLeastRecentlyActiveUpload() {
        let quota = ResumableQuota(total: 100, perClient: 3)
        let held = [holding("a1", "A", at: 5), holding("a2", "A", at: 1), holding("a3", "A", at: 9), holding("b1", "B", at: 0)]
        #expect(quota.decide(for: "A", unfinished: held) == .evict("a2"))
        #expect(quota.decide(for: "B", unfinished: held) == .admit)
        // One in use is never taken; with all in use the client is refused, not the others.
        let busy = [holding("a1", "A", at: 5, inUse: true), holding("a2", "A", at: 1, inUse: true), holding("a3", "A", at: 9, inUse: true)]
        guard case .refuse(let reason) = quota.decide(for: "A", unfinished: busy) else {
            Issue.record("admitted")
            return
        }
        #expect(reason.contains("this client"))
        #expect(quota.decide(for: "B", unfinished: busy) == .admit)
    }

    @Test func atTheTotalTheClientHoldingTheMostGivesUpItsOldest() {
        let quota = ResumableQuota(total: 5, perClient: 4)
        let held = [
            holding("a1", "A", at: 3), holding("a2", "A", at: 2), holding("a3", "A", at: 4),
            holding("b1", "B", at: 0), holding("c1", "C", at: 1),
        ]
        // B's upload is the oldest of all, but A holds the most.
        #expect(quota.decide(for: "D", unfinished: held) == .evict("a2"))
        let allBusy = held.map { ResumableQuota.Holding(token: $0.token, client: $0.client, lastActive: $0.lastActive, inUse: true) }
        guard case .refuse = quota.decide(for: "D", unfinished: allBusy) else {
            Issue.record("admitted")
            return
        }
    }

    @Test func clientsAreNamedByAddressAndIPv6ByItsNetwork() throws {
        #expect(ResumableQuota.client(of: try .init(ipAddress: "192.0.2.7", port: 1)) == "192.0.2.7")
        let one = ResumableQuota.client(of: try .init(ipAddress: "2001:db8:1:2::5", port: 1))
        let other = ResumableQuota.client(of: try .init(ipAddress: "2001:db8:1:2:ffff::9", port: 2))
        #expect(one == other)
        #expect(one == "2001:db8:1:2::/64")
        #expect(ResumableQuota.client(of: try .init(ipAddress: "::ffff:192.0.2.7", port: 1)) == "192.0.2.7")
        #expect(ResumableQuota.client(of: nil) == "unknown")
    }

    /// The store applies the quota: 5,000 creations from one client leave it its limit, and a
    /// second client still creates; an upload untouched for the idle age is gone, one in use is not.
    @Test func oneClientsFloodLeavesRoomForOthersAndIdleUploadsExpire() async throws {
        let directory = TestFiles.makeTemporaryDirectory("quota")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = ResumableStore(
            directory: directory, maxAge: .seconds(86_400), idleAge: .seconds(600),
            quota: ResumableQuota(total: 100, perClient: 10), clock: .stopped(at: start))
        var tokens: [String] = []
        for index in 0..<5000 {
            tokens.append(try store.create(boundary: "b", length: nil, client: "198.51.100.1", now: start.addingTimeInterval(Double(index) / 1000)).token)
        }
        #expect(store.count == 10)
        #expect(tokens.suffix(10).allSatisfy { store.peek($0, now: start.addingTimeInterval(5)) != nil })
        let other = try store.create(boundary: "b", length: nil, client: "203.0.113.9", now: start.addingTimeInterval(5))
        #expect(store.peek(other.token, now: start.addingTimeInterval(5)) != nil)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: store.folder)).count == 11 * 2, "a record and a part file each")

        // Idle: the other client's upload is taken (in use) and kept; the flood's are gone.
        let lease = try #require(await store.acquire(other.token, interrupt: nil, now: start.addingTimeInterval(590)))
        #expect(store.sweep(now: start.addingTimeInterval(700)) == 10)
        #expect(store.count == 1)
        lease.release(offset: 0)
        #expect(store.peek(other.token, now: start.addingTimeInterval(700)) != nil)
    }
}
