import CAllocationCounter
import Foundation

/// Heap allocations per call, counted by the bench program's own `malloc` family (the `CAllocationCounter` target):
/// every allocation the calling thread makes, whoever makes it (our code, the Swift runtime, Foundation, OpenSSL).
enum AllocationCount {
    /// Calls measured for each figure, after ``warmUpCalls`` that fill caches and are not counted.
    static let calls = 200
    static let warmUpCalls = 20

    /// Allocations per call of `body` on this thread, averaged over ``calls`` calls after a warm-up.
    ///
    /// A figure that is not a whole number means that some calls allocate more than others (a cache that grows, a
    /// buffer that is kept); the gate compares the average.
    static func perCall(_ body: () throws -> Void) rethrows -> Double {
        for _ in 0..<warmUpCalls { try body() }
        let before = CAllocationCounter_threadAllocations()
        for _ in 0..<calls { try body() }
        let after = CAllocationCounter_threadAllocations()
        return Double(after - before) / Double(calls)
    }

    /// Checks that the counting counts: our `malloc` is the process's, a call that allocates nothing counts 0, one
    /// array of a thousand numbers counts 1, one class instance counts 1. Throws when any of these fails, since
    /// the figures would then be wrong.
    static func selfCheck() throws {
        guard CAllocationCounter_isInterposed() == 1 else {
            throw CommandFailure.exit(
                "allocation counting does not work here: glibc's strdup did not call the bench's malloc")
        }
        var sum = 0
        let nothing = perCall { sum &+= sink(sum) }
        let array = perCall { sum &+= sink([Int](repeating: sum, count: 1000)).count }
        let object = perCall { sum &+= sink(Box(sum)).value }
        guard nothing == 0, array == 1, object == 1 else {
            throw CommandFailure.exit(
                "allocation counting is off: \(nothing) for nothing, \(array) for an array, \(object) for an object "
                    + "(expected 0, 1, 1)")
        }
    }

    private final class Box {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    /// Keeps a value alive and opaque to the optimiser, so that the allocation it needs is made (not promoted to the
    /// stack or removed).
    @inline(never) @_optimize(none)
    private static func sink<T>(_ value: T) -> T { value }
}

/// What one benchmark line measured, for `--json` and the allocation gate.
struct Figure: Codable {
    /// The part and the line's name, e.g. `formats: DOSIPAS, level-2 key known`.
    var name: String
    /// Calls per CPU second; absent with `--allocations-only`.
    var perSecond: Double?
    /// The `openssl speed` rate it is compared with (already divided, where the line divides it), and the ratio.
    var reference: String?
    var referencePerSecond: Double?
    var ratio: Double?
    /// Heap allocations per call (per verdict), averaged over ``AllocationCount/calls`` calls.
    var allocationsPerCall: Double

    /// Adds a timed rate and, when `openssl speed` ran, its reference rate and the ratio.
    mutating func record(rate: Double, reference: String?, bare: Double?) {
        perSecond = rate
        if let bare, let reference {
            self.reference = reference
            referencePerSecond = bare
            ratio = rate / bare
        }
    }
}

/// The figures of a run, collected for `--json` and `--max-allocations`.
final class FigureLog {
    private(set) var figures: [Figure] = []

    func add(_ figure: Figure) { figures.append(figure) }

    /// The JSON document `--json` writes and `--max-allocations` reads.
    struct Document: Codable {
        var machine: String
        var date: String
        var figures: [Figure]
    }

    func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let document = Document(
            machine: MachineDescription.current, date: ISO8601DateFormatter().string(from: Date()), figures: figures)
        var data = try encoder.encode(document)
        data.append(0x0A)
        if path == "-" {
            FileHandle.standardOutput.write(data)
        } else {
            try data.write(to: URL(fileURLWithPath: path))
        }
    }

    /// Allocations per call allowed above the baseline before the gate fails: two allocations plus 10 %. The DSA
    /// lines sign with a key made for the run, and OpenSSL's allocations for a DSA check move with the key and the
    /// signature's values (56–61 for DSA-1024 over four runs); every other figure is the same from run to run.
    static func tolerance(_ baseline: Double) -> Double { 2 + baseline * 0.1 }

    /// Compares these figures with a baseline written by `--json`; prints each figure that allocates more than its
    /// baseline allows, and returns whether none does. Figures the baseline does not have are listed, not failed.
    func meetsAllocationBaseline(_ path: String) throws -> Bool {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure.exit("\(path): no such file (the allocation baseline)")
        }
        let baseline = try JSONDecoder().decode(Document.self, from: data)
        let allowed = Dictionary(
            baseline.figures.map { ($0.name, $0.allocationsPerCall) }, uniquingKeysWith: { first, _ in first })
        var passes = true
        var compared = 0
        for figure in figures {
            guard let limit = allowed[figure.name] else {
                printLine("  allocation gate: \(figure.name) is not in \(path)")
                continue
            }
            compared += 1
            if figure.allocationsPerCall > limit + Self.tolerance(limit) {
                passes = false
                printLine(
                    "  allocation gate: \(figure.name) allocates \(Self.format(figure.allocationsPerCall)) per call, "
                        + "baseline \(Self.format(limit)) (+ \(Self.format(Self.tolerance(limit))) allowed)")
            }
        }
        printLine(
            "allocation gate: \(compared) figures compared with \(path): "
                + (passes ? "none allocates more than its baseline" : "FAILED"))
        return passes
    }

    static func format(_ count: Double) -> String { String(format: "%.1f", count) }
}
