import Testing
@testable import UploadAgent

@Suite struct PeerPolicyTests {
    @Test func sameUserIsAdmitted() {
        let peer = PeerCredentials(pid: 42, uid: 1000, gid: 1000)
        #expect((try? PeerPolicy.admits(peer, agentUID: 1000).get()) != nil)
    }

    @Test func anotherUserIsRefusedWithTheReason() {
        let peer = PeerCredentials(pid: 42, uid: 1001, gid: 1001)
        guard case .failure(let refusal) = PeerPolicy.admits(peer, agentUID: 1000) else {
            Issue.record("uid 1001 was admitted to uid 1000's agent")
            return
        }
        #expect(refusal.description.contains("uid 1001"))
        #expect(refusal.description.contains("uid 1000"))
    }

    @Test func rootIsNotAnExceptionAndUnknownPeersAreRefused() {
        #expect((try? PeerPolicy.admits(PeerCredentials(pid: 1, uid: 0, gid: 0), agentUID: 1000).get()) == nil)
        #expect((try? PeerPolicy.admits(nil, agentUID: 1000).get()) == nil)
    }
}
