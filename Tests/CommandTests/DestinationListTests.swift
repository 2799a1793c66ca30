import Testing
import UploadCommands

/// `--to @LIST`: each file to its own URL; every line checked before anything is sent.
@Suite struct DestinationListTests {
    static let u1 = "https://b.s3.amazonaws.com/k1.jpg?X-Amz-Signature=1"
    static let u2 = "https://b.s3.amazonaws.com/k2.jpg?X-Amz-Signature=2"

    @Test func filesAndTheirURLsOrURLsPairedWithTheFilesGiven() throws {
        let named = try DestinationList.parse("# from the demo\n/p/a photo.jpg \(Self.u1)\r\n\n  b.jpg\t\(Self.u2)  \n", name: "l")
        #expect(try named.destinations(for: []).map(\.file) == ["/p/a photo.jpg", "b.jpg"])
        #expect(try named.destinations(for: []).map(\.url) == [Self.u1, Self.u2])
        let bare = try DestinationList.parse("\(Self.u1)\n\(Self.u2)\n", name: "l")
        #expect(try bare.destinations(for: ["x.jpg", "y.jpg"]).map(\.file) == ["x.jpg", "y.jpg"])
        #expect(bare.firstURL == Self.u1)
    }

    static func refusal(_ text: String, files: [String] = []) -> String? {
        do throws(CommandFailure) {
            _ = try DestinationList.parse(text, name: "urls.txt").destinations(for: files)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func whatCannotBeSentAsMeantIsRefusedWithTheReason() {
        #expect(Self.refusal("\(Self.u1)\n", files: ["a", "b"])?.contains("has 1 URL(s) for 2 file(s)") == true)
        #expect(Self.refusal("a.jpg \(Self.u1)\n", files: ["b"])?.contains("names the files itself") == true)
        #expect(Self.refusal("a.jpg \(Self.u1)\n\(Self.u2)\n")?.contains("names a file on some lines and not on others") == true)
        #expect(Self.refusal("# nothing\n\n")?.contains("names no URL") == true)
        #expect(Self.refusal("a.jpg ftp://h/x\n")?.hasPrefix("line 1 of the destination list urls.txt") == true)
        #expect(Self.refusal("a.jpg s3://b/k\n")?.contains("line 1") == true)
        // Another port is another origin: the list's headers and proxy were chosen for one.
        let two = Self.refusal("a \(Self.u1)\nb https://b.s3.amazonaws.com:444/k2.jpg\n")
        #expect(two?.contains("names two origins") == true && two?.contains("(line 2)") == true, "\(two ?? "")")
    }
}
