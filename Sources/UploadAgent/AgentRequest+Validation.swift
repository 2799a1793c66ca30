import UploadCore

extension AgentRequest {
    /// Why the agent must refuse this request before acting on it, or nil. Every number a client
    /// sends passes the same rules the command line applies (`DurationRule`, `TransportSettings`):
    /// the socket is a way in too, and a negative maintenance interval once ran maintenance in a
    /// loop, a huge one wrote a date the journal could not read back.
    public var refusal: String? {
        do throws(RangeError) {
            switch self {
            case .watch(_, let template, let every, _, _):
                _ = try DurationRule.watchInterval.check(every, option: "everySeconds")
                try template.settings.validate()
            case .maintenance(let every, let keep):
                if let every { _ = try DurationRule.maintenanceInterval.check(every, option: "everySeconds") }
                if let keep { _ = try DurationRule.history.check(keep, option: "keepSeconds") }
            case .enqueue(let items):
                for settings in items.distinctSettings { try settings.validate() }
            case .configure(let settings):
                if let refusal = settings.refusal { throw RangeError(message: refusal) }
            case .hello, .subscribe, .cancel, .retry, .status, .stop, .jobs, .runJob, .removeJob:
                break
            }
        } catch {
            return error.message
        }
        return nil
    }
}
