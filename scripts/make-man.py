#!/usr/bin/env python3
"""Writes a man page (section 1) for a program from its argument parser's own description of itself.

    scripts/make-man.py /path/to/farecheck OUT-DIR [VERSION]

Runs `PROGRAM --experimental-dump-help` (swift-argument-parser's JSON of every command, option and text) and
writes OUT-DIR/PROGRAM.1: the synopsis, the description, the options, then each subcommand with its own
description and options, nested. The paragraphs of the program's own description that begin "Exit status:",
"Environment:", "Files:" and "See also:" become the sections EXIT STATUS, ENVIRONMENT, FILES and SEE ALSO (their
indented lines, "NAME  text", an entry each). No text is written here by hand: a change of `--help` is a change of
the page.
"""
import json, re, subprocess, sys
from pathlib import Path


def escape(text):
    """Text for troff: backslashes doubled, a leading dot or quote kept from being read as a request."""
    lines = []
    for line in (text or "").replace("\\", "\\e").splitlines():
        lines.append("\\&" + line if line.startswith((".", "'")) else line)
    return "\n".join(lines)


def flag(argument):
    names = []
    for name in argument.get("names", []):
        names.append(("--" if name["kind"] == "long" else "-") + name["name"])
    if argument["kind"] == "positional":
        names = [argument.get("valueName", "value")]
        return "\\fI" + escape(names[0]) + "\\fR"
    text = ", ".join("\\fB" + escape(name) + "\\fR" for name in names)
    if argument["kind"] == "option":
        text += " \\fI" + escape(argument.get("valueName", "value")) + "\\fR"
    return text


def arguments(command, out):
    shown = [a for a in command.get("arguments", []) if a.get("shouldDisplay", True)]
    for argument in shown:
        out.append(".TP")
        out.append(flag(argument))
        text = argument.get("abstract", "")
        if argument.get("defaultValue"):
            text += f" (default: {argument['defaultValue']})"
        if argument.get("discussion"):
            text += "\n" + argument["discussion"]
        out.append(escape(text))


def command_section(command, path, out):
    name = " ".join(path)
    out.append(f".SS {escape(name)}")
    if command.get("abstract"):
        out.append(escape(command["abstract"]))
    if command.get("discussion"):
        out.append(".PP")
        out.append(escape(command["discussion"]))
    arguments(command, out)
    for sub in command.get("subcommands", []):
        if sub.get("shouldDisplay", True):
            command_section(sub, path + [sub["commandName"]], out)


SECTIONS = {"Exit status:": "EXIT STATUS", "Environment:": "ENVIRONMENT", "Files:": "FILES", "See also:": "SEE ALSO"}


def split_sections(discussion):
    """The description's plain paragraphs, and its labelled ones by section name (each a list of lines)."""
    plain, sections = [], {}
    for paragraph in re.split(r"\n\s*\n", discussion or ""):
        label = next((key for key in SECTIONS if paragraph.startswith(key)), None)
        if label is None:
            plain.append(paragraph)
        else:
            sections[SECTIONS[label]] = paragraph[len(label):].strip("\n").splitlines()
    return "\n\n".join(plain), sections


def section(name, lines, out):
    out.append(f".SH {name}")
    if name == "SEE ALSO":
        text = " ".join(line.strip() for line in lines)
        out.append(re.sub(r"([\w.-]+)\((\d)\)", r"\\fB\1\\fR(\2)", escape(text)))
        return
    for line in lines:
        entry = re.match(r"\s*(\S(?:.*?\S)?)\s{2,}(\S.*)$", line)
        if entry:
            out.append(".TP")
            out.append("\\fB" + escape(entry.group(1)) + "\\fR")
            out.append(escape(entry.group(2)))
        elif line.strip():
            out.append(escape(line.strip()))


def main():
    program, out_dir = sys.argv[1], Path(sys.argv[2])
    version = sys.argv[3] if len(sys.argv) > 3 else ""
    dump = json.loads(subprocess.run([program, "--experimental-dump-help"], capture_output=True, check=True).stdout)
    command = dump["command"]
    name = command["commandName"]
    out = [f'.TH {name.upper()} 1 "" "{escape(name)} {escape(version)}" "User Commands"', ".SH NAME",
           f"{escape(name)} \\- {escape(command.get('abstract', ''))}", ".SH SYNOPSIS",
           f"\\fB{escape(name)}\\fR \\fIsubcommand\\fR [\\fIoptions\\fR]", ".SH DESCRIPTION"]
    description, sections = split_sections(command.get("discussion", ""))
    out.append(escape(description))
    if command.get("arguments"):
        out.append(".SH OPTIONS")
        arguments(command, out)
    subcommands = [s for s in command.get("subcommands", []) if s.get("shouldDisplay", True)]
    if subcommands:
        out.append(".SH COMMANDS")
        for sub in subcommands:
            command_section(sub, [name, sub["commandName"]], out)
    for title in ["EXIT STATUS", "ENVIRONMENT", "FILES", "SEE ALSO"]:
        if title in sections:
            section(title, sections[title], out)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{name}.1").write_text("\n".join(out) + "\n")


main()
