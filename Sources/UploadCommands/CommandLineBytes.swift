import Foundation
import UploadCore

/// The process's arguments as bytes made text by `PathText`: `CommandLine.arguments` replaces
/// what is not UTF-8, and a file named so could then not be found.
public enum CommandLineBytes {
    public static func arguments() -> [String] {
        (1..<Int(CommandLine.argc)).compactMap { index in
            CommandLine.unsafeArgv[index].map { pointer in
                PathText.decode(UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer)))
            }
        }
    }
}
