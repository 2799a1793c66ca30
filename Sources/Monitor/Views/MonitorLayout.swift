import TerminalCanvas

/// Where each pane goes at a terminal size. Wide terminals get the browser on the left and
/// queue, response and log stacked on the right; narrow ones stack everything; short ones drop
/// the log pane (its latest line still reaches the status line).
public struct MonitorLayout: Sendable, Equatable {
    public static let minimumWidth = 24
    public static let minimumHeight = 8

    public var titleBar = Rect(x: 0, y: 0, width: 0, height: 0)
    public var browser = Rect(x: 0, y: 0, width: 0, height: 0)
    public var queue = Rect(x: 0, y: 0, width: 0, height: 0)
    public var response = Rect(x: 0, y: 0, width: 0, height: 0)
    public var log = Rect(x: 0, y: 0, width: 0, height: 0)
    /// The picture under the browser's cursor; empty when off or when there is no room (small
    /// terminals lose it before anything else).
    public var preview = Rect(x: 0, y: 0, width: 0, height: 0)
    public var statusLine = Rect(x: 0, y: 0, width: 0, height: 0)
    public var isTooSmall: Bool

    public init(width: Int, height: Int, preview: Bool = false) {
        isTooSmall = width < Self.minimumWidth || height < Self.minimumHeight
        guard !isTooSmall else { return }
        let screen = Rect(x: 0, y: 0, width: width, height: height)
        let (title, rest) = screen.splitTop(1)
        let (body, status) = rest.splitBottom(1)
        titleBar = title
        statusLine = status
        if width >= 100 && height >= 16 {
            let (left, right) = body.splitLeft(width * 2 / 5)
            browser = left
            if preview && left.height >= 22 {
                (browser, self.preview) = left.splitBottom(max(10, left.height * 2 / 5))
            }
            let parts = right.splitRows(weights: [4, 4, 3], minimum: 3)
            (queue, response, log) = (parts[0], parts[1], parts[2])
        } else if height >= 20 {
            // The lists first: rows left over go to the browser, not to the log.
            let parts = body.splitRows(weights: [3, 3, 3, 2], minimum: 3, remainderTo: 0)
            (browser, queue, response, log) = (parts[0], parts[1], parts[2], parts[3])
            if preview && browser.height >= 10 && browser.width >= 70 {
                (browser, self.preview) = browser.splitLeft(browser.width * 11 / 20)
            }
        } else {
            let parts = body.splitRows(weights: [3, 4, 3], minimum: 3, remainderTo: 0)
            (browser, queue, response) = (parts[0], parts[1], parts[2])
        }
    }
}
