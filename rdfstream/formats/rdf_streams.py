"""Timestamped RDF streams: one triple per line, the timestamp first.

* ``nt``: ``T <s> <p> <o> .`` — a timestamp, then an N-Triples statement (``#`` comments, blank lines ok);
* ``csv``: ``t,s,p,o`` (a header row with these names is optional);
* ``jsonl``: ``{"t": T, "s": …, "p": …, "o": …}`` per line.

In CSV and JSON each term is written in N-Triples syntax (``<iri>``, ``_:b``, ``"lit"@en``, ``"1"^^<dt>``);
a bare absolute IRI, a bare integer or decimal, and any other bare text (a plain literal) are accepted too,
as is a JSON number for the object. Timestamps are integers (milliseconds unless the stream says otherwise).

Malformed lines are reported with file, line and column; ``on_error="skip"`` collects them and goes on.
Timestamps must not decrease, unless ``lateness`` allows it: a triple may then arrive up to ``lateness``
behind the latest timestamp seen, and triples are released in time order.
"""

from __future__ import annotations

import csv
import heapq
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal

from ..errors import ParseError, RdfstreamError, Span, StreamFormatError
from ..terms import Const, string
from .ntriples import parse_term, parse_triple


@dataclass(frozen=True, slots=True)
class TimedTriple:
    t: int
    s: Const
    p: Const
    o: Const
    line: int


_TIME = re.compile(r"[ \t]*(-?[0-9]+)(?=[ \t])")
_IRI_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[^\s<>\"]+\Z")
_INT = re.compile(r"-?(0|[1-9][0-9]*)\Z")
_DEC = re.compile(r"-?[0-9]+\.[0-9]+\Z")


def _error(message: str, source: str, line: int, col: int, text: str) -> StreamFormatError:
    return StreamFormatError(message, Span(line, col, source), text)


def bare_term(value, source: str, line: int, col: int, text: str) -> Const:
    """A CSV/JSON field: N-Triples syntax, or a bare IRI, number or plain text."""
    if type(value) is int:
        return value
    if type(value) is float:
        return Decimal(repr(value))
    if not isinstance(value, str):
        raise _error(f"a term must be a string or a number, got {json.dumps(value)}", source, line, col, text)
    field = value.strip()
    if field[:1] in ("<", '"', "_"):
        found = parse_term(field)
        if found is not None and found[1] == len(field):
            return found[0]
        raise _error(f"malformed term {field!r}", source, line, col, text)
    if _INT.match(field):
        return int(field)
    if _DEC.match(field):
        return Decimal(field)
    if _IRI_LIKE.match(field):
        return f"<{field}>"
    return string(field)


def parse_nt_line(text: str, lineno: int, source: str) -> TimedTriple | None:
    body = text.strip()
    if not body or body.startswith("#"):
        return None
    m = _TIME.match(text)
    if m is None:
        raise _error("a line must start with an integer timestamp, then an N-Triples statement", source,
                     lineno, len(text) - len(text.lstrip()) + 1, text)
    try:
        s, p, o = parse_triple(text, lineno, source, m.end())
    except ParseError as err:
        raise StreamFormatError(err.message, err.span, text) from None
    return TimedTriple(int(m.group(1)), s, p, o, lineno)


def parse_csv_line(text: str, lineno: int, source: str) -> TimedTriple | None:
    """One physical line of CSV (fields may be quoted; a field may not span lines)."""
    if not text.strip():
        return None
    row = next(csv.reader([text]))
    if lineno == 1 and [c.strip().lower() for c in row] == ["t", "s", "p", "o"]:
        return None
    if len(row) != 4:
        raise _error(f"expected 4 fields t,s,p,o, found {len(row)}", source, lineno, 1, text)
    if not re.fullmatch(r"-?[0-9]+", row[0].strip()):
        raise _error(f"the timestamp must be an integer, found {row[0]!r}", source, lineno, 1, text)
    cols = [1]
    for field in row[:-1]:
        cols.append(cols[-1] + len(field) + 1)
    s, p, o = (bare_term(row[i], source, lineno, cols[i], text) for i in (1, 2, 3))
    return TimedTriple(int(row[0]), s, p, o, lineno)


def parse_jsonl_line(text: str, lineno: int, source: str) -> TimedTriple | None:
    if not text.strip():
        return None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        raise _error(f"not valid JSON: {err.msg}", source, lineno, err.colno, text) from None
    if not isinstance(obj, dict) or set(obj) != {"t", "s", "p", "o"}:
        raise _error('expected an object with the keys "t", "s", "p" and "o"', source, lineno, 1, text)
    if type(obj["t"]) is not int:
        raise _error(f'"t" must be an integer, got {json.dumps(obj["t"])}', source, lineno,
                     text.find('"t"') + 1, text)
    s, p, o = (bare_term(obj[k], source, lineno, text.find(f'"{k}"') + 1, text) for k in "spo")
    return TimedTriple(obj["t"], s, p, o, lineno)


LINE_PARSERS = {"nt": parse_nt_line, "csv": parse_csv_line, "jsonl": parse_jsonl_line}
EXTENSIONS = {".nt": "nt", ".tnt": "nt", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}


def read_stream(lines: Iterable[str], fmt: str, source: str = "<stream>", *, on_error: str = "fail",
                errors: list | None = None, lateness: int = 0) -> Iterator[TimedTriple]:
    """Triples of a stream in time order; see the module docstring."""
    parse = LINE_PARSERS.get(fmt)
    if parse is None:
        raise StreamFormatError(f"unknown stream format {fmt!r} (known: {', '.join(sorted(LINE_PARSERS))})")

    def report(err: RdfstreamError) -> None:
        if on_error != "skip":
            raise err
        if errors is not None:
            errors.append(err)

    heap: list[tuple[int, int, TimedTriple]] = []
    latest: int | None = None
    for lineno, raw in enumerate(lines, start=1):
        text = raw.rstrip("\r\n")
        try:
            triple = parse(text, lineno, source)
        except RdfstreamError as err:
            report(err)
            continue
        if triple is None:
            continue
        if latest is not None and triple.t < latest - lateness:
            report(_error(f"timestamp {triple.t} is earlier than {latest - lateness}: the stream reached {latest}"
                          f" and the lateness bound is {lateness}", source, lineno, 1, text))
            continue
        latest = triple.t if latest is None else max(latest, triple.t)
        heapq.heappush(heap, (triple.t, lineno, triple))
        while heap and heap[0][0] <= latest - lateness:
            yield heapq.heappop(heap)[2]
    while heap:
        yield heapq.heappop(heap)[2]
