#!/usr/bin/env python3
"""Writes a man page (section 1) for a program from its argument parser's own description of itself.

    scripts/make-man.py /path/to/farecheck OUT-DIR [VERSION]

Runs `PROGRAM --experimental-dump-help` (swift-argument-parser's JSON of every command, option and text) and
writes OUT-DIR/PROGRAM.1: the synopsis, the description, the options, then each subcommand with its own
description and options, nested. No text is written here by hand: a change of `--help` is a change of the page.
"""
import json, subprocess, sys
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


def main():
    program, out_dir = sys.argv[1], Path(sys.argv[2])
    version = sys.argv[3] if len(sys.argv) > 3 else ""
    dump = json.loads(subprocess.run([program, "--experimental-dump-help"], capture_output=True, check=True).stdout)
    command = dump["command"]
    name = command["commandName"]
    out = [f'.TH {name.upper()} 1 "" "{escape(name)} {escape(version)}" "User Commands"', ".SH NAME",
           f"{escape(name)} \\- {escape(command.get('abstract', ''))}", ".SH SYNOPSIS",
           f"\\fB{escape(name)}\\fR \\fIsubcommand\\fR [\\fIoptions\\fR]", ".SH DESCRIPTION",
           escape(command.get("discussion", ""))]
    if command.get("arguments"):
        out.append(".SH OPTIONS")
        arguments(command, out)
    subcommands = [s for s in command.get("subcommands", []) if s.get("shouldDisplay", True)]
    if subcommands:
        out.append(".SH COMMANDS")
        for sub in subcommands:
            command_section(sub, [name, sub["commandName"]], out)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{name}.1").write_text("\n".join(out) + "\n")


main()
