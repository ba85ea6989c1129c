import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// Each verdict as one JSON line on standard output (for journald, or a pipe to another program).
public struct StandardOutputSink: VerdictSink {
    public init() {}

    public func deliver(_ event: VerdictEvent) async {
        let line = Array((event.jsonLine + "\n").utf8)
        line.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(1, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    return  // stdout closed: the journal still has the verdict.
                }
            }
        }
    }
}

/// Hands each verdict to the ``EventHub``: the unix socket's clients and the HTTP `/events` streams.
public struct EventHubSink: VerdictSink {
    public let hub: EventHub

    public init(hub: EventHub) { self.hub = hub }

    public func deliver(_ event: VerdictEvent) async { hub.publish(event) }
}

/// A unix stream socket that sends every verdict as a JSON line to each connected client (a local UI, a gate
/// controller). Clients only read; a client that stops reading loses old lines, never slows the daemon.
public struct UnixSocketService: Service {
    public let path: String
    private let hub: EventHub
    private let logger: Logger
    private let onBound: @Sendable () -> Void

    public init(path: String, hub: EventHub, logger: Logger, onBound: @escaping @Sendable () -> Void = {}) {
        self.path = path
        self.hub = hub
        self.logger = logger
        self.onBound = onBound
    }

    public func run() async throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        // Owner and group (the farecheck group) may connect; nobody else.
        chmod(path, 0o660)
        logger.info("verdicts stream on unix socket \(path)")
        onBound()
        let hub = self.hub
        let logger = self.logger
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { clients in
                    for try await client in clients {
                        group.addTask {
                            do {
                                try await client.executeThenClose { inbound, outbound in
                                    try await withThrowingTaskGroup(of: Void.self) { connection in
                                        // The client sends nothing; its end of the stream means it left.
                                        connection.addTask {
                                            for try await _ in inbound {}
                                        }
                                        connection.addTask {
                                            for await event in hub.subscribe(replayLast: false) {
                                                try await outbound.write(ByteBuffer(string: event.jsonLine + "\n"))
                                            }
                                        }
                                        try await connection.next()
                                        connection.cancelAll()
                                    }
                                }
                            } catch {
                                logger.debug("socket client left: \(error)")
                            }
                        }
                    }
                }
            }
        } onGracefulShutdown: {
            hub.finish()
            try? server.channel.close().wait()
        }
        unlink(path)
    }
}

/// Runs the gate hook for each verdict it is configured for, one at a time, with a timeout.
///
/// The command gets the verdict in its environment: `FARECHECK_VERDICT` (`valid`, …), `FARECHECK_VALID`
/// (`1` or `0`), `FARECHECK_REASON`, `FARECHECK_INSPECTION_ID`, `FARECHECK_DEVICE`, `FARECHECK_TICKET_ID`,
/// `FARECHECK_PRODUCT` and `FARECHECK_EVENT` (the whole JSON line). Delivery only queues: the pipeline never
/// waits for the relay. A command that outlives its timeout is killed and logged.
public final class GateHookService: Service, VerdictSink {
    private let hook: DaemonConfiguration.GateHook
    private let logger: Logger
    private let queue: AsyncStream<VerdictEvent>
    private let continuation: AsyncStream<VerdictEvent>.Continuation

    public init(hook: DaemonConfiguration.GateHook, logger: Logger) {
        self.hook = hook
        self.logger = logger
        // A gate cannot catch up on a backlog of old openings: keep only the newest few.
        (queue, continuation) = AsyncStream.makeStream(of: VerdictEvent.self, bufferingPolicy: .bufferingNewest(8))
    }

    public func deliver(_ event: VerdictEvent) async {
        guard hook.verdicts.contains("*") || hook.verdicts.contains(event.verdict) else { return }
        continuation.yield(event)
    }

    public func run() async throws {
        await withGracefulShutdownHandler {
            for await event in queue {
                await runHook(for: event)
            }
        } onGracefulShutdown: { [continuation] in
            continuation.finish()
        }
    }

    /// Runs the command once for `event`; returns its exit status, or `nil` if it could not run or timed out.
    @discardableResult
    public func runHook(for event: VerdictEvent) async -> Int32? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: hook.command[0])
        process.arguments = Array(hook.command.dropFirst())
        var environment = ProcessInfo.processInfo.environment
        environment["FARECHECK_VERDICT"] = event.verdict
        environment["FARECHECK_VALID"] = event.isValid ? "1" : "0"
        environment["FARECHECK_REASON"] = event.reason
        environment["FARECHECK_INSPECTION_ID"] = event.id
        environment["FARECHECK_DEVICE"] = event.device
        environment["FARECHECK_TICKET_ID"] = event.ticketId ?? ""
        environment["FARECHECK_PRODUCT"] = event.product ?? ""
        environment["FARECHECK_EVENT"] = event.jsonLine
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        let exited = ExitSignal()
        process.terminationHandler = { _ in exited.fire() }
        do {
            try process.run()
        } catch {
            logger.error("gate hook \(hook.command[0]) cannot run: \(error)")
            return nil
        }
        let finished = await exited.wait(timeout: .milliseconds(Int64(hook.timeout * 1000)))
        if !finished {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            logger.error("gate hook \(hook.command[0]) took longer than \(hook.timeout) s and was killed")
            return nil
        }
        let status = process.terminationStatus
        if status != 0 {
            logger.warning("gate hook \(hook.command[0]) exited with status \(status) for \(event.verdict)")
        }
        return status
    }

    /// A one-shot "the process exited", awaitable with a timeout.
    private final class ExitSignal: Sendable {
        private let state = Mutex<(fired: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

        func fire() {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.fired = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }

        func wait(timeout: Duration) async -> Bool {
            await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    await withCheckedContinuation { continuation in
                        let fired = self.state.withLock { state -> Bool in
                            if state.fired { return true }
                            state.waiter = continuation
                            return false
                        }
                        if fired { continuation.resume() }
                    }
                    return true
                }
                group.addTask {
                    try? await Task.sleep(for: timeout)
                    return false
                }
                let first = await group.next() ?? false
                if !first { self.fire() }  // release the waiting child
                group.cancelAll()
                return first
            }
        }
    }
}
