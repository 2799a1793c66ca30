import Foundation
import Glibc
import NIOPosix
import Testing
@testable import UploadClient
import UploadCore
import UploadTesting

/// The loopback bridge to a SOCKS5 proxy logs in with the proxy URL's credentials, and any user
/// of the machine can reach a loopback port: it serves this process's own connections only.
@Suite struct SOCKSBridgeTests {
    @Test func onlyThisProcessIsServed() async throws {
        // Sockets and a child process block: off the cooperative threads other tests share.
        let (own, other) = try await offPool { try Self.greetFromHereAndFromAnotherProcess() }
        // This process: the greeting is answered ("no login needed").
        #expect(own == [5, 0])
        // Another process (here python3): closed (or reset) without a word.
        #expect(other == "closed", "\(other)")
    }

    /// The bridge's first answer to a greeting from this process, and what python3 got.
    static func greetFromHereAndFromAnotherProcess() throws -> (own: [UInt8], other: String) {
        let bridge = try SOCKSBridge(
            proxy: try ProxyTarget(parsing: "socks5h://ann:secret@127.0.0.1:9"),
            group: MultiThreadedEventLoopGroup.singleton, timeout: .seconds(5))
        defer { bridge.close() }
        let own = try RawConnection.connect(to: bridge.port)
        own.send([5, 1, 0])
        let answer = Array(own.readAll(idle: 0.5).prefix(2))
        own.close()

        return (answer, try greetFromPython(port: bridge.port))
    }

    /// What python3 got when it greeted the bridge on `port`, from `source` (address and port) if given.
    static func greetFromPython(port: Int, source: (String, Int)? = nil) throws -> String {
        let other = Process()
        other.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        other.arguments =
            [
                "python3", "-c",
                """
                import socket, sys
                s = socket.socket()
                if len(sys.argv) > 3:
                    s.bind((sys.argv[2], int(sys.argv[3])))
                s.connect(("127.0.0.1", int(sys.argv[1])))
                s.sendall(bytes([5, 1, 0]))
                s.settimeout(5)
                try:
                    data = s.recv(16)
                except socket.timeout:
                    data = b"timeout"
                except ConnectionError:
                    data = b""
                sys.stdout.write(data.hex() or "closed")
                """, String(port),
            ] + (source.map { [$0.0, String($0.1)] } ?? [])
        let pipe = Pipe()
        other.standardOutput = pipe
        try other.run()
        let said = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        other.waitUntilExit()
        return said
    }

    /// Another process binds 127.0.0.2 to the very port this process's live connection to the
    /// bridge uses, and connects from there: matched by ports alone, its row and ours looked
    /// the same and the first won. The whole connection is matched now: it is refused.
    @Test func aConnectionFromAnotherAddressWithOurPortIsRefused() async throws {
        let (own, other) = try await offPool { () throws -> ([UInt8], String) in
            let bridge = try SOCKSBridge(
                proxy: try ProxyTarget(parsing: "socks5h://ann:secret@127.0.0.1:9"),
                group: MultiThreadedEventLoopGroup.singleton, timeout: .seconds(5))
            defer { bridge.close() }
            let ours = try RawConnection.connect(to: bridge.port)
            defer { ours.close() }
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(ours.fd, $0, &length) } }
            let ourPort = Int(UInt16(bigEndian: address.sin_port))
            ours.send([5, 1, 0])
            let answer = Array(ours.readAll(idle: 0.5).prefix(2))
            return (answer, try Self.greetFromPython(port: bridge.port, source: ("127.0.0.2", ourPort)))
        }
        #expect(own == [5, 0])
        #expect(other == "closed", "the other address with our port was served: \(other)")
    }

    @Test func theConnectionTableIsReadAsLinuxWritesIt() throws {
        let folder = TestFiles.makeTemporaryDirectory("proctcp")
        let table = """
              sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
               0: 0100007F:A3C1 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 4242 1 0
            """
        _ = FileManager.default.createFile(atPath: folder + "/tcp", contents: Data(table.utf8))
        let loopback = UInt32(0x0100007F)
        func end(_ port: Int, _ address: UInt32 = loopback) -> LoopbackPeer.End { LoopbackPeer.End(address: address, port: port) }
        #expect(LoopbackPeer.End(proc: "0100007F:A3C1") == end(0xA3C1))
        // Port 0xA3C1 to 0x1F90, inode 4242: not a socket of this process.
        #expect(!LoopbackPeer.isThisProcess(peer: end(0xA3C1), server: end(0x1F90), table: folder + "/tcp", uid: 0))
        #expect(!LoopbackPeer.isThisProcess(peer: end(1), server: end(2), table: folder + "/tcp"), "no such connection")
        #expect(!LoopbackPeer.isThisProcess(peer: end(1), server: end(2), table: folder + "/missing"))
    }
}
