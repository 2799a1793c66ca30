import Foundation
import Testing
@testable import UploadAgent
import UploadCore
import UploadJournal
import UploadTesting

/// The agent reads the time only from its configuration's clock: a test moves it by hand and
/// the schedule and the idle time follow, without waiting for the machine's clock.
@Suite struct AgentClockTests {
    @Test func jobsComeDueAndIdleTimeGrowsByTheAgentsClock() async throws {
        let root = TestFiles.makeTemporaryDirectory("agent-clock")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let paths = StatePaths(stateDirectory: root + "/state", runtimeDirectory: root + "/run")
        try paths.prepare()
        let journal = try Journal(path: paths.journal)
        let time = ManualClock()
        let start = time.clock.wall()
        let agent = try Agent(
            configuration: AgentConfiguration(
                paths: paths, idleExitSeconds: 0, maintenance: (3600, MaintenanceSpec()),
                clock: time.clock), journal: journal)
        try await agent.start()
        func maintenance() throws -> ScheduledJob? { try journal.scheduledJobs().first { $0.spec.kind == .maintenance } }
        #expect(try maintenance()?.earliestBeginAt == start.addingTimeInterval(3600), "first due an interval after the agent's now")

        time.advance(by: 3599)
        _ = await agent.runDueJobs()
        #expect(try maintenance()?.lastRunAt == nil, "not due yet by the agent's clock")

        time.advance(by: 2)
        let next = await agent.runDueJobs()
        let ran = try #require(try maintenance())
        #expect(ran.lastRunAt == start.addingTimeInterval(3601), "run at the agent's now, not the machine's")
        #expect(next == ran.earliestBeginAt && next > start.addingTimeInterval(3601))

        // Nothing happened since it was made: idle for all the time the clock moved.
        #expect(await agent.idleSeconds() == 3601)
        time.advance(by: 10)
        #expect(await agent.idleSeconds() == 3611)
        await agent.shutdown()
    }
}
