import FareCore
import Scanners

/// What an `SSISession` asked for, by kind: the bytes it sends, the scans it delivers, the lines it logs.
func sent(_ actions: [SSISession.Action]) -> [[UInt8]] {
    actions.compactMap { if case .send(let bytes) = $0 { bytes } else { nil } }
}

func scans(_ actions: [SSISession.Action]) -> [ScanEvent] {
    actions.compactMap { if case .deliver(let scan) = $0 { scan } else { nil } }
}

func logs(_ actions: [SSISession.Action]) -> [String] {
    actions.compactMap { if case .log(let line) = $0 { line } else { nil } }
}
