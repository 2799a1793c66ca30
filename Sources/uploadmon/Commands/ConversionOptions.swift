import ArgumentParser
import UploadCommands

/// How photos are written on the way out: the same four options in `send`, the monitor, watch
/// and `uploadmon convert`.
struct ConversionOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Send photos as JPEG or WebP (HEIC, AVIF, PNG and WebP photos decoded and written again; a photo already in that format goes as it is unless it must be resized), or keep each one's format. The name follows the format (IMG_1234.HEIC goes as IMG_1234.jpg), the photo is turned upright and keeps its colour profile and EXIF (only what --strip-location keeps, with it).",
            valueName: "jpeg|webp|keep"))
    var convert: String?

    @Option(name: .long, help: ArgumentHelp("The quality photos written again are written at (1-100, default 85).", valueName: "1-100"))
    var quality: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Make photos at most this many pixels on their longest side (upright), resampled with a Lanczos filter; smaller ones are not enlarged.",
            valueName: "pixels"))
    var maxDimension: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Make photos at most this large (e.g. 2MB, 500k): written at the highest quality that fits (not below 30); a photo that cannot fit is refused with what would help.",
            valueName: "size"))
    var maxBytes: String?

    /// Puts the options into `choices`, which checks them.
    func apply(to choices: inout UploadChoices) {
        (choices.convert, choices.quality, choices.maxDimension, choices.maxBytes) = (convert, quality, maxDimension, maxBytes)
    }
}
