import Foundation
import Testing
import UploadAgent
import UploadCore

/// What the agent refuses before acting, whatever a client puts on its socket.
struct AgentRequestValidationTests {
    func item(_ settings: TransportSettings = TransportSettings()) -> EnqueueItem {
        EnqueueItem(
            request: UploadRequest(source: .file(path: "/in/a.png"), url: "http://127.0.0.1:9/photo", uploadName: "a.png"),
            settings: settings, origin: "test")
    }

    @Test func theProbesRequestsAreRefusedWithTheReason() throws {
        let negative = try AgentCoding.decode(
            AgentEnvelope.self, from: Array(#"{"id":1,"request":{"maintenance":{"everySeconds":-5,"keepSeconds":604800}}}"#.utf8))
        #expect(negative.request.refusal == "everySeconds -5 is out of range: allowed 1m to 365d")
        let huge = try AgentCoding.decode(AgentEnvelope.self, from: Array(#"{"id":2,"request":{"maintenance":{"keepSeconds":1e308}}}"#.utf8))
        #expect(huge.request.refusal?.hasPrefix("keepSeconds 1e+308 is out of range") == true)
        var stalled = TransportSettings()
        stalled.stallTimeout = 1e300
        #expect(AgentRequest.enqueue(items: [item(), item(stalled)]).refusal?.hasPrefix("--stall-timeout 1e+300 is out of range") == true)
        #expect(AgentRequest.watch(directory: "/in", template: item(), everySeconds: 2.592e11, newOnly: false).refusal != nil)
        var noRate = TransportSettings()
        noRate.rateLimit = 0
        #expect(AgentRequest.enqueue(items: [item(noRate)]).refusal != nil)
    }

    @Test func ordinaryRequestsPass() {
        #expect(AgentRequest.maintenance(everySeconds: 43_200, keepSeconds: 30 * 86_400).refusal == nil)
        #expect(AgentRequest.watch(directory: "/in", template: item(), everySeconds: 300, newOnly: true).refusal == nil)
        #expect(AgentRequest.enqueue(items: [item()]).refusal == nil)
        #expect(AgentRequest.status.refusal == nil)
    }

    /// Random and extreme numbers in every numeric field of the socket's requests: a refusal, or
    /// every value inside the range its rule allows.
    @Test func randomNumbersAreRefusedOrInRange() {
        let extremes: [Double] = [-1e308, -5, 0, 0.5, 1, 60, 86_400, 3.1536e7, 1e300, .nan, .infinity, Double(Int64.max)]
        var generator = SystemRandomNumberGenerator()
        let values = extremes + (0..<300).map { _ in Double.random(in: -1e9...1e9, using: &generator) * (Bool.random() ? 1 : 1e290) }
        for value in values {
            let maintenance = AgentRequest.maintenance(everySeconds: value, keepSeconds: value)
            if maintenance.refusal == nil {
                #expect(DurationRule.maintenanceInterval.range.contains(value) && DurationRule.history.range.contains(value))
            }
            let watch = AgentRequest.watch(directory: "/in", template: item(), everySeconds: value, newOnly: false)
            if watch.refusal == nil { #expect(DurationRule.watchInterval.range.contains(value)) }
            var settings = TransportSettings()
            settings.connectTimeout = value
            settings.answerTimeout = value
            if AgentRequest.enqueue(items: [item(settings)]).refusal == nil { #expect(DurationRule.timeout.range.contains(value)) }
        }
    }
}
