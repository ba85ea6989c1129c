#!/usr/bin/env python3
"""An anchor of `farecheck-bench video`: the zxing-cpp wheel from PyPI reading frames in one process.

    python3 Benchmarks/zxing-wheel-frames.py FRAME.pgm...

Install the wheel with `pip install zxing-cpp==3.1.1` (numpy is needed too). Each frame (binary PGM, 8-bit grey, as
farecheck-bench writes them) is read into memory first; only `zxingcpp.read_barcodes` (Aztec and QR, its default
settings otherwise) is timed. Prints `zxing-cpp VERSION`, then one line per frame, in the order given:

    MILLISECONDS<TAB>HEX,HEX...

with the bytes of every Aztec or QR symbol read in that frame (nothing after the tab when none).
"""

import sys
import time
from importlib import metadata


def read_pgm(path, numpy):
    """The pixels of a binary 8-bit PGM (P5) as a height x width array."""
    with open(path, "rb") as file:
        data = file.read()
    fields = []
    position = 0
    # Magic, width, height and maximum value, separated by white space; comments start with #.
    while len(fields) < 4:
        while data[position : position + 1].isspace():
            position += 1
        if data[position : position + 1] == b"#":
            position = data.index(b"\n", position) + 1
            continue
        end = position
        while not data[end : end + 1].isspace():
            end += 1
        fields.append(data[position:end])
        position = end
    magic, width, height, maximum = fields[0], int(fields[1]), int(fields[2]), int(fields[3])
    if magic != b"P5" or maximum != 255:
        raise ValueError(f"{path}: not an 8-bit binary PGM")
    pixels = data[position + 1 : position + 1 + width * height]
    if len(pixels) != width * height:
        raise ValueError(f"{path}: the pixels are cut short")
    return numpy.frombuffer(pixels, dtype=numpy.uint8).reshape(height, width)


def main():
    try:
        import numpy
        import zxingcpp
    except ImportError as error:
        print(f"zxing-wheel-frames: {error} (pip install zxing-cpp==3.1.1 numpy)", file=sys.stderr)
        return 3
    formats = [zxingcpp.BarcodeFormat.Aztec, zxingcpp.BarcodeFormat.QRCode]
    print(f"zxing-cpp {metadata.version('zxing-cpp')}", flush=True)
    for path in sys.argv[1:]:
        image = read_pgm(path, numpy)
        start = time.perf_counter()
        barcodes = zxingcpp.read_barcodes(image, formats=formats)
        elapsed = time.perf_counter() - start
        payloads = ",".join(bytes(barcode.bytes).hex() for barcode in barcodes)
        print(f"{elapsed * 1000:.3f}\t{payloads}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
