import CLinuxShims
import Executors
import FareCore
import Foundation
import SystemCalls
import SystemPackage

/// A keyboard-wedge scanner session over an evdev node (`/dev/input/eventN`).
///
/// The node is grabbed exclusively (`EVIOCGRAB`), so scans are not also typed into whatever has focus.
/// Key events are framed into scans by a ``WedgeFramer`` (layout, suffix, inter-key timeout).
///
/// A wedge carries **text payloads only**: a scanner cannot type NUL or arbitrary bytes, so binary tickets
/// (UIC 918.3, zlib-compressed Aztec codes) cannot pass through it. Use it for text tickets such as base45
/// FC1 QR codes, and HID POS, SNAPI or SSI for binary ones. ``signal(_:)`` does nothing: a keyboard has
/// no beeper (its LEDs are not the scanner's).
public final class WedgeConnection: ScannerConnection {
    private let mailbox: ScanMailbox
    private let thread: DeviceThread
    /// The device name used in scan events.
    public let device: String

    private init(device: String, mailbox: ScanMailbox, thread: DeviceThread) {
        self.device = device
        self.mailbox = mailbox
        self.thread = thread
    }

    /// Opens and grabs an evdev node and starts reading.
    ///
    /// Some scanners create two event nodes (keyboard and consumer control); open the one with keys
    /// (`farecheck scanners list` marks it).
    ///
    /// - Parameter log: Receives a line for each scan dropped while the device stays.
    /// - Throws: ``ScannerConnectionError``: missing node, no permission, or `.deviceBusy`
    ///   when another program has grabbed the node.
    public static func open(
        path: String,
        framer: WedgeFramer = WedgeFramer(),
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(ScannerConnectionError) -> WedgeConnection {
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec, .nonBlocking])
        } catch {
            throw USBNodeError.opening(path, error as? Errno ?? .ioError, what: "an input event node")
        }
        do {
            _ = try systemCallReturningNegatedErrno { CLinuxShims_evdevGrab(fd.rawValue, 1) }
        } catch {
            try? fd.close()
            if error == .resourceBusy {
                throw ScannerConnectionError(
                    code: .deviceBusy,
                    device: path,
                    message: "another program has grabbed \(path) (EVIOCGRAB); stop it, or scans go to it instead",
                    cause: error
                )
            }
            throw ScannerConnectionError(
                code: .misconfigured,
                device: path,
                message: "\(path) is not an input event node; give a /dev/input/eventN path",
                cause: error
            )
        }
        return try start(fd, name: path, framer: framer, log: log)
    }

    /// Reads `input_event` records from a descriptor that is already open: an evdev node opened (and
    /// grabbed) elsewhere, or in tests a pipe fed with a recorded stream.
    ///
    /// The connection owns the descriptor from now on and closes it when the session ends. At end of file
    /// the session ends: ``nextScan()`` returns `nil`, or throws when a scan was being typed.
    public static func reading(
        fileDescriptor: Int32,
        device: String,
        framer: WedgeFramer = WedgeFramer(),
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(ScannerConnectionError) -> WedgeConnection {
        try start(FileDescriptor(rawValue: fileDescriptor), name: device, framer: framer, log: log)
    }

    private static func start(
        _ fd: FileDescriptor,
        name: String,
        framer: WedgeFramer,
        log: @escaping @Sendable (String) -> Void
    ) throws(ScannerConnectionError) -> WedgeConnection {
        let mailbox = ScanMailbox()
        do {
            let thread = try DeviceThread.start(name: "farecheck \(name)") { thread in
                run(fd, name: name, framer: framer, mailbox: mailbox, thread: thread, log: log)
            }
            return WedgeConnection(device: name, mailbox: mailbox, thread: thread)
        } catch {
            try? fd.close()
            throw ScannerConnectionError(
                code: .openFailed, device: name, message: "cannot start a reader thread for \(name)", cause: error)
        }
    }

    /// The device loop: read records, frame them, deliver; end a scan when the keys stop for the timeout.
    private static func run(
        _ fd: FileDescriptor,
        name: String,
        framer: WedgeFramer,
        mailbox: ScanMailbox,
        thread: DeviceThread,
        log: @Sendable (String) -> Void
    ) {
        var framer = framer
        var decoder = InputEventDecoder()
        var buffer = [UInt8](repeating: 0, count: InputEvent.size * 64)
        // The idle end of a scan is timed from when its last key was read: live, that is within microseconds
        // of the kernel's timestamp; for a replayed stream the framer judges gaps on the timestamps.
        var lastReadAt = ContinuousClock.now
        defer {
            try? fd.close()  // Closing also releases the grab.
        }

        func deliver(_ outcome: WedgeFramer.Outcome) {
            switch outcome {
            case .scan(let scan):
                mailbox.post(
                    ScanEvent(
                        payload: scan.payload, symbology: scan.symbology, device: name, receivedAt: scan.completedAt))
            case .dropped(let dropped):
                log("\(name): \(dropped)")
            }
        }

        while true {
            let timeout: Duration? =
                framer.isScanInProgress ? max(.zero, framer.interKeyTimeout - (ContinuousClock.now - lastReadAt)) : nil
            let readiness: DeviceThread.Readiness
            do {
                readiness = try thread.wait(forReading: fd, timeout: timeout)
            } catch {
                mailbox.finish(
                    failure: USBNodeError.reading(name, error, dropped: framer.abandon(reason: "device error")))
                return
            }
            switch readiness {
            case .stopped:
                if let dropped = framer.abandon(reason: "the session was closed") { log("\(name): \(dropped)") }
                mailbox.finish()
                return
            case .timedOut:
                if let outcome = framer.finishIdleScan() { deliver(outcome) }
                continue
            case .hangUp:
                // Gone with nothing in flight is a clean end; with a scan half typed, the reader must hear why.
                let dropped = framer.abandon(reason: "hang-up")
                mailbox.finish(failure: dropped.map { USBNodeError.hungUp(name, dropped: $0) })
                return
            case .readable:
                break
            }
            let count: Int
            do {
                count = try buffer.withUnsafeMutableBytes { try fd.read(into: $0) }
            } catch let error as Errno where error == .resourceTemporarilyUnavailable {
                continue
            } catch {
                let errno = error as? Errno ?? .ioError
                mailbox.finish(
                    failure: USBNodeError.reading(name, errno, dropped: framer.abandon(reason: "read failed")))
                return
            }
            guard count > 0 else {
                // End of file: a pipe's writer closed (a real evdev node says ENODEV instead).
                if let dropped = framer.abandon(reason: "end of stream") {
                    mailbox.finish(failure: USBNodeError.hungUp(name, dropped: dropped))
                } else {
                    mailbox.finish()
                }
                return
            }
            lastReadAt = ContinuousClock.now
            for event in decoder.decode(buffer.prefix(count)) {
                for outcome in framer.accept(event) { deliver(outcome) }
            }
        }
    }

    /// Waits for the next complete scan; see ``ScannerConnection/nextScan()``.
    public func nextScan() async throws -> ScanEvent? {
        try await mailbox.next()
    }

    /// Does nothing: a keyboard wedge has no way to beep or light the scanner.
    public func signal(_ feedback: ScanFeedback) async {}

    /// Stops reading, releases the grab and closes the node.
    public func close() async {
        await thread.stop()
    }
}
