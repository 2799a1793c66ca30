import UploadCore
import TerminalCanvas

/// How finished uploads are told to the terminal, beyond the notification log.
public enum NotifyMode: String, Sendable, CaseIterable {
    /// BEL: every terminal rings or flashes, and tmux and screen pass it on.
    case bell
    /// A desktop notification escape: OSC 99 on kitty, OSC 9 on iTerm2/WezTerm/ghostty,
    /// OSC 777 elsewhere (urxvt, foot, VTE terminals). Travels through SSH to the user's machine.
    case osc
    case none
}

/// The bytes that ask the terminal for a notification.
public enum TerminalNotification {
    public static func bytes(mode: NotifyMode, title: String, body: String, environment: [String: String]) -> [UInt8] {
        switch mode {
        case .none: return []
        case .bell: return [0x07]
        case .osc:
            let title = clean(title)
            let body = clean(body)
            let sequence: String
            if environment["TERM"] == "xterm-kitty" || environment["KITTY_WINDOW_ID"] != nil {
                sequence = "\u{1B}]99;i=uploadmon:d=0;\(title)\u{1B}\\\u{1B}]99;i=uploadmon:d=1:p=body;\(body)\u{1B}\\"
            } else if ["iTerm.app", "WezTerm", "ghostty"].contains(environment["TERM_PROGRAM"] ?? "")
                || environment["LC_TERMINAL"] == "iTerm2"
            {
                sequence = "\u{1B}]9;\(title): \(body)\u{07}"
            } else {
                sequence = "\u{1B}]777;notify;\(title.replacing(";", with: ","));\(body)\u{07}"
            }
            return Array(wrapForTmux(sequence, environment: environment).utf8)
        }
    }

    /// Inside tmux an escape only reaches the outer terminal wrapped in a DCS passthrough with
    /// every ESC doubled (tmux 3.3+ also needs `set -g allow-passthrough on`).
    static func wrapForTmux(_ sequence: String, environment: [String: String]) -> String {
        environment["TMUX"] == nil ? sequence : TmuxPassthrough.wrap(sequence)
    }

    /// Control characters would end the escape early or inject others, and format characters
    /// would disguise a name in the notification: show them escaped, in plain ASCII.
    static func clean(_ text: String) -> String {
        InvisibleCharacters.escaped(text)
    }
}
