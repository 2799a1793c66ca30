import Foundation
import UploadCore

/// What an origin is known to speak, from its answer to `OPTIONS` (`DiscoveryMachine`), from
/// another answer that showed it (a tus server refusing a multipart body, a refused creation),
/// or remembered from an earlier process.
public enum OriginSupport: Sendable, Equatable {
    /// The resumable-upload draft in this interop version.
    case supported(version: Int)
    /// tus 1.0.0, offering this.
    case tus(TusCapabilities)
    case unsupported
    /// The question got no answer: no connection (asked again next time).
    case unknown
    /// The origin took the question and said nothing in time: kept for this process (not
    /// asked again), never written down.
    case silent

    /// What a tus origin offers; nil for any other answer.
    public var tusCapabilities: TusCapabilities? {
        if case .tus(let capabilities) = self { return capabilities }
        return nil
    }
}

/// The discovery question, answer by answer: `OPTIONS` with our interop version (and
/// `Tus-Resumable`, which some tus servers need to answer as one), once more in the version an
/// older server of the draft names, and what each answer says. The shell sends, and bounds the
/// whole question by its deadline (a silence is `late`).
public struct DiscoveryMachine: Sendable {
    /// Ask again in another version, or the answer for the origin.
    public enum Next: Sendable, Equatable {
        /// `OPTIONS` in this interop version.
        case ask(version: Int)
        case done(OriginSupport)
    }

    /// What an answer showed besides the verdict: the shell remembers it for the origin.
    public enum Report: Sendable, Equatable {
        /// The server asks to be given digests (`Want-Content-Digest`/`Want-Repr-Digest`).
        case verifies
        /// The `Upload-Limit` the answer said (nil: it said none).
        case limit(UploadLimit?)
    }

    /// What one input decided: what to report (in order), then what to do next.
    public struct Decision: Sendable, Equatable {
        public var reports: [Report]
        public var next: Next
    }

    /// Questions asked at most: ours, and the version an older server names.
    public static let tries = 2
    private var version = ResumableFields.currentVersion
    private var asked = 0

    public init() {}

    /// The first question.
    public mutating func start() -> Next {
        asked = 1
        return .ask(version: version)
    }

    /// What the question came back with; `late`: the deadline cut it.
    public mutating func answered(_ result: AttemptResult, late: Bool) -> Decision {
        guard let response = result.response else {
            if late { return Decision(reports: [], next: .done(.silent)) }
            // No connection: ask again next time. A server that took the question and gave no
            // answer (it closed) does not resume uploads.
            if case .failed(let failure) = result.outcome, [.cannotConnect, .connectTimeout, .cancelled].contains(failure.kind) {
                return Decision(reports: [], next: .done(.unknown))
            }
            return Decision(reports: [], next: .done(.unsupported))
        }
        var reports: [Report] = DigestFields.asksForDigests(response) ? [.verifies] : []
        if let tus = TusCapabilities(options: response) { return Decision(reports: reports, next: .done(.tus(tus))) }
        reports.append(.limit(UploadLimit(parsing: response.header(ResumableFields.limit))))
        let read = Self.read(response, asked: version)
        if let spoken = read.version { return Decision(reports: reports, next: .done(.supported(version: spoken))) }
        guard let next = read.tryVersion, asked < Self.tries else { return Decision(reports: reports, next: .done(.unsupported)) }
        version = next
        asked += 1
        return Decision(reports: reports, next: .ask(version: next))
    }

    /// What an `OPTIONS` answer says: the draft's `Accept-Patch` with `application/partial-upload`,
    /// an `Upload-Limit`, or the interop version asked for echoed on a success; `version` is the
    /// one to speak (a success naming another version spoken here: that one). An answer that
    /// names another interop version we speak (a server of an older draft refusing ours) gives
    /// that version to ask again with.
    public static func read(_ response: UploadResponse, asked version: Int) -> (version: Int?, tryVersion: Int?) {
        let echoed = ResumableFields.version(response.header(ResumableFields.interopVersion))
        let otherSpoken = echoed.flatMap { $0 != version && ResumableFields.supportedVersions.contains($0) ? $0 : nil }
        guard (200..<300).contains(response.status) else { return (nil, otherSpoken) }
        if let otherSpoken { return (otherSpoken, nil) }
        let acceptsPartial = response.headers.contains { name, value in
            name.lowercased() == "accept-patch"
                && value.lowercased().split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix(ResumableFields.partialUploadType) }
        }
        let limits = UploadLimit(parsing: response.header(ResumableFields.limit)) != nil
        return (acceptsPartial || limits || echoed == version ? version : nil, nil)
    }
}
