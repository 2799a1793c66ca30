/// The client side of a SOCKS5 handshake (RFC 1928) with the username/password login of
/// RFC 1929, as a value: bytes from the proxy in, bytes to send and the outcome out. No I/O: the
/// connection that carries it (`SOCKS5Connector`) only writes what it is told.
///
/// The greeting offers "no login" and, when the proxy URL has one, "username/password"; the
/// proxy picks. Then CONNECT to the destination: a name (resolved at the proxy, `socks5h://`) or
/// an address (resolved here first, `socks5://`).
public struct SOCKS5Handshake: Sendable {
    /// Where the proxy is asked to connect.
    public enum Destination: Sendable, Equatable {
        /// A host name the proxy resolves (at most 255 bytes).
        case name(String)
        /// An IPv4 address, 4 bytes.
        case ipv4([UInt8])
        /// An IPv6 address, 16 bytes.
        case ipv6([UInt8])
    }

    /// Why a handshake failed, said so a person can act on it.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// The proxy took none of the ways to log in offered.
        case noAcceptableMethod(offeredLogin: Bool)
        /// The proxy asked for a login and none was given.
        case loginNeeded
        /// The proxy refused the login given.
        case loginRefused
        /// The proxy could not or would not connect to the destination (RFC 1928 reply code).
        case connectFailed(reply: UInt8)
        /// The proxy's answer was not SOCKS5.
        case malformed(String)

        public var description: String {
            switch self {
            case .noAcceptableMethod(let offeredLogin):
                offeredLogin
                    ? "it accepts neither no login nor a username and password"
                    : "it wants a login; give it in the proxy URL, socks5h://user:password@host:port"
            case .loginNeeded:
                "it wants a login; give it in the proxy URL, socks5h://user:password@host:port"
            case .loginRefused:
                "it refused the login given in its URL"
            case .connectFailed(let reply):
                "it could not connect to the server: " + Self.replyText(reply)
            case .malformed(let what):
                "its answer is not SOCKS5 (\(what))"
            }
        }

        /// Whether trying again may help: the proxy could not reach the server (unreachable,
        /// refused, timed out), as a direct connection that failed so would be retried. A login
        /// or a rule that refuses stays refused.
        public var isTransient: Bool {
            if case .connectFailed(let reply) = self { return [1, 3, 4, 5, 6].contains(reply) }
            return false
        }

        /// RFC 1928 section 6's reply field, in words.
        public static func replyText(_ reply: UInt8) -> String {
            switch reply {
            case 1: "general SOCKS server failure (reply 1)"
            case 2: "not allowed by the proxy's rules (reply 2)"
            case 3: "network unreachable (reply 3)"
            case 4: "host unreachable (reply 4)"
            case 5: "connection refused (reply 5)"
            case 6: "timed out (reply 6, TTL expired)"
            case 7: "command not supported (reply 7)"
            case 8: "address type not supported (reply 8)"
            default: "reply \(reply)"
            }
        }
    }

    /// What to do after the proxy's bytes were taken in.
    public enum Step: Sendable, Equatable {
        /// Nothing yet: the answer is not complete.
        case wait
        /// Send these bytes to the proxy.
        case send([UInt8])
        /// The tunnel is open; bytes that came after the proxy's answer belong to the server.
        case established(leftover: [UInt8])
        case failed(Refusal)
    }

    private enum State: Sendable {
        case greeted
        case loggingIn
        case connecting
        case done
    }

    public let destination: Destination
    public let port: UInt16
    public let login: (user: String, password: String)?
    private var state: State = .greeted
    private var buffer: [UInt8] = []

    /// The login's parts must each fit in 1..255 bytes (RFC 1929); `ProxyTarget` checks that.
    public init(destination: Destination, port: UInt16, login: (user: String, password: String)? = nil) {
        self.destination = destination
        self.port = port
        self.login = login
    }

    /// The greeting to send first: version 5 and the login methods offered.
    public var greeting: [UInt8] {
        login == nil ? [5, 1, 0x00] : [5, 2, 0x00, 0x02]
    }

    /// Takes in bytes from the proxy.
    public mutating func receive(_ bytes: [UInt8]) -> Step {
        guard state != .done else { return .wait }
        buffer += bytes
        let step = advance()
        switch step {
        case .failed, .established: state = .done
        case .wait, .send: break
        }
        return step
    }

    private mutating func advance() -> Step {
        switch state {
        case .greeted:
            guard buffer.count >= 2 else { return .wait }
            guard buffer[0] == 5 else { return .failed(.malformed("version \(buffer[0]) in its method choice")) }
            let method = buffer[1]
            buffer.removeFirst(2)
            switch method {
            case 0x00:
                state = .connecting
                return .send(connectRequest)
            case 0x02:
                guard let login else { return .failed(.loginNeeded) }
                state = .loggingIn
                let user = Array(login.user.utf8)
                let password = Array(login.password.utf8)
                return .send([1, UInt8(user.count)] + user + [UInt8(password.count)] + password)
            case 0xFF:
                return .failed(.noAcceptableMethod(offeredLogin: login != nil))
            default:
                return .failed(.malformed("it chose method \(method), which was not offered"))
            }
        case .loggingIn:
            guard buffer.count >= 2 else { return .wait }
            guard buffer[0] == 1 else { return .failed(.malformed("version \(buffer[0]) in its login answer")) }
            guard buffer[1] == 0 else { return .failed(.loginRefused) }
            buffer.removeFirst(2)
            state = .connecting
            return .send(connectRequest)
        case .connecting:
            guard buffer.count >= 5 else { return .wait }
            guard buffer[0] == 5 else { return .failed(.malformed("version \(buffer[0]) in its reply")) }
            guard buffer[1] == 0 else { return .failed(.connectFailed(reply: buffer[1])) }
            switch Self.addressField(buffer, at: 3) {
            case .incomplete: return .wait
            case .unknownType(let type): return .failed(.malformed("address type \(type) in its reply"))
            case .complete(let end, _, _): return .established(leftover: Array(buffer[end...]))
            }
        case .done:
            return .wait
        }
    }

    /// The address part of a SOCKS5 request or reply (ATYP, ADDR, PORT), read from `start`.
    public enum AddressField: Sendable, Equatable {
        /// More bytes are needed.
        case incomplete
        case unknownType(UInt8)
        /// The message ends at `end`; what it names.
        case complete(end: Int, destination: Destination, port: UInt16)
    }

    /// Reads the address part at `start` of `bytes`: the one rule for the proxy's replies here
    /// and the requests `SOCKSBridge` takes.
    public static func addressField(_ bytes: [UInt8], at start: Int) -> AddressField {
        guard bytes.count > start + 1 else { return .incomplete }
        let length: Int
        switch bytes[start] {
        case 1: length = 4
        case 3: length = 1 + Int(bytes[start + 1])
        case 4: length = 16
        default: return .unknownType(bytes[start])
        }
        let end = start + 1 + length + 2
        guard bytes.count >= end else { return .incomplete }
        let address = Array(bytes[(start + 1)..<(start + 1 + length)])
        let destination: Destination =
            switch bytes[start] {
            case 1: .ipv4(address)
            case 4: .ipv6(address)
            default: .name(String(decoding: address.dropFirst(), as: UTF8.self))
            }
        return .complete(end: end, destination: destination, port: UInt16(bytes[end - 2]) << 8 | UInt16(bytes[end - 1]))
    }

    /// CONNECT to the destination.
    private var connectRequest: [UInt8] {
        var request: [UInt8] = [5, 1, 0]
        switch destination {
        case .name(let name):
            let bytes = Array(name.utf8.prefix(255))
            request += [3, UInt8(bytes.count)] + bytes
        case .ipv4(let bytes):
            request += [1] + bytes
        case .ipv6(let bytes):
            request += [4] + bytes
        }
        return request + [UInt8(port >> 8), UInt8(port & 0xFF)]
    }
}
