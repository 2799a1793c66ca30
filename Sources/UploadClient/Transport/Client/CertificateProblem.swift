import UploadCore
import Foundation

/// One reason a server's certificate was not accepted, in the terms a person can act on.
/// BoringSSL says only `CERTIFICATE_VERIFY_FAILED` for all of these; `CertificateInspection`
/// finds out which.
enum CertificateProblem: Sendable, Equatable, CustomStringConvertible {
    /// No chain from the certificate to an authority in `store` (the system's, or `--cacert`).
    case untrusted(issuer: String, selfSigned: Bool, store: TrustStore)
    /// `subject`'s validity ended before `now`; `isLeaf` is false for an issuer in the chain.
    case expired(subject: String, isLeaf: Bool, validity: ClosedRange<Date>, now: Date)
    case notYetValid(subject: String, isLeaf: Bool, validity: ClosedRange<Date>, now: Date)
    /// The certificate is not made out for `asked`; `names` are those it carries.
    case nameMismatch(asked: String, names: [String])

    enum TrustStore: Sendable, Equatable {
        case system
        case file(String)
    }

    var description: String {
        switch self {
        case .untrusted(let issuer, true, let store):
            return "certificate not trusted: \(quoted(issuer)) is self-signed and not in \(store.phrase)"
                + store.advice
        case .untrusted(let issuer, false, let store):
            return "certificate not trusted: issued by \(quoted(issuer)), which is not an authority in \(store.phrase)"
                + store.advice
        case .expired(let subject, let isLeaf, let validity, let now):
            return "certificate expired: \(whose(subject, isLeaf)) was valid until \(Self.date(validity.upperBound))"
                + " (from \(Self.date(validity.lowerBound))); it is \(Self.date(now)) here"
        case .notYetValid(let subject, let isLeaf, let validity, let now):
            return "certificate not yet valid: \(whose(subject, isLeaf)) is valid from \(Self.date(validity.lowerBound))"
                + " (until \(Self.date(validity.upperBound))); it is \(Self.date(now)) here"
        case .nameMismatch(let asked, let names):
            let carried = names.isEmpty ? "names no host at all" : "is for \(names.joined(separator: ", "))"
            return "certificate name mismatch: asked for \(asked), the certificate \(carried)"
        }
    }

    /// All of them, most actionable first, as one line.
    static func describe(_ problems: [CertificateProblem]) -> String {
        problems.map(\.description).joined(separator: "; ")
    }

    private func whose(_ subject: String, _ isLeaf: Bool) -> String {
        isLeaf ? "the server's certificate \(quoted(subject))" : "the issuing certificate \(quoted(subject))"
    }

    private func quoted(_ name: String) -> String { "\"\(name)\"" }

    /// UTC to the minute: the same in every time zone, and a clock that is off shows.
    static func date(_ date: Date) -> String {
        LocalTime.format(date, .minutes, timeZone: TimeZone(identifier: "UTC")!) + " UTC"
    }
}

extension CertificateProblem.TrustStore {
    var phrase: String {
        switch self {
        case .system: "the system's trust store"
        case .file(let path): path
        }
    }

    var advice: String {
        switch self {
        case .system: " (trust its authority with --cacert FILE, or skip the check with --insecure)"
        case .file: ""
        }
    }
}
