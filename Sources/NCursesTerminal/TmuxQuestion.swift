import Glibc
import UploadCore

/// Runs `tmux` (found on PATH) with the arguments and returns what it printed, or nil when it
/// cannot be run, fails, or takes longer than `timeoutMilliseconds`: a question for the tmux
/// server this process runs under (its socket is in `TMUX`, which the child inherits).
enum TmuxQuestion {
    static let timeoutMilliseconds = 500

    static func output(_ arguments: [String]) -> String? {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { return nil }
        _ = fcntl(pipeEnds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipeEnds[1], F_SETFD, FD_CLOEXEC)
        defer { close(pipeEnds[0]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ)
        close(pipeEnds[1])
        guard spawned == 0 else { return nil }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        let deadline = Int(HouseClock.system.monotonic() * 1000) + timeoutMilliseconds
        var finished = false
        while output.count < 4096 {
            let left = deadline - Int(HouseClock.system.monotonic() * 1000)
            guard left > 0 else { break }
            var fd = pollfd(fd: pipeEnds[0], events: Int16(POLLIN), revents: 0)
            let ready = poll(&fd, 1, Int32(left))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { break }
            let n = buffer.withUnsafeMutableBytes { read(pipeEnds[0], $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                finished = n == 0
                break
            }
            output += buffer[0..<n]
        }
        if !finished { kill(pid, SIGKILL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard finished, status == 0 else { return nil }
        return String(decoding: output, as: UTF8.self)
    }
}
