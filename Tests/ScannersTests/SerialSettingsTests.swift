import Foundation
import Scanners
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct SerialSettingsTests {
    private func attributes(_ settings: SerialSettings) -> termios {
        var attributes = termios()
        // Start from a cooked line with everything on, as a fresh tty might be.
        attributes.c_lflag = tcflag_t(ICANON | ECHO | ISIG)
        attributes.c_iflag = tcflag_t(ICRNL | IXON)
        attributes.c_oflag = tcflag_t(OPOST)
        settings.apply(to: &attributes)
        return attributes
    }

    @Test func theDefaultIs9600EightNoneOneRawWithoutFlowControl() {
        let line = attributes(SerialSettings())
        #expect(cfgetispeed([line]) == speed_t(B9600))
        #expect(line.c_cflag & tcflag_t(CSIZE) == tcflag_t(CS8))
        #expect(line.c_cflag & tcflag_t(PARENB | CSTOPB) == 0)
        #expect(line.c_cflag & tcflag_t(CRTSCTS) == 0)
        #expect(line.c_cflag & tcflag_t(CLOCAL | CREAD) == tcflag_t(CLOCAL | CREAD))
        // Raw: no echo, no line editing, no CR/LF translation, no XON/XOFF eating 0x11 and 0x13.
        #expect(line.c_lflag & tcflag_t(ICANON | ECHO | ISIG) == 0)
        #expect(line.c_iflag & tcflag_t(ICRNL | IXON) == 0)
        #expect(line.c_oflag & tcflag_t(OPOST) == 0)
    }

    @Test func parityStopBitsDataBitsAndFlowControlAreSet() {
        let sevenEvenOne = attributes(SerialSettings(baudRate: 115_200, dataBits: 7, parity: .even))
        #expect(cfgetospeed([sevenEvenOne]) == speed_t(B115200))
        #expect(sevenEvenOne.c_cflag & tcflag_t(CSIZE) == tcflag_t(CS7))
        #expect(sevenEvenOne.c_cflag & tcflag_t(PARENB | PARODD) == tcflag_t(PARENB))
        let eightOddTwo = attributes(SerialSettings(parity: .odd, stopBits: 2, flowControl: .hardware))
        #expect(eightOddTwo.c_cflag & tcflag_t(PARENB | PARODD | CSTOPB) == tcflag_t(PARENB | PARODD | CSTOPB))
        #expect(eightOddTwo.c_cflag & tcflag_t(CRTSCTS) != 0)
        let software = attributes(SerialSettings(flowControl: .software))
        #expect(software.c_iflag & tcflag_t(IXON | IXOFF) == tcflag_t(IXON | IXOFF))
    }

    @Test func impossibleSettingsAreRefusedWithAMessageThatSaysWhatToUse() {
        for settings in [SerialSettings(baudRate: 1234), SerialSettings(dataBits: 9), SerialSettings(stopBits: 3)] {
            #expect {
                try settings.validate(device: "/dev/ttyS0")
            } throws: { error in
                (error as? ScannerConnectionError)?.code == .misconfigured
            }
        }
        #expect(SerialSettings.supportedBaudRates.contains(230_400))
    }

    @Test func oneByteAt9600EightNoneOneTakesTenBitTimes() {
        #expect(SerialSettings().byteDuration == .nanoseconds(1_041_666))
    }

    @Test func openingSaysWhetherTheNodeIsMissingOrNotATerminal() {
        #expect {
            try SerialPort.open(path: "/dev/farecheck-no-such-scanner")
        } throws: { error in
            (error as? ScannerConnectionError)?.code == .deviceMissing
        }
        // A node that is not a tty cannot be fixed by waiting: the reader stops on it.
        #expect {
            try SerialPort.open(path: "/dev/null")
        } throws: { error in
            (error as? ScannerConnectionError)?.code == .misconfigured
        }
    }

    @Test func aMissingNodeLogsTheDeviceWhatToDoAndTheSystemsReason() {
        let path = "/dev/farecheck-no-such-scanner"
        let error = #expect(throws: ScannerConnectionError.self) { try SerialPort.open(path: path) }
        #expect(error?.device == path)
        #expect(error?.isRecoverable == true)
        #expect(
            error?.description
                == "\(path): no such device node; is the scanner plugged in (and the udev rule installed)? "
                + "(No such file or directory)")
    }
}
