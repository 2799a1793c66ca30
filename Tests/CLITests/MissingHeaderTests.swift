import Foundation
import Testing
import UploadTesting

/// Building on a machine without a C library's headers: the compiler names the Debian package
/// that brings them, not only the file it could not find. Each header is hidden in a mount
/// namespace of its own (root, as CI runs), and the C source that needs it compiled alone.
@Suite(.timeLimit(.minutes(2)), .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")))
struct MissingHeaderTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path + "/Sources"

    @Test(arguments: [
        ("/usr/include/webp", "CImageDecode/image_decode_phone.c", "libwebp-dev"),
        ("/usr/include/libheif", "CImageDecode/image_decode_phone.c", "libheif-dev"),
        ("/usr/include/avif", "CImageDecode/image_decode_avif.c", "libavif-dev"),
        ("/usr/include/ncursesw", "CNCursesW/shim.h", "libncurses-dev"),
    ])
    func aMissingHeaderNamesItsPackage(hidden: String, source: String, package: String) throws {
        guard FileManager.default.fileExists(atPath: hidden) else { return }
        let compiler = ["/opt/swift/usr/bin/clang", "/usr/bin/clang", "/usr/bin/cc"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "cc"
        let language = source.hasSuffix(".h") ? "-x c" : ""
        let script =
            "mount -t tmpfs none '\(hidden)' && '\(compiler)' -fsyntax-only \(language) -I '\(Self.sources)/CImageDecode/include' '\(Self.sources)/\(source)'"
        let run = try CLIRun.runProcess("/usr/bin/unshare", ["-m", "sh", "-c", script], environment: nil, directory: nil, stdin: nil)
        #expect(run.status != 0)
        #expect((run.stdout + run.stderr).contains("install Debian's \(package) (apt-get install \(package))"), "\(run.stdout) \(run.stderr)")
    }
}
