import Glibc

/// Last-resort terminal repair for crashes: a fatal signal leaves no chance to run `endwin`,
/// so the handler restores the saved tty modes and writes the escapes that leave the alternate
/// screen and show the cursor (only async-signal-safe calls), then dies as it would have.
enum TerminalRestore {
    nonisolated(unsafe) static var saved = termios()
    nonisolated(unsafe) static var haveSaved = false

    static func saveModes() {
        haveSaved = tcgetattr(STDIN_FILENO, &saved) == 0
    }

    static func installCrashHandlers() {
        for signal in [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                if TerminalRestore.haveSaved { tcsetattr(STDIN_FILENO, TCSANOW, &TerminalRestore.saved) }
                let reset: StaticString = "\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l\r\n"
                _ = write(STDOUT_FILENO, reset.utf8Start, reset.utf8CodeUnitCount)
                Glibc.signal(number, SIG_DFL)
                raise(number)
            }
            sigaction(signal, &action, nil)
        }
    }
}
