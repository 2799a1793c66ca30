import Foundation
import GRDB
import UploadCore

/// Where an upload stands in the journal.
public enum UploadState: String, Sendable, Codable, CaseIterable, DatabaseValueConvertible {
    case queued
    case sending
    /// Waiting for an automatic retry after a transient failure.
    case retrying
    case succeeded
    case failed

    public var isFinished: Bool { self == .succeeded || self == .failed }
}

/// A header kept so the agent can resend an upload after a restart. Never displayed or logged:
/// it is not part of `UploadSnapshot`, the only form in which uploads leave the journal.
struct StoredHeader: Codable, Hashable {
    var name: String
    var value: String
}

/// One upload as the journal keeps it (the `upload` table).
struct UploadRow: Codable, FetchableRecord, MutablePersistableRecord, Hashable {
    static let databaseTableName = "upload"

    var id: Int64?
    var path: String
    var fileSize: Int64?
    var fileMtimeNs: Int64?
    var uploadName: String
    var url: String
    var field: String
    var formFields: [FormField]
    var headers: [StoredHeader]
    var allowAnyFile: Bool
    var settings: TransportSettings
    var origin: String
    var state: UploadState
    var attempts: Int
    var bytesSent: Int64
    var bytesExpected: Int64?
    var status: Int?
    var reason: String?
    var body: Data?
    var bodyBytesTotal: Int64?
    var failureKind: String?
    var failureMessage: String?
    var failureCode: Int32?
    var createdAt: Date
    var updatedAt: Date
    var startedAt: Date?
    var finishedAt: Date?
    /// The header values were removed when the upload ended (they are kept only while it may
    /// still be sent); such an upload cannot be retried from the journal.
    var headersCleared: Bool

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let state = Column(CodingKeys.state)
        static let finishedAt = Column(CodingKeys.finishedAt)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }

    var uploadID: UploadID { UploadID(Int(id ?? 0)) }

    var request: UploadRequest {
        UploadRequest(
            source: .file(path: path), url: url, field: field, uploadName: uploadName,
            formFields: formFields, headers: headers.map { RequestHeader(name: $0.name, value: $0.value) },
            allowAnyFile: allowAnyFile,
            expectedFile: fileSize.flatMap { size in fileMtimeNs.map { FileFingerprint(size: size, modificationNanoseconds: $0) } }
        )
    }

    var failure: UploadFailure? {
        failureKind.map { UploadFailure(UploadFailure.Kind(rawValue: $0) ?? .other, failureMessage ?? "", code: failureCode) }
    }

    var snapshot: UploadSnapshot {
        UploadSnapshot(
            id: uploadID, path: path, uploadName: uploadName, url: RedactedURL.display(url), field: field, origin: origin,
            state: state, attempts: attempts, fileSize: fileSize, bytesSent: bytesSent, bytesExpected: bytesExpected,
            status: status, reason: reason, body: body.map(Array.init) ?? [], bodyBytesTotal: bodyBytesTotal ?? 0,
            failure: failure, createdAt: createdAt, startedAt: startedAt, finishedAt: finishedAt
        )
    }
}

/// One entry of the append-only event log (the `event` table).
struct EventRow: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "event"

    var seq: Int64?
    var uploadID: Int64?
    var kind: String
    var event: UploadEvent
    var at: Date

    mutating func didInsert(_ inserted: InsertionSuccess) {
        seq = inserted.rowID
    }
}

/// What a client may know about an upload: everything but the request headers and the secrets
/// of its URL (`url` is as `RedactedURL` shows it; the journal keeps the real one to send).
public struct UploadSnapshot: Sendable, Hashable, Codable {
    public var id: UploadID
    public var path: String
    public var uploadName: String
    public var url: String
    public var field: String
    /// Who queued it: `send`, `monitor`, or `watch <folder>`.
    public var origin: String
    public var state: UploadState
    public var attempts: Int
    public var fileSize: Int64?
    public var bytesSent: Int64
    public var bytesExpected: Int64?
    public var status: Int?
    public var reason: String?
    /// The first 64 KiB of the answer's body.
    public var body: [UInt8]
    public var bodyBytesTotal: Int64
    public var failure: UploadFailure?
    public var createdAt: Date
    public var startedAt: Date?
    public var finishedAt: Date?

    public var outcome: UploadOutcome? {
        guard state.isFinished else { return nil }
        if let failure { return .failed(failure) }
        return status.map { .answered(status: $0) }
    }
}

/// A logged event with its place in the log.
public struct JournalEntry: Sendable, Hashable, Codable {
    public let seq: Int64
    public let event: UploadEvent
    public let at: Date

    public init(seq: Int64, event: UploadEvent, at: Date) {
        self.seq = seq
        self.event = event
        self.at = at
    }
}

/// An upload to add to the journal, as a client asked for it.
public struct NewUpload: Sendable, Hashable {
    public var request: UploadRequest
    public var fingerprint: FileFingerprint
    public var settings: TransportSettings
    public var origin: String

    public init(request: UploadRequest, fingerprint: FileFingerprint, settings: TransportSettings, origin: String) {
        self.request = request
        self.fingerprint = fingerprint
        self.settings = settings
        self.origin = origin
    }
}

/// An upload the agent must (re)start: its request with the stored headers, how to send it,
/// and how many attempts it already made.
public struct PendingUpload: Sendable {
    public let id: UploadID
    public let request: UploadRequest
    public let settings: TransportSettings
    public let attempts: Int
    public let totalBytes: Int64?

    public init(id: UploadID, request: UploadRequest, settings: TransportSettings, attempts: Int, totalBytes: Int64?) {
        self.id = id
        self.request = request
        self.settings = settings
        self.attempts = attempts
        self.totalBytes = totalBytes
    }
}
