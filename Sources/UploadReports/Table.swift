import TerminalCanvas

/// Left-aligned columns two spaces apart, by terminal width (wide CJK characters count two);
/// the last column is not padded.
public enum Table {
    public static func render(_ rows: [[String]]) -> String {
        guard let first = rows.first else { return "" }
        let widths = first.indices.map { column in rows.map { DisplayWidth.of($0[column]) }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: max(0, widths[index] - DisplayWidth.of(cell)))
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
