#!/usr/bin/env python3
"""Writes the keyboard-wedge recordings in this folder: streams of `struct input_event` records as a
scanner's evdev node (/dev/input/eventN) gives them, 24 bytes each on 64-bit Linux:
`s64 seconds, s64 microseconds, u16 type, u16 code, s32 value`, little-endian.

Each key is sent the way a USB HID keyboard reaches evdev: EV_MSC/MSC_SCAN with the HID usage, EV_KEY
press, EV_SYN; then EV_MSC, EV_KEY release, EV_SYN. Rerun after changing a stream:
    python3 Tests/Fixtures/recordings/make-input-recordings.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
EV_SYN, EV_KEY, EV_MSC = 0, 1, 4
LEFTSHIFT, RIGHTALT, CAPSLOCK, ENTER = 42, 100, 58, 28

# Key codes from linux/input-event-codes.h, written out by hand (not derived from the Swift tables).
LETTERS_US = {c: code for c, code in zip("qwertyuiop", range(16, 26))}
LETTERS_US.update({c: code for c, code in zip("asdfghjkl", range(30, 39))})
LETTERS_US.update({c: code for c, code in zip("zxcvbnm", range(44, 51))})
DIGITS = {c: code for c, code in zip("1234567890", range(2, 12))}

US = {}  # character -> (code, shift, altgr)
for c, code in LETTERS_US.items():
    US[c] = (code, False, False)
    US[c.upper()] = (code, True, False)
for c, code in DIGITS.items():
    US[c] = (code, False, False)
US.update({
    " ": (57, False, False), "$": (5, True, False), "%": (6, True, False), "*": (9, True, False),
    "+": (13, True, False), "-": (12, False, False), ".": (52, False, False), "/": (53, False, False),
    ":": (39, True, False), "@": (3, True, False), "!": (2, True, False),
})

LETTERS_DE = dict(LETTERS_US)
LETTERS_DE["y"], LETTERS_DE["z"] = 44, 21  # QWERTZ: y and z swap places.
DE = {}
for c, code in LETTERS_DE.items():
    DE[c] = (code, False, False)
    DE[c.upper()] = (code, True, False)
for c, code in DIGITS.items():
    DE[c] = (code, False, False)
DE.update({
    " ": (57, False, False), "$": (5, True, False), "%": (6, True, False), "*": (27, True, False),
    "+": (27, False, False), "-": (53, False, False), ".": (52, False, False), "/": (8, True, False),
    ":": (52, True, False), "@": (16, False, True), "ß": (12, False, False), "ü": (26, False, False),
    "Ü": (26, True, False), "ö": (39, False, False), "ä": (40, False, False), "\\": (12, False, True),
    "{": (8, False, True), "}": (11, False, True), "&": (7, True, False), "=": (11, True, False),
    "#": (43, False, False), "'": (43, True, False),
})


class Stream:
    def __init__(self):
        self.t = 1_700_000_000 * 1_000_000  # microseconds
        self.records = []

    def event(self, etype, code, value):
        self.records.append(struct.pack("<qqHHi", self.t // 1_000_000, self.t % 1_000_000, etype, code, value))

    def key(self, code, value):
        self.event(EV_MSC, 4, 0x70000 + code)  # MSC_SCAN with a HID usage (any value: it is ignored)
        self.event(EV_KEY, code, value)
        self.event(EV_SYN, 0, 0)
        self.t += 1000  # a scanner types about one event batch a millisecond

    def tap(self, code):
        self.key(code, 1)
        self.key(code, 0)

    def type(self, text, layout):
        for ch in text:
            code, shift, altgr = layout[ch]
            if shift:
                self.key(LEFTSHIFT, 1)
            if altgr:
                self.key(RIGHTALT, 1)
            self.tap(code)
            if altgr:
                self.key(RIGHTALT, 0)
            if shift:
                self.key(LEFTSHIFT, 0)

    def pause(self, micros):
        self.t += micros

    def write(self, name):
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(b"".join(self.records))


FC1 = "FC1:6BFOXN*TS0BI$ZD4N9:9S6RCVN5+O30K3/XIV0W23NTDEXWK G2EP4J0BGJLFX3R3VHXK.PJ:2DPF6R:5SVBHABVCNN95SWMPHQUHQN%A0SOE+QQAB-HQ/HQ7IR.SQEEOK9SAI4- 7Y15KBPD34 QKHTS"

# US: the FC1 ticket with Enter, a kernel auto-repeat in the middle of it (a key held a little long);
# half a second later "hello" typed under Caps Lock (so HELLO), Caps Lock off, "yz", Enter.
s = Stream()
s.type(FC1[:20], US)
s.key(DIGITS["4"], 2)  # auto-repeat of the last key: must not type another character
s.type(FC1[20:], US)
s.tap(ENTER)
s.pause(500_000)
s.tap(CAPSLOCK)
s.type("hello", US)
s.tap(CAPSLOCK)
s.type("yz", US)
s.tap(ENTER)
s.write("wedge-us.inputevents")

# German: the same ticket (its * + / : - sit elsewhere on QWERTZ), then a line with y/z, umlauts,
# ß and AltGr characters.
s = Stream()
s.type(FC1, DE)
s.tap(ENTER)
s.pause(300_000)
s.type("yZ-Grüße@öä{\\}&=#'", DE)
s.tap(ENTER)
s.write("wedge-de.inputevents")

# Timeout split: a scanner without a suffix types "FC1:ABC", pauses 200 ms, types "XYZ".
s = Stream()
s.type("FC1:ABC", US)
s.pause(200_000)
s.type("XYZ", US)
s.write("wedge-timeout.inputevents")
