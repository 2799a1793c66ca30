import Testing
import UploadCore

/// The SOCKS5 client handshake (RFC 1928, login by RFC 1929), answer by answer.
@Suite struct SOCKS5HandshakeTests {
    @Test func withoutALoginItOffersNoneAndConnectsByName() {
        var handshake = SOCKS5Handshake(destination: .name("photos.example"), port: 8080)
        #expect(handshake.greeting == [5, 1, 0])
        let request = handshake.receive([5, 0])
        #expect(request == .send([5, 1, 0, 3, 14] + Array("photos.example".utf8) + [0x1F, 0x90]))
        // The reply, split across reads, with a bound IPv4 address; then the server's first bytes.
        #expect(handshake.receive([5, 0, 0]) == .wait)
        #expect(handshake.receive([1, 10, 0, 0, 1]) == .wait)
        #expect(handshake.receive([0x04, 0x38, 72, 84]) == .established(leftover: [72, 84]))
        #expect(handshake.receive([1, 2, 3]) == .wait, "nothing after the end")
    }

    @Test func addressesGoAsAddresses() {
        var v4 = SOCKS5Handshake(destination: .ipv4([127, 0, 0, 1]), port: 80)
        #expect(v4.receive([5, 0]) == .send([5, 1, 0, 1, 127, 0, 0, 1, 0, 80]))
        var v6 = SOCKS5Handshake(destination: .ipv6(Array(repeating: 0, count: 15) + [1]), port: 443)
        #expect(v6.receive([5, 0]) == .send([5, 1, 0, 4] + Array(repeating: 0, count: 15) + [1, 1, 0xBB]))
        // A reply bound to a name, then to an IPv6 address: both read to their end.
        #expect(v4.receive([5, 0, 0, 3, 2, 0x61, 0x62, 0, 80]) == .established(leftover: []))
        #expect(v6.receive([5, 0, 0, 4] + Array(repeating: 0, count: 16) + [0, 1, 9]) == .established(leftover: [9]))
    }

    @Test func aLoginIsOfferedAndSentWhenTheProxyAsks() {
        var handshake = SOCKS5Handshake(destination: .name("h"), port: 80, login: (user: "ann", password: "pw"))
        #expect(handshake.greeting == [5, 2, 0, 2])
        #expect(handshake.receive([5, 2]) == .send([1, 3, 0x61, 0x6E, 0x6E, 2, 0x70, 0x77]))
        #expect(handshake.receive([1]) == .wait)
        #expect(handshake.receive([0]) == .send([5, 1, 0, 3, 1, 0x68, 0, 80]))
        #expect(handshake.receive([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]) == .established(leftover: []))

        // A proxy that needs no login is not given one.
        var open = SOCKS5Handshake(destination: .name("h"), port: 80, login: (user: "ann", password: "pw"))
        #expect(open.receive([5, 0]) == .send([5, 1, 0, 3, 1, 0x68, 0, 80]))
    }

    @Test func refusalsSayWhyAndWhetherTryingAgainCanHelp() {
        var refusedLogin = SOCKS5Handshake(destination: .name("h"), port: 80, login: (user: "ann", password: "bad"))
        _ = refusedLogin.receive([5, 2])
        #expect(refusedLogin.receive([1, 1]) == .failed(.loginRefused))
        #expect("\(SOCKS5Handshake.Refusal.loginRefused)" == "it refused the login given in its URL")

        var noLogin = SOCKS5Handshake(destination: .name("h"), port: 80)
        #expect(noLogin.receive([5, 0xFF]) == .failed(.noAcceptableMethod(offeredLogin: false)))
        #expect("\(SOCKS5Handshake.Refusal.noAcceptableMethod(offeredLogin: false))".contains("socks5h://user:password@host:port"))
        var asksAnyway = SOCKS5Handshake(destination: .name("h"), port: 80)
        #expect(asksAnyway.receive([5, 2]) == .failed(.loginNeeded))

        var unreachable = SOCKS5Handshake(destination: .name("h"), port: 80)
        _ = unreachable.receive([5, 0])
        #expect(unreachable.receive([5, 4, 0, 1, 0, 0, 0, 0, 0, 0]) == .failed(.connectFailed(reply: 4)))
        #expect(SOCKS5Handshake.Refusal.connectFailed(reply: 4).isTransient)
        #expect(SOCKS5Handshake.Refusal.connectFailed(reply: 5).description.contains("connection refused (reply 5)"))
        #expect(!SOCKS5Handshake.Refusal.connectFailed(reply: 2).isTransient, "the proxy's rules do not change")
        #expect(!SOCKS5Handshake.Refusal.loginRefused.isTransient)

        var notSOCKS = SOCKS5Handshake(destination: .name("h"), port: 80)
        #expect(notSOCKS.receive(Array("HTTP/1.1 400".utf8)) == .failed(.malformed("version 72 in its method choice")))
        var unoffered = SOCKS5Handshake(destination: .name("h"), port: 80)
        #expect(unoffered.receive([5, 1]) == .failed(.malformed("it chose method 1, which was not offered")))
    }

    @Test func theAddressPartIsReadAlikeInRequestsAndReplies() {
        typealias H = SOCKS5Handshake
        #expect(H.addressField([5, 1, 0, 1, 10, 0, 0, 1, 0, 80, 9], at: 3) == .complete(end: 10, destination: .ipv4([10, 0, 0, 1]), port: 80))
        #expect(H.addressField([5, 1, 0, 3, 1, 0x68, 0x01, 0xBB], at: 3) == .complete(end: 8, destination: .name("h"), port: 443))
        #expect(
            H.addressField([5, 1, 0, 4] + Array(repeating: 0, count: 15) + [1, 0, 22], at: 3)
                == .complete(end: 22, destination: .ipv6(Array(repeating: 0, count: 15) + [1]), port: 22))
        #expect(H.addressField([5, 1, 0, 3, 5, 0x61], at: 3) == .incomplete)
        #expect(H.addressField([5, 1, 0], at: 3) == .incomplete)
        #expect(H.addressField([5, 1, 0, 9, 0, 0], at: 3) == .unknownType(9))
    }
}
