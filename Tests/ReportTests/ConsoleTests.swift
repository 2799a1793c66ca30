import Foundation
import Glibc
import Testing
import UploadReports

/// What the program writes for a person goes to a descriptor that may be gone: a terminal
/// window closed under a monitor still handing files to the agent, a pipe whose reader left.
/// The words are lost; the program is not.
@Suite struct ConsoleTests {
    @Test func writingWhereNoOneReadsNeitherStopsNorWaits() {
        signal(SIGPIPE, SIG_IGN)
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        close(ends[0])
        Console.put(String(repeating: "x", count: 100_000), to: ends[1])
        close(ends[1])
        // A descriptor that is not open at all.
        Console.put("nobody", to: ends[1])
        // And one that reads it all.
        #expect(pipe(&ends) == 0)
        Console.put("héllo\n", to: ends[1])
        close(ends[1])
        var buffer = [UInt8](repeating: 0, count: 64)
        let got = read(ends[0], &buffer, 64)
        close(ends[0])
        #expect(String(decoding: buffer[..<max(0, got)], as: UTF8.self) == "héllo\n")
    }
}
