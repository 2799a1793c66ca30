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
        guard let ledger else {
            Console.complain("uploadmon: cannot open the journal that says what was sent; --skip-sent skips nothing")
            return requests
        }
        // Hashing reads every file: off the cooperative threads.
        let kept = await Task.detached { () -> [(UploadRequest, Int64?)] in
            var kept: [(UploadRequest, Int64?)] = []
            for entry in requests {
                guard case .file(let path) = entry.0.source,
                      let lookup = try? ledger.lookup(path: path, endpoint: entry.0.url, stripLocation: stripLocation),
                      let earlier = lookup.earlier
                else {
                    kept.append(entry)
                    continue
                }
                if json {
                    var line = JSONLine()
                    line["event"] = .string("skipped")
                    line["file"] = .string(path)
                    line["sha256"] = .string(lookup.sha256)
                    line["sentTo"] = .string(earlier.endpoint)
                    line["sentAs"] = .string(earlier.name)
                    line["sentAt"] = .string(ISO8601DateFormatter().string(from: earlier.sentAt))
                    say(line.text)
                } else {
                    say(SentLedger.skippedText(path, earlier))
                }
            }
            return kept
        }.value
        return kept
    }

    /// One line on standard output, written at once (the reporters' lines follow it).
    private static func say(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}
