import Foundation
import Testing
import UploadCore

@Suite struct FreedMemoryTests {
    /// glibc takes the arena limit (mallopt returns 1); the plateau it buys is bench/agent's to show.
    @Test func theArenaLimitIsTaken() {
        #expect(FreedMemory.limitArenas(cores: ProcessInfo.processInfo.activeProcessorCount))
    }
}
