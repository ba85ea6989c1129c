/// Finds SSI packets in a byte stream that may carry line noise between them.
///
/// Feed it bytes as they arrive with ``append(_:)`` and take what it found with ``next()`` until that returns
/// `nil` (more bytes needed). A candidate packet starts at a byte that could be a LEN (4...255) followed by a
/// known opcode and the expected source; anything else is skipped one byte at a time. A candidate whose
/// checksum fails is reported as ``Output/corrupt(nakWanted:)`` and the search resumes one byte later, so a
/// real packet hidden behind a false start is still found. Only the first failed candidate of a stretch asks
/// for a NAK: the bytes inside a damaged packet are not each worth one.
///
/// A frame with an opcode this implementation does not know (a newer scanner's message) is still a frame: it
/// is taken when its checksum holds, so that the host can answer it and the scanner, which waits for that
/// answer, goes on to the next scan. Such a candidate must also carry a STATUS byte with only defined bits and lie
/// outside a packet already reported damaged; one whose checksum fails is noise, skipped without a NAK, as an
/// unknown opcode is no evidence of a packet.
///
/// The framer is pure (no I/O, no clock): the caller tells it when the line went quiet with
/// ``lineWentQuiet()``, because a scanner sends a packet in one go and a half packet followed by silence will
/// never be completed; the framer then gives up waiting for it and searches the bytes after its start.
public struct SSIFramer: Sendable {
    /// What the framer found.
    public enum Output: Hashable, Sendable {
        /// A packet with a good checksum.
        case frame(SSIFrame)
        /// A plausible packet whose checksum failed; `nakWanted` is false for false starts inside a packet that
        /// was already reported.
        case corrupt(nakWanted: Bool)
        /// Bytes skipped because no packet could start there.
        case discarded(count: Int)
    }

    /// The source packets are expected from: ``SSISource/decoder`` on the host side.
    public let expectedSource: SSISource

    private var buffer: [UInt8] = []
    /// Index in `buffer` of the next byte that could start a packet.
    private var start = 0
    /// Stream offset of `buffer[0]`, so that NAK suppression survives compaction.
    private var base = 0
    /// Stream offset up to which failed candidates lie inside an already NAKed packet.
    private var nakCoveredUntil = 0
    private var skipped = 0
    private var lineIsQuiet = false

    /// Creates a framer for packets from `expectedSource`.
    public init(expecting expectedSource: SSISource = .decoder) {
        self.expectedSource = expectedSource
    }

    /// The bytes received but not yet part of a reported packet: an incomplete packet in flight, or noise.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Adds bytes from the line.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
        lineIsQuiet = false
    }

    /// The next packet, damaged packet or run of skipped bytes, or `nil` when more bytes are needed.
    public mutating func next() -> Output? {
        while start < buffer.count {
            let length = Int(buffer[start])
            guard plausibleStart(at: start) else {
                start += 1
                skipped += 1
                continue
            }
            if skipped > 0 { return flushSkipped() }
            let end = start + length + 2
            guard end <= buffer.count else {
                guard lineIsQuiet else { break }
                // The rest of this candidate is not coming: it was noise or a packet cut short.
                start += 1
                skipped += 1
                continue
            }
            let checksum = SSIFrame.checksum(of: buffer[start..<(start + length)])
            let checksumHolds = UInt16(buffer[start + length]) << 8 | UInt16(buffer[start + length + 1]) == checksum
            if !checksumHolds, !SSIOpcode.known.contains(SSIOpcode(rawValue: buffer[start + 1])) {
                start += 1
                skipped += 1
                continue
            }
            if checksumHolds {
                let frame = SSIFrame(
                    opcode: SSIOpcode(rawValue: buffer[start + 1]),
                    source: SSISource(rawValue: buffer[start + 2]),
                    status: SSIStatus(rawValue: buffer[start + 3]),
                    data: Array(buffer[(start + 4)..<(start + length)])
                )
                start = end
                compact()
                return .frame(frame)
            }
            let offset = base + start
            let nakWanted = offset >= nakCoveredUntil
            if nakWanted { nakCoveredUntil = base + end }
            start += 1
            return .corrupt(nakWanted: nakWanted)
        }
        if skipped > 0 { return flushSkipped() }
        compact()
        return nil
    }

    /// Says that no more bytes came for a while: an incomplete packet will not be completed, so the following
    /// calls to ``next()`` skip it and report its bytes as discarded (after any packet found behind it).
    public mutating func lineWentQuiet() {
        lineIsQuiet = true
    }

    private func plausibleStart(at index: Int) -> Bool {
        let length = buffer[index]
        guard length >= 4 else { return false }
        // Judge on the header bytes that have arrived; the rest is judged when it comes.
        if index + 2 < buffer.count, buffer[index + 2] != expectedSource.rawValue { return false }
        guard index + 1 < buffer.count, !SSIOpcode.known.contains(SSIOpcode(rawValue: buffer[index + 1])) else {
            return true
        }
        // An unknown opcode: not inside a packet already reported damaged (its bytes are not frames), and with a
        // STATUS byte that has only defined bits.
        if base + index < nakCoveredUntil { return false }
        if index + 3 < buffer.count, !SSIStatus.defined.isSuperset(of: SSIStatus(rawValue: buffer[index + 3])) {
            return false
        }
        return true
    }

    private mutating func flushSkipped() -> Output {
        let count = skipped
        skipped = 0
        return .discarded(count: count)
    }

    private mutating func compact() {
        // Keep the buffer from growing without copying on every packet.
        if start == buffer.count {
            base += buffer.count
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 4096 {
            base += start
            buffer.removeFirst(start)
            start = 0
        }
    }
}
