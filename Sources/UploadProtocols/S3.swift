import Foundation
import UploadCore

/// What S3 requests need besides the location, read as the AWS tools read it: credentials
/// (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN`, else the profile
/// `AWS_PROFILE` or `default` in `~/.aws/credentials` and `~/.aws/config`), the region
/// (`AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's, else `us-east-1`) and the endpoint
/// (`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, the profile's `endpoint_url`: an S3-compatible
/// service, addressed path-style; else AWS, virtual-hosted unless the profile's `s3` settings
/// say `addressing_style = path` or the bucket's name has a dot).
public struct S3Access: Sendable, Equatable {
    public let credentials: AWSCredentials
    public let region: String
    /// An S3-compatible service's URL (no path), or nil for AWS.
    public let endpointURL: String?
    public let pathStyle: Bool

    public init(credentials: AWSCredentials, region: String, endpointURL: String? = nil, pathStyle: Bool = false) {
        self.credentials = credentials
        self.region = region
        self.endpointURL = endpointURL
        self.pathStyle = pathStyle
    }

    /// Reads `environment` and the files it names (through `read`, nil for a missing file).
    public static func resolve(environment: [String: String], read: (String) -> String?) throws(UploadInputError) -> S3Access {
        let home = environment["HOME"] ?? NSHomeDirectory()
        let profile = environment["AWS_PROFILE"] ?? "default"
        let credentialsFile = environment["AWS_SHARED_CREDENTIALS_FILE"] ?? home + "/.aws/credentials"
        let configFile = environment["AWS_CONFIG_FILE"] ?? home + "/.aws/config"
        let fromCredentials = read(credentialsFile).map { AWSConfigFile.sections($0)[profile] ?? [:] } ?? [:]
        let fromConfig = read(configFile).map { AWSConfigFile.sections($0)[profile == "default" ? "default" : "profile " + profile] ?? [:] } ?? [:]
        func setting(_ name: String) -> String? { fromCredentials[name] ?? fromConfig[name] }
        let credentials: AWSCredentials
        if let key = environment["AWS_ACCESS_KEY_ID"], !key.isEmpty, let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty {
            credentials = AWSCredentials(
                accessKeyID: key, secretAccessKey: secret, sessionToken: environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
        } else if let key = setting("aws_access_key_id"), let secret = setting("aws_secret_access_key") {
            credentials = AWSCredentials(accessKeyID: key, secretAccessKey: secret, sessionToken: setting("aws_session_token"))
        } else {
            throw .noAWSCredentials(profile: profile, files: [credentialsFile, configFile])
        }
        let region =
            [environment["AWS_REGION"], environment["AWS_DEFAULT_REGION"], fromConfig["region"], fromCredentials["region"]]
            .compactMap { $0 }.first { !$0.isEmpty } ?? "us-east-1"
        let endpoint = [environment["AWS_ENDPOINT_URL_S3"], environment["AWS_ENDPOINT_URL"], fromConfig["endpoint_url"]]
            .compactMap { $0 }.first { !$0.isEmpty }
        if let endpoint { _ = try Endpoint(parsing: endpoint) }
        let style = fromConfig["s3.addressing_style"]?.lowercased()
        return S3Access(
            credentials: credentials, region: region, endpointURL: endpoint.map { String($0.reversed().drop { $0 == "/" }.reversed()) },
            pathStyle: endpoint != nil || style == "path")
    }

    /// The URL a request for `location`'s key goes to.
    public func url(for location: S3Location) -> String {
        let key = location.encodedKey
        if let endpointURL { return "\(endpointURL)/\(location.bucket)/\(key)" }
        // A bucket with a dot does not match the wildcard certificate as a host name.
        if pathStyle || location.bucket.contains(".") { return "https://s3.\(region).amazonaws.com/\(location.bucket)/\(key)" }
        return "https://\(location.bucket).s3.\(region).amazonaws.com/\(key)"
    }

    /// Fields left out of the signature, as the AWS SDKs leave them (botocore's list): a proxy
    /// or the client's own machinery may change them on the way.
    static let unsigned: Set<String> = ["user-agent", "expect", "x-amzn-trace-id", "authorization", "host"]

    /// The fields that sign a request of `method` to `endpoint` carrying `headers`, at `date`;
    /// the body is not hashed (`UNSIGNED-PAYLOAD`: it streams from the file).
    public func signingFields(method: String, endpoint: Endpoint, headers: [(name: String, value: String)], date: Date) -> [(name: String, value: String)] {
        let parts = endpoint.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let request = SigV4.Request(
            method: method, path: String(parts[0]), query: parts.count > 1 ? String(parts[1]) : "",
            headers: [("Host", endpoint.hostField)] + headers.filter { !Self.unsigned.contains($0.name.lowercased()) },
            payloadHash: SigV4.unsignedPayload)
        return [("Host", endpoint.hostField)] + SigV4.sign(request, credentials: credentials, region: region, service: "s3", date: date)
    }

    /// The longest a presigned URL may live (SigV4's limit: seven days).
    public static let longestPresign: Int64 = 7 * 24 * 3600

    /// A URL anyone can `PUT` `location`'s object to for `expires` seconds from `date`.
    public func presignedPut(_ location: S3Location, expires: Int64, date: Date) -> String {
        let url = url(for: location)
        guard let endpoint = Endpoint(url) else { return url }
        return presigned(method: "PUT", endpoint, expires: expires, date: date)
    }

    /// `endpoint` with query-string SigV4 for `method` (the signature covers the method, the
    /// path, the query and `Host`; a body goes unsigned), valid `expires` seconds from `date`.
    public func presigned(method: String, _ endpoint: Endpoint, expires: Int64, date: Date) -> String {
        let stamp = SigV4.timestamp(date)
        let scope = "\(stamp.prefix(8))/\(region)/s3/aws4_request"
        var query = [
            ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"), ("X-Amz-Credential", "\(credentials.accessKeyID)/\(scope)"),
            ("X-Amz-Date", stamp), ("X-Amz-Expires", String(expires)), ("X-Amz-SignedHeaders", "host"),
        ]
        if let token = credentials.sessionToken { query.append(("X-Amz-Security-Token", token)) }
        let text = query.map { "\(Endpoint.percentEncoded($0.0))=\(Endpoint.percentEncoded($0.1))" }.joined(separator: "&")
        let request = SigV4.Request(
            method: method, path: endpoint.target, query: text, headers: [("Host", endpoint.hostField)],
            payloadHash: SigV4.unsignedPayload)
        let authorization = SigV4.authorization(request, credentials: credentials, region: region, service: "s3", timestamp: stamp)
        let signature = authorization.split(separator: "=").last.map(String.init) ?? ""
        return endpoint.url + "?" + text + "&X-Amz-Signature=" + signature
    }

    /// S3's error answer (`<Error><Code>…</Code><Message>…</Message>`) in words, with what to do
    /// where it is known; nil for any other answer.
    public static func explained(_ response: UploadResponse) -> String? {
        guard response.status >= 300 else { return nil }
        let body = String(decoding: response.body, as: UTF8.self)
        guard let code = element("Code", in: body) else { return nil }
        let message = element("Message", in: body).map { ": " + $0 } ?? ""
        var advice = ""
        switch code {
        case "PermanentRedirect", "AuthorizationHeaderMalformed", "IllegalLocationConstraintException":
            if let region = response.header("x-amz-bucket-region") ?? element("Region", in: body) {
                advice = " (the bucket is in \(region): AWS_REGION=\(region))"
            }
        case "SignatureDoesNotMatch":
            advice = " (check the secret key: AWS_SECRET_ACCESS_KEY or the profile's aws_secret_access_key)"
        case "InvalidAccessKeyId":
            advice = " (the access key is unknown to this service: AWS_ACCESS_KEY_ID, the profile, AWS_ENDPOINT_URL)"
        case "ExpiredToken":
            advice = " (the session token has expired: get new credentials)"
        default:
            break
        }
        return "S3 \(response.status) \(code)\(message)\(advice)"
    }

    /// An element's text, references resolved, shown safely (at most 300 characters).
    private static func element(_ name: String, in xml: String) -> String? {
        S3MultipartMachine.element(name, in: xml).map { InvisibleCharacters.escaped(S3MultipartMachine.unescaped(String($0.prefix(300)))) }
    }
}

/// The AWS tools' INI files: `[section]` headers, `name = value` lines, and one level of nested
/// settings (`s3 =` followed by indented `addressing_style = path`, read as `s3.addressing_style`).
public enum AWSConfigFile {
    public static func sections(_ text: String) -> [String: [String: String]] {
        var sections: [String: [String: String]] = [:]
        var current: String?
        var parent: String?
        for raw in text.split(whereSeparator: \.isNewline) {
            let indented = raw.first == " " || raw.first == "\t"
            let line = raw.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty, !line.hasPrefix("#"), !line.hasPrefix(";") else { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                current = String(line.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces)
                parent = nil
                continue
            }
            guard let current, let equals = line.firstIndex(of: "=") else { continue }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if indented, let parent {
                sections[current, default: [:]][parent + "." + name] = value
            } else if value.isEmpty {
                parent = name
            } else {
                parent = nil
                sections[current, default: [:]][name] = value
            }
        }
        return sections
    }
}
