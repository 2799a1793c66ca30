import Crypto
import Foundation
import UploadCore

/// AWS credentials: an access key, its secret, and a session token for temporary ones. The
/// secret and the token are never shown (`description`).
public struct AWSCredentials: Sendable, Equatable, CustomStringConvertible {
    public let accessKeyID: String
    public let secretAccessKey: String
    public let sessionToken: String?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    public var description: String { "\(accessKeyID) (secret hidden)" }
}

/// AWS Signature Version 4 (`AWS4-HMAC-SHA256`), as AWS documents it and its test suite checks:
/// the canonical request, the string to sign, the derived key and the `Authorization` field.
/// S3's form: the path is encoded once (as sent) and not normalised.
///
/// Why not Soto's signer (SotoSignerV4): Soto is not among the packages this project may build
/// from, and this is a page of code checked against AWS's own SigV4 test suite (SigV4Tests),
/// botocore's presigned URLs (PresignBotocoreTests) and moto, which verifies every signature.
public enum SigV4 {
    /// The payload hash S3 takes for a body that is not hashed before it is sent.
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"
    /// SHA-256 of nothing: a request without a body.
    public static let emptyPayload = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// One request to sign: its method, its path as sent (percent-encoded), its query as sent
    /// (without `?`), its header fields (`host` among them) and its payload's SHA-256 (hex) or
    /// `unsignedPayload`.
    public struct Request: Sendable {
        public var method: String
        public var path: String
        public var query: String
        public var headers: [(name: String, value: String)]
        public var payloadHash: String

        public init(method: String, path: String, query: String = "", headers: [(name: String, value: String)], payloadHash: String) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.payloadHash = payloadHash
        }
    }

    /// The fields to add to `request` to sign it at `date` for `service` in `region`:
    /// `X-Amz-Date`, `X-Amz-Security-Token` (temporary credentials), `X-Amz-Content-Sha256`
    /// (S3 wants the payload's hash said) and `Authorization`. The signed fields are the
    /// request's own and these.
    public static func sign(
        _ request: Request, credentials: AWSCredentials, region: String, service: String, date: Date, contentHashField: Bool = true
    ) -> [(name: String, value: String)] {
        let stamp = timestamp(date)
        var added: [(name: String, value: String)] = [("X-Amz-Date", stamp)]
        if let token = credentials.sessionToken { added.append(("X-Amz-Security-Token", token)) }
        if contentHashField { added.append(("X-Amz-Content-Sha256", request.payloadHash)) }
        var signed = request
        signed.headers += added
        added.append(("Authorization", authorization(signed, credentials: credentials, region: region, service: service, timestamp: stamp)))
        return added
    }

    /// The `Authorization` field of a request whose fields already carry `X-Amz-Date: timestamp`.
    public static func authorization(_ request: Request, credentials: AWSCredentials, region: String, service: String, timestamp: String) -> String {
        let (canonical, signedHeaders) = canonicalRequest(request)
        let scope = "\(timestamp.prefix(8))/\(region)/\(service)/aws4_request"
        let toSign = stringToSign(canonical, timestamp: timestamp, scope: scope)
        let key = signingKey(secret: credentials.secretAccessKey, day: String(timestamp.prefix(8)), region: region, service: service)
        let signature = hex(Array(HMAC<SHA256>.authenticationCode(for: Array(toSign.utf8), using: key)))
        return "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
    }

    /// The canonical request and the list of signed fields.
    public static func canonicalRequest(_ request: Request) -> (text: String, signedHeaders: String) {
        // Fields by lower-cased name, in order; values trimmed, inner runs of spaces made one,
        // repeated fields joined with commas.
        var fields: [String: [String]] = [:]
        for (name, value) in request.headers {
            fields[name.lowercased(), default: []].append(collapsed(value))
        }
        let names = fields.keys.sorted()
        let canonicalHeaders = names.map { "\($0):\(fields[$0]!.joined(separator: ","))\n" }.joined()
        let signedHeaders = names.joined(separator: ";")
        let text = [
            request.method, request.path.isEmpty ? "/" : request.path, canonicalQuery(request.query),
            canonicalHeaders, signedHeaders, request.payloadHash,
        ].joined(separator: "\n")
        return (text, signedHeaders)
    }

    public static func stringToSign(_ canonicalRequest: String, timestamp: String, scope: String) -> String {
        "AWS4-HMAC-SHA256\n\(timestamp)\n\(scope)\n" + hex(Array(SHA256.hash(data: Array(canonicalRequest.utf8))))
    }

    public static func signingKey(secret: String, day: String, region: String, service: String) -> SymmetricKey {
        var key = SymmetricKey(data: Array(("AWS4" + secret).utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        return key
    }

    /// `20150830T123600Z`: the date in UTC, as `X-Amz-Date` carries it.
    public static func timestamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d%02d%02dT%02d%02d%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    /// The query's parameters sorted by name, then value, each encoded as AWS does (RFC 3986's
    /// unreserved characters kept, every other byte `%XX`); a name without `=` gets an empty value.
    static func canonicalQuery(_ query: String) -> String {
        guard !query.isEmpty else { return "" }
        let pairs = query.split(separator: "&", omittingEmptySubsequences: true).map { pair -> (String, String) in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
            return (Endpoint.percentEncoded(name), Endpoint.percentEncoded(value))
        }
        return pairs.sorted { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    private static func collapsed(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ").trimmingCharacters(in: .whitespaces)
    }

    static func hex(_ bytes: [UInt8]) -> String { Digester.hex(bytes) }
}
