import FareCore
import Foundation
import Scanners
import Testing

@Suite struct RawFramingTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func crlfEndsEachScanAndIsNotPartOfIt() {
        var framer = RawFramer(device: "tty", configuration: RawFramingConfiguration(terminator: .crlf))
        let scans = framer.append(bytes("HC1:ABC\r\nHC1:DEF\r\nHC1:G"), at: Date())
        #expect(scans.map(\.payload) == [bytes("HC1:ABC"), bytes("HC1:DEF")])
        #expect(framer.pendingByteCount == 5)
    }

    @Test func aLoneCrInsideACrlfFramedScanStaysInIt() {
        var framer = RawFramer(device: "tty", configuration: RawFramingConfiguration(terminator: .crlf))
        #expect(framer.append(bytes("A\rB\r"), at: Date()).isEmpty)
        #expect(framer.append(bytes("\n"), at: Date()).map(\.payload) == [bytes("A\rB")])
    }

    @Test func anyLineEndFramesCrLfAndCrlfWithoutEmptyScans() {
        var framer = RawFramer(device: "tty")
        let scans = framer.append(bytes("one\rtwo\nthree\r\n\r\nfour\n"), at: Date())
        #expect(scans.map(\.payload) == ["one", "two", "three", "four"].map(bytes))
    }

    @Test func silenceEndsAScanThatHasNoTerminator() {
        var framer = RawFramer(device: "tty", configuration: RawFramingConfiguration(terminator: .none))
        let binary: [UInt8] = [0x78, 0x9C, 0x00, 0xFF, 0x0D, 0x0A, 0x00]
        #expect(framer.append(binary, at: Date()).isEmpty)
        #expect(framer.lineWentQuiet(at: Date())?.payload == binary)
        #expect(framer.lineWentQuiet(at: Date()) == nil)
    }

    @Test func anAIMIdentifierIsStrippedAndNamesTheSymbology() {
        var framer = RawFramer(device: "tty", configuration: RawFramingConfiguration(aimIdentifiers: true))
        let scans = framer.append(bytes("]Q1qr\r]z0aztec\r]zCrune\r]d1dm\r]L2pdf\r]E0123\rnoid\r"), at: Date())
        #expect(scans.map(\.payload) == ["qr", "aztec", "rune", "dm", "pdf", "123", "noid"].map(bytes))
        #expect(scans.map(\.symbology) == [.qr, .aztec, .aztecRune, .dataMatrix, .pdf417, .other, .other])
    }

    @Test func eciEscapesAreUndoneWhenTheIdentifierAnnouncesThem() {
        var framer = RawFramer(device: "tty", configuration: RawFramingConfiguration(aimIdentifiers: true))
        // ]Q2: QR with ECI. \000026 is the UTF-8 designator; \\ is one backslash of data.
        let scans = framer.append(bytes("]Q2\\000026caf\\\\e\r]Q1a\\\\b\r"), at: Date())
        #expect(scans.map(\.payload) == [bytes("caf\\e"), bytes("a\\\\b")])
    }

    @Test func eciEscapesAreUndoneAlwaysWhenConfigured() {
        var framer = RawFramer(
            device: "tty",
            configuration: RawFramingConfiguration(terminator: .lf, eciUnescaping: .always)
        )
        let scans = framer.append(bytes("\\000003x\\\\y\\12z\n"), at: Date())
        #expect(scans.map(\.payload) == [bytes("x\\y\\12z")])
    }

    @Test func aimIdentifiersAreParsedOnlyFromTheirExactForm() {
        #expect(AIMIdentifier(prefixOf: bytes("]zC"))?.symbology == .aztecRune)
        #expect(AIMIdentifier(prefixOf: bytes("]z3"))?.announcesECI == true)
        #expect(AIMIdentifier(prefixOf: bytes("]z0"))?.announcesECI == false)
        #expect(AIMIdentifier(prefixOf: bytes("]d4"))?.announcesECI == true)
        #expect(AIMIdentifier(prefixOf: bytes("]Q")) == nil)
        #expect(AIMIdentifier(prefixOf: bytes("[Q1")) == nil)
        #expect(AIMIdentifier(prefixOf: bytes("]Q1"))?.description == "]Q1")
    }
}
