import Foundation
import Signatures
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Keys made once per test run: DSA parameter generation takes up to a second.
enum TestKeys {
    static let ecP256 = try! PrivateKey.generate(.ecP256)
    static let otherECP256 = try! PrivateKey.generate(.ecP256)
    static let ed25519 = try! PrivateKey.generate(.ed25519)
    static let otherEd25519 = try! PrivateKey.generate(.ed25519)
    static let rsa2048 = try! PrivateKey.generate(.rsa(bits: 2048))
    static let otherRSA2048 = try! PrivateKey.generate(.rsa(bits: 2048))
    static let dsa1024 = try! PrivateKey.generate(.dsa(bits: 1024, qBits: 160))
    static let dsa2048q224 = try! PrivateKey.generate(.dsa(bits: 2048, qBits: 224))
    static let dsa2048q256 = try! PrivateKey.generate(.dsa(bits: 2048, qBits: 256))

    static func key(_ kind: KeyKind) -> PrivateKey {
        switch kind {
        case .ecP256: ecP256
        case .ed25519: ed25519
        case .rsa: rsa2048
        case .dsa(_, 160): dsa1024
        case .dsa(_, 224): dsa2048q224
        case .dsa: dsa2048q256
        case .other(let name): fatalError("no test key of kind \(name)")
        }
    }

    /// A second key of the same kind, for "wrong key" checks.
    static func otherKey(_ kind: KeyKind) -> PrivateKey {
        switch kind {
        case .ecP256: otherECP256
        case .ed25519: otherEd25519
        case .rsa: otherRSA2048
        case .dsa(_, 160): dsa2048q256
        default: dsa1024
        }
    }
}

/// A scheme with the kind of key that makes it.
struct SchemeCase: Sendable, CustomTestStringConvertible {
    var scheme: SignatureScheme
    var kind: KeyKind
    var testDescription: String { "\(scheme) with \(kind)" }

    var key: PrivateKey { TestKeys.key(kind) }

    static let all: [SchemeCase] = [
        SchemeCase(scheme: .es256, kind: .ecP256),
        SchemeCase(scheme: .ecdsa(.sha256, .der), kind: .ecP256),
        SchemeCase(scheme: .ecdsa(.sha384, .raw), kind: .ecP256),
        SchemeCase(scheme: .eddsa, kind: .ed25519),
        SchemeCase(scheme: .ps256, kind: .rsa(bits: 2048)),
        SchemeCase(scheme: .rsaPSS(.sha512), kind: .rsa(bits: 2048)),
        SchemeCase(scheme: .dsa(.sha1, .der), kind: .dsa(bits: 1024, qBits: 160)),
        SchemeCase(scheme: .dsa(.sha1, .raw), kind: .dsa(bits: 1024, qBits: 160)),
        SchemeCase(scheme: .dsa(.sha224, .der), kind: .dsa(bits: 2048, qBits: 224)),
        SchemeCase(scheme: .dsa(.sha224, .raw), kind: .dsa(bits: 2048, qBits: 224)),
        SchemeCase(scheme: .dsa(.sha256, .der), kind: .dsa(bits: 2048, qBits: 256)),
        SchemeCase(scheme: .dsa(.sha256, .raw), kind: .dsa(bits: 2048, qBits: 256)),
    ]
}

/// Runs the `openssl` command line tool; the tests cross-check against it.
enum OpenSSLTool {
    struct Failure: Error, CustomStringConvertible {
        var arguments: [String]
        var status: Int32
        var output: String
        var description: String { "openssl \(arguments.joined(separator: " ")) exited \(status): \(output)" }
    }

    @discardableResult
    static func run(_ arguments: [String], input: [UInt8] = []) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        // A child inherits the spawning thread's signal mask, and the test runner's threads block most
        // signals: `openssl speed` then never sees the SIGALRM that ends each measurement.
        var unblock = sigset_t()
        var previous = sigset_t()
        sigfillset(&unblock)
        pthread_sigmask(SIG_UNBLOCK, &unblock, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try process.run()
        stdin.fileHandleForWriting.write(Data(input))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(
                arguments: arguments,
                status: process.terminationStatus,
                output: String(decoding: output + errors, as: UTF8.self)
            )
        }
        return Array(output)
    }
}

/// A fresh directory for files handed to the `openssl` tool, removed by the caller.
func makeTemporaryDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("farecheck-sig-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

func write(_ bytes: [UInt8], to url: URL) throws {
    try Data(bytes).write(to: url)
}

func write(_ text: String, to url: URL) throws {
    try Data(text.utf8).write(to: url)
}

extension [UInt8] {
    /// A copy with one bit flipped.
    func flippingBit(_ bit: Int) -> [UInt8] {
        var copy = self
        copy[bit / 8] ^= UInt8(1 << (bit % 8))
        return copy
    }
}

let sampleMessage = Array("[\"Signature1\", h'a10126', h'', {\"tkt\": {\"p\": \"day\"}}]".utf8)
