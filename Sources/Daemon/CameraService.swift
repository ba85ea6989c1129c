import Camera
import DaemonConfig
import Executors
import FareCore
import Foundation
import Logging
import Scanners
import ServiceLifecycle
import Symbols

/// One configured camera (or a recording played as one): frames captured on a thread of their own, decoded here
/// into presentations, each presentation one scan through the pipeline, so the replay rules see presentations.
///
/// Capture and decoding meet in a ``FrameQueue``: when decoding falls behind the camera, the oldest waiting frame is
/// dropped and counted (`farecheck_camera_frames_dropped_total`). A camera that fails or disappears is reopened by
/// ``CameraCapture``; the daemon goes on serving its other sources meanwhile.
public struct CameraService: Service {
    private let camera: DaemonConfiguration.Camera
    private let pipeline: InspectionPipeline
    private let metrics: DaemonMetrics
    private let status: DaemonStatus
    private let logger: Logger
    private let settings: CameraCapture.Settings
    private let open: @Sendable () throws(CameraError) -> any CameraDevice

    /// Creates the service.
    ///
    /// - Parameters:
    ///   - settings: The capture loop's settings; the camera's request from the configuration replaces theirs.
    ///   - open: Opens the device; by default a ``V4L2Camera`` on the configured node, or a ``RecordedCamera``
    ///     for a `.y4m` file.
    public init(
        camera: DaemonConfiguration.Camera, pipeline: InspectionPipeline, metrics: DaemonMetrics,
        status: DaemonStatus, logger: Logger, settings: CameraCapture.Settings = CameraCapture.Settings(),
        open: (@Sendable () throws(CameraError) -> any CameraDevice)? = nil
    ) {
        self.camera = camera
        self.pipeline = pipeline
        self.metrics = metrics
        self.status = status
        self.logger = logger
        var settings = settings
        settings.request = camera.request
        self.settings = settings
        let device = camera.device
        if let open {
            self.open = open
        } else if camera.isRecording {
            self.open = { @Sendable () throws(CameraError) in try RecordedCamera(path: device) }
        } else {
            self.open = { @Sendable () throws(CameraError) in try V4L2Camera(path: device) }
        }
    }

    public func run() async throws {
        let name = camera.name
        let logger = self.logger
        let metrics = self.metrics
        let status = self.status
        let isRecording = camera.isRecording
        metrics.scanner(name, connected: false)
        let queue = FrameQueue()
        let capture = CameraCapture(settings: settings, queue: queue, open: open) { event in
            switch event {
            case .opened(let device, let format):
                logger.notice("\(name): \(device) streaming \(format)")
                metrics.scanner(name, connected: true)
                status.scanner(name, connected: true, reason: nil)
            case .failed(let error, let retryIn):
                if isRecording, error.kind == .ended {
                    logger.info("\(name): \(error); playing it again in \(retryIn)")
                } else {
                    logger.warning("\(name): \(error); trying again in \(retryIn)")
                }
                metrics.scanner(name, connected: false)
                status.scanner(name, connected: false, reason: error.description, problem: ScannerProblem(error))
            case .badFrame(let reason):
                logger.debug("\(name): skipped a frame: \(reason)")
                metrics.cameraBadFrame(name)
            }
        }
        let thread = DedicatedThread.start(name: "farecheck camera \(name)") { capture.run() }
        let absence = Duration.seconds(camera.newPresentationAfter)
        // Stop capturing at shutdown (or cancellation): the capture thread finishes the queue, which ends the loop.
        await cancelWhenGracefulShutdown {
            await withTaskCancellationHandler {
                var presentations = PresentationReader(absenceForNewPresentation: absence)
                var dropped = 0
                while let frame = await queue.next() {
                    metrics.cameraFrame(name)
                    let nowDropped = queue.droppedFrames
                    if nowDropped > dropped {
                        metrics.cameraFramesDropped(name, count: nowDropped - dropped)
                        dropped = nowDropped
                    }
                    for presentation in presentations.presentations(in: frame) {
                        await pipeline.inspect(
                            ScanEvent(
                                payload: presentation.symbol.bytes, symbology: presentation.symbol.symbology,
                                device: name))
                    }
                }
            } onCancel: {
                capture.stop()
            }
        }
        capture.stop()
        // Drain what the thread still offers until it has finished the queue, so it is gone when we return.
        while await queue.next() != nil {}
        await thread.finished()
    }
}

extension ScannerProblem {
    /// The problem a camera's failure is, as the page names a scanner's.
    init(_ error: CameraError) {
        switch error.kind {
        case .notACamera, .noUsableMode: self = .misconfigured
        case .lost: self = .gone
        case .unavailable, .stalled, .badFrames, .ended: self = .failing
        }
    }
}
