import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// Calls a C function that reports failure as `-1` with `errno` (`read`, `write`, `poll`, `waitpid`, `open`, …),
/// again for as long as a signal interrupts it (`EINTR`), and returns its result or throws its `errno`.
///
/// Every system call in farecheck goes through here (or through swift-system's `FileDescriptor`, which does the
/// same), so that an interrupted call is retried in one place and every failure arrives as swift-system's `Errno`.
/// Other outcomes the caller treats as normal (`EAGAIN` on a non-blocking descriptor) are thrown like any error,
/// for the caller to catch.
///
/// - Parameters:
///   - retryingOnInterrupt: Whether to call again after `EINTR`. `false` only for `close(2)`: on Linux the
///     descriptor is released even when `close` is interrupted, and a second `close` could close a descriptor
///     another thread has just been given (swift-system's `FileDescriptor.close()` does not retry either).
///   - call: The system call; it is called again after an interruption, so it must be safe to repeat.
/// - Returns: The call's result when it is not `-1`.
/// - Throws: `Errno` with the call's `errno`; never `EINTR` when retrying.
public func systemCall<Result: FixedWidthInteger & SignedInteger>(
    retryingOnInterrupt: Bool = true, _ call: () -> Result
) throws(Errno) -> Result {
    while true {
        let result = call()
        guard result == -1 else { return result }
        let number = errno
        guard retryingOnInterrupt, number == EINTR else { throw Errno(rawValue: number) }
    }
}

/// Calls a C shim that reports failure as a negated `errno` (`-EBUSY`) rather than `-1` and `errno`: the
/// `CLinuxShims` functions around `ioctl` and sockets, whose `errno` is read in C before anything can change it.
/// Retried on `EINTR` like ``systemCall(retryingOnInterrupt:_:)``.
///
/// - Parameter call: The shim; it is called again after an interruption, so it must be safe to repeat.
/// - Returns: The shim's result when it is not negative.
/// - Throws: `Errno` with the negated result, never `EINTR`.
public func systemCallReturningNegatedErrno<Result: FixedWidthInteger & SignedInteger>(
    _ call: () -> Result
) throws(Errno) -> Result {
    while true {
        let result = call()
        guard result < 0 else { return result }
        let number = Int32(truncatingIfNeeded: -result)
        guard number == EINTR else { throw Errno(rawValue: number) }
    }
}

/// Calls a C function that reports failure as a null pointer with `errno` (`mkdtemp`), again for as long as a
/// signal interrupts it, and returns its pointer or throws its `errno`.
///
/// - Parameter call: The call; it is called again after an interruption, so it must be safe to repeat.
/// - Returns: The call's pointer when it is not null.
/// - Throws: `Errno` with the call's `errno`, never `EINTR`.
public func systemCall<Pointee>(_ call: () -> UnsafeMutablePointer<Pointee>?) throws(Errno)
    -> UnsafeMutablePointer<Pointee>
{
    while true {
        if let result = call() { return result }
        let number = errno
        guard number == EINTR else { throw Errno(rawValue: number) }
    }
}
