import Foundation
import HTTPTypes
import Testing
import UploadCore
import UploadTesting
@testable import Receiver
import UploadProtocols

/// Numbers a hostile client can put in a head, through every header the receiver reads, in every
/// method: nothing may trap, and the receiver answers the next client as before.
@Suite(.serialized, .timeLimit(.minutes(5))) struct HostileNumberTests {
    /// 0, -1, 2^53, 2^53 + 1, the sf-integer maximum, 2^63 - 1, 2^63, 2^64 - 1, 20 digits, and forms
    /// that are not integers at all.
    static let extremes = [
        "0", "-1", "9007199254740992", "9007199254740993", "999999999999999", "9223372036854775807",
        "9223372036854775808", "18446744073709551615", "99999999999999999999", "00000000000000000001",
        "1e3", "0x10", "+5", " 7 ", "",
    ]
    static let numericHeaders = ["Content-Length", "Upload-Offset", "Upload-Length", "Upload-Draft-Interop-Version"]
    static let methods: [HTTPRequest.Method] = [.post, .patch, .head, .delete, .get, .options, .put]
    static let token = "0123456789abcdef0123456789abcdef"

    /// Every extreme in every numeric header, alone and beside every other extreme in the
    /// header it is added to, on every method and target: the head's decision is made and none traps.
    @Test func theHeadDecisionTakesEveryExtremeInEveryHeaderAndMethod() {
        let configuration = ReceiverConfiguration(path: "/photo", maxSize: 1 << 30)
        var decided = 0
        for method in Self.methods {
            for path in ["/photo", "/resumable/" + Self.token, "*"] {
                for header in Self.numericHeaders {
                    for value in Self.extremes {
                        for other in Self.extremes {
                            for complete in ["?0", "?1"] {
                                var head = HTTPRequest(method: method, scheme: nil, authority: "x", path: path)
                                head.headerFields[.contentType] = method == .patch ? "application/partial-upload" : "multipart/form-data; boundary=b"
                                head.headerFields[HTTPField.Name("Upload-Complete")!] = complete
                                // The header under test, and its partner in a sum.
                                let partner = header == "Content-Length" ? "Upload-Offset" : "Content-Length"
                                head.headerFields[HTTPField.Name(partner)!] = other
                                head.headerFields[HTTPField.Name(header)!] = value
                                _ = UploadAdmission.decide(head, configuration: configuration)
                                decided += 1
                            }
                        }
                    }
                }
            }
        }
        #expect(decided == Self.methods.count * 3 * Self.numericHeaders.count * Self.extremes.count * Self.extremes.count * 2)
    }

    @Test func theOffsetAndTheDeclaredLengthThatOverflowedAreRefusedAsTooLarge() {
        var head = HTTPRequest(method: .patch, scheme: nil, authority: "x", path: "/resumable/" + Self.token)
        head.headerFields[.contentType] = "application/partial-upload"
        head.headerFields[.contentLength] = "9223372036854775807"
        head.headerFields[HTTPField.Name("Upload-Offset")!] = "999999999999999"
        head.headerFields[HTTPField.Name("Upload-Complete")!] = "?0"
        guard case .refuse(let refusal) = UploadAdmission.decide(head, configuration: ReceiverConfiguration(maxSize: 1 << 30)) else {
            Issue.record("accepted")
            return
        }
        #expect(refusal.status.code == 413)
        // A sum that would overflow if the two were added unchecked.
        head.headerFields[.contentLength] = "9007199254740992"
        guard case .refuse(let second) = UploadAdmission.decide(head, configuration: ReceiverConfiguration(maxSize: 1 << 30)) else {
            Issue.record("accepted")
            return
        }
        #expect(second.status.code == 413)
    }

    @Test func boundedNumbersTakeDigitsOnlyWithinTheirBound() {
        #expect(BoundedNumber.decimal("0") == 0)
        #expect(BoundedNumber.decimal(" 42\t") == 42)
        #expect(BoundedNumber.decimal("9007199254740992") == 1 << 53)
        #expect(BoundedNumber.decimal("9007199254740993") == nil)
        #expect(BoundedNumber.decimal("9223372036854775807", max: .max) == .max)
        #expect(BoundedNumber.decimal("9223372036854775808", max: .max) == nil)
        #expect(BoundedNumber.decimal("99999999999999999999", max: .max) == nil)
        for bad in ["", " ", "-1", "+1", "1 2", "1e3", "0x10", "１２"] { #expect(BoundedNumber.decimal(bad) == nil, "\(bad)") }
        #expect(BoundedNumber.length(nil) == .none)
        #expect(BoundedNumber.length("10") == .bytes(10))
        #expect(BoundedNumber.length("99999999999999999999") == .beyondLimit)
        #expect(BoundedNumber.length("9223372036854775807") == .beyondLimit)
        #expect(BoundedNumber.length("-1") == .malformed)
        #expect(BoundedNumber.sum(.max, 1) == nil)
        #expect(BoundedNumber.sum(1, 2) == 3)
        #expect(BoundedNumber.integer(.infinity) == nil)
        #expect(BoundedNumber.integer(Double(Int64.max)) == nil)
        #expect(ResumableFields.integer("1000000000000000") == nil, "sf-integers have at most 15 digits")
        #expect(ResumableFields.integer("999999999999999") == 999_999_999_999_999)
        #expect(ResumableFields.version("99999999999999999999") == nil)
    }

    /// Over real connections: the issue's request, then every extreme in every header on every
    /// method (against an upload resource that exists, so the state's checks run too). Every
    /// connection gets an answer that is not a server error, and a plain upload still lands.
    @Test func noHeadStopsTheReceiver() async throws {
        let receiver = try await ReceiverHarness.start(
            limits: .init(headerTimeout: .seconds(2), idleTimeout: .seconds(2), bodyStallTimeout: .milliseconds(300), shutdownGrace: .milliseconds(300)))
        defer { Task { await receiver.cleanUp() } }
        let created = try await exchange([
            "-X", "POST", "-H", "Content-Type: multipart/form-data; boundary=b", "-H", "Upload-Complete: ?0",
            "--data-binary", "", receiver.url,
        ])
        let resource = try #require(created["Location"].flatMap { URL(string: $0)?.path })
        let port = receiver.port

        @Sendable func answer(_ head: String) throws -> String {
            let connection = try RawConnection.connect(to: port)
            defer { connection.close() }
            connection.send(Array(head.utf8))
            return connection.readUntilClosed(timeout: 10).text
        }
        let issue =
            "PATCH /resumable/\(Self.token) HTTP/1.1\r\nHost: x\r\nUpload-Offset: 999999999999999\r\nUpload-Complete: ?0\r\n"
            + "Content-Type: application/partial-upload\r\nContent-Length: 9223372036854775807\r\nConnection: close\r\n\r\n"
        let first = try await offPool { try answer(issue) }
        #expect(first.hasPrefix("HTTP/1.1 413 "), "\(first)")

        var heads: [String] = []
        for method in ["POST", "PATCH", "HEAD", "DELETE", "GET", "OPTIONS", "PUT"] {
            for header in Self.numericHeaders {
                for value in Self.extremes where !value.isEmpty {
                    let path = method == "POST" || method == "OPTIONS" ? "/photo" : resource
                    let type = method == "PATCH" ? "application/partial-upload" : "multipart/form-data; boundary=b"
                    var text = "\(method) \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: \(type)\r\nUpload-Complete: ?0\r\nConnection: close\r\n"
                    if header != "Upload-Offset" { text += "Upload-Offset: 999999999999999\r\n" }
                    if header != "Content-Length" { text += "Content-Length: 0\r\n" }
                    text += "\(header): \(value)\r\n\r\n"
                    heads.append(text)
                }
            }
        }
        let answers = try await withThrowingTaskGroup(of: String.self) { group in
            var answers: [String] = []
            var iterator = heads.makeIterator()
            for _ in 0..<8 { if let head = iterator.next() { group.addTask { try await offPool { try answer(head) } } } }
            while let text = try await group.next() {
                answers.append(text)
                if let head = iterator.next() { group.addTask { try await offPool { try answer(head) } } }
            }
            return answers
        }
        #expect(answers.count == heads.count)
        let statuses = answers.map { $0.split(separator: " ").dropFirst().first.map(String.init) ?? "none" }
        #expect(statuses.allSatisfy { $0.hasPrefix("2") || $0.hasPrefix("4") || $0 == "none" }, "\(Set(statuses))")

        let path = try TestFiles.writeImage(at: receiver.root + "/after.png", size: 2000)
        let after = try await exchange(["-F", "photo=@\(path)", receiver.url])
        #expect(after.status == 200)
    }
}

/// What untrusted clients leave behind is bounded: a refused upload keeps nothing, and one
/// client's flood of unfinished uploads neither fills the disk nor locks the others out.
@Suite(.serialized, .timeLimit(.minutes(5))) struct HostileResumableTests {
    static let noFile = "--b\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nx\r\n--b--\r\n"

    func resumableFiles(_ receiver: ReceiverHarness) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: receiver.directory + "/.uploadmon-resumable")) ?? []
    }

    @Test func refusedResumableUploadsKeepNothing() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        let port = receiver.port
        let request =
            "POST /photo HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nUpload-Complete: ?1\r\n"
            + "Content-Length: \(Self.noFile.utf8.count)\r\n\r\n" + Self.noFile
        for version in [nil, "6", "8"] as [String?] {
            let answers = try await offPool {
                let connection = try RawConnection.connect(to: port)
                defer { connection.close() }
                var answers: [String] = []
                for _ in 0..<100 {
                    let head =
                        version.map { request.replacingOccurrences(of: "Upload-Complete", with: "Upload-Draft-Interop-Version: \($0)\r\nUpload-Complete") }
                        ?? request
                    connection.send(Array(head.utf8))
                    answers.append(connection.read(until: "\"}", timeout: 120))
                }
                return answers
            }
            #expect(answers.allSatisfy { $0.contains("HTTP/1.1 400 ") && $0.contains("no file in the form field") }, "\(answers.first ?? "")")
            #expect(resumableFiles(receiver).isEmpty, "version \(version ?? "none"): \(resumableFiles(receiver).count) files kept")
        }
    }

    @Test func oneClientsUnfinishedUploadsLeaveOthersServed() async throws {
        let receiver = try await ReceiverHarness.start(resumablePerClient: 20)
        defer { Task { await receiver.cleanUp() } }
        let port = receiver.port
        let statuses = try await offPool {
            let connection = try RawConnection.connect(to: port)
            defer { connection.close() }
            var statuses: [String] = []
            for _ in 0..<300 {
                connection.send(
                    Array(
                        "POST /photo HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nUpload-Complete: ?0\r\nContent-Length: 0\r\n\r\n"
                            .utf8))
                let text = connection.read(until: "\r\n\r\n", timeout: 10)
                statuses.append(String(text.split(separator: " ").dropFirst().first ?? ""))
            }
            return statuses
        }
        #expect(statuses.allSatisfy { $0 == "201" }, "\(Set(statuses))")
        // Twenty kept (each a record and a part file), not three hundred.
        #expect(resumableFiles(receiver).count == 40)
        // Another client (the same machine here, so the same address: its own oldest goes) still creates.
        let created = try await exchange([
            "-X", "POST", "-H", "Content-Type: multipart/form-data; boundary=b", "-H", "Upload-Complete: ?0",
            "--data-binary", "", receiver.url,
        ])
        #expect(created.status == 201)
    }
}
