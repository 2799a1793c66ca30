import Foundation

/// Headers read from a file (`-H @FILE`, curl's form), so a secret need not be on the command
/// line, where every user of the machine can read it with `ps`: one `Name: value` a line, CR LF
/// or LF, empty lines skipped. An error names the file and the line, never the value.
public enum HeaderFile {
    public static func parse(_ text: String, path: String) throws(UploadInputError) -> [RequestHeader] {
        var headers: [RequestHeader] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.hasSuffix("\r") ? line.dropLast() : line
            guard !trimmed.allSatisfy({ $0 == " " || $0 == "\t" }) else { continue }
            do {
                headers.append(try RequestHeader(parsing: String(trimmed)))
            } catch {
                throw .badHeaderFile(path: path, line: number + 1)
            }
        }
        return headers
    }
}

/// `Authorization: Basic …` for a login and password (RFC 7617), as `--netrc` sends it.
public enum BasicCredentials {
    public static func header(login: String, password: String) -> RequestHeader {
        RequestHeader(name: "Authorization", value: "Basic " + Data("\(login):\(password)".utf8).base64EncodedString())
    }
}
