import Foundation

/// A wrong wall clock for a child process: the real binary run under `faketime` (Debian package `faketime`), whose
/// libfaketime answers the process's `clock_gettime(CLOCK_REALTIME)`, which Foundation's `Date()` reads.
///
/// Only the wall clock is faked (`FAKETIME_DONT_FAKE_MONOTONIC=1`): an RTC reset or a clock set by hand moves
/// `CLOCK_REALTIME` only, and the daemon's timers and sleeps run on the monotonic clock, as they do for real.
///
/// Always through the `faketime` wrapper, never by preloading the library alone: without the shared memory the
/// wrapper sets up (`FAKETIME_SHARED`), the library's constructor makes its own and publishes it with `setenv`,
/// which moves `environ`, and a Swift program on Linux then finds no arguments (`CommandLine.arguments` is empty:
/// `farecheck` prints its usage). The wrapper forks the program and waits for it: signals go to the program
/// itself (`DaemonProcess` finds it).
///
/// libfaketime 0.9.10 also takes over `timerfd_settime` and reads every absolute deadline as wall-clock time, also
/// on a timer of `CLOCK_MONOTONIC` or `CLOCK_BOOTTIME`: libdispatch's timers (behind `Task.sleep`) are then pushed
/// out by the fake offset (3 hours, or 56 years for 1970), and the daemon hangs at its first sleep. A wrong RTC
/// never moves those clocks, so a small shim (`timerShim`, built here with the C compiler beside `swift`) is
/// preloaded before libfaketime and hands the timers of those clocks straight to the kernel; wall-clock timers
/// still go through libfaketime.
public struct FakeTime: Sendable {
    /// The wrapper's options, before the program.
    public let options: [String]
    /// Added to the program's environment.
    public let environment: [String: String]

    /// The `faketime` wrapper.
    public static let wrapper = "/usr/bin/faketime"

    /// A clock that starts at `instant` and runs on from there.
    public static func startingAt(_ instant: Date) throws -> FakeTime {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: instant)
        let text = String(
            format: "@%04d-%02d-%02d %02d:%02d:%02d", parts.year!, parts.month!, parts.day!, parts.hour!,
            parts.minute!, parts.second!)
        return try FakeTime(options: ["-m", "-f", text], environment: [:])
    }

    /// A clock off by what `file` says (`-3h`, `+0`, …; see `set(_:in:)`), read again at every clock read
    /// (`FAKETIME_NO_CACHE=1`), so that rewriting the file steps the running program's clock, as NTP or a person
    /// setting the clock does. The wrapper's own `FAKETIME` is removed (`env -u`) before the program starts,
    /// because it would win over the file.
    public static func following(file: String) throws -> FakeTime {
        try FakeTime(
            options: ["-m", "-f", "+0", "/usr/bin/env", "-u", "FAKETIME"],
            environment: ["FAKETIME_TIMESTAMP_FILE": file, "FAKETIME_NO_CACHE": "1"])
    }

    /// Sets the offset a `following(file:)` clock reads: `-3h`, `+0`, or seconds (`-10800`).
    public static func set(_ offset: String, in file: String) throws {
        try (offset + "\n").write(toFile: file, atomically: true, encoding: .utf8)
    }

    private init(options: [String], environment: [String: String]) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.wrapper) else { throw FakeTimeMissing() }
        self.options = options
        // The wrapper appends its library after what LD_PRELOAD names: the shim comes first.
        let shim = try Self.timerShim.get()
        self.environment = environment.merging([
            "FAKETIME_DONT_FAKE_MONOTONIC": "1", "FAKETIME_DONT_RESET": "1", "LD_PRELOAD": shim,
        ]) { $1 }
    }

    /// The shim that keeps monotonic timers out of libfaketime's hands (see the type's comment), built once.
    static let timerShim: Result<String, ShimFailure> = Result { () throws(ShimFailure) in try buildTimerShim() }

    private static let timerShimSource = """
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <sys/syscall.h>
        #include <sys/timerfd.h>
        #include <time.h>
        #include <unistd.h>

        /* Which timer descriptors run on the wall clock: only those are libfaketime's business. */
        static unsigned char wall[65536];

        static int is_wall(int fd) { return fd < 0 || fd >= (int)sizeof(wall) || wall[fd]; }

        int timerfd_create(int clockid, int flags) {
            int fd = (int)syscall(SYS_timerfd_create, clockid, flags);
            if (fd >= 0 && fd < (int)sizeof(wall))
                wall[fd] = clockid == CLOCK_REALTIME || clockid == CLOCK_REALTIME_ALARM;
            return fd;
        }

        int timerfd_settime(int fd, int flags, const struct itimerspec *value, struct itimerspec *old) {
            if (!is_wall(fd)) return (int)syscall(SYS_timerfd_settime, fd, flags, value, old);
            int (*next)(int, int, const struct itimerspec *, struct itimerspec *) = dlsym(RTLD_NEXT, "timerfd_settime");
            return next(fd, flags, value, old);
        }

        int timerfd_gettime(int fd, struct itimerspec *value) {
            if (!is_wall(fd)) return (int)syscall(SYS_timerfd_gettime, fd, value);
            int (*next)(int, struct itimerspec *) = dlsym(RTLD_NEXT, "timerfd_gettime");
            return next(fd, value);
        }

        """

    private static func buildTimerShim() throws(ShimFailure) -> String {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("farecheck-faketime-\(getpid())").path
        let source = directory + "/timerfd-shim.c"
        let library = directory + "/libfarecheck-timerfd-shim.so"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try timerShimSource.write(toFile: source, atomically: true, encoding: .utf8)
        } catch {
            throw ShimFailure(description: "cannot write \(source): \(error)")
        }
        // The C compiler: cc, else the clang of the Swift toolchain on PATH.
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        let compiler = ["cc", "clang", "gcc"].lazy.flatMap { name in path.map { "\($0)/\(name)" } }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let compiler else { throw ShimFailure(description: "no C compiler (cc, clang) on PATH") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: compiler)
        process.arguments = ["-shared", "-fPIC", "-O2", "-o", library, source, "-ldl"]
        let errors = Pipe()
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw ShimFailure(description: "cannot run \(compiler): \(error)")
        }
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ShimFailure(description: "\(compiler) could not build the timerfd shim: \(message)")
        }
        return library
    }

    /// The timer shim could not be built.
    public struct ShimFailure: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// `executable arguments`, run under this clock: the wrapper's command line.
    public func command(_ executable: String, _ arguments: [String]) -> (executable: String, arguments: [String]) {
        (Self.wrapper, options + [executable] + arguments)
    }

    /// `faketime` is not installed.
    public struct FakeTimeMissing: Error, CustomStringConvertible {
        public var description: String {
            "faketime is not installed: run scripts/install-deps.sh (Debian package faketime)"
        }
    }
}
