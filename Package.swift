// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "uploadmon",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "uploadmon", targets: ["uploadmon"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.29.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.25.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.10.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.0.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.10.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
    ],
    targets: [
        .target(name: "UploadCore", dependencies: ["CChecksum", .product(name: "Crypto", package: "swift-crypto")]),
        // What a photo becomes on the way out: stripped of its location (the file's own bytes,
        // rebuilt from what is known safe), converted and resized (decoded, resampled and written
        // again), with one allowlist of the metadata a written photo keeps.
        .target(name: "PhotoRewrite", dependencies: ["UploadCore", "PreviewModel", "CImageDecode"]),
        // CRC-32C (S3's x-amz-checksum-crc32c) with the processor's instruction where there is
        // one, and the combination of parts' values into the whole object's.
        .target(name: "CChecksum"),
        // The resumable protocols as values: the draft's and tus's header grammars and the
        // client's machines, which decide and leave the sending to the transports.
        .target(name: "UploadProtocols", dependencies: ["UploadCore", .product(name: "Crypto", package: "swift-crypto")]),
        .target(name: "TerminalCanvas", dependencies: ["UploadCore"]),
        // What a preview is (pixels, the line under them, EXIF read from bytes), in Swift alone:
        // the monitor's model and views link no C library.
        .target(name: "PreviewModel"),
        .target(name: "Monitor", dependencies: ["UploadCore", "TerminalCanvas", "PreviewModel"]),
        // No pkgConfig: SwiftPM would warn on every build about the -D flags ncursesw.pc carries
        // (the shim defines what they are for); the module map links the libraries itself.
        .systemLibrary(
            name: "CNCursesW",
            providers: [.apt(["libncurses-dev"])]
        ),
        .target(name: "NCursesTerminal", dependencies: ["CNCursesW", "CDeflate", "TerminalCanvas", "UploadCore"]),
        // The C targets below include their libraries' headers behind a check that names the
        // Debian package when a header is missing ("jpeglib.h not found: install Debian's
        // libjpeg-dev"): SwiftPM's `providers` hint is given only for system-library targets found
        // by pkg-config, and these link their libraries directly (GRDB's SQLite module names
        // libsqlite3-dev itself).
        // JPEG and PNG decoding for previews (libjpeg-turbo's scaled decoding, libpng row by
        // row) in C: both libraries report errors by longjmp, which Swift code cannot catch.
        // WebP through libwebp, GIF through giflib (linked); HEIF/HEIC through libheif and AVIF
        // through libavif, opened on first use (dlopen: their codecs would otherwise load at every
        // start), headers from libheif-dev and libavif-dev.
        .target(
            name: "CImageDecode",
            // The resampling loops of a photo written again are most of its time: optimised
            // (and vectorised) in every build, tests' too.
            cSettings: [.unsafeFlags(["-O3"])],
            linkerSettings: [.linkedLibrary("jpeg"), .linkedLibrary("png"), .linkedLibrary("webp"), .linkedLibrary("webpdemux"), .linkedLibrary("webpmux"), .linkedLibrary("gif"), .linkedLibrary("dl"), .linkedLibrary("m")]
        ),
        .target(name: "ImagePreview", dependencies: ["CImageDecode", "UploadCore", "PreviewModel"]),
        // Writing JPEGs (libjpeg) and inflating zlib streams, for tests and benchmarks only.
        .target(name: "CTestImages", linkerSettings: [.linkedLibrary("jpeg"), .linkedLibrary("z")]),
        // zlib's deflate: kitty pictures go compressed (`o=z`), tests write PNGs with it.
        .target(name: "CDeflate", linkerSettings: [.linkedLibrary("z")]),
        .target(
            name: "UploadClient",
            dependencies: [
                "UploadCore", "UploadProtocols", "PhotoRewrite",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Receiver",
            dependencies: [
                "UploadCore", "UploadProtocols",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "UploadJournal",
            dependencies: [
                "UploadCore", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        .target(
            name: "UploadAgent",
            dependencies: [
                "UploadCore", "UploadClient", "UploadJournal",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // What the commands print (send's reporters, the status and jobs tables), apart from
        // the executable so tests reach it in-process.
        .target(
            name: "UploadReports",
            dependencies: [
                "UploadCore", "TerminalCanvas", "UploadJournal", "UploadAgent",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The monitor's run loop and where its uploads run (in process or in the agent),
        // against a terminal protocol so tests drive a whole monitor without curses.
        .target(
            name: "MonitorRuntime",
            dependencies: [
                "Monitor", "TerminalCanvas", "UploadCore", "UploadClient", "UploadJournal", "UploadAgent", "UploadReports", "ImagePreview",
                "PhotoRewrite", .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // What each command does past its command line (the send session, the agent's process,
        // the service installer, status, watch, the demo), so tests run it in-process; the
        // executable only parses arguments and wires these.
        .target(
            name: "UploadCommands",
            dependencies: [
                "UploadCore", "UploadClient", "Receiver", "Monitor", "MonitorRuntime", "TerminalCanvas",
                "UploadJournal", "UploadAgent", "UploadReports", "PhotoRewrite",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // The destinations file: TOML, which people edit by hand (toml++ underneath).
                .product(name: "TOMLKit", package: "TOMLKit"),
            ]
        ),
        .executableTarget(
            name: "uploadmon",
            dependencies: [
                "UploadCore", "UploadClient", "Receiver", "Monitor", "MonitorRuntime", "NCursesTerminal", "TerminalCanvas",
                "UploadJournal", "UploadAgent", "UploadReports", "UploadCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            // A release binary starts faster and touches less memory as a position-dependent
            // executable that exports no symbols: nothing to relocate when it is loaded (PIE:
            // 156,000 relocations, 1.7 ms of a 15 ms `send`), and the Swift runtime's `dladdr`
            // at start no longer walks 55,000 exported names (`bench/startup`).
            linkerSettings: [.unsafeFlags(["-Xclang-linker", "-no-pie", "-Xlinker", "--no-export-dynamic"], .when(configuration: .release))]
        ),
        .executableTarget(
            name: "journal-bench",
            dependencies: ["UploadCore", "UploadJournal"]
        ),
        .executableTarget(
            name: "monitor-bench",
            dependencies: [
                "Monitor", "MonitorRuntime", "NCursesTerminal", "TerminalCanvas", "UploadCore", "ImagePreview", "UploadTesting", "UploadAgent",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .target(
            name: "UploadTesting",
            dependencies: [
                "Receiver", "UploadCore", "PreviewModel", "CTestImages", "CDeflate",
                .product(name: "NIOResumableUpload", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "UploadCoreTests",
            dependencies: ["UploadCore", "UploadProtocols", "UploadTesting", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]
        ),
        .testTarget(name: "TerminalCanvasTests", dependencies: ["TerminalCanvas"]),
        .testTarget(name: "PhotoRewriteTests", dependencies: ["PhotoRewrite", "PreviewModel", "UploadCore", "UploadTesting"]),
        .testTarget(name: "ImagePreviewTests", dependencies: ["ImagePreview", "CImageDecode", "TerminalCanvas", "UploadTesting", "PhotoRewrite"]),
        .testTarget(
            name: "MonitorTests",
            dependencies: ["Monitor", "TerminalCanvas", "UploadCore", "PreviewModel", "UploadTesting"],
            exclude: ["Snapshots"]
        ),
        .testTarget(
            name: "UploadClientTests",
            dependencies: [
                "UploadCore", "UploadProtocols", "UploadClient", "Receiver", "UploadTesting", "PhotoRewrite",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        .testTarget(name: "CLITests", dependencies: ["UploadTesting", "UploadJournal", "ImagePreview", "UploadCommands"], exclude: ["Resources"]),
        .testTarget(
            name: "JournalTests",
            dependencies: ["UploadJournal", "UploadCore", "UploadTesting", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(
            name: "AgentTests",
            dependencies: ["UploadAgent", "UploadJournal", "UploadClient", "UploadCore", "UploadTesting", "UploadReports"]
        ),
        .testTarget(
            name: "ReceiverTests",
            dependencies: [
                "Receiver", "UploadCore", "UploadProtocols", "UploadTesting", .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOEmbedded", package: "swift-nio"), .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            ]
        ),
        .testTarget(
            name: "MonitorRuntimeTests",
            dependencies: ["MonitorRuntime", "Monitor", "TerminalCanvas", "UploadCore", "UploadClient", "UploadTesting", "ImagePreview", "UploadJournal", "UploadAgent",
                           "PhotoRewrite", "PreviewModel"]
        ),
        .testTarget(
            name: "CommandTests",
            dependencies: ["UploadCommands", "UploadAgent", "UploadJournal", "UploadClient", "UploadCore", "UploadTesting", "UploadReports", "Receiver"]
        ),
        .testTarget(name: "ReportTests", dependencies: ["UploadReports", "UploadCore", "UploadJournal", "UploadAgent", "UploadTesting"]),
    ],
    swiftLanguageModes: [.v6]
)
