import TerminalCanvas
import PreviewModel
import UploadCore

/// One picture to show: which file (as it was when listed) and the box it must fit, in cells.
public struct PreviewRequest: Sendable, Hashable {
    public var path: String
    public var size: Int64
    /// Text cells the picture may cover.
    public var columns: Int
    public var rows: Int
    /// Pixels a cell: 1x2 for half blocks (two per cell, one above the other), the terminal's
    /// cell size for kitty graphics and sixel.
    public var cellWidth: Int
    public var cellHeight: Int

    public init(path: String, size: Int64, columns: Int, rows: Int, cellWidth: Int = 1, cellHeight: Int = 2) {
        self.path = path
        self.size = size
        self.columns = columns
        self.rows = rows
        self.cellWidth = max(1, cellWidth)
        self.cellHeight = max(1, cellHeight)
    }

    /// Whether the picture is for real pixels rather than half blocks.
    public var inPixels: Bool { cellWidth != 1 || cellHeight != 2 }

    /// The box the decoded picture must fit, in pixels: the cells' pixels, scaled down to at
    /// most `PixelGraphics.maxPixels` for real pixels.
    public var pixelBox: (width: Int, height: Int) {
        let width = columns * cellWidth
        let height = rows * cellHeight
        guard inPixels, width * height > PixelGraphics.maxPixels else { return (width, height) }
        let scale = (Double(PixelGraphics.maxPixels) / Double(width * height)).squareRoot()
        return (max(1, Int(Double(width) * scale)), max(1, Int(Double(height) * scale)))
    }
}

/// A photo under the cursor, written as it would leave, to tell its exact size.
public struct ConversionMeasure: Sendable, Hashable {
    public var path: String
    /// The file's size when listed: a file that changed is measured again.
    public var size: Int64
    public var conversion: PhotoConversion
    public var stripLocation: Bool

    public init(path: String, size: Int64, conversion: PhotoConversion, stripLocation: Bool) {
        (self.path, self.size, self.conversion, self.stripLocation) = (path, size, conversion, stripLocation)
    }

    /// What writing it found.
    public enum Found: Sendable, Hashable {
        /// The bytes it leaves with.
        case bytes(Int64)
        /// The converter's refusal (an animation's frames counted, an HDR curve…).
        case refused(String)
    }
}

/// The last few values by key, newest last: a key stored again moves to the end, and the
/// oldest go past `size`.
struct RecentResults<Key: Equatable & Sendable, Value: Sendable>: Sendable {
    private(set) var entries: [(key: Key, value: Value)] = []
    let size: Int

    func value(for key: Key) -> Value? { entries.last { $0.key == key }?.value }

    mutating func store(_ value: Value, for key: Key) {
        entries.removeAll { $0.key == key }
        entries.append((key, value))
        if entries.count > size { entries.removeFirst(entries.count - size) }
    }

    var keys: [Key] { entries.map(\.key) }
}

/// The preview pane: on or off (`p`), what it wants to show, and the last few results.
public struct PreviewState: Sendable, Equatable {
    public var enabled = true
    /// What the pane shows now; nil when there is nothing to show (a folder, no room).
    public internal(set) var wanted: PreviewRequest? {
        didSet { if wanted != oldValue { rested = false } }
    }
    /// The cursor has stayed on `wanted` for `restBeforePixels`: a picture in real pixels is
    /// sent only then (half blocks until), so holding `j` over SSH does not send a megabyte
    /// of pixels for every photo it passes.
    public internal(set) var rested = false
    public static let restBeforePixels = 0.15
    /// The last results, newest last: moving back to a photo shows it at once.
    private var cache = RecentResults<PreviewRequest, Result<Preview, PreviewProblem>>(size: Self.cacheSize)
    public static let cacheSize = 8
    /// The photo under the cursor as it would be written (`F`, the destination's `--convert`),
    /// measured off the loop; nil when nothing is to be written.
    public internal(set) var measureWanted: ConversionMeasure?
    /// What writing the last few measured found, by what was measured.
    private var measured = RecentResults<ConversionMeasure, ConversionMeasure.Found>(size: Self.cacheSize)

    public init() {}

    /// What writing `request` found (its exact size, or why it cannot go), once measured.
    public func measured(_ request: ConversionMeasure?) -> ConversionMeasure.Found? {
        request.flatMap(measured.value(for:))
    }

    mutating func storeMeasure(_ request: ConversionMeasure, _ found: ConversionMeasure.Found) {
        measured.store(found, for: request)
    }

    public func result(for request: PreviewRequest) -> Result<Preview, PreviewProblem>? {
        cache.value(for: request)
    }

    /// Whether `request` must be decoded: nothing kept for it, or only a first picture.
    public func needsDecoding(_ request: PreviewRequest) -> Bool {
        switch result(for: request) {
        case nil: true
        case .success(let preview)?: preview.provisional
        case .failure?: false
        }
    }

    /// What the pane shows: nil while the wanted picture is being decoded.
    public var shown: Result<Preview, PreviewProblem>? { wanted.flatMap(result(for:)) }

    mutating func store(_ result: Result<Preview, PreviewProblem>, for request: PreviewRequest) {
        // A decode cancelled because the cursor moved on says nothing about the file.
        if case .failure(.cancelled) = result { return }
        // A first picture never takes the place of the photo itself, arriving late.
        if case .success(let preview) = result, preview.provisional, case .success(let kept)? = self.result(for: request), !kept.provisional { return }
        cache.store(result, for: request)
    }

    public static func == (a: PreviewState, b: PreviewState) -> Bool {
        a.enabled == b.enabled && a.wanted == b.wanted && a.rested == b.rested && a.cache.keys == b.cache.keys
            && a.measureWanted == b.measureWanted && a.measured.keys == b.measured.keys
    }
}
