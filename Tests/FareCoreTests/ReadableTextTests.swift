import FareCore
import Glibc
import Testing

/// Quantities in messages, as people read them (issue 52: "next try in 4.860164064717511 seconds", "1 keys").
@Suite("readable quantities")
struct ReadableTextTests {
    @Test(
        "durations are rounded to what a person reads",
        arguments: [
            (0.85, "850 ms"), (4.860164064717511, "4.9 s"), (2.0, "2 s"), (9.96, "10 s"), (42.7, "42 s"),
            (185, "3 min 05 s"), (7800, "2 h 10 min"), (273_600, "3 d 4 h"), (-30, "−30 s"),
        ] as [(Double, String)])
    func durations(seconds: Double, text: String) {
        #expect(ReadableText.duration(seconds: seconds) == text)
        #expect(ReadableText.duration(.milliseconds(Int64((seconds * 1000).rounded()))) == text)
    }

    @Test("a Duration too long to count in milliseconds, and a non-finite one, read as forever")
    func extremes() {
        #expect(ReadableText.duration(.seconds(Int64.max)) == "forever")
        #expect(ReadableText.duration(seconds: .infinity) == "forever")
    }

    @Test("a count has its noun in the right number")
    func counts() {
        #expect(ReadableText.count(1, "key") == "1 key")
        #expect(ReadableText.count(0, "key") == "0 keys")
        #expect(ReadableText.count(2, "entry", plural: "entries") == "2 entries")
    }

    @Test(
        "socket failures say what happened, where, and what to do, in words",
        arguments: [
            (EADDRINUSE, "another program already listens there"), (EACCES, "permission denied (a port below 1024"),
            (EADDRNOTAVAIL, "no network interface of this machine has that address"),
        ] as [(Int32, String)])
    func listening(code: Int32, text: String) {
        let message = NetworkErrorText.listening(on: "127.0.0.1:80", errno: code, setting: "[http] listen")
        #expect(message.hasPrefix("cannot listen on 127.0.0.1:80: " + text), "\(message)")
        #expect(!message.contains("errno"))
    }

    @Test("connection failures say what happened in words, naming the target when given")
    func connecting() {
        #expect(
            NetworkErrorText.connecting(to: "http://127.0.0.1:9", errno: ECONNREFUSED)
                == "connection refused by http://127.0.0.1:9: nothing listens there (is the server running, and are "
                + "the host and port right?)")
        #expect(NetworkErrorText.connecting(errno: EHOSTUNREACH) == "no route (is this machine's network up?)")
        #expect(NetworkErrorText.connecting(errno: EIO).hasPrefix("cannot connect: input/output error"))
    }
}
