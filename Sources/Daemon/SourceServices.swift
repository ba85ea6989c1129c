import DaemonConfig
import FareCore
import Foundation
import Logging
import Scanners
import ServiceLifecycle
import Symbols

/// One configured scanner: reads scans (reopening the device when it is unplugged), sends each through the
/// pipeline, and beeps good or bad on the scanner where the protocol allows.
public struct ScannerService: Service {
    private let scanner: DaemonConfiguration.Scanner
    private let pipeline: InspectionPipeline
    private let metrics: DaemonMetrics
    private let status: DaemonStatus
    private let logger: Logger
    private let reopenSignal: ReopenSignal?

    public init(
        scanner: DaemonConfiguration.Scanner, pipeline: InspectionPipeline, metrics: DaemonMetrics,
        status: DaemonStatus, logger: Logger, reopenSignal: ReopenSignal? = nil
    ) {
        self.reopenSignal = reopenSignal
        self.scanner = scanner
        self.pipeline = pipeline
        self.metrics = metrics
        self.status = status
        self.logger = logger
    }

    public func run() async throws {
        var settings = SerialSettings()
        settings.baudRate = scanner.baud
        let name = scanner.name
        let logger = self.logger
        let metrics = self.metrics
        let status = self.status
        metrics.scanner(name, connected: false)
        // With hotplug events a replugged scanner is reopened at once; the delay is the fallback without them.
        let reader = ScannerReader(
            device: name, reopenDelay: reopenSignal == nil ? .seconds(1) : .seconds(5), reopenSignal: reopenSignal,
            log: { logger.notice("\($0)") },
            onStateChange: { state in
                switch state {
                case .connected:
                    metrics.scanner(name, connected: true)
                    status.scanner(name, connected: true, reason: nil)
                case .disconnected(let reason, let problem):
                    metrics.scanner(name, connected: false)
                    status.scanner(name, connected: false, reason: reason, problem: problem)
                }
            },
            open: ScannerOpener.opener(
                device: scanner.device, protocol: scanner.protocolName, settings: settings,
                layout: KeyboardLayout.named(scanner.layout) ?? .us, triggerMode: scanner.triggerMode,
                log: { logger.info("\($0)") })
        )
        // Stop reading at shutdown; the reader closes the device when its task is cancelled.
        try await cancelWhenGracefulShutdown {
            // On the pipeline's thread: the connection (an actor without an executor of its own, like SSI's) takes a
            // scan's bytes there, acknowledges them and hands the scan on in one run, where a thread of the
            // cooperative pool would first have to be woken, and the pipeline's after it.
            try await withTaskExecutorPreference(pipeline.thread) {
                for try await var scan in reader {
                    scan.source = SourceName(name)
                    await pipeline.inspect(scan) { feedback in await reader.signal(feedback) }
                }
            }
        }
    }
}

/// A bench source: the images in a directory, decoded and fed through the pipeline as if scanned, one every
/// `interval` seconds (for the demo, and for testing a gate without a scanner).
public struct ImageSourceService: Service {
    private let source: DaemonConfiguration.ImageSource
    private let pipeline: InspectionPipeline
    private let logger: Logger

    public init(source: DaemonConfiguration.ImageSource, pipeline: InspectionPipeline, logger: Logger) {
        self.source = source
        self.pipeline = pipeline
        self.logger = logger
    }

    /// The image files of the source, sorted by name.
    public static func imageFiles(at path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return [] }
        guard isDirectory.boolValue else { return [path] }
        let extensions: Set<String> = ["png", "jpg", "jpeg", "pgm", "ppm", "pnm"]
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.filter { extensions.contains(($0 as NSString).pathExtension.lowercased()) }.sorted()
            .map { path + "/" + $0 }
    }

    public func run() async throws {
        let scanner = SymbolScanner()
        try await cancelWhenGracefulShutdown {
            repeat {
                let files = Self.imageFiles(at: source.path)
                if files.isEmpty {
                    logger.warning("\(source.name): no images in \(source.path)")
                }
                for file in files {
                    // Cancelled at shutdown: stop between images, not with an error.
                    guard (try? await Task.sleep(for: .milliseconds(Int64(source.interval * 1000)))) != nil else {
                        return
                    }
                    let symbols: [DecodedSymbol]
                    do {
                        symbols = try scanner.scan(fileAtPath: file)
                    } catch {
                        logger.warning("\(source.name): \(file): \(error)")
                        continue
                    }
                    guard let symbol = symbols.first else {
                        logger.warning("\(source.name): \(file): no barcode found")
                        continue
                    }
                    await pipeline.inspect(
                        ScanEvent(
                            payload: symbol.bytes, symbology: symbol.symbology, device: file,
                            source: SourceName(source.name)))
                }
                if files.isEmpty, (try? await Task.sleep(for: .seconds(max(source.interval, 1)))) == nil { return }
            } while source.loop && !Task.isCancelled
            // A source that has played once stays idle rather than ending the daemon.
            try await gracefulShutdown()
        }
    }
}

/// Listens for scanners being plugged in (netlink uevents, `HotplugMonitor`) and wakes the scanner readers that
/// wait to reopen, so that a replugged scanner reads again as soon as its node exists. Where no netlink socket
/// can be had (a sandbox), it says so once and the readers fall back to retrying on their own.
public struct HotplugService: Service {
    private let signal: ReopenSignal
    private let logger: Logger
    private let open: @Sendable () throws -> HotplugMonitor

    public init(
        signal: ReopenSignal, logger: Logger,
        open: @escaping @Sendable () throws -> HotplugMonitor = { try HotplugMonitor.open() }
    ) {
        self.signal = signal
        self.logger = logger
        self.open = open
    }

    public func run() async throws {
        let monitor: HotplugMonitor
        do {
            monitor = try open()
        } catch {
            logger.notice("hotplug events unavailable (\(error)); unplugged scanners are retried every few seconds")
            // The readers still need the signal to fire now and then: a one-second tick stands in for it.
            try? await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    try await Task.sleep(for: .seconds(1))
                    signal.fire()
                }
            }
            return
        }
        await cancelWhenGracefulShutdown { await signal.follow(monitor.events) }
        await monitor.close()
    }
}
