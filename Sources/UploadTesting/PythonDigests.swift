import Foundation

/// RFC 9530's digests computed and checked by Python's `contentdigest` and `http_sf` (PyPI),
/// not by this project's code.
public enum PythonDigests {
    public static let available: Bool = {
        (try? run(["-c", "import contentdigest, http_sf"]))?.status == 0
    }()

    /// Whether python3 has these modules installed, found without importing them: a test's
    /// `.enabled(if:)` runs on the cooperative pool (and others wait on the same check), and a
    /// first import of a large package (moto, FastAPI) can take many seconds on a fresh machine.
    public static func hasModules(_ names: [String]) -> Bool {
        let list = names.map { "'\($0)'" }.joined(separator: ", ")
        return (try? run(["-c", "import importlib.util as u, sys; sys.exit(0 if all(u.find_spec(m) for m in [\(list)]) else 1)"]))?.status == 0
    }

    public static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let (status, output) = try ToolRun.run("/usr/bin/env", ["python3"] + arguments)
        return (status, output.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The field value for the file's bytes, in `algorithms`.
    public static func make(_ path: String, _ algorithms: String...) throws -> String {
        try run(["-c", "import contentdigest, sys; print(contentdigest.make_digest(open(sys.argv[1], 'rb').read(), algos=sys.argv[2:]))", path] + algorithms)
            .output
    }

    /// The file's SHA-256 in lowercase hex, by Python's hashlib.
    public static func sha256Hex(_ path: String) throws -> String {
        try run(["-c", "import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())", path]).output
    }

    /// Whether `value` is a valid RFC 9651 dictionary whose every secure digest matches the file.
    public static func verify(_ value: String, _ path: String) throws -> Bool {
        try run([
            "-c",
            """
            import contentdigest, http_sf, sys
            http_sf.parse(sys.argv[1].encode(), tltype='dictionary')
            sys.exit(0 if contentdigest.verify(sys.argv[1], open(sys.argv[2], 'rb').read()) else 1)
            """, value, path,
        ]).status == 0
    }
}
