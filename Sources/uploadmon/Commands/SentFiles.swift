import Foundation
import UploadAgent
import UploadCore
import UploadReports

/// `send --skip-sent`: the files whose content was already sent to the endpoint are left out,
/// each said on standard output (a `skipped` object with `--json`).
enum SentFiles {
    static func withoutSent(
        _ requests: [(UploadRequest, Int64?)], ledger: SentLedger?, stripLocation: Bool, json: Bool
    ) async -> [(UploadRequest, Int64?)] {
        guard let ledger, let endpoint = requests.first?.0.url else {
            if ledger == nil { Console.complain("uploadmon: cannot open the journal that says what was sent; --skip-sent skips nothing") }
            return requests
        }
        let paths = requests.compactMap { if case .file(let path) = $0.0.source { path } else { nil } }
        // Hashing reads every file: off the cooperative threads.
        let skips = await Task.detached { ledger.alreadySent(paths, to: endpoint, stripLocation: stripLocation) }.value
        return requests.filter { entry in
            guard case .file(let path) = entry.0.source, let skip = skips[path] else { return true }
            // One line each, written at once (the reporters' lines follow).
            FileHandle.standardOutput.write(Data(((json ? skip.jsonLine : skip.text) + "\n").utf8))
            return false
        }
    }
}
