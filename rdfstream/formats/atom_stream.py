"""Timestamped atom streams in JSON lines: ``{"t": 36, "atoms": ["a(x1,y)", "b(y,z)"]}`` per line.

An optional ``"stream"`` names the stream the atoms arrive on (what ``[3 from s]`` windows read), written
as in the program: ``{"t": 36, "stream": "<http://ex.org/s>", "atoms": [...]}``.

Atoms are written in the program's dialect; the caller passes the function that parses them, so this
module does not depend on any front end.  Every malformed line is reported with file, line and column.
Lines for the same ``t`` may follow each other (their atoms are concatenated in order); a smaller ``t``
after a larger one is an error unless a lateness bound allows it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TextIO

from ..atoms import Atom
from ..errors import RdfstreamError, Span, StreamFormatError

AtomParser = Callable[[str, int], list[Atom]]  # (text, line number) -> atoms


@dataclass
class StreamEvent:
    t: int
    atoms: list[Atom]
    line: int
    stream: str = ""  # the default stream (DEFAULT_STREAM of the IR)


def _fail(message: str, source: str, line: int, col: int, text: str) -> StreamFormatError:
    return StreamFormatError(message, Span(line, col, source), text)


def read_jsonl(handle: TextIO | Iterable[str], parse_atoms: AtomParser, source: str = "<stream>",
               on_error: str = "fail", errors: list | None = None) -> Iterator[StreamEvent]:
    """Yield one event per non-empty line, in file order.

    ``on_error="skip"`` reports a malformed line into ``errors`` (if given) and goes on.
    """
    last_t: int | None = None
    for lineno, raw in enumerate(handle, start=1):
        text = raw.rstrip("\n")
        if not text.strip():
            continue
        try:
            event = _parse_line(text, lineno, parse_atoms, source)
            if last_t is not None and event.t < last_t:
                raise _fail(f"time {event.t} is earlier than the previous line's time {last_t};"
                            " stream lines must be in time order", source, lineno, 1, text)
        except RdfstreamError as err:
            if on_error == "skip":
                if errors is not None:
                    errors.append(err)
                continue
            raise
        last_t = event.t
        yield event


def _parse_line(text: str, lineno: int, parse_atoms: AtomParser, source: str) -> StreamEvent:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        raise _fail(f"not valid JSON: {err.msg}", source, lineno, err.colno, text) from None
    if not isinstance(obj, dict):
        raise _fail("a stream line must be a JSON object like {\"t\": 0, \"atoms\": [...]}", source, lineno, 1,
                    text)
    t = obj.get("t")
    if type(t) is not int:
        raise _fail(f"\"t\" must be an integer time point, got {json.dumps(t)}", source, lineno,
                    _column_of(text, '"t"'), text)
    items = obj.get("atoms", [])
    if not isinstance(items, list) or not all(isinstance(a, str) for a in items):
        raise _fail("\"atoms\" must be a list of strings", source, lineno, _column_of(text, '"atoms"'), text)
    unknown = set(obj) - {"t", "atoms", "stream"}
    if unknown:
        key = min(unknown)
        raise _fail(f"unknown key {key!r} (expected \"t\", \"atoms\" and optionally \"stream\")", source, lineno,
                    _column_of(text, f'"{key}"'), text)
    stream = obj.get("stream", "")
    if not isinstance(stream, str):
        raise _fail("\"stream\" must be a string", source, lineno, _column_of(text, '"stream"'), text)
    atoms: list[Atom] = []
    for item in items:
        try:
            parsed = parse_atoms(item, lineno)
        except RdfstreamError as err:
            offset = _column_of(text, json.dumps(item)[1:-1]) - 1
            col = (err.span.col if err.span else 1) + max(offset, 0)
            raise _fail(f"bad atom {item!r}: {err.message}", source, lineno, col, text) from None
        for atom in parsed:
            if not atom.is_ground():
                raise _fail(f"stream atom {atom} is not ground", source, lineno,
                            _column_of(text, json.dumps(item)[1:-1]), text)
        atoms.extend(parsed)
    return StreamEvent(t, atoms, lineno, stream)


def _column_of(text: str, needle: str) -> int:
    pos = text.find(needle)
    return pos + 1 if pos >= 0 else 1


def write_jsonl(out: TextIO, t: int, holds: Iterable[str], placed: dict[int, Iterable[str]]) -> None:
    record: dict = {"t": t, "holds": sorted(holds)}
    if placed:
        record["placed"] = {str(p): sorted(atoms) for p, atoms in sorted(placed.items())}
    out.write(json.dumps(record, ensure_ascii=False) + "\n")


def write_text(out: TextIO, t: int, holds: Iterable[str], placed: dict[int, Iterable[str]]) -> None:
    out.write(f"{t}: {' '.join(sorted(holds))}".rstrip() + "\n")
    out.writelines(f"  @{p}: {' '.join(sorted(atoms))}\n" for p, atoms in sorted(placed.items()))


WRITERS = {"jsonl": write_jsonl, "text": write_text}
