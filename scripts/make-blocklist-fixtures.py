#!/usr/bin/env python3
"""Writes the blocklist test files: real SQLite databases (Python's sqlite3) and real zip archives (zipfile),
in exactly the formats the VDV-KA and DTVG publish, naming tickets of the fixtures.

    python3 scripts/make-blocklist-fixtures.py [OUTPUT_DIR]    # default Tests/Fixtures/blocklists

The good lists name these real fixture tickets (Tests/Fixtures):
- vdv/vrr-deutschlandticket-2023-03.bin: VDV-KA, KVP organisation 57, entitlement 2099643;
- uic/db-deutschland-ticket-2025.bin: #UT with U_HEAD (issuer 1080, ticket key QWXY3BTA) and U_FLEX;
- uic-918-9-db/Muster-918-3-City-Mobil-Ticket.bin: #UT with U_HEAD issuer 0080, ticket key RPEX4F-4
  (listed as RICS 80: 80 = 0080);
- uic-918-9-db/Muster-918-9-CityTicket.bin: #UT with U_FLEX and no U_HEAD (FCB issuer 1080, PNR);
- dosipas/cts-ticket.bin: DOSIPAS (FCB issuer and ticket id).
The files are committed; rerun this only to change them (zip members carry a fixed time).
"""
import io
import os
import sqlite3
import sys
import zipfile

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "Tests", "Fixtures", "blocklists")
os.makedirs(OUT, exist_ok=True)

# Fixtures that carry no U_HEAD, by FCB issuer and ticket id as `farecheck verify --json` prints them (the
# CityTicket's PNR; cts's issuer and first document reference).
CITY_TICKET = (1080, "CYJYYCKU")
CTS_TICKET = (3703, "7752008")

BOM = b"\xef\xbb\xbf"
# A fixed time for every zip member, so that the archives come out the same each time.
STAMP = (2025, 6, 1, 3, 0, 0)


def path(name):
    return os.path.join(OUT, name)


def vdv_db(name, rows, schema="type TEXT, orgId INTEGER, number INTEGER, instanceNum INTEGER, lockMode INTEGER",
           table="blacklist"):
    target = path(name)
    if os.path.exists(target):
        os.remove(target)
    db = sqlite3.connect(target)
    db.execute(f"CREATE TABLE {table} ({schema})")
    if rows:
        marks = ",".join("?" * len(rows[0]))
        db.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
    db.commit()
    db.execute("VACUUM")
    db.close()


# VDV-KA: the VRR sample (org 57, entitlement 2099643) three times, the highest instance (3) saying
# "confiscate"; its neighbour 2099644 "suspicious"; the same number under the PV organisation 70 (which must
# not match: entries match by the KVP organisation); a user medium (type A); other entitlements.
VDV_ROWS = [
    ("B", 57, 2099643, 1, 0),
    ("B", 57, 2099643, 3, 1),
    ("B", 57, 2099643, 2, 0),
    ("B", 57, 2099644, 1, 2),
    ("B", 70, 2099643, 1, 0),
    ("A", 57, 118017, 1, 0),
] + [("B", 6060, 1000000 + n, n % 3, n % 3) for n in range(20)]

# A newer version: 2099643 at instance 4, suspicious; 2099644 lifted; one entitlement more.
VDV_ROWS_V2 = [row for row in VDV_ROWS if row[2] != 2099644] + [("B", 57, 2099643, 4, 2), ("B", 57, 3000000, 1, 0)]


def csv_bytes(rows, header="rics,ticketId", bom=BOM, newline="\r\n"):
    body = header + newline + "".join(f"{rics},{ticket}{newline}" for rics, ticket in rows)
    return bom + body.encode("utf-8")


def dtvg_zip(name, csv, method=zipfile.ZIP_DEFLATED, member="blacklistuic.csv"):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=method) as archive:
        info = zipfile.ZipInfo(member, date_time=STAMP)
        info.compress_type = method
        archive.writestr(info, csv)
    with open(path(name), "wb") as handle:
        handle.write(buffer.getvalue())
    return buffer.getvalue()


DTVG_ROWS = [
    ("1080", "QWXY3BTA"),
    ("80", "RPEX4F-4"),
    (str(CITY_TICKET[0]), CITY_TICKET[1]),
    (f"{CTS_TICKET[0]:04d}", CTS_TICKET[1]),
] + [(str(1080 + n % 3), f"FILL{n:04d}X") for n in range(20)]

DTVG_ROWS_V2 = [row for row in DTVG_ROWS if row[1] != "RPEX4F-4"] + [("1080", "NEWONE42")]


def main():
    vdv_db("vdv-blocklist.db", VDV_ROWS)
    vdv_db("vdv-blocklist-v2.db", VDV_ROWS_V2)
    with open(path("vdv-version.txt"), "w") as handle:
        handle.write("2025-06-01T03:00:00+00:00\n")
    with open(path("vdv-version-v2.txt"), "w") as handle:
        handle.write("2025-06-02T03:00:00+00:00\n")

    # Bad VDV files.
    with open(path("vdv-not-sqlite.db"), "wb") as handle:
        handle.write(b"type,orgId,number,instanceNum,lockMode\nB,57,2099643,1,0\n")
    vdv_db("vdv-no-table.db", [("B", 57, 2099643, 1, 0)], table="blocklist")
    vdv_db("vdv-missing-column.db", [("B", 57, 2099643, 1)], schema="type TEXT, orgId INTEGER, number INTEGER, "
           "instanceNum INTEGER")
    vdv_db("vdv-bad-lockmode.db", VDV_ROWS[:3] + [("B", 57, 5, 1, 7)])
    vdv_db("vdv-duplicate.db", VDV_ROWS + [("B", 57, 2099643, 3, 1)])
    vdv_db("vdv-text-number.db", [("B", 57, "20x9643", 1, 0)])
    with open(path("vdv-blocklist.db"), "rb") as handle:
        whole = handle.read()
    # A file cut after its first pages: the header is fine, the table's pages are gone.
    vdv_db("vdv-big.db", [("B", 1000 + n % 50, n, 1, 0) for n in range(5000)])
    with open(path("vdv-big.db"), "rb") as handle:
        big = handle.read()
    os.remove(path("vdv-big.db"))
    with open(path("vdv-truncated.db"), "wb") as handle:
        handle.write(big[: len(big) // 3])
    assert whole.startswith(b"SQLite format 3\0")

    # DTVG.
    good = dtvg_zip("dtvg-blocklist.zip", csv_bytes(DTVG_ROWS))
    dtvg_zip("dtvg-blocklist-stored.zip", csv_bytes(DTVG_ROWS), method=zipfile.ZIP_STORED)
    dtvg_zip("dtvg-blocklist-v2.zip", csv_bytes(DTVG_ROWS_V2))
    with open(path("dtvg-version.txt"), "w") as handle:
        handle.write('{"blacklistId": 42}\n')
    with open(path("dtvg-version-v2.txt"), "w") as handle:
        handle.write('{"blacklistId": 43}\n')

    # Bad DTVG files.
    with open(path("dtvg-truncated.zip"), "wb") as handle:
        handle.write(good[: len(good) - 30])
    dtvg_zip("dtvg-wrong-columns.zip", csv_bytes(DTVG_ROWS, header="rics,ticket"))
    dtvg_zip("dtvg-no-bom.zip", csv_bytes(DTVG_ROWS, bom=b""))
    dtvg_zip("dtvg-extra-bom.zip", csv_bytes(DTVG_ROWS, bom=BOM + BOM))
    dtvg_zip("dtvg-rics-not-numeric.zip", csv_bytes(DTVG_ROWS[:3] + [("DB", "ABCDEF12")]))
    dtvg_zip("dtvg-duplicate.zip", csv_bytes(DTVG_ROWS + [("0080", "RPEX4F-4")]))
    dtvg_zip("dtvg-wrong-member.zip", csv_bytes(DTVG_ROWS), member="blacklist.csv")
    # A stored member with one byte changed after the CRC was computed.
    stored = bytearray(dtvg_zip("dtvg-bad-crc.zip", csv_bytes(DTVG_ROWS), method=zipfile.ZIP_STORED))
    at = stored.index(b"QWXY3BTA")
    stored[at] = ord("Z")
    with open(path("dtvg-bad-crc.zip"), "wb") as handle:
        handle.write(bytes(stored))


main()
