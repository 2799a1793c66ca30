import Foundation

/// The demo's sample files: real PNGs of several sizes (one large enough to watch), one with a
/// Japanese name, one in a subfolder, and a text file named like a JPEG for the receiver to refuse.
/// Files already there with the right size are reused.
public enum DemoSamples {
    /// The sample that is no picture: the demo's receiver refuses it (415) on purpose.
    public static let refusedName = "notes.jpg"

    public static func write(into folder: String, bigBytes: Int) throws -> [String] {
        let fm = FileManager.default
        try fm.createDirectory(atPath: folder + "/more", withIntermediateDirectories: true)
        // A width whose rows fill whole bands; the height follows from the size asked for.
        let bigWidth = 8000
        let bigHeight = max(64, bigBytes / (bigWidth * 3 + 1))
        let samples: [(name: String, width: Int, height: Int, scene: DemoScene)] = [
            ("sunrise.png", 640, 480, .sunrise),
            ("夕焼け.png", 1200, 800, .sunsetSea),
            ("city-night.png", 2400, 1600, .cityNight),
            ("mountain-large.png", bigWidth, bigHeight, .mountains),
            ("more/tiny.png", 64, 64, .smile),
        ]
        var paths: [String] = []
        for sample in samples {
            let path = folder + "/" + sample.name
            // Scenes, so the preview shows something recognisable on first run. The small ones
            // are one band (a whole picture); the large one repeats its scene in 8 bands, the
            // way it is written fast (a filmstrip of 8 frames).
            let band = sample.name == "mountain-large.png" ? (sample.height + 7) / 8 : sample.height
            let expected = PNGEncoder.bandedFileSize(width: sample.width, height: sample.height, bandRows: band)
            let existing = (try? fm.attributesOfItem(atPath: path)[.size] as? Int64) ?? nil
            if existing != expected {
                _ = try PNGEncoder.writeBanded(
                    to: path, width: sample.width, height: sample.height, bandRows: band,
                    pixel: sample.scene.pixels(width: sample.width, height: band))
            }
            paths.append(path)
        }
        let notes = folder + "/" + refusedName
        try Data("These are meeting notes, not a photo.\n".utf8).write(to: URL(fileURLWithPath: notes))
        paths.append(notes)
        return paths
    }
}
