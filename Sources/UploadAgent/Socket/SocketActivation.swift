import Foundation
import Glibc

/// The listening socket a service manager passed (systemd's socket activation: `LISTEN_PID`
/// names this process, `LISTEN_FDS` counts descriptors from 3).
public enum SocketActivation {
    public static let firstDescriptor: Int32 = 3

    /// The passed listening Unix stream socket and the path it is bound to, or nil when none
    /// was passed. The variables are removed so that nothing this process starts takes them
    /// for its own. A passed descriptor that is not such a socket is an error that says so.
    public static func inheritedListener() throws(SocketError) -> (fd: Int32, path: String)? {
        let environment = ProcessInfo.processInfo.environment
        defer {
            unsetenv("LISTEN_PID")
            unsetenv("LISTEN_FDS")
            unsetenv("LISTEN_FDNAMES")
        }
        guard let pid = environment["LISTEN_PID"].flatMap(Int32.init), pid == getpid(),
            let count = environment["LISTEN_FDS"].flatMap(Int32.init), count >= 1
        else { return nil }
        let fd = firstDescriptor
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        guard let path = listeningPath(fd) else {
            throw SocketError(operation: "use the socket passed as descriptor 3 (LISTEN_FDS)", path: "", code: ENOTSOCK)
        }
        return (fd, path)
    }

    /// The path `fd` is bound to, if it is a listening Unix stream socket.
    static func listeningPath(_ fd: Int32) -> String? {
        func option(_ name: Int32) -> Int32? {
            var value: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            return getsockopt(fd, SOL_SOCKET, name, &value, &length) == 0 ? value : nil
        }
        guard option(SO_DOMAIN) == AF_UNIX, option(SO_TYPE) == Int32(SOCK_STREAM.rawValue), option(SO_ACCEPTCONN) == 1 else { return nil }
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { return nil }
        return withUnsafeBytes(of: address.sun_path) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
