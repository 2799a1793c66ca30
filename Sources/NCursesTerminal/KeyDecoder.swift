import CNCursesW
import TerminalCanvas

/// Turns what `get_wch` returns into `Key`s. Anything unknown becomes `.unknown`, never a crash.
enum KeyDecoder {
    static func character(_ value: UInt32) -> Key {
        switch value {
        case 9: return .tab
        case 10, 13: return .enter
        case 8, 127: return .backspace
        case 27: return .escape
        case 1...26: return .control(Character(Unicode.Scalar(value + 96)!))
        case 0..<32: return .unknown(Int32(value))
        default:
            guard let scalar = Unicode.Scalar(value) else { return .unknown(Int32(truncatingIfNeeded: value)) }
            return .character(Character(scalar))
        }
    }

    static func special(_ code: Int32) -> Key {
        switch code {
        case KEY_UP: return .up
        case KEY_DOWN: return .down
        case KEY_LEFT: return .left
        case KEY_RIGHT: return .right
        case KEY_PPAGE: return .pageUp
        case KEY_NPAGE: return .pageDown
        case KEY_HOME: return .home
        case KEY_END: return .end
        case KEY_ENTER: return .enter
        case KEY_BACKSPACE: return .backspace
        case KEY_DC: return .delete
        case KEY_BTAB: return .backTab
        default: return .unknown(code)
        }
    }
}
