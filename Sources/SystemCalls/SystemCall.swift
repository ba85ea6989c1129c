import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// Calls a C function that reports failure as `-1` with `errno` (`read`, `write`, `poll`, `waitpid`, `open`, …),
/// again for as long as a signal interrupts it (`EINTR`), and returns its result or throws its `errno`.
///
/// Every system call in farecheck goes through here, so that an interrupted call is retried in one place and
/// every failure arrives as swift-system's `Errno` (the way swift-system's own `FileDescriptor` calls do).
/// Other outcomes the caller treats as normal (`EAGAIN` on a non-blocking descriptor) are thrown like any error,
/// for the caller to catch.
///
/// - Parameter call: The system call; it is called again after an interruption, so it must be safe to repeat.
/// - Returns: The call's result when it is not `-1`.
/// - Throws: `Errno` with the call's `errno`, never `EINTR`.
public func systemCall<Result: FixedWidthInteger & SignedInteger>(_ call: () -> Result) throws(Errno) -> Result {
    while true {
        let result = call()
        guard result == -1 else { return result }
        let number = errno
        guard number == EINTR else { throw Errno(rawValue: number) }
    }
}
