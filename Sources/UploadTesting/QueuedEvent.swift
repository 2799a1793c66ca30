import Foundation
import UploadCore

extension UploadEvent {
    /// An upload queued where only its name and size matter to the test: the record's other
    /// fields empty, queued at a fixed time.
    public static func queued(_ id: UploadID, name: String, totalBytes: Int64?) -> UploadEvent {
        .queued(
            UploadRecord(
                id: id, name: name, path: nil, url: "", origin: "", fileSize: totalBytes,
                createdAt: Date(timeIntervalSince1970: 1_700_000_000)))
    }
}
