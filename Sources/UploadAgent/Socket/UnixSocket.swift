import Foundation
import Glibc

/// A socket error with the call that failed and the system's reason.
public struct SocketError: Error, Sendable, CustomStringConvertible {
    public let operation: String
    public let path: String
    public let code: Int32

    public var description: String { "\(operation) \(path): \(String(cString: strerror(code)))" }
    /// Nobody listens there (no socket file, or a stale one).
    public var meansNoAgent: Bool { code == ENOENT || code == ECONNREFUSED }
}

/// Plain POSIX Unix-domain stream sockets: the agent has few clients and short messages, so a
/// thread per connection is simpler and easier to reason about than an event loop.
public enum UnixSocket {
    /// Binds and listens at `path` (in a private directory) with mode 0600, replacing a stale socket file.
    /// The caller holds the agent lock, so no live agent can be listening there.
    public static func listen(path: String) throws(SocketError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError(operation: "socket", path: path, code: errno) }
        unlink(path)
        // No umask dance (it is process-wide, and other threads create files): the socket is
        // made in a 0700 directory of ours, so nobody else can reach it before the chmod.
        let bound = withAddress(path) { bind(fd, $0, $1) }
        guard bound.result == 0 else {
            close(fd)
            throw SocketError(operation: "bind", path: path, code: bound.code)
        }
        guard chmod(path, 0o600) == 0 else {
            let code = errno
            close(fd)
            throw SocketError(operation: "chmod 600", path: path, code: code)
        }
        guard Glibc.listen(fd, 64) == 0 else {
            let code = errno
            close(fd)
            throw SocketError(operation: "listen", path: path, code: code)
        }
        return fd
    }

    /// A stream socket connected to `path`, close-on-exec.
    public static func connect(path: String) throws(SocketError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError(operation: "socket", path: path, code: errno) }
        let connected = withAddress(path) { Glibc.connect(fd, $0, $1) }
        guard connected.result == 0 else {
            close(fd)
            throw SocketError(operation: "connect to", path: path, code: connected.code)
        }
        return fd
    }

    private static func withAddress(
        _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32
    ) -> (result: Int32, code: Int32) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return (-1, ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return (result, result == 0 ? 0 : errno)
    }

    /// The connected peer's process credentials (`SO_PEERCRED`), as the kernel recorded them
    /// at connect time; the peer cannot forge them.
    public static func peerCredentials(_ fd: Int32) -> PeerCredentials? {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; } (Glibc hides it behind _GNU_SOURCE)
        var raw: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &raw, &length) == 0, length == 12 else { return nil }
        return PeerCredentials(pid: raw.0, uid: raw.1, gid: raw.2)
    }
}

/// Who is on the other end of a Unix socket (`SO_PEERCRED`).
public struct PeerCredentials: Sendable, Hashable {
    public let pid: Int32
    public let uid: UInt32
    public let gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }
}

/// Who may talk to the agent: only processes of the user that runs it. Root gets no exception:
/// the journal holds this user's request headers, and root can read the files anyway.
public enum PeerPolicy {
    /// Whether `peer` may talk to an agent running as `agentUID`, or why not.
    public static func admits(_ peer: PeerCredentials?, agentUID: UInt32) -> Result<Void, PeerRefusal> {
        guard let peer else { return .failure(PeerRefusal(reason: "the peer's credentials could not be read")) }
        guard peer.uid == agentUID else {
            return .failure(PeerRefusal(reason: "uid \(peer.uid) (pid \(peer.pid)) is not the agent's user (uid \(agentUID))"))
        }
        return .success(())
    }
}

/// Why a connection to the agent is refused: another user, or credentials that cannot be read.
public struct PeerRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    public let reason: String
    public var description: String { "connection refused: \(reason)" }
}
