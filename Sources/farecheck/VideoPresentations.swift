import ArgumentParser
import FareCore
import Symbols

/// `--video FILE` and `--new-presentation-after SECONDS`, shared by `scan` and `verify`.
struct VideoOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "A recording (YUV4MPEG2, .y4m: 8-bit grey or 4:2:0, as ffmpeg writes it): one result per presentation.",
            valueName: "file"))
    var video: String?

    @Option(
        name: .customLong("new-presentation-after"),
        help: ArgumentHelp(
            "Seconds a ticket must be out of view before showing it again counts as a new presentation.",
            valueName: "seconds"))
    var newPresentationAfter: Double = 2

    func validate() throws {
        guard newPresentationAfter > 0, newPresentationAfter <= 86_400 else {
            throw ValidationError("--new-presentation-after must be more than 0 and at most 86400 seconds")
        }
    }

    /// Reads the recording and hands each presentation to `body` the moment it starts; returns the frames read.
    ///
    /// - Throws: ``VideoFrameError`` when the file cannot be read as a recording, or ends inside a frame (the
    ///   presentations before that point have been handed over already).
    func readPresentations(
        of path: String, _ body: (Presentation) -> Void
    ) throws(VideoFrameError) -> Int {
        let reader = try Y4MReader(contentsOfFile: path)
        var presentations = PresentationReader(absenceForNewPresentation: .seconds(newPresentationAfter))
        while let frame = try reader.nextFrame() {
            presentations.presentations(in: frame).forEach(body)
        }
        return reader.framesRead
    }
}

extension Presentation {
    /// The time of its first frame for people: `1.50 s`.
    var timeText: String {
        let seconds = Double(time.components.seconds) + Double(time.components.attoseconds) / 1e18
        return "\((seconds * 100).rounded() / 100) s"
    }
}
