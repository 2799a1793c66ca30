import Glibc

/// How many connections the receiver can hold without running out of file descriptors: each
/// upload in progress holds its socket and its partial file, and the process needs a few more
/// for itself. Past the cap new connections are answered 503 at once instead of failing
/// `accept` (which leaves every later client hanging).
enum ConnectionBudget {
    static let reserved = 64

    static func cap(requested: Int, descriptors: Int) -> Int {
        max(1, min(requested, (descriptors - reserved) / 2))
    }

    /// Raises the soft descriptor limit to the hard one (a common default is 1024 soft against
    /// a much higher hard limit) and returns the limit in force.
    static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur > rlim_t(Int32.max) ? Int(Int32.max) : Int(limit.rlim_cur)
    }
}
