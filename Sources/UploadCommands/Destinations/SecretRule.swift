import Foundation
import UploadCore

/// What may be written in the destinations file, which is plain text a user edits, copies and
/// shares: nothing that is a secret. Built from what is known safe — a header is written in the
/// file only under a name known to carry none, every other goes in a file of its own named by
/// `@FILE`; a URL or a proxy with a password, a presigned URL's signature and a form field whose
/// name says it is a secret are refused with the way to keep it out.
public enum SecretRule {
    /// Headers that carry no credential, and may be written in the file as `Name: value`.
    public static let inlineHeaders: Set<String> = [
        "accept", "accept-language", "content-language", "user-agent", "x-requested-with", "cache-control", "prefer", "dnt",
        "origin", "referer", "tus-resumable", "x-upload-album", "x-album",
    ]

    /// Words in a query parameter's or form field's name that say it holds a secret.
    static let secretWords = ["signature", "credential", "password", "passwd", "secret", "token", "apikey", "api_key", "api-key", "authorization", "private"]

    static func soundsSecret(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return secretWords.contains { lowered.contains($0) }
    }

    /// Why `value` of `key` cannot be kept in the file `where` names, or nil.
    public static func refusal(key: String, value: SavedDestination.Value, at place: String) -> String? {
        switch (key, value) {
        case ("url", .text(let url)): return urlRefusal(url, at: place)
        case ("proxy", .text(let proxy)):
            if let password = userPassword(proxy), !password.isEmpty {
                return
                    "\(place): the proxy URL holds a password, which would be kept in plain text in the file: leave it out of the URL and give it with --proxy on the command line, or in the environment (https_proxy)"
            }
        case ("headers", .list(let headers)):
            for header in headers where !header.hasPrefix("@") {
                let name = header.split(separator: ":", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? header
                guard inlineHeaders.contains(name.lowercased()) else {
                    return
                        "\(place): the header \(name) is written in the file itself, and a header may carry a credential: put it in a file of its own (chmod 600, one header a line) and write \"@/path/to/that/file\" instead; headers written in the file are only \(inlineHeaders.sorted().joined(separator: ", "))"
                }
            }
        case ("form", .list(let fields)):
            for field in fields {
                let name = field.split(separator: "=", maxSplits: 1).first.map(String.init) ?? field
                if soundsSecret(name) {
                    return
                        "\(place): the form field \(name) sounds like a secret, which would be kept in plain text in the file: give it with -F on the command line"
                }
            }
        default: break
        }
        return nil
    }

    /// Why a destination's URL cannot be kept in the file.
    static func urlRefusal(_ url: String, at place: String) -> String? {
        if let password = userPassword(url), !password.isEmpty {
            return
                "\(place): the URL holds a password, which would be kept in plain text in the file: write the URL without it and keep the login in ~/.netrc (netrc = true), or in a header file (headers = [\"@FILE\"])"
        }
        if let query = URLComponents(string: url)?.queryItems,
            let secret = query.first(where: { soundsSecret($0.name) || $0.name.lowercased().hasPrefix("x-amz-") || $0.name.lowercased().hasPrefix("x-goog-") })
        {
            return
                "\(place): the URL's query has \(secret.name), which holds a secret or a presigned URL's signature (valid for one object and a while): send to such a URL with --to on the command line"
        }
        return nil
    }

    /// The password in a URL's user part, if it has one.
    static func userPassword(_ url: String) -> String? {
        guard let components = URLComponents(string: url) else {
            // Not a URL URLComponents reads: look for user:password@ by hand.
            guard let scheme = url.range(of: "://") else { return nil }
            let rest = url[scheme.upperBound...]
            let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            guard let at = authority.lastIndex(of: "@") else { return nil }
            let user = authority[..<at]
            return user.firstIndex(of: ":").map { String(user[user.index(after: $0)...]) }
        }
        return components.password
    }
}
