/// How many frames deep the calling thread is: for tests that check a callback is called
/// through the same shallow stack however often it was called before (they count frames and
/// time nothing).
public enum StackDepth {
    public static func here() -> Int {
        var frames = [UnsafeMutableRawPointer?](repeating: nil, count: 65_536)
        return Int(glibcBacktrace(&frames, Int32(frames.count)))
    }
}

@_silgen_name("backtrace")
private func glibcBacktrace(_ buffer: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ size: Int32) -> Int32
