import Foundation
import UploadCore

/// S3's XML as the multipart upload reads and writes it: the parts a ListParts answer names, an
/// element's text, and the escaping of an ETag in the completion's list.
///
/// Why not an XML library (Foundation's XMLParser, or SWXMLHash and XMLCoder on top of it): on
/// Linux it is FoundationXML, which brings libxml2 and its libraries into every start of the
/// program, S3 or not: 0.5–0.75 ms more per process (200 starts of a program that only links
/// it, 2026-12-06), against `send`'s start-up measured beside curl's. What is read here is a
/// few named elements of S3's flat answers (no prefixes, no attributes read), with XML's five
/// named and the numeric references resolved.
extension S3MultipartMachine {
    /// The parts a ListParts answer names.
    static func parts(in body: [UInt8]) -> [S3Part] {
        let xml = String(decoding: body, as: UTF8.self)
        return xml.components(separatedBy: "<Part>").dropFirst().compactMap { chunk in
            guard let number = element("PartNumber", in: chunk).flatMap(Int.init),
                let etag = element("ETag", in: chunk), let size = element("Size", in: chunk).flatMap(Int64.init)
            else { return nil }
            return S3Part(number: number, etag: unescaped(etag), size: size, crc32c: element("ChecksumCRC32C", in: chunk))
        }
    }

    static func element(_ name: String, in body: [UInt8]) -> String? {
        element(name, in: String(decoding: body, as: UTF8.self))
    }

    static func element(_ name: String, in xml: String) -> String? {
        guard let start = xml.range(of: "<\(name)>"), let end = xml.range(of: "</\(name)>", range: start.upperBound..<xml.endIndex) else { return nil }
        let text = xml[start.upperBound..<end.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    /// XML text with its references resolved: the five named ones and numeric ones (`&#34;`,
    /// `&#x22;`: rclone writes an ETag's quotes so).
    static func unescaped(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            guard let semi = rest[amp...].firstIndex(of: ";"), rest.distance(from: amp, to: semi) <= 10 else {
                out += rest[amp...]
                return out
            }
            let name = rest[rest.index(after: amp)..<semi]
            let named: [Substring: String] = ["quot": "\"", "amp": "&", "lt": "<", "gt": ">", "apos": "'"]
            if let value = named[name] {
                out += value
            } else if name.hasPrefix("#x") || name.hasPrefix("#X"), let code = UInt32(name.dropFirst(2), radix: 16), let scalar = Unicode.Scalar(code) {
                out.unicodeScalars.append(scalar)
            } else if name.hasPrefix("#"), let code = UInt32(name.dropFirst()), let scalar = Unicode.Scalar(code) {
                out.unicodeScalars.append(scalar)
            } else {
                out += rest[amp...semi]
            }
            rest = rest[rest.index(after: semi)...]
        }
        return out + rest
    }
}
