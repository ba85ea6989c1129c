import Dispatch
import Foundation
import Scanners
import Synchronization

/// How long a scan takes from its last byte on the line to the consumer of a ``ScannerReader``, over SSI.
///
/// A simulated SSI scanner writes DECODE_DATA packets on the primary side of a pseudo-terminal, waiting for
/// the host's ACK after each packet as a real scanner does; the full production path reads them
/// (``SerialPort``, ``SSISession``, ``SSIConnection``, ``ScannerReader``). The clock starts just before the
/// `write()` of a scan's last packet and stops when the consumer's `for try await` loop has the event, so the
/// figure includes the write and read system calls, the wake-up of the reading thread, the hops between
/// threads and actors, and the ACK written before the scan is handed over. The next scan is sent only after
/// the consumer has this one: the figure is latency, not queueing.
///
/// A pseudo-terminal has no baud rate. On a real line the bytes themselves take
/// ``Result/wireTime`` first (at 9600 baud one byte takes about 1.04 ms): that is the physical floor, and
/// this benchmark measures what farecheck adds on top of it.
public enum SerialLatencyBenchmark {
    /// The measured latencies.
    public struct Result: Sendable, CustomStringConvertible {
        /// Scans measured (after the warm-up).
        public var scans: Int
        /// The payload size of each scan, in bytes.
        public var payloadSize: Int
        /// DECODE_DATA packets per scan.
        public var packetsPerScan: Int
        /// Half the scans were faster than this.
        public var median: Duration
        /// 90 % of the scans were faster than this.
        public var p90: Duration
        /// 99 % of the scans were faster than this.
        public var p99: Duration
        /// The slowest scan.
        public var maximum: Duration
        /// The time the scan's bytes (all packets, with their ACKs' turnarounds excluded) take on a 9600 8N1
        /// line: what a real RS-232 scanner adds before the first of these figures even starts.
        public var wireTime: Duration

        /// The figures in one line, with the wire time beside them.
        public var description: String {
            "\(scans) SSI scans of \(payloadSize) bytes (\(packetsPerScan) packets): "
                + "median \(format(median)), p90 \(format(p90)), p99 \(format(p99)), max \(format(maximum)) "
                + "from last byte to consumer; the bytes alone take \(format(wireTime)) on a 9600 baud line"
        }

        private func format(_ duration: Duration) -> String {
            let microseconds =
                Double(duration.components.seconds) * 1e6
                + Double(duration.components.attoseconds) / 1e12
            return microseconds < 1000
                ? String(format: "%.0f µs", microseconds) : String(format: "%.2f ms", microseconds / 1000)
        }
    }

    /// Why the benchmark could not finish.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What went wrong.
        public var message: String
        /// The message, for a person.
        public var description: String { "serial latency benchmark: \(message)" }
    }

    /// Runs `warmUp` unmeasured scans, then `scans` measured ones, of `payloadSize` bytes each.
    public static func run(scans: Int = 10_000, payloadSize: Int = 300, warmUp: Int = 200) async throws -> Result {
        precondition(scans > 0 && payloadSize > 0 && warmUp >= 0)
        let terminal = try PseudoTerminal()
        defer { terminal.close() }
        let total = warmUp + scans
        let bench = Bench(total: total)
        let path = terminal.replicaPath
        // Read the way the daemon reads a scanner, with the production defaults.
        let reader = ScannerReader(device: path) { try await SSIConnection.open(path: path) }

        let latencies = try await withThrowingTaskGroup(of: [Duration]?.self) { group in
            group.addTask {
                var latencies: [Duration] = []
                latencies.reserveCapacity(scans)
                var received = 0
                for try await scan in reader {
                    let arrived = ContinuousClock.now
                    guard scan.payload == payload(number: received, size: payloadSize) else {
                        throw Failure(message: "scan \(received) arrived with the wrong payload")
                    }
                    if received >= warmUp { latencies.append(bench.sentAt(received).duration(to: arrived)) }
                    received += 1
                    bench.delivered.signal()
                    if received == total { break }
                }
                return latencies
            }
            group.addTask {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let thread = Thread {
                        continuation.resume(
                            with: Swift.Result {
                                try simulate(terminal, bench: bench, total: total, payloadSize: payloadSize)
                            }
                        )
                    }
                    thread.start()
                }
                return nil
            }
            var measured: [Duration]?
            for try await outcome in group {
                if let outcome { measured = outcome }
            }
            return measured ?? []
        }

        let sorted = latencies.sorted()
        func percentile(_ fraction: Double) -> Duration {
            sorted[min(sorted.count - 1, max(0, Int((Double(sorted.count) * fraction).rounded(.up)) - 1))]
        }
        let packets = packetsFor(number: 0, size: payloadSize)
        let wireBytes = packets.reduce(0) { $0 + $1.count }
        return Result(
            scans: sorted.count,
            payloadSize: payloadSize,
            packetsPerScan: packets.count,
            median: percentile(0.5),
            p90: percentile(0.9),
            p99: percentile(0.99),
            maximum: sorted.last ?? .zero,
            wireTime: SerialSettings().byteDuration * wireBytes
        )
    }

    /// What the simulator and the consumer share: send times, and the consumer's "got it".
    private final class Bench: Sendable {
        let delivered = DispatchSemaphore(value: 0)
        private let sent: Mutex<[ContinuousClock.Instant]>

        init(total: Int) {
            sent = Mutex([ContinuousClock.Instant](repeating: .now, count: total))
        }

        func markSent(_ number: Int) {
            let now = ContinuousClock.now
            sent.withLock { $0[number] = now }
        }

        func sentAt(_ number: Int) -> ContinuousClock.Instant { sent.withLock { $0[number] } }
    }

    /// The payload of scan `number`: its number, then bytes that cover 0x00...0xFF.
    private static func payload(number: Int, size: Int) -> [UInt8] {
        var bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ number) }
        for index in 0..<min(4, size) { bytes[index] = UInt8(truncatingIfNeeded: number >> (8 * index)) }
        return bytes
    }

    private static func packetsFor(number: Int, size: Int) -> [[UInt8]] {
        let data = payload(number: number, size: size)
        let chunk = SSIFrame.maximumDataCount - 1
        return stride(from: 0, to: data.count, by: chunk).map { start in
            let end = min(start + chunk, data.count)
            return SSIFrame(
                opcode: .decodeData,
                source: .decoder,
                status: end < data.count ? .continuation : [],
                data: [0x2D] + data[start..<end]
            ).encoded
        }
    }

    /// The scanner's side, on a thread of its own: answer start-up, then send each scan and wait for the
    /// host's ACKs and the consumer.
    private static func simulate(_ terminal: PseudoTerminal, bench: Bench, total: Int, payloadSize: Int) throws {
        var framer = SSIFramer(expecting: .host)
        var enabled = false

        /// Reads host packets until one satisfies `done`, acknowledging the host's commands on the way.
        func awaitHost(_ what: String, until done: (SSIFrame) -> Bool) throws {
            let giveUp = ContinuousClock.now + .seconds(10)
            while true {
                while let output = framer.next() {
                    guard case .frame(let frame) = output else { continue }
                    if frame.opcode != .commandAck, frame.opcode != .commandNak {
                        try terminal.write(SSIFrame.ack(from: .decoder).encoded)
                        if frame.opcode == .scanEnable { enabled = true }
                    }
                    if done(frame) { return }
                }
                guard ContinuousClock.now < giveUp else { throw Failure(message: "no \(what) from the host") }
                switch try terminal.read(timeout: .milliseconds(100)) {
                case .bytes(let bytes): framer.append(bytes)
                case .timedOut: continue
                case .replicaClosed: usleep(1000)
                }
            }
        }

        try awaitHost("SCAN_ENABLE") { _ in enabled }
        for number in 0..<total {
            let packets = packetsFor(number: number, size: payloadSize)
            for (index, packet) in packets.enumerated() {
                if index == packets.count - 1 { bench.markSent(number) }
                try terminal.write(packet)
                try awaitHost("ACK of scan \(number)") { $0.opcode == .commandAck }
            }
            guard bench.delivered.wait(timeout: .now() + 10) == .success else {
                throw Failure(message: "scan \(number) was acknowledged but never reached the consumer")
            }
        }
    }
}
