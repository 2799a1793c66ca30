import Glibc
import Testing
@testable import MonitorRuntime

/// The loop is woken once for inputs that come together, and never left asleep with inputs
/// waiting.
@Suite struct InboxTests {
    /// Bytes waiting in the wake pipe.
    static func waiting(_ inbox: Inbox) -> Int32 {
        var count: Int32 = 0
        _ = ioctl(inbox.readFD, UInt(FIONREAD), &count)
        return count
    }

    @Test func inputsThatComeWhileOthersWaitDoNotWakeTheLoopAgain() {
        let inbox = Inbox()
        #expect(Self.waiting(inbox) == 0)
        for _ in 0..<1_000 { inbox.post(.signal(SIGWINCH)) }
        #expect(Self.waiting(inbox) == 1, "one wake for a burst")
        let (first, more) = inbox.take(atMost: 600)
        #expect(first.count == 600 && more)
        // Left behind: the loop knows (`more`) and does not sleep; a post adds no wake.
        inbox.post(.signal(SIGWINCH))
        #expect(Self.waiting(inbox) == 0)
        let (rest, after) = inbox.take(atMost: 600)
        #expect(rest.count == 401 && !after)
        // Empty again: the next input wakes the loop.
        inbox.post(.signal(SIGINT))
        #expect(Self.waiting(inbox) == 1)
        #expect(inbox.take().count == 1)
        #expect(Self.waiting(inbox) == 0)
    }
}
