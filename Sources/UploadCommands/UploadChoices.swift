import Foundation
import UploadClient
import UploadCore

/// What the upload options of every sending command say, as typed: why they cannot go
/// together, and the transport settings they make for a URL. The command line only fills this
/// in (the `-F` and `-H` values are read by `HeaderArguments` and `FormField`), so every refusal
/// is reached by tests in process.
public struct UploadChoices: Sendable, Equatable {
    /// `--to`: a URL, or `@LIST`.
    public var to: String
    /// `--field`: the form field that carries the file.
    public var field = "photo"
    /// `-F`, in order.
    public var formFields: [String] = []
    /// `-H`, in order (`@FILE` and `@-` as given).
    public var headers: [String] = []
    /// `--netrc`, `--netrc-file`, `--netrc-optional`.
    public var netrc = false
    public var netrcFile: String?
    public var netrcOptional = false
    /// `--any-file`.
    public var anyFile = false
    public var concurrency = 2
    public var retries = 0
    public var caCertificate: String?
    public var insecure = false
    public var limitRate: String?
    public var connectTimeout = "10s"
    public var stallTimeout = "30s"
    public var answerTimeout = "60s"
    public var noResume = false
    public var proxy: String?
    public var noProxy: String?
    public var noDigest = false
    public var stripLocation = false
    /// `--convert jpeg|webp|keep`, `--quality`, `--max-dimension`, `--max-bytes`, as typed.
    public var convert: String?
    public var quality: Int?
    public var maxDimension: Int?
    public var maxBytes: String?
    public var `protocol`: UploadProtocol = .auto
    public var put = false
    public var createDirs = false
    public var chunkSize: String?
    /// `-L`/`--location`: redirects to other origins are followed.
    public var location = false

    /// Every option at its default: the commands' defaults are these.
    public static let standard = UploadChoices(to: "")

    public init(to: String) {
        self.to = Self.assumingScheme(to)
    }

    /// `host:port/path` as curl reads it: a URL without a scheme is http://. A list (`@FILE`),
    /// anything with a scheme, and what does not start like a host are left as written.
    public static func assumingScheme(_ to: String) -> String {
        guard !to.contains("://"), let first = to.unicodeScalars.first,
            CharacterSet.alphanumerics.contains(first) || first == "["
        else { return to }
        return "http://" + to
    }

    /// `--to @LIST`: the list's path.
    public var destinationList: String? { to.hasPrefix("@") ? String(to.dropFirst()) : nil }

    /// `-F` given at least once.
    public var formFieldsGiven: Bool { !formFields.isEmpty }
    /// `--netrc`, `--netrc-file` or `--netrc-optional` given.
    public var netrcGiven: Bool { netrc || netrcOptional || netrcFile != nil }
    /// Whether a `-H @-` reads headers from standard input.
    public var headersFromStandardInput: Bool { headers.contains("@-") }

    /// `--protocol`, or `put` for `--put`.
    public var uploadProtocol: UploadProtocol { put ? .put : `protocol` }

    /// Why these choices cannot be used, in the words the command prints; nil when they can.
    /// `environment`: where a proxy not given comes from (a bad `https_proxy` is refused too).
    public func refusal(environment: [String: String]) -> String? {
        if destinationList == nil {
            do throws(UploadInputError) { try Destination.validate(to) } catch { return error.description }
        }
        if let limitRate, let refusal = ByteSize.refusal(limitRate, option: "--limit-rate", atLeast: 1024, like: "500k or 20MB", noun: "rate") {
            return refusal
        }
        if let chunkSize, let refusal = ByteSize.refusal(chunkSize, option: "--chunk-size", atLeast: 1, like: "5MiB or 6MiB") {
            return refusal
        }
        if let refusal = conversionRefusal { return refusal }
        if destinationList != nil, netrcGiven { return DestinationList.netrcRefusal }
        if let refusal = Destination.refusal(
            destinationList == nil ? to : nil, protocol: `protocol`, put: put, createDirs: createDirs, formFields: formFieldsGiven)
        {
            return refusal
        }
        guard concurrency >= 1 else { return "--concurrency must be at least 1" }
        guard retries >= 0 else { return "--retries cannot be negative" }
        do throws(RangeError) {
            for (text, option) in [(connectTimeout, "--connect-timeout"), (stallTimeout, "--stall-timeout"), (answerTimeout, "--answer-timeout")] {
                _ = try DurationRule.timeout.parse(text, option: option)
            }
            try transportSettings(for: to, environment: environment).validate()
        } catch {
            return error.message
        }
        return nil
    }

    /// What `--convert`, `--quality`, `--max-dimension` and `--max-bytes` ask, or nil when none
    /// is given.
    public var conversion: PhotoConversion? {
        guard convert != nil || quality != nil || maxDimension != nil || maxBytes != nil else { return nil }
        return PhotoConversion(
            format: convert.flatMap { PhotoConversion.Format(rawValue: $0.lowercased()) } ?? .keep,
            quality: quality ?? PhotoConversion.defaultQuality, maxDimension: maxDimension,
            maxBytes: maxBytes.flatMap(ByteSize.parse))
    }

    /// Why the conversion options cannot be used; nil when they can.
    public var conversionRefusal: String? {
        if let convert, PhotoConversion.Format(rawValue: convert.lowercased()) == nil {
            return "--convert \(convert) is not a format photos are written in: jpeg, webp or keep"
        }
        if let maxBytes, let refusal = ByteSize.refusal(maxBytes, option: "--max-bytes", atLeast: 1024, like: "500k or 2MB") {
            return refusal
        }
        if let quality, !(1...100).contains(quality) { return "--quality \(quality) is out of range: from 1 to 100" }
        if let maxDimension, !(16...65_500).contains(maxDimension) {
            return "--max-dimension \(maxDimension) is out of range: from 16 to 65500 pixels"
        }
        if quality != nil, conversion?.changesAnything != true {
            return "--quality sets how photos written again are written: add --convert jpeg or webp, --max-dimension or --max-bytes"
        }
        return nil
    }

    /// The settings for uploads to `url` (its proxy, from these choices or `environment`'s
    /// proxy variables as curl reads them).
    public func transportSettings(for url: String, environment: [String: String]) -> TransportSettings {
        // The proxy for the destination's scheme; the no-proxy list goes with it and is read for
        // each request's own host (a redirect elsewhere is routed by where it goes).
        let rules = ProxyRules(proxy: proxy, noProxy: noProxy, environment: environment)
        let bypass = rules.bypassList
        let chosen =
            bypass.map(ProxyRules.bypassesEveryHost) == true
            ? nil
            : rules.proxyForScheme(of: S3AccessSource.requestURL(for: url, environment: environment))
        return TransportSettings(
            caCertificatePath: caCertificate, insecure: insecure, rateLimit: limitRate.flatMap(ByteSize.parse),
            connectTimeout: DurationText.parse(connectTimeout) ?? .nan, stallTimeout: DurationText.parse(stallTimeout) ?? .nan,
            answerTimeout: DurationText.parse(answerTimeout) ?? .nan, retries: retries,
            resume: !noResume, stripLocation: stripLocation,
            proxy: chosen, digests: !noDigest,
            uploadProtocol: uploadProtocol, chunkSize: chunkSize.flatMap(ByteSize.parse), createDirs: createDirs,
            noProxy: chosen == nil ? nil : bypass, followsRedirectsElsewhere: location, conversion: conversion
        )
    }

    /// Every refusal of the options a command checks before it starts: the choices together, the
    /// `-F` fields, the `-H` headers (their files read; `@-` not: standard input may be a file
    /// to send).
    public func commandLineRefusal(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let refusal = refusal(environment: environment) { return refusal }
        do throws(UploadInputError) {
            _ = try parsedFormFields()
            _ = try parsedHeaders(readingStandardInput: false, environment: environment)
        } catch {
            return error.description
        }
        return nil
    }

    /// The `-F` fields, each checked.
    public func parsedFormFields() throws(UploadInputError) -> [FormField] {
        var fields: [FormField] = []
        for argument in formFields { fields.append(try FormField(parsing: argument)) }
        return fields
    }

    /// The `-H` headers, `@FILE` ones read from their files, and a netrc login (`HeaderArguments`).
    public func parsedHeaders(readingStandardInput: Bool = true, environment: [String: String] = ProcessInfo.processInfo.environment) throws(UploadInputError)
        -> [RequestHeader]
    {
        try HeaderArguments(headers, netrc: netrcChoice(environment: environment), standardInput: { HeaderInput.standardInput })
            .parse(for: to, readingStandardInput: readingStandardInput)
    }

    /// The netrc file asked for, if any (`~` from `HOME`).
    public func netrcChoice(environment: [String: String] = ProcessInfo.processInfo.environment) -> NetrcChoice? {
        HeaderArguments.netrcChoice(
            netrc: netrc, netrcFile: netrcFile, netrcOptional: netrcOptional,
            home: environment["HOME"] ?? NSHomeDirectory())
    }

    /// The endpoint as sent: without the URL's own login and password when a netrc entry replaces them.
    public var endpoint: String { netrcChoice()?.endpoint(to) ?? to }

    /// The settings for uploads to the endpoint, from this process's environment.
    public var transportSettings: TransportSettings { transportSettings(for: endpoint) }

    /// The settings for uploads to `url`'s origin (its proxy), from this process's environment.
    public func transportSettings(for url: String) -> TransportSettings {
        transportSettings(for: url, environment: ProcessInfo.processInfo.environment)
    }
}

/// Headers read from standard input (`-H @-`), read once however often they are asked for.
public enum HeaderInput {
    public static let standardInput: String? = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
}
