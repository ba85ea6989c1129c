import FareCore
import Scanners
import Testing

@Suite struct SSIFrameTests {
    @Test func checksumIsTheTwosComplementOfTheSixteenBitSum() {
        // The worked example: the bytes sum to 0x01B3.
        #expect(SSIFrame.checksum(of: [0x0A, 0x80, 0x04, 0x00, 0x00, 0x06, 0x20, 0x00, 0x00, 0xFF]) == 0xFE4D)
    }

    @Test func hostCommandsEncodeAsTheReferenceBytes() {
        #expect(SSIFrame.startDecode.encoded == [0x04, 0xE4, 0x04, 0x00, 0xFF, 0x14])
        #expect(SSIFrame.ack().encoded == [0x04, 0xD0, 0x04, 0x00, 0xFF, 0x28])
        #expect(SSIFrame.scanEnable.encoded == [0x04, 0xE9, 0x04, 0x00, 0xFF, 0x0F])
    }

    @Test func startupParameterSendSwitchesOnPacketedDataAndHandshaking() {
        let frame = SSIFrame.paramSend([.packetedDecodeData, .ackNakHandshaking])
        // No beep (0xFF), 0xEE = 1, 0x9F = 1, temporary; 09+C6+04+00+FF+EE+01+9F+01 = 0x0361.
        #expect(frame.encoded == [0x09, 0xC6, 0x04, 0x00, 0xFF, 0xEE, 0x01, 0x9F, 0x01, 0xFC, 0x9F])
    }

    @Test func parametersAbove255AreWrittenWithTheF0Prefix() {
        #expect(SSIParameter(number: 300, value: 5).encoded == [0xF0, 0x2C, 0x05])
        #expect(SSIParameter(number: 495, value: 1).encoded == [0xF0, 0xEF, 0x01])
        #expect(SSIParameter(number: 0x9F, value: 1).encoded == [0x9F, 0x01])
    }

    @Test func aPacketDecodesBackToItselfWithBinaryData() throws {
        let data: [UInt8] = [0x2D, 0x00, 0xFF, 0x00, 0x0D, 0x0A, 0xFF]
        let frame = SSIFrame(opcode: .decodeData, source: .decoder, status: .continuation, data: data)
        #expect(try SSIFrame(decoding: frame.encoded) == frame)
    }

    @Test func aDamagedPacketIsRefused() {
        var bytes = SSIFrame(opcode: .decodeData, source: .decoder, data: [0x1C, 0x41]).encoded
        bytes[5] ^= 0x01
        #expect(throws: SSIFrameError.self) { try SSIFrame(decoding: bytes) }
    }

    @Test func aShortPacketSaysWhyOnItsLogLine() {
        let error = #expect(throws: SSIFrameError.self) { try SSIFrame(decoding: [0x04, 0xE4]) }
        #expect(error?.code == .tooShort)
        #expect(error?.description == "not an SSI packet: a packet has at least 6 bytes, got 2")
    }

    @Test func barcodeTypesMapToSymbologies() {
        #expect(Symbology(ssiBarcodeType: 0x1C) == .qr)
        #expect(Symbology(ssiBarcodeType: 0x2C) == .microQR)
        #expect(Symbology(ssiBarcodeType: 0x2D) == .aztec)
        #expect(Symbology(ssiBarcodeType: 0x2E) == .aztecRune)
        #expect(Symbology(ssiBarcodeType: 0x1B) == .dataMatrix)
        #expect(Symbology(ssiBarcodeType: 0x11) == .pdf417)
        #expect(Symbology(ssiBarcodeType: 0xC2) == .qr)
        #expect(Symbology(ssiBarcodeType: 0x03) == .other)
    }
}

@Suite struct SSIFramerTests {
    private func outputs(_ framer: inout SSIFramer) -> [SSIFramer.Output] {
        var all: [SSIFramer.Output] = []
        while let output = framer.next() { all.append(output) }
        return all
    }

    private func frames(_ outputs: [SSIFramer.Output]) -> [SSIFrame] {
        outputs.compactMap { if case .frame(let frame) = $0 { frame } else { nil } }
    }

    @Test func packetsAreFoundBetweenLineNoise() {
        let first = SSIFrame(opcode: .decodeData, source: .decoder, data: [0x1C, 0x00, 0xFF])
        let second = SSIFrame.ack(from: .decoder)
        var framer = SSIFramer()
        framer.append([0x00, 0xFF, 0x13, 0x02] + first.encoded + [0x41, 0x42, 0x00] + second.encoded + [0x7F])
        let found = outputs(&framer)
        #expect(frames(found) == [first, second])
        #expect(!found.contains { if case .corrupt = $0 { true } else { false } })
    }

    @Test func aPacketSplitAcrossReadsIsFoundWhenComplete() {
        let frame = SSIFrame(opcode: .decodeData, source: .decoder, data: [0x2D] + Array(0...200))
        let bytes = frame.encoded
        var framer = SSIFramer()
        var found: [SSIFrame] = []
        for start in stride(from: 0, to: bytes.count, by: 7) {
            framer.append(bytes[start..<min(start + 7, bytes.count)])
            found += frames(outputs(&framer))
        }
        #expect(found == [frame])
    }

    @Test func aDamagedPacketAsksForOneNakAndTheNextPacketIsStillFound() {
        var damaged = SSIFrame(opcode: .decodeData, source: .decoder, data: [0x1C] + Array(repeating: 0x04, count: 30))
            .encoded
        damaged[10] ^= 0x40
        let good = SSIFrame(opcode: .event, source: .decoder, data: [0x01])
        var framer = SSIFramer()
        framer.append(damaged + good.encoded)
        let found = outputs(&framer)
        #expect(found.filter { $0 == .corrupt(nakWanted: true) }.count == 1)
        #expect(frames(found) == [good])
    }

    @Test func aCutPacketIsGivenUpWhenTheLineGoesQuiet() {
        // Noise that looks like the start of a long packet, then a real packet, then silence.
        let good = SSIFrame.ack(from: .decoder)
        var framer = SSIFramer()
        framer.append([0x40, 0xF3, 0x00] + good.encoded)
        #expect(frames(outputs(&framer)).isEmpty)
        framer.lineWentQuiet()
        let found = outputs(&framer)
        #expect(frames(found) == [good])
        #expect(framer.bufferedByteCount == 0)
    }
}
