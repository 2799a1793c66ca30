/// A key press as the monitor understands it, decoded by the terminal backend.
public enum Key: Hashable, Sendable {
    case character(Character)
    /// Ctrl plus a letter, given in lower case (`.control("c")` is Ctrl-C).
    case control(Character)
    case up, down, left, right, pageUp, pageDown, home, end
    case enter, backspace, delete, escape, tab, backTab
    /// A key the backend could not name; ignored everywhere, never a crash.
    case unknown(Int32)
    /// The mouse: a button pressed or the wheel turned at a cell (0-based column and row).
    case mouse(MouseAction, x: Int, y: Int)
}

/// What the mouse did.
public enum MouseAction: Hashable, Sendable {
    case press, wheelUp, wheelDown
}
