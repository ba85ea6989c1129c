import Foundation
import Glibc

/// A TCP port on 127.0.0.1, for tests of what a program says about an address: one that another program holds
/// (``listening()``), or one that nothing listens on (``unused()``: bound a moment, then closed).
public final class LoopbackPort {
    /// The port number.
    public let port: Int
    private let descriptor: Int32

    private init(descriptor: Int32, port: Int) {
        self.descriptor = descriptor
        self.port = port
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// A port this process listens on (without ever accepting) until the value is released.
    public static func listening() throws -> LoopbackPort {
        let (descriptor, port) = try bound()
        guard listen(descriptor, 4) == 0 else {
            close(descriptor)
            throw DaemonProcess.Failure(message: "listen on 127.0.0.1:\(port): errno \(errno)")
        }
        return LoopbackPort(descriptor: descriptor, port: port)
    }

    /// A port that was free a moment ago and that nothing listens on: a server that is down.
    public static func unused() throws -> Int {
        let (descriptor, port) = try bound()
        close(descriptor)
        return port
    }

    /// A socket bound to a port the system chose on 127.0.0.1, and that port.
    private static func bound() throws -> (Int32, Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw DaemonProcess.Failure(message: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(descriptor, address, length) == 0 && getsockname(descriptor, address, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw DaemonProcess.Failure(message: "no free port on 127.0.0.1: errno \(errno)")
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }
}
