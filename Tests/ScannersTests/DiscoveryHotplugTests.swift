import Foundation
import Scanners
import Testing

@Suite struct DiscoveryHotplugTests {
    @Test func udevAddMessage() throws {
        let event = try #require(HotplugEvent.parse(Recordings.bytes("uevent-udev-hidraw-add.bin")))
        #expect(event.source == .udev)
        #expect(event.action == .add)
        #expect(event.subsystem == "hidraw")
        #expect(event.deviceNode == "/dev/hidraw3")
        #expect(event.usbID == .zebraSNAPI)
        #expect(event.properties["DEVLINKS"] == "/dev/farecheck/hidraw-hidraw3")
        #expect(event.devicePath.hasSuffix("/0003:05E0:1900.0004/hidraw/hidraw3"))
    }

    @Test func udevRemoveMessage() throws {
        let event = try #require(HotplugEvent.parse(Recordings.bytes("uevent-udev-hidraw-remove.bin")))
        #expect(event.action == .remove)
        #expect(event.deviceNode == "/dev/hidraw3")
        #expect(event.usbID == nil)
    }

    @Test func kernelMessagesNameTheNodeRelativeToDev() throws {
        let hidraw = try #require(HotplugEvent.parse(Recordings.bytes("uevent-kernel-hidraw-add.bin")))
        #expect(hidraw.source == .kernel)
        #expect(hidraw.deviceNode == "/dev/hidraw3")
        let usb = try #require(HotplugEvent.parse(Recordings.bytes("uevent-kernel-usb-add.bin")))
        #expect(usb.subsystem == "usb")
        #expect(usb.usbID == .zebraSNAPI)
        #expect(usb.deviceNode == "/dev/bus/usb/001/006")
    }

    @Test func damagedMessagesAreIgnored() throws {
        var udev = try Recordings.bytes("uevent-udev-hidraw-add.bin")
        udev[9] ^= 0xFF  // the magic
        #expect(HotplugEvent.parse(udev) == nil)
        var cut = try Recordings.bytes("uevent-udev-hidraw-add.bin")
        cut.removeLast(cut.count - 60)  // properties_len now runs past the end
        #expect(HotplugEvent.parse(cut) == nil)
        #expect(HotplugEvent.parse(Array("no header here".utf8)) == nil)
        #expect(HotplugEvent.parse([]) == nil)
    }

    @Test func monitorOpensAndClosesOrSaysWhyNot() async {
        // Opening the netlink socket needs no device; some sandboxes forbid it, and then the error must say
        // what still works. No event is waited for: none can be made here.
        do {
            let monitor = try HotplugMonitor.open(source: .kernel)
            await monitor.close()
            var iterator = monitor.events.makeAsyncIterator()
            #expect(await iterator.next() == nil)
        } catch {
            #expect(error.code == .socketUnavailable)
            #expect(error.message.contains("the reader still retries unplugged scanners on its own"))
        }
    }
}
