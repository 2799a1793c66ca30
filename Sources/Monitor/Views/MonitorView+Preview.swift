import PreviewModel
import TerminalCanvas
import UploadCore

extension MonitorView {
    /// The picture under the cursor, fitted and centred, with what it is underneath:
    /// "4032×3024 · 2024-05-01 10:22 · Pixel 8 · 3.1 MB".
    static func drawPreview(_ canvas: inout Canvas, _ state: MonitorState, _ rect: Rect, _ theme: Theme) {
        let name = state.preview.wanted.map { NSStringPath(path: $0.path).lastComponent }
        let title = name.map { "Preview · " + $0 } ?? "Preview"
        let inside = canvas.frame(
            rect, title: TextLayout.truncate(title, width: max(1, rect.width - 4), ellipsis: theme.glyphs.ellipsis),
            style: theme.frame, glyphs: theme.glyphs)
        guard !inside.isEmpty else { return }
        let infoRow = Rect(x: inside.x, y: inside.maxY - 1, width: inside.width, height: 1)
        guard state.preview.wanted != nil else {
            canvas.write(TextLayout.truncate("(no file under the cursor)", width: inside.width), x: inside.x, y: inside.y, style: theme.muted, clip: inside)
            return
        }
        switch state.preview.shown {
        case nil:
            canvas.write("decoding…", x: inside.x, y: inside.y, style: theme.muted, clip: inside)
        case .failure(let problem):
            let lines = TextLayout.wrap(problem.description, width: inside.width, limit: max(1, inside.height - 1))
            for (i, line) in lines.enumerated() {
                canvas.write(line, x: inside.x, y: inside.y + i, style: problemIsHonestRefusal(problem) ? theme.muted : theme.failed, clip: inside)
            }
            if let info = problem.info {
                writeInfo(&canvas, info, infoRow, theme, sendsAs: state.sendsAs, measured: state.preview.measured(state.measureRequest))
            }
        case .success(let preview):
            let image = preview.image
            if let request = state.preview.wanted, request.inPixels {
                writeInfo(&canvas, preview.info, infoRow, theme, sendsAs: state.sendsAs, measured: state.preview.measured(state.measureRequest))
                // Hidden under a dialog (kitty would draw over it).
                guard state.modal == nil, theme.pixels != nil else { return }
                if state.preview.rested {
                    // Real pixels, 1:1: the cells they cover, centred.
                    let columns = (image.width + request.cellWidth - 1) / request.cellWidth
                    let rows = (image.height + request.cellHeight - 1) / request.cellHeight
                    let x = inside.x + max(0, (inside.width - columns) / 2)
                    let y = inside.y + max(0, (inside.height - 1 - rows) / 2)
                    canvas.pixels = PixelPicture(x: x, y: y, columns: columns, rows: rows, width: image.width, height: image.height, rgb: image.rgb)
                } else if let cells = preview.cells, theme.pictureDepth != .none {
                    // Still moving: half blocks, a fraction of the bytes.
                    let x = inside.x + max(0, (inside.width - cells.width) / 2)
                    let y = inside.y + max(0, (inside.height - 1 - (cells.height + 1) / 2) / 2)
                    canvas.picture = CellPicture(x: x, y: y, width: cells.width, height: cells.height, rgb: cells.rgb)
                }
                return
            }
            let pictureRows = (image.height + 1) / 2
            let x = inside.x + max(0, (inside.width - image.width) / 2)
            let y = inside.y + max(0, (inside.height - 1 - pictureRows) / 2)
            if theme.pictureDepth == .none || state.modal != nil {
                // No colour (NO_COLOR, 8 colours) or a dialog on top: the picture as shading,
                // in the cells themselves.
                if state.modal == nil { drawShaded(&canvas, image, x: x, y: y, clip: inside) }
            } else {
                canvas.picture = CellPicture(x: x, y: y, width: image.width, height: image.height, rgb: image.rgb)
            }
            writeInfo(&canvas, preview.info, infoRow, theme, sendsAs: state.sendsAs, measured: state.preview.measured(state.measureRequest))
        }
    }

    static func problemIsHonestRefusal(_ problem: PreviewProblem) -> Bool {
        if case .noPreview = problem { return true }
        return false
    }

    static func writeInfo(
        _ canvas: inout Canvas, _ info: PreviewInfo, _ row: Rect, _ theme: Theme, sendsAs: PhotoConversion? = nil,
        measured: ConversionMeasure.Found? = nil
    ) {
        var parts: [String] = []
        if let leaving = leavingText(info, sendsAs, measured: measured) { parts.append(leaving) }
        if let w = info.width, let h = info.height { parts.append("\(w)×\(h)") }
        if let date = info.dateTaken { parts.append(readableDate(date)) }
        if let camera = info.camera { parts.append(camera) }
        // A photo that says where it was taken says so, coarsely: sending it publishes the place.
        if let location = info.location { parts.append((theme.glyphs == .unicode ? "📍 " : "GPS ") + location.coarse) }
        if let size = info.fileSize { parts.append(ByteFormat.bytes(size)) }
        if parts.isEmpty, let format = info.format { parts.append(format.rawValue) }
        canvas.write(
            TextLayout.truncate(parts.joined(separator: " · "), width: row.width, ellipsis: theme.glyphs.ellipsis),
            x: row.x, y: row.y, style: theme.muted, clip: row)
    }

    /// What leaves when photos are converted: "sends JPEG q85 2048×1536, 412 KB" (the bytes
    /// once the photo was written off the loop), "sends it as it is", or why it cannot be
    /// converted; nil when photos go as they are.
    static func leavingText(_ info: PreviewInfo, _ conversion: PhotoConversion?, measured: ConversionMeasure.Found? = nil) -> String? {
        guard let conversion, conversion.changesAnything, let format = info.format else { return nil }
        switch conversion.outcome(source: format.rawValue, width: info.width, height: info.height, fileSize: info.fileSize ?? 0) {
        case .asItIs:
            return "sends it as it is"
        case .refused(let why):
            return "not sent: " + why
        case .written(let target, let width, let height):
            // Writing it found what the file's header could not tell (an animated GIF's frames).
            if case .refused(let why)? = measured { return "not sent: " + why }
            let pixels = width.flatMap { w in height.map { " \(w)×\($0)" } } ?? ""
            // With a size limit the quality is the largest that fits, found as it is written.
            let quality = conversion.maxBytes.map { " ≤ " + ByteFormat.bytes($0) } ?? " q\(conversion.quality)"
            let bytes = if case .bytes(let count)? = measured { ", " + ByteFormat.bytes(count) } else { "" }
            return "sends \(target == .webp ? "WebP" : "JPEG")\(quality)\(pixels)" + bytes
        }
    }

    /// EXIF's "2024:05:01 10:22:03" as "2024-05-01 10:22".
    static func readableDate(_ exif: String) -> String {
        let parts = exif.split(separator: " ")
        guard parts.count == 2, parts[0].count == 10 else { return exif }
        return parts[0].replacing(":", with: "-") + " " + parts[1].prefix(5)
    }

    static func drawShaded(_ canvas: inout Canvas, _ image: RGBImage, x: Int, y: Int, clip: Rect) {
        for row in 0..<(image.height + 1) / 2 {
            var line = ""
            for column in 0..<image.width {
                let top = image.pixel(column, 2 * row)
                let bottom = 2 * row + 1 < image.height ? image.pixel(column, 2 * row + 1) : top
                let luma = (RGB(top.0, top.1, top.2).luma + RGB(bottom.0, bottom.1, bottom.2).luma) / 2
                line.append(PictureEncoder.shade(luma))
            }
            canvas.write(line, x: x, y: y + row, clip: clip)
        }
    }
}

extension PreviewProblem {
    var info: PreviewInfo? {
        switch self {
        case .noPreview(let info): info
        case .cannotPreview(_, let info): info
        case .cancelled: nil
        }
    }
}

/// The last path component, without Foundation.
struct NSStringPath {
    let path: String
    var lastComponent: String { path.split(separator: "/").last.map(String.init) ?? path }
}
