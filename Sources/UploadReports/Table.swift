import TerminalCanvas
import UploadCore

/// Left-aligned columns two spaces apart, by terminal width (wide CJK characters count two);
/// the last column is not padded.
public enum Table {
    /// Every cell is shown by the terminal escaping rule: a name or an answer can hold anything.
    public static func render(_ rows: [[String]]) -> String {
        let rows = rows.map { $0.map(InvisibleCharacters.escaped) }
        guard let first = rows.first else { return "" }
        let widths = first.indices.map { column in rows.map { DisplayWidth.of($0[column]) }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: max(0, widths[index] - DisplayWidth.of(cell)))
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
