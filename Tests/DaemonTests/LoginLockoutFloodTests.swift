import Foundation
import Testing

@testable import Daemon

/// The lockout's memory under a flood of made-up staff ids and addresses: bounded, and never at the cost of a real
/// staff id's or address's partial count (which would give a guesser another five tries).
@Suite(.timeLimit(.minutes(2)))
struct LoginLockoutFloodTests {
    /// One failed attempt, as a wrong PIN settles it; returns whether it was admitted.
    static func fail(_ lockout: inout LoginLockout, staff: String, address: String, at now: Date) -> Bool {
        guard lockout.admit(staff: staff, address: address, at: now) == .admitted else { return false }
        lockout.failed(staff: staff, address: address, at: now)
        return true
    }

    /// Past the table's limit of made-up ids from as many addresses, one failure each within the window.
    static func flood(_ lockout: inout LoginLockout, from start: Date) -> Date {
        var now = start
        for index in 0..<(LoginLockout.mostEntries + 5000) {
            now += 0.01
            _ = fail(&lockout, staff: "made-up-\(index)", address: "198.51.\(index >> 8).\(index & 255)", at: now)
        }
        return now
    }

    @Test("a flood of made-up ids and addresses neither wipes a staff id's partial count nor an address's")
    func floodKeepsPartialCounts() {
        var lockout = LoginLockout()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        // Four wrong PINs for K-204, each from another address; four from 203.0.113.9, each for another id.
        for attempt in 1...4 {
            #expect(Self.fail(&lockout, staff: "K-204", address: "192.0.2.\(attempt)", at: start))
            #expect(Self.fail(&lockout, staff: "guess-\(attempt)", address: "203.0.113.9", at: start))
        }
        let later = Self.flood(&lockout, from: start)
        #expect(lockout.entryCount.staff <= LoginLockout.mostEntries)
        #expect(lockout.entryCount.addresses <= LoginLockout.mostEntries)

        // The fifth wrong PIN still locks K-204 (whatever the address), and the fifth from 203.0.113.9 locks it.
        #expect(Self.fail(&lockout, staff: "K-204", address: "192.0.2.1", at: later))
        #expect(lockout.admit(staff: "K-204", address: "192.0.2.2", at: later + 1) != .admitted)
        #expect(Self.fail(&lockout, staff: "guess-1", address: "203.0.113.9", at: later))
        #expect(lockout.admit(staff: "guess-2", address: "203.0.113.9", at: later + 1) != .admitted)

        // While the table is full of counts that matter, a new id is refused rather than counted nowhere; once the
        // flood's failures leave the window, there is room again.
        #expect(lockout.admit(staff: "new-id", address: "192.0.2.1", at: later + 2) != .admitted)
        let afterWindow = later + LoginLockout.Rules().window + 1
        #expect(lockout.admit(staff: "new-id", address: "192.0.2.1", at: afterWindow) == .admitted)
    }
}
