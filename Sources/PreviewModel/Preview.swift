import Foundation

/// A picture ready to draw and the line that goes under it.
public struct Preview: Sendable, Equatable {
    /// Upright, fitted into the box it was asked for.
    public var image: RGBImage
    public var info: PreviewInfo
    /// When `image` is in real pixels: the same picture fitted to half-block cells, shown while
    /// the cursor is still moving.
    public var cells: RGBImage?
    /// A first picture from the file's own small copy of itself (its EXIF thumbnail), shown
    /// until the photo itself is decoded: never kept as the answer.
    public var provisional: Bool

    public init(image: RGBImage, info: PreviewInfo, cells: RGBImage? = nil, provisional: Bool = false) {
        self.image = image
        self.info = info
        self.cells = cells
        self.provisional = provisional
    }
}

/// What is said under a preview (or instead of one).
public struct PreviewInfo: Sendable, Equatable {
    public var format: ImageProbe.Format?
    /// Upright pixel dimensions.
    public var width: Int?
    public var height: Int?
    public var dateTaken: String?
    public var camera: String?
    public var fileSize: Int64?
    /// Where the photo was taken, when its metadata says.
    public var location: GeoPoint?

    public init(
        format: ImageProbe.Format? = nil, width: Int? = nil, height: Int? = nil, dateTaken: String? = nil, camera: String? = nil, fileSize: Int64? = nil,
        location: GeoPoint? = nil
    ) {
        self.location = location
        self.format = format
        self.width = width
        self.height = height
        self.dateTaken = dateTaken
        self.camera = camera
        self.fileSize = fileSize
    }
}

/// Why there is no picture: said in the preview pane instead of one.
public enum PreviewProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// A format shown by its dimensions only (GIF, WebP, HEIC, …).
    case noPreview(PreviewInfo)
    /// Not a picture, unreadable, corrupt or truncated.
    case cannotPreview(String, PreviewInfo?)
    case cancelled

    public var description: String {
        switch self {
        case .noPreview(let info): "no preview for \(info.format?.rawValue ?? "this format")"
        case .cannotPreview(let why, _): "cannot preview: \(why)"
        case .cancelled: "cancelled"
        }
    }
}
