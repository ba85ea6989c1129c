import FareCore
import Testing

/// A ticket held in view is one presentation; another ticket is a new one at once; the same ticket shown again
/// after it left the view for the configured time is a new one.
@Suite struct PresentationTrackerTests {
    static let ticketA = SeenSymbol(symbology: .aztec, bytes: Array("ticket A".utf8))
    static let ticketB = SeenSymbol(symbology: .qr, bytes: Array("ticket B".utf8))

    /// Feeds frames at 30 per second, `seen(frame)` giving what was read in each; returns the presentations.
    static func run(
        frames: Int, absence: Duration = .seconds(2), seen: (Int) -> [SeenSymbol]
    ) -> [Presentation] {
        var tracker = PresentationTracker(absenceForNewPresentation: absence)
        var presentations: [Presentation] = []
        for frame in 0..<frames {
            presentations += tracker.observe(seen(frame), frame: frame, at: .milliseconds(frame * 1000 / 30))
        }
        return presentations
    }

    @Test func ticketHeldThreeSecondsIsOnePresentation() {
        // Not read in every frame: a moving hand blurs every third one.
        let presentations = Self.run(frames: 90) { $0 % 3 == 1 ? [] : [Self.ticketA] }
        #expect(presentations.map(\.frame) == [0])
        #expect(presentations.first?.symbol == Self.ticketA)
    }

    @Test func differentTicketIsNewAtOnceEvenWhileFirstIsInView() {
        let presentations = Self.run(frames: 60) { frame in
            frame < 20 ? [Self.ticketA] : frame < 40 ? [Self.ticketA, Self.ticketB] : [Self.ticketB]
        }
        #expect(presentations.map(\.frame) == [0, 20])
        #expect(presentations.map(\.symbol) == [Self.ticketA, Self.ticketB])
    }

    @Test func sameTicketAfterShortGapIsSamePresentation() {
        // Out of view for one second (30 frames), under the two-second absence.
        let presentations = Self.run(frames: 90) { frame in (30..<60).contains(frame) ? [] : [Self.ticketA] }
        #expect(presentations.map(\.frame) == [0])
    }

    @Test func sameTicketAfterLongAbsenceIsNewPresentation() {
        // Out of view from frame 10 to frame 79: last read at frame 9 (0.3 s), again at frame 80 (2.67 s).
        let presentations = Self.run(frames: 90) { frame in (10..<80).contains(frame) ? [] : [Self.ticketA] }
        #expect(presentations.map(\.frame) == [0, 80])
    }

    @Test func absenceIsConfigurable() {
        let seen: (Int) -> [SeenSymbol] = { frame in (10..<40).contains(frame) ? [] : [Self.ticketA] }
        #expect(Self.run(frames: 60, absence: .milliseconds(500), seen: seen).map(\.frame) == [0, 40])
        #expect(Self.run(frames: 60, absence: .seconds(5), seen: seen).map(\.frame) == [0])
    }

    @Test func sameTicketTwiceInOneFrameIsOnePresentation() {
        let presentations = Self.run(frames: 1) { _ in [Self.ticketA, Self.ticketA] }
        #expect(presentations.count == 1)
    }

    @Test func sameBytesInAnotherSymbologyAreAnotherTicket() {
        let asQR = SeenSymbol(symbology: .qr, bytes: Self.ticketA.bytes)
        let presentations = Self.run(frames: 10) { frame in frame < 5 ? [Self.ticketA] : [asQR] }
        #expect(presentations.map(\.frame) == [0, 5])
    }

    @Test func clockSteppingBackNeverMakesTicketLookAbsent() {
        var tracker = PresentationTracker(absenceForNewPresentation: .seconds(1))
        #expect(tracker.observe([Self.ticketA], frame: 0, at: .seconds(10)).count == 1)
        #expect(tracker.observe([Self.ticketA], frame: 1, at: .seconds(3)).isEmpty)
        #expect(tracker.observe([Self.ticketA], frame: 2, at: .milliseconds(10_500)).isEmpty)
    }

    @Test func forgetsTicketsOutOfViewSoMemoryStaysBounded() {
        var tracker = PresentationTracker(absenceForNewPresentation: .seconds(1))
        for index in 0..<1000 {
            let ticket = SeenSymbol(symbology: .qr, bytes: Array("ticket \(index)".utf8))
            _ = tracker.observe([ticket], frame: index, at: .milliseconds(index * 100))
        }
        // Ten frames a second, each a new ticket: only the last second's are remembered.
        #expect(tracker.ticketsInView == 10)
    }
}
