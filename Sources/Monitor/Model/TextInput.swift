import TerminalCanvas
/// A one-line text field with a cursor, edited the readline way: arrows, Home/End, Ctrl-A/E,
/// Backspace/Delete, Ctrl-U (clear before the cursor), Ctrl-K (clear after), Ctrl-W (word).
public struct TextInput: Sendable, Equatable {
    public private(set) var characters: [Character]
    /// Index in `characters` the next typed character goes before.
    public private(set) var cursor: Int

    public init(_ text: String = "") {
        characters = Array(text)
        cursor = characters.count
    }

    public var text: String { String(characters) }

    /// Applies an editing key; returns false when the key is not an editing key.
    public mutating func apply(_ key: Key) -> Bool {
        switch key {
        case .character(let c):
            guard !(c.unicodeScalars.first.map { $0.value < 0x20 || $0.value == 0x7F } ?? true) else { return false }
            characters.insert(c, at: cursor)
            cursor += 1
        case .left, .control("b"): cursor = max(0, cursor - 1)
        case .right, .control("f"): cursor = min(characters.count, cursor + 1)
        case .home, .control("a"): cursor = 0
        case .end, .control("e"): cursor = characters.count
        case .backspace, .control("h"):
            guard cursor > 0 else { return true }
            characters.remove(at: cursor - 1)
            cursor -= 1
        case .delete, .control("d"):
            guard cursor < characters.count else { return true }
            characters.remove(at: cursor)
        case .control("u"):
            characters.removeFirst(cursor)
            cursor = 0
        case .control("k"):
            characters.removeLast(characters.count - cursor)
        case .control("w"):
            var start = cursor
            while start > 0 && characters[start - 1] == " " { start -= 1 }
            while start > 0 && characters[start - 1] != " " { start -= 1 }
            characters.removeSubrange(start..<cursor)
            cursor = start
        default:
            return false
        }
        return true
    }
}
