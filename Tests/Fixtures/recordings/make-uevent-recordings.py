#!/usr/bin/env python3
"""Writes uevent netlink messages as a Zebra SNAPI scanner is plugged in and pulled out.

udev's messages (group 2) start with struct udev_monitor_netlink_header: "libudev\\0", magic 0xfeedcafe
big-endian, header_size, properties_off, properties_len (host order), subsystem and devtype hashes,
tag bloom filter; then NUL-separated KEY=value properties. The kernel's (group 1) are
"ACTION@DEVPATH\\0" followed by the properties. Rerun after changing a message:
    python3 Tests/Fixtures/recordings/make-uevent-recordings.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
DEVPATH = "/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/0003:05E0:1900.0004/hidraw/hidraw3"


def props(pairs):
    return b"".join(f"{k}={v}".encode() + b"\0" for k, v in pairs)


def udev(pairs):
    body = props(pairs)
    header = b"libudev\0" + struct.pack(">I", 0xFEEDCAFE) + struct.pack("<IIIIIII", 40, 40, len(body), 0x1D2C3B4A, 0, 0, 0)
    assert len(header) == 40
    return header + body


def kernel(action, devpath, pairs):
    return f"{action}@{devpath}".encode() + b"\0" + props(pairs)


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


write("uevent-udev-hidraw-add.bin", udev([
    ("ACTION", "add"), ("DEVPATH", DEVPATH), ("SUBSYSTEM", "hidraw"), ("DEVNAME", "/dev/hidraw3"),
    ("SEQNUM", "4721"), ("USEC_INITIALIZED", "91234567"), ("MAJOR", "241"), ("MINOR", "3"),
    ("ID_VENDOR_ID", "05e0"), ("ID_MODEL_ID", "1900"), ("ID_SERIAL", "Zebra_Technologies_Symbol_Bar_Code_Scanner_S_N:123"),
    ("DEVLINKS", "/dev/farecheck/hidraw-hidraw3"), ("TAGS", ":systemd:"), ("CURRENT_TAGS", ":systemd:"),
]))
write("uevent-udev-hidraw-remove.bin", udev([
    ("ACTION", "remove"), ("DEVPATH", DEVPATH), ("SUBSYSTEM", "hidraw"), ("DEVNAME", "/dev/hidraw3"),
    ("SEQNUM", "4730"), ("MAJOR", "241"), ("MINOR", "3"),
]))
write("uevent-kernel-hidraw-add.bin", kernel("add", DEVPATH, [
    ("ACTION", "add"), ("DEVPATH", DEVPATH), ("SUBSYSTEM", "hidraw"), ("MAJOR", "241"), ("MINOR", "3"),
    ("DEVNAME", "hidraw3"), ("SEQNUM", "4721"),
]))
write("uevent-kernel-usb-add.bin", kernel("add", "/devices/pci0000:00/0000:00:14.0/usb1/1-2", [
    ("ACTION", "add"), ("DEVPATH", "/devices/pci0000:00/0000:00:14.0/usb1/1-2"), ("SUBSYSTEM", "usb"),
    ("MAJOR", "189"), ("MINOR", "5"), ("DEVNAME", "bus/usb/001/006"), ("DEVTYPE", "usb_device"),
    ("PRODUCT", "5e0/1900/100"), ("TYPE", "0/0/0"), ("BUSNUM", "001"), ("DEVNUM", "006"), ("SEQNUM", "4715"),
]))
