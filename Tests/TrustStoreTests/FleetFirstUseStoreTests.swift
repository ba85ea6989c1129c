import FareCore
import Foundation
import Testing
import ValidationAPI

@testable import TrustStore

@Suite("The fleet's first uses in the store")
struct FleetFirstUseStoreTests {
    let directory = TemporaryDirectory()

    @Test("kept once, found by issuer and id (format narrowing), the cursor moved, the old ones forgotten")
    func applyAndLookUp() throws {
        let store = try TrustStore(path: directory.path + "/s.sqlite")
        #expect(try store.fleetFirstUseCursor() == 0)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let recent = FleetFirstUse(
            format: "fc1", issuer: "demo-transit", ticketID: [0x01], device: "gate-a", usedAt: now)
        let unnamed = FleetFirstUse(
            format: "", issuer: "demo-transit", ticketID: [0x02], device: "gate-b", usedAt: now)
        let old = FleetFirstUse(
            format: "fc1", issuer: "demo-transit", ticketID: [0x03], device: "gate-c",
            usedAt: now.addingTimeInterval(-8 * 86_400))
        let forget = now.addingTimeInterval(-7 * 86_400)
        #expect(try store.applyFleetFirstUses([recent, unnamed, old], next: 42, forgetBefore: forget) == 3)
        // The same page again (the overlap): nothing new, and a later use of a ticket does not replace the first.
        var later = recent
        later.device = "gate-z"
        #expect(try store.applyFleetFirstUses([recent, later], next: 50, forgetBefore: forget) == 0)
        #expect(try store.fleetFirstUseCursor() == 50)

        #expect(try store.fleetFirstUse(issuer: "demo-transit", ticketID: [0x01], format: .fc1)?.device == "gate-a")
        // Read as another format, the fc1 first use is another ticket's; one claimed without a format matches any.
        #expect(try store.fleetFirstUse(issuer: "demo-transit", ticketID: [0x01], format: .uic9183) == nil)
        #expect(try store.fleetFirstUse(issuer: "demo-transit", ticketID: [0x02], format: .uic9183)?.device == "gate-b")
        #expect(try store.fleetFirstUse(issuer: "other", ticketID: [0x01], format: .fc1) == nil)
        #expect(try store.fleetFirstUse(issuer: "demo-transit", ticketID: [], format: .fc1) == nil)
        // Older than the retention: dropped.
        #expect(try store.fleetFirstUse(issuer: "demo-transit", ticketID: [0x03], format: .fc1) == nil)
    }
}
