import DaemonConfig
import FareCore
import Foundation
import Logging
import NIOCore
import NIOPosix
import Presentation
import ServiceLifecycle
import Synchronization
import SystemCalls

/// Each verdict as one JSON line on standard output (for journald, or a pipe to another program).
///
/// Ticket text (an issuer, a holder's name, a reason quoting a record) reaches the line: JSON escapes its control
/// characters, but not the format characters (a right-to-left override, a zero-width space) nor the line and
/// paragraph separators, which `journalctl` and a terminal would then show reordered or hidden. This sink writes
/// those as JSON escapes too (``journalLine(_:)``): the line decodes to the same values.
public struct StandardOutputSink: VerdictSink {
    /// Whether lines carry holder data (names, dates of birth). Standard output of a service goes to the system
    /// journal, kept and readable far longer than a verdict matters: off unless `[log] holder_data` says so.
    public let holderData: Bool

    public init(holderData: Bool = false) {
        self.holderData = holderData
    }

    public func deliver(_ verdict: PublishedVerdict) async {
        let line = Array((Self.journalLine(verdict.line(holderData: holderData)) + "\n").utf8)
        line.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                guard let written = try? systemCall({ write(1, buffer.baseAddress! + offset, buffer.count - offset) }),
                    written > 0
                else {
                    return  // stdout closed: the journal still has the verdict.
                }
                offset += written
            }
        }
    }
}

extension StandardOutputSink {
    /// `line` (JSON) with every format character (general category Cf) and line or paragraph separator written as a
    /// JSON escape, `\u202e`, in UTF-16 units as JSON counts them. Such characters only occur inside the line's
    /// strings (its syntax is ASCII), so the escaped line is the same JSON document.
    static func journalLine(_ line: String) -> String {
        guard line.unicodeScalars.contains(where: PrintableText.isInvisibleFormatting) else { return line }
        var escaped = ""
        escaped.reserveCapacity(line.utf8.count + 16)
        for scalar in line.unicodeScalars {
            guard PrintableText.isInvisibleFormatting(scalar) else {
                escaped.unicodeScalars.append(scalar)
                continue
            }
            for unit in String(scalar).utf16 {
                let digits = String(unit, radix: 16)
                escaped += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
            }
        }
        return escaped
    }
}

/// Hands each verdict to the ``EventHub``: the unix socket's clients and the HTTP `/events` streams.
public struct EventHubSink: VerdictSink {
    public let hub: EventHub

    public init(hub: EventHub) { self.hub = hub }

    public func deliver(_ verdict: PublishedVerdict) async { hub.publish(verdict) }
}

/// A unix stream socket that sends every verdict as a JSON line to each connected client (a local UI, a gate
/// controller). Clients only read; a client that stops reading loses old lines, never slows the daemon.
public struct UnixSocketService: Service {
    public let path: String
    private let hub: EventHub
    private let logger: Logger
    private let onBound: @Sendable () -> Void
    private let status: DaemonStatus?
    /// How many of the newest lines a client that does not read keeps, once 64 KiB wait unsent (NIO's high-water mark).
    let backlog: Int

    public init(
        path: String, hub: EventHub, status: DaemonStatus? = nil, logger: Logger, backlog: Int = 256,
        onBound: @escaping @Sendable () -> Void = {}
    ) {
        self.backlog = backlog
        self.path = path
        self.hub = hub
        self.status = status
        self.logger = logger
        self.onBound = onBound
    }

    public func run() async throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        // Each client's lines are written from the pipeline's thread (`EventHub.follow`), handed to the client's event
        // loop without a task in between; nothing is read from a client.
        let backlog = self.backlog
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let writer = VerdictLineWriter(backlog: backlog)
                    try channel.pipeline.syncOperations.addHandler(writer)
                    return (channel, NIOLoopBound(writer, eventLoop: channel.eventLoop))
                }
            }
        // Owner and group (the farecheck group) may connect; nobody else.
        _ = try? systemCall { chmod(path, 0o660) }
        logger.info("verdicts stream on unix socket \(path)")
        onBound()
        let hub = self.hub
        let status = self.status
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { clients in
                    for try await (client, writer) in clients {
                        group.addTask {
                            // Subscribed before the client is counted: a client that sees itself counted in /healthz
                            // gets every verdict from then on.
                            let subscription = hub.follow { verdict in
                                let line = ByteBuffer(string: verdict.line + "\n")
                                client.eventLoop.execute { writer.value.send(line) }
                            } finished: {
                                client.close(promise: nil)
                            }
                            status?.socketClients(changedBy: 1)
                            defer {
                                subscription.cancel()
                                status?.socketClients(changedBy: -1)
                            }
                            // The client sends nothing (what it sends is dropped); it leaves by closing its end.
                            try? await client.closeFuture.get()
                        }
                    }
                }
            }
        } onGracefulShutdown: {
            hub.finish()
            try? server.channel.close().wait()
        }
        _ = try? systemCall { unlink(path) }
    }
}

/// One socket client's verdict lines, on its channel's event loop: written at once while the client reads; once 64 KiB
/// wait unsent (the channel is not writable), the newest `backlog` lines wait here and older ones are dropped, so that a
/// client that stops reading never slows the daemon, and one that catches up gets the latest verdicts. What the client
/// sends is dropped.
final class VerdictLineWriter: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let backlog: Int
    private var context: ChannelHandlerContext?
    private var waiting = CircularBuffer<ByteBuffer>()

    init(backlog: Int) {
        self.backlog = max(1, backlog)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        waiting.removeAll()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    /// Writes `line`, or keeps it among the newest waiting ones; on the channel's event loop.
    func send(_ line: ByteBuffer) {
        guard let context, context.channel.isActive else { return }
        guard waiting.isEmpty, context.channel.isWritable else {
            if waiting.count >= backlog { waiting.removeFirst() }
            waiting.append(line)
            return
        }
        context.writeAndFlush(wrapOutboundOut(line), promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        var wrote = false
        while context.channel.isWritable, let line = waiting.popFirst() {
            context.write(wrapOutboundOut(line), promise: nil)
            wrote = true
        }
        if wrote { context.flush() }
        context.fireChannelWritabilityChanged()
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
    private let queue: AsyncStream<PublishedVerdict>
    private let continuation: AsyncStream<PublishedVerdict>.Continuation

    public init(hook: DaemonConfiguration.GateHook, logger: Logger) {
        self.hook = hook
        self.logger = logger
        // A gate cannot catch up on a backlog of old openings: keep only the newest few.
        (queue, continuation) = AsyncStream.makeStream(of: PublishedVerdict.self, bufferingPolicy: .bufferingNewest(8))
    }

    public func deliver(_ verdict: PublishedVerdict) async {
        guard hook.verdicts.contains(verdict.event.verdict) else { return }
        continuation.yield(verdict)
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

    /// Runs the command once for `verdict`; returns its exit status, or `nil` if it could not run or timed out.
    @discardableResult
    public func runHook(for verdict: PublishedVerdict) async -> Int32? {
        let event = verdict.event
        var environment = ProcessInfo.processInfo.environment
        environment["FARECHECK_VERDICT"] = event.verdict.rawValue
        environment["FARECHECK_VALID"] = event.isValid ? "1" : "0"
        environment["FARECHECK_REASON"] = event.reason
        environment["FARECHECK_INSPECTION_ID"] = event.id.rawValue
        environment["FARECHECK_DEVICE"] = event.device.rawValue
        environment["FARECHECK_TICKET_ID"] = event.ticketId ?? ""
        environment["FARECHECK_PRODUCT"] = event.product ?? ""
        // The event line without holder data unless `[gate] holder_data` asks for it: a relay needs the verdict.
        environment["FARECHECK_EVENT"] = verdict.line(holderData: hook.holderData)
        let child: ChildProcess
        do {
            child = try ChildProcess.spawn(hook.command, environment: environment)
        } catch {
            logger.error("gate hook \(hook.command[0]) cannot run: \(error)")
            return nil
        }
        guard let status = await child.wait(timeout: .milliseconds(Int64(hook.timeout * 1000))) else {
            logger.error("gate hook \(hook.command[0]) took longer than \(hook.timeout) s and was killed")
            return nil
        }
        if status != 0 {
            logger.warning("gate hook \(hook.command[0]) exited with status \(status) for \(event.verdict)")
        }
        return status
    }
}

/// A program started with `posix_spawn` in a process group of its own, with default signal handling and no
/// blocked signals (whatever the daemon's threads have), stdin from /dev/null.
struct ChildProcess: Sendable {
    let pid: pid_t

    struct SpawnError: Error, CustomStringConvertible {
        var errorNumber: Int32
        var description: String { String(cString: strerror(errorNumber)) }
    }

    static func spawn(_ command: [String], environment: [String: String]) throws(SpawnError) -> ChildProcess {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let arguments = command.map { strdup($0) } + [nil]
        let variables = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for argument in arguments { free(argument) }
            for variable in variables { free(variable) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, command[0], &actions, &attributes, arguments, variables)
        guard result == 0 else { throw SpawnError(errorNumber: result) }
        return ChildProcess(pid: pid)
    }

    /// The exit status (128 + signal number when killed by a signal), or `nil` after killing the process
    /// group once `timeout` passed.
    func wait(timeout: Duration) async -> Int32? {
        let giveUp = ContinuousClock.now + timeout
        while true {
            var status: Int32 = 0
            guard let reaped = try? systemCall({ waitpid(pid, &status, WNOHANG) }) else { return nil }
            if reaped == pid {
                let signal = status & 0x7F
                return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
            }
            if ContinuousClock.now >= giveUp {
                _ = try? systemCall { kill(-pid, SIGKILL) }
                _ = try? systemCall { waitpid(pid, &status, 0) }
                return nil
            }
            // Hooks are short; polling every few milliseconds costs nothing and needs no SIGCHLD handler.
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}
