/// Gives memory that long-running processes freed after a burst back to the system. glibc keeps
/// freed heap pages in its arenas; after thousands of uploads (the agent) or connections (the
/// receiver) the resident size would otherwise stay at the burst's high water.
public enum FreedMemory {
    public static func release() {
        _ = mallocTrim(0)
    }

    /// Lets glibc keep at most one malloc arena per core (at least two) instead of eight per
    /// core. Each thread that allocates may get an arena of its own, and every arena keeps its
    /// own freed pages and fragments: over 50,000 uploads the agent's anonymous memory kept
    /// growing with sixteen arenas and levelled off with two (bench/agent), at the same upload
    /// rate. Call it first thing in a process that runs for days.
    @discardableResult
    public static func limitArenas(cores: Int) -> Bool {
        mallopt(-8 /* M_ARENA_MAX */, Int32(max(2, min(cores, 64)))) == 1
    }
}

/// glibc's `mallopt`, likewise not imported.
@_silgen_name("mallopt")
private func mallopt(_ parameter: Int32, _ value: Int32) -> Int32

/// glibc's `malloc_trim`, which Swift's Glibc module does not import (malloc.h).
@_silgen_name("malloc_trim")
private func mallocTrim(_ pad: Int) -> Int32
