/// A payload as a camera sees it: which kind of symbol and its bytes, the key presentations are told apart by.
public struct SeenSymbol: Sendable, Hashable {
    /// The kind of symbol.
    public var symbology: Symbology
    /// The payload, byte for byte.
    public var bytes: [UInt8]

    /// Creates a seen symbol.
    public init(symbology: Symbology, bytes: [UInt8]) {
        self.symbology = symbology
        self.bytes = bytes
    }
}

/// One ticket held up to the camera: what a verdict is given for, however many frames it stays in view.
public struct Presentation: Sendable, Hashable {
    /// The ticket's symbol.
    public var symbol: SeenSymbol
    /// The first frame it was read in (0 for a stream's first frame).
    public var frame: Int
    /// The time of that frame from the start of the stream.
    public var time: Duration

    /// Creates a presentation.
    public init(symbol: SeenSymbol, frame: Int, time: Duration) {
        self.symbol = symbol
        self.frame = frame
        self.time = time
    }
}

/// Turns the symbols read frame after frame into presentations.
///
/// A ticket held in view for three seconds is one presentation, not ninety. A different ticket is a new
/// presentation the moment it is first read, even while the previous one is still in view. The same ticket
/// is a new presentation again only once it has been out of view (not read in any frame) for at least
/// ``absenceForNewPresentation``; shorter gaps (a frame blurred by a moving hand, glare for a moment) keep the
/// presentation it belongs to.
///
/// Pure: it keeps no clock of its own, times come with the frames. It remembers only the tickets read within the
/// last ``absenceForNewPresentation``, so its memory stays bounded however long the stream runs.
public struct PresentationTracker: Sendable {
    /// How long a ticket must be out of view before showing it again counts as a new presentation.
    public let absenceForNewPresentation: Duration

    /// When each ticket still remembered was last read.
    private var lastSeen: [SeenSymbol: Duration] = [:]

    /// Creates a tracker.
    ///
    /// - Parameter absenceForNewPresentation: Out of view for this long (or longer) makes the same ticket a new
    ///   presentation; must be positive.
    public init(absenceForNewPresentation: Duration = .seconds(2)) {
        precondition(absenceForNewPresentation > .zero, "the absence for a new presentation must be positive")
        self.absenceForNewPresentation = absenceForNewPresentation
    }

    /// Tickets currently taken as in view (read within the last ``absenceForNewPresentation``).
    public var ticketsInView: Int { lastSeen.count }

    /// Takes the symbols read in one frame and returns the presentations that start in it.
    ///
    /// Frames come in order; a frame whose time is earlier than one already seen is taken as at the same time
    /// (a clock that stepped back never makes a ticket look absent). A frame in which nothing was read is passed
    /// too, with no symbols, so that absences are measured.
    public mutating func observe(_ symbols: [SeenSymbol], frame: Int, at time: Duration) -> [Presentation] {
        // Forget tickets out of view for the whole absence: seeing them again is a new presentation.
        lastSeen = lastSeen.filter { time - $0.value < absenceForNewPresentation }
        var started: [Presentation] = []
        for symbol in symbols {
            if lastSeen[symbol] == nil && !started.contains(where: { $0.symbol == symbol }) {
                started.append(Presentation(symbol: symbol, frame: frame, time: time))
            }
            lastSeen[symbol] = max(lastSeen[symbol] ?? time, time)
        }
        return started
    }
}
