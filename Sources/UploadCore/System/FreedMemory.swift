/// Gives memory that long-running processes freed after a burst back to the system. glibc keeps
/// freed heap pages in its arenas; after thousands of uploads (the agent) or connections (the
/// receiver) the resident size would otherwise stay at the burst's high water.
public enum FreedMemory {
    public static func release() {
        _ = mallocTrim(0)
    }
}

/// glibc's `malloc_trim`, which Swift's Glibc module does not import (malloc.h).
@_silgen_name("malloc_trim")
private func mallocTrim(_ pad: Int) -> Int32
