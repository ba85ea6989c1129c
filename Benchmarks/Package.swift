// swift-tools-version:6.1
import Foundation
import PackageDescription

// The speed figures of docs/benchmarks.md, in a package of their own: the root package's products never link the
// benchmarks or the simulators they drive. Build and run through `scripts/bench.sh` (release, with the `farecheck`
// and `farecheck-server` programs the figures run built beside the bench), e.g.
//   scripts/bench.sh verify --seconds 1
// Only library products of the root package are used.

/// SwiftPM names a path dependency after its folder, which is whatever the clone is called.
let root = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent.lowercased()

/// A library product of the root package.
func farecheck(_ product: String) -> Target.Dependency { .product(name: product, package: root) }

let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "farecheck-benchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // The blocklist figures write a VDV-KA blocklist, an SQLite file of a million rows.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // The fleet figures' simulated validators speak HTTP to the servers.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // Heap allocations counted per thread by the bench program's own malloc family (allocations per verdict).
        .target(name: "CAllocationCounter"),
        // `openssl speed`'s verify loop on the key a format really uses, for keys `openssl speed` has no figure for.
        .target(name: "COpenSSLSpeedLoop", linkerSettings: [.linkedLibrary("crypto")]),
        .executableTarget(
            name: "farecheck-bench",
            dependencies: [
                "FareCore", "TicketFormats", "Signatures", "Verification", "TrustStore", "Symbols", "Scanners",
                "Daemon", "Sync", "ValidationAPI", "Issuing", "ScannerSimulation", "SeededRandom", "ValidationServer",
                "Presentation",
            ].map(farecheck) + [
                "CAllocationCounter", "COpenSSLSpeedLoop",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
