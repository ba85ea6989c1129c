// swift-tools-version:6.1
import PackageDescription

/// Every Swift target builds in Swift 6 language mode with strict concurrency.
let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "farecheck",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "farecheck", targets: ["farecheck"]),
        .executable(name: "farecheck-server", targets: ["farecheck-server"]),
        // The light libraries, for the fuzz package in Fuzz/ (which must not pull the server dependencies).
        .library(name: "FareCore", targets: ["FareCore"]),
        .library(name: "TicketFormats", targets: ["TicketFormats"]),
        .library(name: "Signatures", targets: ["Signatures"]),
        .library(name: "Verification", targets: ["Verification"]),
        .library(name: "ValidationAPI", targets: ["ValidationAPI"]),
        .library(name: "Scanners", targets: ["Scanners"]),
        .library(name: "DaemonConfig", targets: ["DaemonConfig"]),
        // The rest of what the benchmark package in Benchmarks/ measures.
        .library(name: "TrustStore", targets: ["TrustStore"]),
        .library(name: "Symbols", targets: ["Symbols"]),
        .library(name: "Sync", targets: ["Sync"]),
        .library(name: "Daemon", targets: ["Daemon"]),
        .library(name: "Presentation", targets: ["Presentation"]),
        .library(name: "Issuing", targets: ["Issuing"]),
        // The reference server's library: the bench measures its first-use claim checks in process.
        .library(name: "ValidationServer", targets: ["ValidationServer"]),
        // Test support the benchmarks drive too (a simulated scanner, a seeded generator). No product above
        // depends on them: they are stand-ins, never shipped.
        .library(name: "ScannerSimulation", targets: ["ScannerSimulation"]),
        .library(name: "SeededRandom", targets: ["SeededRandom"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // HTTPTypes: the daemon's HTTP page names requests and responses with it (as Hummingbird does).
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // NIOHTTPTypes: the HTTP parts a handler of the reference server's pipeline sees (already in the graph
        // through Hummingbird).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
    ],
    targets: [
        // C libraries from Debian, one system library each.
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CZBar", pkgConfig: "zbar", providers: [.apt(["libzbar-dev"])]),
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        .systemLibrary(name: "CLibUSB", pkgConfig: "libusb-1.0", providers: [.apt(["libusb-1.0-0-dev"])]),
        // OpenLDAP's client library: the VDV-KA certificate directory is read over LDAP (TrustSources).
        .systemLibrary(name: "CLDAP", pkgConfig: "ldap", providers: [.apt(["libldap-dev"])]),
        // ioctl numbers and kernel structs that Swift cannot reach (function-like macros).
        .target(name: "CLinuxShims"),
        // zxing-cpp 3.1.1, built from its pinned PyPI source by scripts/build-zxing.sh into a prefix of its own that
        // farecheck-zxing.pc names (Debian's 1.4 aborts on camera frames: docs/camera.md).
        .systemLibrary(name: "CZXingCore", pkgConfig: "farecheck-zxing"),
        // zxing-cpp is C++ only: a small extern "C" API that catches every exception.
        .target(name: "CZXing", dependencies: ["CZXingCore"]),
        // libpng and libjpeg report errors through setjmp/longjmp, which Swift cannot do: C wrappers.
        .target(
            name: "CImageCodecs",
            linkerSettings: [.linkedLibrary("png16"), .linkedLibrary("jpeg")]
        ),

        // Every system call goes through one function here: retried on EINTR, failures as swift-system's Errno.
        .target(
            name: "SystemCalls", dependencies: [.product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: strict),
        // Pure model: tickets, verdicts, clocks. No I/O.
        .target(name: "FareCore", swiftSettings: strict),
        // Where work runs off the event loops and the cooperative pool: a thread that is a serial and task executor
        // (the scan pipeline, sync), a dedicated thread for a blocking loop (a camera), a device thread with a stop
        // that cuts a poll short (hidraw, evdev, libusb, hotplug), a serial queue for blocking calls (checkpoints,
        // PIN derivations, a serial port). docs/development.md, "Where work runs".
        .target(
            name: "Executors",
            dependencies: ["SystemCalls", "CLinuxShims", .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: strict),
        // The version both programs print, stamped from git before every build (scripts/version-stamp.sh).
        .target(name: "FarecheckVersion", swiftSettings: strict, plugins: ["GitVersion"]),
        .plugin(name: "GitVersion", capability: .buildTool()),
        // Payload decoders (FC1 COSE/CWT, ...). Pure.
        .target(name: "TicketFormats", dependencies: ["FareCore", "CZlib"], swiftSettings: strict),
        // Signature primitives over OpenSSL's libcrypto; Arithmetic/ (its README says what) checks ECDSA P-256 and
        // DSA with per-key tables beside OpenSSL's.
        .target(
            name: "Signatures", dependencies: ["COpenSSL", "FareCore"], exclude: ["Arithmetic/README.md"],
            swiftSettings: strict),
        // The verifier and its policies.
        .target(
            name: "Verification",
            dependencies: ["FareCore", "TicketFormats", "Signatures"],
            swiftSettings: strict
        ),
        // SQLite persistence: keys, revocations, inspection journal.
        .target(
            name: "TrustStore",
            dependencies: [
                "FareCore", "TicketFormats", "Verification", "Signatures", "SystemCalls", "ValidationAPI",
                // sync_file_range and ioprio_set, to pace a sync page's writes (BulkWritePacing).
                "CLinuxShims",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SyncState binds bulk inserts through SQLite's C API directly.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strict
        ),
        // Images in, symbols out; symbols written for issuing.
        .target(
            name: "Symbols",
            dependencies: ["FareCore", "CZXing", "CZBar", "CQREncode", "CImageCodecs", "SystemCalls"],
            swiftSettings: strict
        ),
        // Cameras: V4L2 capture through libv4l2 (its calls in CV4L2, one thin C file), the choice of a mode, the
        // capture loop (buffer cycle, frame checks, reopening) and recordings played as cameras.
        .target(name: "CV4L2", linkerSettings: [.linkedLibrary("v4l2")]),
        .target(
            name: "Camera",
            dependencies: [
                "FareCore", "DeviceSettings", "Symbols", "CV4L2", "SystemCalls",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strict),
        // What a configuration says of a scanner or a camera, as plain values: scanner protocols, SSI trigger modes,
        // V4L2 pixel formats and camera requests. Below DaemonConfig, which reads them, and Scanners and Camera,
        // which act on them, so that reading a configuration links no device library (libusb, libv4l2, zxing, zbar).
        .target(name: "DeviceSettings", swiftSettings: strict),
        // Scanner drivers: transports (termios, hidraw, libusb, evdev) × protocols (SSI, raw, HID POS,
        // SNAPI, keyboard wedge), discovery and hotplug.
        .target(
            name: "Scanners",
            dependencies: [
                "FareCore", "DeviceSettings", "CLinuxShims", "CLibUSB", "SystemCalls", "Executors",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strict
        ),
        // The wire format of the online validation API: signed key bundles, revocation deltas, inspection
        // batches, online checks. Pure values plus the signing and checking of bundles; shared by both ends.
        .target(
            name: "ValidationAPI",
            dependencies: ["FareCore", "Signatures"],
            swiftSettings: strict
        ),
        // The daemon's configuration: the model, its strict reading from TOML (TOMLDocument), and the files it names.
        // Light (no server dependency, no device library: the devices' settings come from DeviceSettings), so
        // `farecheck sync` reads `[sync]` without the daemon and the fuzz package reaches it.
        .target(
            name: "DaemonConfig",
            dependencies: [
                "FareCore", "Verification", "DeviceSettings", "ValidationAPI", "SyncConfig", "TOMLDocument",
            ],
            swiftSettings: strict
        ),
        // TOML read strictly, for both programs' configurations: a TOML 1.0 reader of our own (pure Swift: no input
        // can abort it) and a table reader that refuses wrong types and unknown keys by name. No dependency.
        .target(name: "TOMLDocument", swiftSettings: strict),
        // The `[sync]` settings (server, token, anchors, TLS files, intervals): what DaemonConfig reads and Sync
        // builds its client from, below both so that neither imports the other.
        .target(name: "SyncConfig", swiftSettings: strict),
        // The validator's side of sync: the API client and the worker that reconciles the store.
        .target(
            name: "Sync",
            dependencies: [
                "FareCore", "Signatures", "TicketFormats", "Verification", "TrustStore", "ValidationAPI",
                "SyncConfig", "Executors",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                // NIOPosix: its connection errors (refused, unknown host), told to people in words.
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict
        ),
        // Trust that follows its publishers (issue 49): one guarded fetch of a publisher's file (conditional, capped,
        // timed, no redirect to another host, TLS by system CAs or a pinned CA or SPKI), over SwiftNIO; the VDV-KA
        // certificate directory over LDAP (libldap's blocking calls on an Executors queue).
        .target(
            name: "TrustSources",
            dependencies: [
                "FareCore", "Signatures", "COpenSSL", "CLDAP", "Executors",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict
        ),
        // What a verdict looks like to the outside: the verdict event (the daemon's JSON line, server-sent event and
        // gate hook, the CLI's `--json` report), its hand-written JSON line, and its form without holder data.
        // The languages the inspector page speaks (Languages/LANG.json, one catalog each, English the templates),
        // read and checked here so that an agency's own catalog is checked as the built-in ones are.
        .target(
            name: "Presentation", dependencies: ["FareCore"],
            resources: ["en", "de", "fr", "nl", "da", "it", "pl", "cs", "sl"].map {
                .embedInCode("Languages/\($0).json")
            },
            swiftSettings: strict),
        // The long-running service: scanners, pipeline, journal, sinks, HTTP status page, sync.
        .target(
            name: "Daemon",
            dependencies: [
                "FareCore", "TicketFormats", "Signatures", "Verification", "TrustStore", "Symbols", "Scanners",
                "Camera", "Sync", "ValidationAPI", "DaemonConfig", "SystemCalls", "Executors", "Presentation",
                // A stand-alone gate following its trust publishers runs the server's follower with a house of its own.
                "TrustFollowing", "ValidationServer",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                // The page's connection guards (deadlines, TLS) go in through HummingbirdCore's channel setup.
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
            ],
            // The inspector page: its document, style sheet and script, in the binary (no files to install beside it).
            resources: [
                .embedInCode("Resources/inspector.html"), .embedInCode("Resources/inspector.css"),
                .embedInCode("Resources/inspector.js"),
            ],
            swiftSettings: strict
        ),
        // Issuing FC1 tickets: key files, signing, rendering, and the demo keys (published, never for real
        // tickets) embedded for `farecheck demo` and the bench.
        .target(
            name: "Issuing", dependencies: ["FareCore", "Signatures", "Symbols", "TicketFormats"],
            swiftSettings: strict),
        // What both programs' command lines share: their main (one exit status table, --json errors, repeated and
        // unknown options refused with a suggestion).
        .target(
            name: "CommandLineSupport",
            dependencies: ["FareCore", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict),
        .executableTarget(
            name: "farecheck",
            dependencies: [
                "FareCore", "TicketFormats", "Signatures", "Verification", "TrustStore", "Symbols", "Scanners",
                "Camera", "DeviceSettings", "Daemon", "DaemonConfig", "Sync", "ValidationAPI", "Issuing",
                "SystemCalls", "FarecheckVersion", "CommandLineSupport", "Presentation", "TrustFollowing",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The reference online validation API: Hummingbird over SQLite (GRDB) or PostgreSQL (postgres-nio).
        .target(
            name: "ValidationServer",
            dependencies: [
                // TicketFormats and Verification: a first-use claim is verified as validators verify the ticket.
                "FareCore", "Signatures", "TicketFormats", "Verification", "ValidationAPI", "SystemCalls",
                // The operator report speaks the inspector page's languages, from the same catalogs.
                "Presentation",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The operator report's markup and style sheet, in the binary (the page loads nothing from anywhere else).
            resources: [.embedInCode("Resources/report.html"), .embedInCode("Resources/report.css")],
            swiftSettings: strict
        ),
        // The server following its trust publishers (issue 49): the `[[trust.source]]` configuration, the worker that
        // fetches each source on its period, checks what came with the importers the CLI uses, holds a change the
        // guard rails refuse for an operator, and applies the rest in one transaction (keys signed into a bundle,
        // blocklists into the revocation log).
        .target(
            name: "TrustFollowing",
            dependencies: [
                "TrustSources", "ValidationServer", "ValidationAPI", "FareCore", "Signatures", "TicketFormats",
                "Verification", "TrustStore", "TOMLDocument",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "farecheck-server",
            dependencies: [
                // TicketFormats and Verification: VDV CA certificates are read and checked as `farecheck keys
                // import --vdv` does, and VDV entitlements named as `farecheck revoke --vdv-org` names them.
                // TrustStore: the published blocklist files are read by the code `farecheck revoke` reads them with.
                "ValidationServer", "ValidationAPI", "Signatures", "FareCore", "TicketFormats", "Verification",
                "TrustStore", "FarecheckVersion", "CommandLineSupport", "TrustFollowing",
                // Presentation: the operator report's languages are the inspector page's catalogs.
                "Presentation",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),

        // The vocabulary on its own: names another version wrote, explanations, ids, hex, times as people write them.
        .testTarget(
            name: "FareCoreTests", dependencies: ["FareCore", "SeededRandom", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "ExecutorsTests",
            dependencies: ["Executors", .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: strict),
        .testTarget(
            name: "TicketFormatsTests",
            // Signatures: the RSA operation and SHA-1 that open the real VDV-KA sample.
            dependencies: ["TicketFormats", "FareCore", "SeededRandom", "Signatures", "TestSupport", "RSATestKeys"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SignaturesTests",
            dependencies: ["Signatures", "TestSupport", "RSATestKeys", "SeededRandom"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "VerificationTests",
            dependencies: [
                "Verification", "TicketFormats", "Signatures", "QuirkyTickets", "TestSupport", "RSATestKeys",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "TrustStoreTests",
            dependencies: [
                "TrustStore", "FareCore", "Signatures", "TicketFormats", "Verification", "TestSupport", "ValidationAPI",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SymbolsTests",
            dependencies: [
                "Symbols", "FareCore", "CImageCodecs", "CZlib", "ScannerSimulation", "SeededRandom", "TestSupport",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CameraTests",
            dependencies: ["Camera", "DeviceSettings", "Symbols", "FareCore", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ScannersTests",
            dependencies: ["Scanners", "DeviceSettings", "FareCore", "ScannerSimulation", "TestSupport"],
            swiftSettings: strict
        ),
        // A reproducible random source (SplitMix64) for generated test data and benchmarks.
        .target(name: "SeededRandom", path: "Tests/SeededRandom", swiftSettings: strict),
        // UIC 918.3 tickets written with the quirks of real issuers, signed with the tests' own keys.
        .target(
            name: "QuirkyTickets", dependencies: ["TicketFormats", "Signatures", "FareCore"],
            path: "Tests/QuirkyTickets", swiftSettings: strict),
        // The tests' own RSA issuer: raw private-key operations for VDV-KA certificates and UK RSP6 tickets.
        .target(
            name: "RSATestKeys", dependencies: ["TicketFormats", "Signatures", "FareCore", "COpenSSL", "Verification"],
            path: "Tests/RSATestKeys", swiftSettings: strict),
        // Stand-ins the tests and the benchmarks drive, never shipped: a Zebra SSI scanner on a pseudo-terminal,
        // photo-like distortions of ticket images, a seeded generator, a reader of the daemon's verdict socket.
        .target(
            name: "ScannerSimulation",
            dependencies: [
                "FareCore", "Scanners", "DeviceSettings", "Symbols", "CLinuxShims", "SeededRandom", "SystemCalls",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Tests/ScannerSimulation",
            swiftSettings: strict
        ),
        // What every test target shares: the one fixture tree (Tests/Fixtures, read in place), dates, running the
        // built binaries and the reference server, scratch directories, HTTP to a server under test.
        .target(
            name: "TestSupport",
            dependencies: [
                "ScannerSimulation", "FareCore", "ValidationAPI",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // LoopbackPublisher: an HTTPS publisher on loopback.
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Tests/Support", swiftSettings: strict),
        .testTarget(
            name: "DaemonTests",
            dependencies: [
                "TestSupport", "farecheck", "Daemon", "DaemonConfig", "FareCore", "Signatures", "TrustStore",
                "Scanners", "TicketFormats", "ScannerSimulation", "Issuing", "Verification", "QuirkyTickets",
                "RSATestKeys", "SeededRandom", "Presentation", "ValidationAPI", "Sync",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The configuration file: every table read, what is refused and how it is named, the files it names.
        .testTarget(
            name: "DaemonConfigTests",
            dependencies: ["DaemonConfig", "DeviceSettings", "FareCore", "Signatures", "ValidationAPI", "TestSupport"],
            swiftSettings: strict
        ),
        // The wire format on its own: signed documents, revocation pages read by hand, key entries, online checks.
        .testTarget(
            name: "ValidationAPITests",
            dependencies: ["ValidationAPI", "FareCore", "Signatures", "SeededRandom", "TestSupport"],
            swiftSettings: strict
        ),
        // Tickets issued with the demo keys and judged by the verifier; the issuing key files.
        .testTarget(
            name: "IssuingTests",
            dependencies: [
                "Issuing", "FareCore", "Signatures", "Symbols", "TicketFormats", "Verification", "TestSupport",
            ],
            swiftSettings: strict
        ),
        // The server following publishers on loopback (LoopbackPublisher, LoopbackSLAPD), through to a gate's verdict.
        .testTarget(
            name: "TrustFollowingTests",
            dependencies: [
                "TestSupport", "TrustFollowing", "TrustSources", "ValidationServer", "ValidationAPI", "FareCore",
                "Signatures", "TicketFormats", "Verification", "TrustStore", "farecheck-server", "RSATestKeys",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ValidationServerTests",
            dependencies: [
                "TestSupport", "ValidationServer", "ValidationAPI", "Signatures", "FareCore", "farecheck-server",
                "SeededRandom", "Presentation",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SyncTests",
            dependencies: [
                "TestSupport", "Sync", "ValidationAPI", "TrustStore", "FareCore", "Signatures",
                "Verification", "Daemon", "DaemonConfig", "Scanners", "farecheck", "farecheck-server",
                "ScannerSimulation", "SystemCalls", "RSATestKeys", "Executors", "Presentation",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // Fetches from a loopback HTTPS publisher that fails the ways publishers fail, and reads an OpenLDAP slapd on
        // loopback (Tests/Support/LoopbackPublisher.swift, LoopbackSLAPD.swift).
        .testTarget(
            name: "TrustSourcesTests",
            dependencies: ["TrustSources", "TestSupport", "FareCore"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "TestSupport", "farecheck", "Scanners", "ScannerSimulation", "QuirkyTickets", "RSATestKeys",
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx20
)
