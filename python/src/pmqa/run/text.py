"""Text an op controls (its exception messages, its prints), made safe for the terminal, for XML
and for JSON, and the runner's console, which nothing else may write a line of.

An op's message can hold anything: a lone surrogate (bytes decoded with surrogateescape) cannot
be encoded as UTF-8 at all, NUL and most other control characters are not allowed in XML 1.0, and
ESC sequences drive a terminal. `clean` replaces each with a visible escape (\\x1b, \\udc80), so
what the op said survives, readable, and nothing downstream fails or is fooled.
"""

from __future__ import annotations

import re
import sys
import threading

# C0 controls but tab and newline, DEL and the C1 controls, lone surrogates, and the two
# non-characters XML forbids.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_UNSAFE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def _escape(m: "re.Match[str]") -> str:
    o = ord(m.group())
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def clean(text: str) -> str:
    """text with every unsafe character escaped; tabs and newlines kept."""
    return _UNSAFE.sub(_escape, text)


def clean_line(text: str) -> str:
    """One line: newlines and tabs escaped too (for names, attributes and one-line messages)."""
    return _UNSAFE_LINE.sub(_escape, text)


def indented(text: str, indent: str = "    ") -> str:
    """clean(text) with every line after the first indented, so a message cannot print a line of
    its own that reads as the runner's (e.g. a forged "pmqa-run: ... (exit 0)" summary)."""
    lines = clean(text).split("\n")
    return "\n".join(lines[:1] + [indent + line for line in lines[1:]])


_console = threading.Lock()


def say(line: str) -> None:
    """Prints one of the runner's lines (cleaned, whole, under a lock shared with the op-output relay:
    file names decoded with surrogateescape reach here too)."""
    with _console:
        print(clean(line), flush=True)


def say_error(line: str) -> None:
    with _console:
        print(clean(line), file=sys.stderr, flush=True)


__all__ = ["clean", "clean_line", "indented", "say", "say_error"]
