import Foundation
import UploadCore

/// The request headers the command line asks for: each `-H 'Name: value'`, `-H @FILE` read from
/// its file (one a line; `@-` from standard input), and `Authorization: Basic` from a netrc file
/// when one is asked for, the endpoint's host has an entry there and no header gives an
/// `Authorization` already.
public struct HeaderArguments: Sendable {
    public var arguments: [String]
    public var netrc: NetrcChoice?
    /// Standard input's text, read once however often it is asked for (`-H @-`).
    public var standardInput: @Sendable () -> String?

    public init(_ arguments: [String], netrc: NetrcChoice?, standardInput: @escaping @Sendable () -> String?) {
        self.arguments = arguments
        self.netrc = netrc
        self.standardInput = standardInput
    }

    /// The headers for `endpoint`; `readingStandardInput` false leaves `@-` out (while the
    /// command line is checked, standard input may be a file to send).
    public func parse(for endpoint: String, readingStandardInput: Bool = true) throws(UploadInputError) -> [RequestHeader] {
        var parsed: [RequestHeader] = []
        for argument in arguments {
            guard argument.hasPrefix("@") else {
                parsed.append(try RequestHeader(parsing: argument))
                continue
            }
            let path = String(argument.dropFirst())
            if path == "-" && !readingStandardInput { continue }
            let text: String
            if path == "-" {
                guard let read = standardInput() else { throw .cannotRead(path: path, reason: "standard input cannot be read") }
                text = read
            } else {
                do throws(SmallFileProblem) {
                    text = String(decoding: try SmallFile.read(path), as: UTF8.self)
                } catch {
                    throw .cannotRead(path: path, reason: "the header file cannot be read: \(error.reason)")
                }
            }
            parsed += try HeaderFile.parse(text, path: path == "-" ? "(standard input)" : path)
        }
        if !parsed.contains(where: { $0.name.lowercased() == "authorization" }), let (login, password) = try netrc?.credentials(for: endpoint) {
            parsed.append(BasicCredentials.header(login: login, password: password))
        }
        return parsed
    }

    /// The netrc file asked for: `--netrc-file`, else `~/.netrc` with `--netrc` or
    /// `--netrc-optional` (optional: only when the URL names no password and the file exists).
    public static func netrcChoice(netrc: Bool, netrcFile: String?, netrcOptional: Bool, home: String) -> NetrcChoice? {
        if let netrcFile { return NetrcChoice(path: netrcFile, optional: false) }
        guard netrc || netrcOptional else { return nil }
        return NetrcChoice(path: home + "/.netrc", optional: netrcOptional && !netrc)
    }
}
