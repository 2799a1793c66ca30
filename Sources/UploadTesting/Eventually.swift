/// Waits (up to 10 s, a bound for a broken program, not a speed requirement) until `condition`
/// holds: for effects that follow events on another thread.
public func eventually(_ condition: () -> Bool) async throws -> Bool {
    for _ in 0..<200 {
        if condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return condition()
}

/// As `eventually`, for a condition that must be awaited (an actor's state).
public func eventually(_ condition: () async -> Bool) async throws -> Bool {
    for _ in 0..<200 {
        if await condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return await condition()
}
