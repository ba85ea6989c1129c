// swift-tools-version:6.1
import Foundation
import PackageDescription

// Coverage-guided fuzz targets (libFuzzer + AddressSanitizer) for every parser that reads outside input.
// Build and run through `scripts/fuzz.sh`; the flags are
//   swift build --package-path Fuzz -c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
// Only the light libraries of the root package are used, so none of the server dependencies is built.

/// SwiftPM names a path dependency after its folder, which is whatever the clone is called.
let root = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent.lowercased()

/// A library product of the root package.
func farecheck(_ product: String) -> Target.Dependency { .product(name: product, package: root) }

let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

/// One executable per parser, with the root libraries it needs. `scripts/fuzz.sh all` runs them in this order.
/// DOSIPAS (`fuzz-dosipas`) and VDV-KA (`fuzz-vdv`) go here too, once their decoders land: a folder under
/// `Sources/`, a line here, and a corpus under `Corpora/` (see `Fuzz/README.md`).
let fuzzTargets: [(name: String, dependencies: [String])] = [
    ("fuzz-payload", ["TicketFormats"]),
    ("fuzz-verify", ["FareCore", "TicketFormats", "Signatures", "Verification"]),
    ("fuzz-cose", ["TicketFormats"]),
    ("fuzz-base45", ["TicketFormats"]),
    ("fuzz-zlib", ["TicketFormats"]),
    ("fuzz-uic-container", ["FareCore", "TicketFormats"]),
    ("fuzz-uic-records", ["TicketFormats"]),
    ("fuzz-fcb", ["TicketFormats"]),
    ("fuzz-ssb", ["TicketFormats"]),
    ("fuzz-dosipas", ["TicketFormats"]),
    ("fuzz-vdv", ["TicketFormats"]),
    ("fuzz-rsp6", ["FareCore", "TicketFormats", "Verification"]),
    ("fuzz-ssi", ["Scanners"]),
    ("fuzz-hid-descriptor", ["Scanners"]),
    ("fuzz-hid-reports", ["Scanners"]),
    ("fuzz-wedge", ["Scanners"]),
    ("fuzz-uevent", ["Scanners"]),
    ("fuzz-sync-json", ["FareCore", "ValidationAPI"]),
    ("fuzz-config", ["DaemonConfig"]),
    ("fuzz-blocklist", ["FareCore", "TicketFormats"]),
    ("fuzz-y4m", ["Symbols"]),
]

let package = Package(
    name: "farecheck-fuzz",
    platforms: [.macOS(.v14)],
    dependencies: [.package(path: "..")],
    targets: [
        .target(name: "FuzzSupport", swiftSettings: strict)
    ]
        + fuzzTargets.map { target in
            .executableTarget(
                name: target.name,
                dependencies: ["FuzzSupport"] + target.dependencies.map(farecheck),
                resources: ["fuzz-verify", "fuzz-rsp6"].contains(target.name) ? [.copy("Keys")] : nil,
                swiftSettings: strict
            )
        },
    swiftLanguageModes: [.v6]
)
