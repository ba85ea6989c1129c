import Foundation
import Glibc
import Synchronization

/// Progress of long work on standard error (issue 52): a sync pulling millions of revocations, a key list of
/// thousands of keys, a blocklist of millions of rows. Silent for the first two seconds, so that quick work prints
/// only its answer; after that, one line per step where standard error is not a terminal (a log, a pipe) and one
/// line redrawn in place where it is; nothing with `--quiet`. The end names the totals and the rate.
public final class ProgressReporter: Sendable {
    /// How progress is shown.
    public enum Output: Sendable, Equatable {
        /// One line, redrawn in place (`\r`, erase line): standard error is a terminal.
        case live
        /// A line per step: standard error is a file or a pipe.
        case lines
        /// Nothing (`--quiet`).
        case none

        /// The output for standard error as it is: `none` when `quiet`, else `live` on a terminal, else `lines`.
        public static func forStandardError(quiet: Bool) -> Output {
            quiet ? .none : isatty(STDERR_FILENO) == 1 ? .live : .lines
        }
    }

    private struct State {
        var shown = false
        var liveLine = false
        /// The tenth of known-size work last written as a line (-1: none yet).
        var tenth = -1
        /// When the live line was last drawn.
        var drawn: ContinuousClock.Instant?
    }

    private let output: Output
    private let task: String
    private let quietFor: Duration
    private let started = ContinuousClock.now
    private let state = Mutex(State())
    private let write: @Sendable (String) -> Void

    /// - Parameters:
    ///   - task: What the work is, the first word of every line (`revocations`, `keys`, `VDV-KA blocklist`).
    ///   - output: How to show it (``Output/forStandardError(quiet:)``).
    ///   - quietFor: How long the work goes on before its progress is shown (`--progress`: zero).
    ///   - write: Where the text goes (standard error).
    public init(
        task: String, output: Output, quietFor: Duration = .seconds(2),
        write: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }
    ) {
        self.task = task
        self.output = output
        self.quietFor = quietFor
        self.write = write
    }

    /// Reports a step (`page 12: 120,000 added`), once the work has gone on for `quietFor`.
    public func step(_ text: String) {
        guard output != .none, ContinuousClock.now - started >= quietFor else { return }
        state.withLock { state in
            state.shown = true
            switch output {
            case .live:
                state.liveLine = true
                write("\r\u{1B}[2K\(task): \(text)")
            case .lines:
                write("\(task): \(text)\n")
            case .none:
                break
            }
        }
    }

    /// Reports a step of work whose size is known: `done` of `total` `unit`, with the share done. Called as often
    /// as the work likes (every row): written as a line at each tenth of the work, and drawn live at most ten
    /// times a second.
    public func step(done: Int, of total: Int, _ unit: String) {
        guard output != .none, ContinuousClock.now - started >= quietFor else { return }
        let percent = total > 0 ? min(100, done * 100 / total) : 100
        let due = state.withLock { state -> Bool in
            switch output {
            case .lines:
                guard percent / 10 != state.tenth else { return false }
                state.tenth = percent / 10
                return true
            case .live:
                let now = ContinuousClock.now
                guard percent == 100 || state.drawn.map({ now - $0 >= .milliseconds(100) }) ?? true else {
                    return false
                }
                state.drawn = now
                return true
            case .none:
                return false
            }
        }
        if due { step("\(Self.grouped(done)) of \(Self.grouped(total)) \(unit) (\(percent) %)") }
    }

    /// Ends the work: clears the live line, and when progress was shown, says the totals and the rate
    /// (`2,000,000 entries in 26 s, 76,923 entries a second`).
    public func finish(count: Int, _ unit: String) {
        let elapsed = ContinuousClock.now - started
        state.withLock { state in
            if state.liveLine { write("\r\u{1B}[2K") }
            guard state.shown else { return }
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let rate = seconds > 0 ? " (\(Self.grouped(Int(Double(count) / seconds))) a second)" : ""
            write("\(task): \(Self.grouped(count)) \(unit) in \(ReadableText.duration(elapsed))\(rate)\n")
        }
    }

    /// Stops without totals (the work failed, and its error follows): clears the live line.
    public func abandon() {
        state.withLock { state in
            if state.liveLine { write("\r\u{1B}[2K") }
            state.liveLine = false
        }
    }

    /// `1234567` as `1,234,567`.
    public static func grouped(_ number: Int) -> String {
        let digits = String(number.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return (number < 0 ? "-" : "") + result
    }
}
