import Foundation
import Glibc
import Testing
import UploadAgent
import UploadCore

/// The agent's line connection: lines queued while a write is under way go out together, and a
/// reader takes what one read brought without waiting for more.
@Suite(.timeLimit(.minutes(1))) struct LineConnectionTests {
    func pair() -> (LineConnection, LineConnection) {
        var fds: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        return (LineConnection(fd: fds[0]), LineConnection(fd: fds[1]))
    }

    @Test func manyLinesSentAtOnceArriveWholeAndInOrder() throws {
        let (a, b) = pair()
        let count = 20_000
        for i in 0..<count { #expect(a.send(Data("line \(i) \(String(repeating: "x", count: i % 97))".utf8))) }
        var read = 0
        while read < count, let line = try b.readLine() {
            #expect(String(decoding: line, as: UTF8.self) == "line \(read) \(String(repeating: "x", count: read % 97))")
            read += 1
            while read < count, let more = b.bufferedLine() {
                #expect(String(decoding: more, as: UTF8.self) == "line \(read) \(String(repeating: "x", count: read % 97))")
                read += 1
            }
        }
        #expect(read == count)
        #expect(a.drain(until: .now() + 10))
        a.shutdown()
        #expect(try b.readLine() == nil, "end of stream after the last line")
    }

    @Test func aBufferedLineIsOnlyOneAlreadyReadWhole() throws {
        let (a, b) = pair()
        #expect(b.bufferedLine() == nil, "nothing read yet: nil, without waiting")
        a.sendAndWait(Data("first".utf8))
        a.sendAndWait(Data("second".utf8))
        // A half line is not a line.
        _ = "thi".withCString { Glibc.send(a.fd, $0, 3, 0) }
        var lines: [String] = []
        // The first read may have brought one or both whole lines.
        if let line = try b.readLine() { lines.append(String(decoding: line, as: UTF8.self)) }
        while let line = b.bufferedLine() { lines.append(String(decoding: line, as: UTF8.self)) }
        if lines.count < 2, let line = try b.readLine() { lines.append(String(decoding: line, as: UTF8.self)) }
        #expect(lines == ["first", "second"])
        #expect(b.bufferedLine() == nil, "the half line waits for its end")
        _ = "rd\n".withCString { Glibc.send(a.fd, $0, 3, 0) }
        #expect(try b.readLine().map { String(decoding: $0, as: UTF8.self) } == "third")
    }

    @Test func aPeerThatFallsTooFarBehindIsCutOff() throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        let a = LineConnection(fd: fds[0], maxPendingBytes: 1 << 20)
        defer { close(fds[1]) }
        let line = Data(repeating: UInt8(ascii: "y"), count: 64 << 10)
        var refused = false
        // Nobody reads fds[1]: the socket's buffer fills, then the queue.
        for _ in 0..<200 where !refused { refused = !a.send(line) }
        #expect(refused)
        #expect(a.isClosed)
        #expect(!a.send(Data("after".utf8)))
    }
}
