#!/usr/bin/env python3
"""Writes the HID recordings in this folder: report streams and a report descriptor.

The streams are what a scanner sends through /dev/hidrawN, one report per read(), laid out as the
vendors document them (see shared/reference/scanners.md). Rerun after changing a stream:
    python3 Tests/Fixtures/recordings/make-hid-recordings.py

Stream format (.hidreports): one record per report, `u32 LE microseconds since the stream began,
u16 LE report length, report bytes` (report id first).
"""
import os
import random
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def write_stream(name, records):
    with open(os.path.join(HERE, name), "wb") as f:
        for micros, report in records:
            f.write(struct.pack("<IH", micros, len(report)) + bytes(report))


def binary_ticket():
    # A zlib stream (as in UIC 918.3 barcodes) whose bytes include NUL and 0xFF.
    rng = random.Random(0)
    body = bytes(rng.randrange(256) for _ in range(90)) + b"\x00\x00\xff\xff" + b"#UT01OTI" * 6
    data = zlib.compress(body, 9)
    assert 0 in data and 0xFF in data and 112 < len(data) <= 168, len(data)
    return data


def honeywell(payload, aim, code_id):
    reports = []
    chunks = [payload[i:i + 56] for i in range(0, len(payload), 56)] or [b""]
    for n, chunk in enumerate(chunks):
        r = bytearray(64)
        r[0] = 0x02
        r[1] = len(chunk)
        r[2:5] = aim
        r[5:5 + len(chunk)] = chunk
        r[61] = ord(code_id)
        r[62] = 0x00
        r[63] = 1 if n < len(chunks) - 1 else 0
        reports.append(bytes(r))
    return reports


def newland(report_id, payload, symbology_letter):
    reports = []
    chunks = [payload[i:i + 56] for i in range(0, len(payload), 56)]
    for n, chunk in enumerate(chunks):
        r = bytearray(64)
        r[0] = report_id
        r[1] = len(chunk)
        r[2:2 + len(chunk)] = chunk
        r[62] = ord(symbology_letter)
        r[63] = 1 if n < len(chunks) - 1 else 0
        reports.append(bytes(r))
    return reports


def snapi22(payload, code_type, per_packet=58):
    chunks = [payload[i:i + per_packet] for i in range(0, len(payload), per_packet)]
    out = []
    for index, chunk in enumerate(chunks):
        r = bytearray(64)
        r[0:6] = bytes([0x22, len(chunks), index, len(chunk), code_type & 0xFF, code_type >> 8])
        r[6:6 + len(chunk)] = chunk
        out.append(bytes(r))
    return out


def snapi26(payload, code_type, per_packet=56):
    chunks = [payload[i:i + per_packet] for i in range(0, len(payload), per_packet)]
    out = []
    for index, chunk in enumerate(chunks):
        r = bytearray(64)
        r[0:8] = bytes([0x26]) + struct.pack(">HH", len(chunks), index) + bytes([len(chunk)]) + struct.pack("<H", code_type)
        r[8:8 + len(chunk)] = chunk
        out.append(bytes(r))
    return out


def timed(reports, start, step=2000):
    return [(start + i * step, r) for i, r in enumerate(reports)]


ticket = binary_ticket()
with open(os.path.join(HERE, "binary-ticket.bin"), "wb") as f:
    f.write(ticket)
fc1 = b"FC1:6BFOXN*TS0BI$ZD4N9:9S6RCVN5+O30K3/XIV0W23NTDEXWK G2EP4J0BGJLFX3R3VHXK.PJ:2DPF6R:5SVBHABVCNN95SWMPHQUHQN%A0SOE+QQAB-HQ/HQ7IR.SQEEOK9SAI4- 7Y15KBPD34 QKHTS"

# Honeywell: a binary Aztec ticket over three reports, then a text QR ticket in one, an empty report
# between them (some scanners send one after a scan).
honeywell_stream = timed(honeywell(ticket, b"]z0", "z"), 0)
honeywell_stream += [(10_000, bytes([0x02] + [0] * 63))]
honeywell_stream += timed(honeywell(fc1[:56], b"]Q1", "s") , 400_000)
write_stream("honeywell-binary-aztec.hidreports", honeywell_stream)

# Newland: the FC1 text in three reports (56 + 56 + rest), symbology letter Q at [62].
write_stream("newland-qr.hidreports", timed(newland(0x03, fc1, "Q"), 0))

# SNAPI 0x22: scan A (3 packets) arrives 0, 2, 2 (resent), 1; scan B (3 packets) loses packet 1 and is
# followed by scan C (1 packet, Data Matrix); a resend of C's packet comes right after it.
a = snapi22(ticket, 0x2D)
assert len(a) == 3
b = snapi22(bytes(range(1, 150)), 0x1C)
c = snapi22(b"HELLO-DM", 0x1B)
snapi_stream = timed([a[0], a[2], a[2], a[1]], 0) + timed([b[0], b[2]], 300_000) + timed([c[0], c[0]], 600_000)
write_stream("snapi-22-out-of-order.hidreports", snapi_stream)

# SNAPI 0x26: 300 packets (more than a one-byte count holds) shuffled, one duplicated.
rng = random.Random(26)
large = bytes(rng.randrange(256) for _ in range(300 * 56 - 20))
with open(os.path.join(HERE, "snapi-26-payload.bin"), "wb") as f:
    f.write(large)
packets = snapi26(large, 0x1C)
assert len(packets) == 300
order = list(range(300))
rng.shuffle(order)
order.insert(150, order[10])
write_stream("snapi-26-large.hidreports", timed([packets[i] for i in order], 0, step=500))


def item(tag_type_byte, value, size):
    sizes = {0: 0, 1: 1, 2: 2, 4: 3}
    return bytes([tag_type_byte | sizes[size]]) + value.to_bytes(size, "little") if size else bytes([tag_type_byte])


def usage_page(p): return item(0x04, p, 2 if p > 0xFF else 1)
def usage(u): return item(0x08, u, 2 if u > 0xFF else 1)
def collection(kind): return item(0xA0, kind, 1)
def end_collection(): return item(0xC0, 0, 0)
def report_id(i): return item(0x84, i, 1)
def report_size(s): return item(0x74, s, 1)
def report_count(c): return item(0x94, c, 1)
def logical_min(v): return item(0x14, v, 1)
def logical_max(v): return item(0x24, v, 2)
def input_(flags): return item(0x80, flags, 2 if flags > 0xFF else 1)
def output(flags): return item(0x90, flags, 1)


# A HID POS scanner's descriptor in the Honeywell layout: a vendor-defined length byte, AIM id as
# symbology identifiers 1-3, 56 bytes of decoded data (buffered bytes), a vendor code id, and the
# "decode data continued" bit; then a trigger/beeper output report and a vendor output report.
descriptor = b"".join([
    usage_page(0x8C), usage(0x02), collection(0x01),
    usage(0x12), collection(0x02),
    report_id(0x02), logical_min(0), logical_max(0xFF), report_size(8),
    usage_page(0xFF66), usage(0x04), report_count(1), input_(0x02),
    usage_page(0x8C), usage(0xFB), usage(0xFC), usage(0xFD), report_count(3), input_(0x02),
    usage(0xFE), report_count(56), input_(0x102),
    usage_page(0xFF66), usage(0x05), report_count(2), input_(0x02),
    usage_page(0x8C), usage(0xFF), report_size(1), report_count(1), input_(0x02),
    report_size(7), report_count(1), input_(0x01),
    end_collection(),
    usage(0x14), collection(0x02),
    report_id(0x04), report_size(8), usage(0x17), report_count(1), output(0x02),
    report_size(8), report_count(7), output(0x01),
    end_collection(),
    end_collection(),
    usage_page(0xFF66), usage(0x01), collection(0x01),
    report_id(0xFD), report_size(8), report_count(63), usage(0x02), output(0x02),
    end_collection(),
])
with open(os.path.join(HERE, "hidpos-honeywell.hiddescriptor"), "wb") as f:
    f.write(descriptor)
