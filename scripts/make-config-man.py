#!/usr/bin/env python3
"""Writes farecheck.toml(5), the daemon's configuration file format, from Config/farecheck.toml itself.

    scripts/make-config-man.py Config/farecheck.toml OUT-DIR [VERSION]

The shipped configuration documents every key in its comments: the page is that text laid out. The comment block
at the top is the description; each table (`[verification]`, `[[scanner]]`, and the tables shown commented out,
which are off by default) is a subsection; each key is an entry with the value the file gives it (its default, or
an example where the key is commented out) and the comment above it or beside it. No text is written here by hand:
a change of the shipped file is a change of the page.
"""
import re, sys
from pathlib import Path

HEADER = re.compile(r"^(#\s*)?(\[\[?[a-z_]+\]\]?)\s*(#.*)?$")
KEY = re.compile(r"^(#\s*)?([a-z_]+)\s*=\s*(.*?)\s*(?:#\s?(.*))?$")


def escape(text):
    """Text for troff: backslashes doubled, a leading dot or quote kept from being read as a request."""
    text = text.replace("\\", "\\e")
    return "\\&" + text if text.startswith((".", "'")) else text


def value_text(raw):
    """A TOML value from the file, without a trailing comment (a `#` inside a string is kept)."""
    in_string, quote = False, ""
    for index, char in enumerate(raw):
        if char in "\"'" and (not in_string or char == quote):
            in_string, quote = not in_string, char
        elif char == "#" and not in_string:
            return raw[:index].rstrip(), raw[index + 1:].strip()
    return raw.rstrip(), ""


def parse(lines):
    """The description, then the tables: [(title, commented, description, [(key, value, commented, text)])]."""
    index = 0
    description = []
    while index < len(lines) and lines[index].startswith("#"):
        text = lines[index][1:]
        # An indented line is a command to type, kept as it is.
        description.append(("  " if text.startswith("   ") else "") + text.strip())
        index += 1
    tables = [("top level", False, [], [])]
    pending = []  # comment lines waiting for the key or table they describe
    last = None  # the entry a continuation comment (`#     # more`) belongs to
    for line in lines[index:]:
        stripped = line.strip()
        if not stripped:
            pending, last = [], None
            continue
        header = HEADER.match(stripped)
        if header:
            tables.append((header.group(2), bool(header.group(1)), pending, []))
            pending, last = [], None
            continue
        commented_key = KEY.match(stripped) if stripped.startswith("#") else None
        plain_key = KEY.match(stripped) if not stripped.startswith("#") else None
        continuation = re.match(r"^#\s{2,}#\s?(.*)$", stripped)
        if continuation and last is not None:
            last[3].append(continuation.group(1))
        elif plain_key or (commented_key and commented_key.group(1)):
            match = plain_key or commented_key
            rest = stripped[len(match.group(1) or ""):]
            name, _, raw = rest.partition("=")
            value, beside = value_text(raw.strip())
            entry = (name.strip(), value, bool(commented_key), pending + ([beside] if beside else []))
            tables[-1][3].append(entry)
            pending, last = [], entry
        elif stripped.startswith("#"):
            pending.append(stripped[1:].strip())
            last = None
    return description, tables


def main():
    source, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    version = sys.argv[3] if len(sys.argv) > 3 else ""
    description, tables = parse(source.read_text().splitlines())
    out = [f'.TH FARECHECK.TOML 5 "" "farecheck {escape(version)}" "File Formats"', ".SH NAME",
           "farecheck.toml \\- the configuration of the farecheck daemon", ".SH DESCRIPTION"]
    for line in description:
        if not line:
            out.append(".PP")
        elif line.startswith("  "):
            out += [".RS 4", ".nf", escape(line.strip()), ".fi", ".RE"]
        else:
            out.append(escape(line))
    out.append(".SH KEYS")
    for title, commented, text, entries in tables:
        if not entries and not text:
            continue
        out.append(f".SS {escape(title)}" + (" (none by default)" if commented else ""))
        for line in text:
            out.append(escape(line))
        for name, value, key_commented, lines in entries:
            out.append(".TP")
            shown = "example" if key_commented else "default"
            out.append(f"\\fB{escape(name)}\\fR = {escape(value)}" + (f" ({shown})" if value else ""))
            text = " ".join(line for line in lines if line)
            if text:
                out.append(escape(text))
    out += [".SH FILES", ".TP", "\\fB/etc/farecheck/farecheck.toml\\fR",
            "the default path (farecheck daemon --config PATH for another)", ".SH SEE ALSO",
            "\\fBfarecheck\\fR(1), \\fBfarecheck-server\\fR(1)"]
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "farecheck.toml.5").write_text("\n".join(out) + "\n")


main()
