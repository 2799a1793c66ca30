import Glibc

/// Last-resort terminal repair for crashes: a fatal signal leaves no chance to run `endwin`,
/// so the handler restores the saved tty modes and writes the escapes that leave the alternate
/// screen and show the cursor (only async-signal-safe calls), says where the backtrace goes,
/// and hands the signal to the handler that was there before (the Swift runtime's backtracer,
/// which then writes its backtrace), so the process dies as it would have.
///
/// A stack overflow leaves no stack to run a handler on: the handlers run on an alternate
/// signal stack, which each thread must have of its own (`giveThreadASignalStack`; the loop's
/// thread gets one when it makes the terminal, the main thread has the runtime's).
enum TerminalRestore {
    nonisolated(unsafe) static var saved = termios()
    nonisolated(unsafe) static var haveSaved = false
    /// Whether the screen is curses' (false once closed: a later crash leaves it alone).
    nonisolated(unsafe) static var active = false
    /// The handlers in place before ours, by signal number.
    nonisolated(unsafe) static var previous = UnsafeMutablePointer<sigaction>.allocate(capacity: 32)
    /// Where the backtrace is written (a C string made before any crash), if anywhere.
    nonisolated(unsafe) static var reportPath: UnsafeMutablePointer<CChar>?
    /// The line shown on a crash, made before any crash: a handler may not allocate.
    nonisolated(unsafe) static var notice: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) static var noticeLength = 0
    nonisolated(unsafe) static var installed = false

    static let signals = [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE]

    static func saveModes() {
        haveSaved = tcgetattr(STDIN_FILENO, &saved) == 0
    }

    /// Installs the handlers once per process; `report` is where the Swift runtime's backtrace
    /// is to be written (nil: it goes to standard error, under the restored screen).
    static func installCrashHandlers(report: String?) {
        giveThreadASignalStack()
        active = true
        guard !installed else { return }
        installed = true
        for number in signals {
            var action = sigaction()
            action.sa_flags = SA_ONSTACK | SA_SIGINFO
            action.__sigaction_handler.sa_sigaction = { number, info, context in TerminalRestore.crashed(number, info, context) }
            sigaction(number, &action, previous + Int(number))
        }
        let backtracer = previous[Int(SIGSEGV)].__sigaction_handler.sa_handler
        let runtimeTraces = unsafeBitCast(backtracer, to: Int.self) > 1  // neither SIG_DFL (0) nor SIG_IGN (1)
        let text: String
        if runtimeTraces, let report {
            reportPath = strdup(report)
            text =
                "uploadmon crashed; the terminal was given back. The backtrace is in \(report)"
                + " (please attach it to a report).\r\n"
        } else if runtimeTraces {
            text = "uploadmon crashed; the terminal was given back. The backtrace follows (please attach it to a report).\r\n"
        } else {
            text =
                "uploadmon crashed; the terminal was given back (no backtrace: the Swift runtime's backtracer is off; SWIFT_BACKTRACE=enable=yes turns it on).\r\n"
        }
        notice = strdup(text)
        noticeLength = text.utf8.count
    }

    /// Stops touching the screen on a crash (the terminal was closed normally).
    static func deactivate() { active = false }

    /// An alternate stack for signal handlers on the calling thread, so a stack overflow can
    /// still be reported. Kept for the thread's life (64 KiB plus the runtime's needs).
    static func giveThreadASignalStack() {
        var current = stack_t()
        if sigaltstack(nil, &current) == 0, current.ss_flags & Int32(SS_DISABLE) == 0 { return }
        let size = 256 * 1024
        guard let memory = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), memory != MAP_FAILED else { return }
        var stack = stack_t(ss_sp: memory, ss_flags: 0, ss_size: size)
        sigaltstack(&stack, nil)
    }

    /// The handler: async-signal-safe calls only.
    static func crashed(_ number: Int32, _ info: UnsafeMutablePointer<siginfo_t>?, _ context: UnsafeMutableRawPointer?) {
        if active {
            if haveSaved { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
            // Mouse reporting off too (every mode curses may have turned on), or the shell gets
            // escape sequences for each click.
            let reset: StaticString = "\u{1B}[0m\u{1B}[?1000l\u{1B}[?1002l\u{1B}[?1006l\u{1B}[?25h\u{1B}[?1049l\r\n"
            _ = write(STDOUT_FILENO, reset.utf8Start, reset.utf8CodeUnitCount)
            active = false
        }
        if let notice { _ = write(STDERR_FILENO, notice, noticeLength) }
        if let reportPath {
            let fd = open(reportPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            if fd >= 0 {
                // Not a terminal any more: the backtracer then neither waits for a key (its
                // interactive mode) nor colours the file. It writes to standard output unless
                // told otherwise.
                let nothing = open("/dev/null", O_RDONLY)
                if nothing >= 0 {
                    _ = dup2(nothing, STDIN_FILENO)
                    close(nothing)
                }
                _ = dup2(fd, STDOUT_FILENO)
                _ = dup2(fd, STDERR_FILENO)
                close(fd)
            }
        }
        // The previous handler (the runtime's backtracer) runs now, on this stack with this
        // context; then the default action ends the process: a fault happens again as this
        // returns, a signal sent (abort, kill) is sent again.
        let before = previous[Int(number)]
        let handler = unsafeBitCast(before.__sigaction_handler.sa_handler, to: Int.self)
        if handler > 1 {
            if before.sa_flags & SA_SIGINFO != 0 {
                before.__sigaction_handler.sa_sigaction(number, info, context)
            } else {
                before.__sigaction_handler.sa_handler(number)
            }
        }
        signal(number, SIG_DFL)
        if let info, info.pointee.si_code <= 0 { raise(number) }
    }
}

extension NCursesTerminal {
    /// The Swift runtime reads how to write a crash's backtrace once, as the process starts, and
    /// on a terminal it would wait 30 s for a key and colour the file the monitor names. So a
    /// monitor started without `SWIFT_BACKTRACE` starts itself again with it set (same pid,
    /// same arguments); a value the user set is kept as it is.
    public static func quietBacktraces() {
        guard getenv("SWIFT_BACKTRACE") == nil else { return }
        var path = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &path, path.count - 1)
        guard length > 0 else { return }
        setenv("SWIFT_BACKTRACE", "interactive=no,color=no", 1)
        // By its real path, so the process keeps its name (`exe` otherwise, in ps and top).
        execv(path, CommandLine.unsafeArgv)
        // Not started again (no /proc): crashes still give the terminal back, the backtrace as the runtime chose.
    }
}
