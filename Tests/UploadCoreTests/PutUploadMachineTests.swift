import Testing
import UploadCore
import UploadProtocols

/// A raw `PUT` and, with `--create-dirs`, the WebDAV folders made on its way.
@Suite struct PutUploadMachineTests {
    typealias Machine = PutUploadMachine
    static let token = [RequestHeader(name: "Authorization", value: "Basic YTpi")]

    static func machine(_ url: String = "http://h/dav/a/b/", createDirs: Bool = true, pipe: Bool = false) -> Machine {
        Machine(endpoint: Endpoint(url)!, fileName: "x.jpg", headers: token, canSendAgain: !pipe, createDirs: createDirs, followsOtherOrigins: true)
    }

    static func answer(_ status: Int, _ headers: [(String, String)] = [], body: String = "", sent: Int64 = 0) -> AttemptResult {
        AttemptResult(
            outcome: .answered(status: status),
            response: UploadResponse(status: status, reason: "", headers: headers, body: Array(body.utf8), bodyBytesTotal: Int64(body.utf8.count)),
            bytesSent: sent)
    }

    /// What the machine asks for, as `PUT url` / `MKCOL url`, or the final status.
    static func step(_ next: Machine.Next) -> String {
        switch next {
        case .request(.put(let endpoint, _)): "PUT \(endpoint.url)"
        case .request(.makeCollection(let endpoint, _)): "MKCOL \(endpoint.url)"
        case .finish(let result): "done \(result.response.map { String($0.status) } ?? "-") \(result.outcome)"
        }
    }

    @Test func theFileGoesToTheFolderURLUnderItsName() {
        var m = Self.machine(createDirs: false)
        #expect(m.target.url == "http://h/dav/a/b/x.jpg")
        #expect(Self.step(m.start()) == "PUT http://h/dav/a/b/x.jpg")
        #expect(Self.step(m.answered(Self.answer(201, sent: 10))).hasPrefix("done 201"))
    }

    @Test func withoutCreateDirsAConflictIsTheAnswer() {
        var m = Self.machine(createDirs: false)
        _ = m.start()
        #expect(Self.step(m.answered(Self.answer(409))).hasPrefix("done 409"))
    }

    @Test func oneMissingFolderIsMadeAndTheFileSentAgain() {
        var m = Self.machine()
        _ = m.start()
        #expect(Self.step(m.answered(Self.answer(409, sent: 5))) == "MKCOL http://h/dav/a/b/")
        #expect(Self.step(m.collectionAnswered(Self.answer(201))) == "PUT http://h/dav/a/b/x.jpg")
        let done = m.answered(Self.answer(201, sent: 5))
        #expect(Self.step(done).hasPrefix("done 201"))
        if case .finish(let result) = done { #expect(result.bytesSent == 10) }
    }

    @Test func missingFoldersAreFoundUpwardAndMadeDownward() {
        var m = Self.machine("http://h/dav/a/b/c/")
        _ = m.start()
        #expect(Self.step(m.answered(Self.answer(409))) == "MKCOL http://h/dav/a/b/c/")
        #expect(Self.step(m.collectionAnswered(Self.answer(409))) == "MKCOL http://h/dav/a/b/")
        #expect(Self.step(m.collectionAnswered(Self.answer(409))) == "MKCOL http://h/dav/a/")
        // There already (another client made it meanwhile): on down.
        #expect(Self.step(m.collectionAnswered(Self.answer(405))) == "MKCOL http://h/dav/a/b/")
        #expect(Self.step(m.collectionAnswered(Self.answer(201))) == "MKCOL http://h/dav/a/b/c/")
        #expect(Self.step(m.collectionAnswered(Self.answer(201))) == "PUT http://h/dav/a/b/c/x.jpg")
        // A second conflict is the answer: folders are made once per attempt.
        #expect(Self.step(m.answered(Self.answer(409))).hasPrefix("done 409"))
    }

    /// Files going to one new folder at once all find it missing; the first to make it wins,
    /// and the others find it there (405) and send again. A conflict after that is the answer.
    @Test func aFolderMadeMeanwhileIsUsedAndASecondConflictIsTheAnswer() {
        var m = Self.machine()
        _ = m.start()
        _ = m.answered(Self.answer(409, body: "locked"))
        #expect(Self.step(m.collectionAnswered(Self.answer(405))) == "PUT http://h/dav/a/b/x.jpg")
        #expect(Self.step(m.answered(Self.answer(409, body: "locked"))).hasPrefix("done 409"))
    }

    @Test func aRefusedFolderEndsTheAttemptSayingWhich() {
        var m = Self.machine()
        _ = m.start()
        _ = m.answered(Self.answer(409))
        let done = m.collectionAnswered(Self.answer(403))
        guard case .finish(let result) = done, case .failed(let failure) = result.outcome else {
            Issue.record("\(Self.step(done))")
            return
        }
        #expect(failure.message == "cannot make the folder http://h/dav/a/b/ (--create-dirs): MKCOL answered 403")
        #expect(result.response?.status == 403)
        // The top of the path missing too: the answer is the last refusal.
        var top = Self.machine("http://h/a/")
        _ = top.start()
        _ = top.answered(Self.answer(409))
        #expect(Self.step(top.collectionAnswered(Self.answer(409))).hasPrefix("done 409"))
    }

    @Test func aPipeIsNotSentAgain() {
        var m = Self.machine(pipe: true)
        _ = m.start()
        #expect(Self.step(m.answered(Self.answer(409))) == "MKCOL http://h/dav/a/b/")
        #expect(Self.step(m.collectionAnswered(Self.answer(201))).hasPrefix("done 409"))
    }

    @Test func credentialsGoToTheFoldersOnTheSameOriginOnly() {
        var m = Self.machine()
        guard case .request(.put(_, let headers)) = m.start() else {
            Issue.record("no PUT")
            return
        }
        #expect(headers == Self.token)
        guard case .request(.put(let moved, let movedHeaders)) = m.answered(Self.answer(307, [("Location", "http://other:9/dav/x.jpg")])) else {
            Issue.record("no redirect")
            return
        }
        #expect(moved.url == "http://other:9/dav/x.jpg" && movedHeaders.isEmpty)
        guard case .request(.makeCollection(let folder, let folderHeaders)) = m.answered(Self.answer(409)) else {
            Issue.record("no MKCOL")
            return
        }
        #expect(folder.url == "http://other:9/dav/" && folderHeaders.isEmpty)
    }

    @Test func anObjectStoresRefusalOfThePresignedURLIsSaidInWords() {
        let mismatch = Self.answer(
            403,
            body:
                "<?xml version=\"1.0\"?><Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match</Message></Error>")
        guard case .failed(let failure) = Machine.explained(mismatch, contentType: "image/jpeg").outcome else {
            Issue.record("kept")
            return
        }
        #expect(failure.message.contains("Content-Type: image/jpeg") && failure.message.contains("-H 'Content-Type: ...'"))
        let expired = Self.answer(403, body: "<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>")
        guard case .failed(let old) = Machine.explained(expired, contentType: "image/jpeg").outcome else {
            Issue.record("kept")
            return
        }
        #expect(old.message == "403 AccessDenied: the presigned URL has expired; make a new one")
        #expect(Machine.explained(Self.answer(403, body: "no"), contentType: "x").outcome.isSuccess == false)
        if case .answered(let status) = Machine.explained(Self.answer(403, body: "no"), contentType: "x").outcome {
            #expect(status == 403)
        } else {
            Issue.record("changed")
        }
    }
}
