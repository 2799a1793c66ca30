import Foundation
import Glibc
import Testing
@testable import UploadCommands
import UploadCore
import UploadTesting

/// The demo's own folder and its verdict: a folder of this user's alone (never a name planted
/// in the shared temporary folder), and a failure when a picture that should have arrived did not.
@Suite struct DemoSessionTests {
    static func mode(_ path: String) -> (dir: Bool, owner: uid_t, mode: mode_t)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return (info.st_mode & S_IFMT == S_IFDIR, info.st_uid, info.st_mode & 0o777)
    }

    @Test func theDemosFolderIsTheUsersOwnAndPrivate() throws {
        let temporary = TestFiles.makeTemporaryDirectory("demo-root")
        let own = try DemoSession.defaultRoot(temporary: temporary + "/")
        #expect(own == temporary + "/uploadmon-demo-\(getuid())")
        let made = try #require(Self.mode(own))
        #expect(made.dir && made.owner == getuid() && made.mode == 0o700)
        // Made once, found again (its samples are reused); opened up by hand, made private again.
        chmod(own, 0o777)
        #expect(try DemoSession.defaultRoot(temporary: temporary) == own)
        #expect(Self.mode(own)?.mode == 0o700)
    }

    /// A link planted at the name (another local user can do that in /tmp): not followed; a
    /// fresh private folder serves instead, and where the link points is left alone.
    @Test func aLinkPlantedAtTheNameIsNotFollowed() throws {
        let temporary = TestFiles.makeTemporaryDirectory("demo-link")
        let target = TestFiles.makeTemporaryDirectory("demo-link-target")
        #expect(symlink(target, temporary + "/uploadmon-demo-\(getuid())") == 0)
        let root = try DemoSession.defaultRoot(temporary: temporary)
        #expect(root.hasPrefix(temporary + "/uploadmon-demo-") && root != temporary + "/uploadmon-demo-\(getuid())")
        let made = try #require(Self.mode(root))
        #expect(made.dir && made.owner == getuid() && made.mode == 0o700)
        #expect(try FileManager.default.contentsOfDirectory(atPath: target).isEmpty)
    }

    /// Another user's folder at the name (left by their demo): a fresh one of this user's.
    @Test(.enabled(if: getuid() == 0, "needs root to make a folder another user owns"))
    func anotherUsersFolderAtTheNameIsLeftAlone() throws {
        let temporary = TestFiles.makeTemporaryDirectory("demo-other")
        let theirs = temporary + "/uploadmon-demo-\(getuid())"
        #expect(mkdir(theirs, 0o755) == 0 && chown(theirs, 65534, 65534) == 0)
        let root = try DemoSession.defaultRoot(temporary: temporary)
        #expect(root != theirs && Self.mode(root)?.owner == getuid())
    }

    static func tracker(_ outcomes: [(String, UploadOutcome?)]) -> TransferTracker {
        var tracker = TransferTracker()
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        for (index, (name, outcome)) in outcomes.enumerated() {
            let id = UploadID(index + 1)
            tracker.apply(
                .queued(
                    UploadRecord(
                        id: id, name: name, path: "/s/" + name, url: "http://127.0.0.1:1/photo", origin: "demo",
                        fileSize: 10, createdAt: date)), now: 0, date: date)
            if let outcome { tracker.apply(.finished(id, outcome), now: 1, date: date) }
        }
        return tracker
    }

    @Test func everyPictureButTheRefusedSampleMustArrive() {
        let fine = Self.tracker([("sunrise.png", .answered(status: 200)), (DemoSamples.refusedName, .answered(status: 415))])
        #expect(DemoSession.missing(fine).isEmpty)
        let denied = UploadFailure(.cannotConnect, "Permission denied", code: 13)
        let broken = Self.tracker([
            ("sunrise.png", .failed(denied)), ("city-night.png", .answered(status: 500)), ("tiny.png", nil),
            (DemoSamples.refusedName, .failed(denied)),
        ])
        let missing = DemoSession.missing(broken)
        #expect(missing.map(\.name) == ["sunrise.png", "city-night.png", "tiny.png"])
        #expect(missing.map(\.failed) == [true, false, true])
        #expect(missing[0].why.contains("Permission denied") && missing[1].why == "answered 500")
    }
}
