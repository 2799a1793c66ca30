import Foundation

/// Runs a tool that is not this project's (exiftool, djpeg, python3, …) and gives back its exit
/// status and standard output as it wrote it; its standard error is dropped.
public enum ToolRun {
    public static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    /// Only the output.
    public static func output(_ executable: String, _ arguments: [String]) throws -> String {
        try run(executable, arguments).output
    }
}
