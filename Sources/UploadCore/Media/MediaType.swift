/// A media type as uploadmon understands it: the MIME string sent in the part's
/// `Content-Type`, whether it counts as an image, and a short human name for messages.
public struct MediaType: Sendable, Hashable, CustomStringConvertible {
    public let mime: String
    public let isImage: Bool
    public let name: String

    public init(mime: String, isImage: Bool, name: String) {
        self.mime = mime
        self.isImage = isImage
        self.name = name
    }

    public var description: String { mime }

    public static let jpeg = MediaType(mime: "image/jpeg", isImage: true, name: "JPEG image")
    public static let png = MediaType(mime: "image/png", isImage: true, name: "PNG image")
    public static let gif = MediaType(mime: "image/gif", isImage: true, name: "GIF image")
    public static let bmp = MediaType(mime: "image/bmp", isImage: true, name: "BMP image")
    public static let webp = MediaType(mime: "image/webp", isImage: true, name: "WebP image")
    public static let tiff = MediaType(mime: "image/tiff", isImage: true, name: "TIFF image")
    public static let heic = MediaType(mime: "image/heic", isImage: true, name: "HEIC image")
    public static let heif = MediaType(mime: "image/heif", isImage: true, name: "HEIF image")
    public static let avif = MediaType(mime: "image/avif", isImage: true, name: "AVIF image")
    public static let plainText = MediaType(mime: "text/plain", isImage: false, name: "text")
    public static let octetStream = MediaType(mime: "application/octet-stream", isImage: false, name: "binary data")
}
