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

:func:`read_stream_file` is the one entry point for every stream format (:data:`STREAM_FORMATS`): the line
formats above and the event formats of :mod:`.rdf_events` (``nquads``, ``trig``: a timestamped named graph per
event), chosen from the file extension unless given. :func:`read_stream` reads any of them from lines.
"""

from __future__ import annotations

import csv
import heapq
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import BinaryIO

from ..errors import ParseError, RdfstreamError, Span, StreamFormatError, UsageError
from ..terms import ABSOLUTE_IRI_RE, Const, string
from .ntriples import parse_term, parse_triple


@dataclass(frozen=True, slots=True)
class TimedTriple:
    t: int
    s: Const
    p: Const
    o: Const
    line: int


_TIME = re.compile(r"[ \t]*(-?[0-9]+)(?=[ \t])")
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
    if ABSOLUTE_IRI_RE.match(field):
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
EVENT_FORMATS = ("nquads", "trig")  # read by .rdf_events
STREAM_FORMATS = (*LINE_PARSERS, *EVENT_FORMATS)
EXTENSIONS = {".nt": "nt", ".tnt": "nt", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl",
              ".nq": "nquads", ".nquads": "nquads", ".trig": "trig"}


def error_handler(on_error: str, errors: list | None) -> Callable[[RdfstreamError], None]:
    """What the readers do with a bad line: raise it (``"fail"``), or collect it and go on (``"skip"``)."""
    if on_error not in ("fail", "skip"):
        raise UsageError(f"on_error must be 'fail' or 'skip', not {on_error!r}")

    def report(err: RdfstreamError) -> None:
        if on_error == "fail":
            raise err
        if errors is not None:
            errors.append(err)

    return report


class TimeOrder:
    """Puts timestamped items back in time order when they may arrive up to ``lateness`` late.

    An item at ``t`` is accepted while ``t >= latest - lateness`` (``latest``: the largest timestamp accepted so
    far); everything at or before that bound can then be released, because nothing earlier can still come.
    Items with equal timestamps keep their arrival order.
    """

    __slots__ = ("lateness", "latest", "_heap", "_seq")

    def __init__(self, lateness: int = 0):
        self.lateness = lateness
        self.latest: int | None = None
        self._heap: list[tuple[int, int, object]] = []
        self._seq = 0

    def bound(self) -> int | None:
        """The earliest timestamp still accepted (None before the first item)."""
        return None if self.latest is None else self.latest - self.lateness

    def offer(self, t: int, item: object) -> bool:
        """Accept an item, unless it is earlier than :meth:`bound` (then False, and nothing changes)."""
        latest = self.latest
        if latest is None or t > latest:
            self.latest = t
        elif t < latest - self.lateness:
            return False
        self._seq += 1
        heapq.heappush(self._heap, (t, self._seq, item))
        return True

    def ready(self) -> Iterator:
        """The items that nothing still to come can precede, in time order."""
        heap = self._heap
        if heap:  # then latest is set
            bound = self.latest - self.lateness  # type: ignore[operator]
            while heap and heap[0][0] <= bound:
                yield heapq.heappop(heap)[2]

    def drain(self) -> Iterator:
        """All items still held, in time order (at the end of the stream)."""
        while self._heap:
            yield heapq.heappop(self._heap)[2]


def late_message(t: int, order: TimeOrder) -> str:
    return (f"timestamp {t} is earlier than {order.bound()}: the stream reached {order.latest}"
            f" and the lateness bound is {order.lateness}")


def read_stream(lines: Iterable[str], fmt: str, source: str = "<stream>", *, on_error: str = "fail",
                errors: list | None = None, lateness: int = 0) -> Iterator[TimedTriple]:
    """Triples of a stream in time order; see the module docstring."""
    if fmt in EVENT_FORMATS:
        from .rdf_events import read_events  # imported here: rdf_events imports this module

        return read_events(lines, fmt, source, on_error=on_error, errors=errors, lateness=lateness)
    parse = LINE_PARSERS.get(fmt)
    if parse is None:
        raise StreamFormatError(f"unknown stream format {fmt!r} (known: {', '.join(STREAM_FORMATS)})")
    return _read_lines(lines, parse, source, error_handler(on_error, errors), TimeOrder(lateness))


def _read_lines(lines: Iterable[str], parse, source: str, report: Callable[[RdfstreamError], None],
                order: TimeOrder) -> Iterator[TimedTriple]:
    for lineno, raw in enumerate(lines, start=1):
        text = raw.rstrip("\r\n")
        try:
            triple = parse(text, lineno, source)
        except RdfstreamError as err:
            report(err)
            continue
        if triple is None:
            continue
        if not order.offer(triple.t, triple):
            report(_error(late_message(triple.t, order), source, lineno, 1, text))
            continue
        yield from order.ready()
    yield from order.drain()


def format_of(path: str) -> str:
    """The stream format a file name's extension stands for."""
    fmt = EXTENSIONS.get(Path(path).suffix.lower())
    if fmt is None:
        known = ", ".join(f"{ext} ({name})" for ext, name in EXTENSIONS.items())
        raise StreamFormatError(f"cannot tell the stream format of {path!r} from its extension (known: {known});"
                                " give the format")
    return fmt


def read_stream_file(path: str, fmt: str | None = None, *, on_error: str = "fail", errors: list | None = None,
                     lateness: int = 0) -> Iterator[TimedTriple]:
    """Triples of the stream file at ``path`` in time order, in any of :data:`STREAM_FORMATS`.

    The format comes from the extension when ``fmt`` is None; ``fmt`` may also be an extension (``nq``, ``tnt``).
    Errors name the file. The file is opened before this returns, so an unreadable file is a :class:`UsageError`
    here rather than at the first triple; bad UTF-8 is a StreamFormatError at its line.
    """
    fmt = format_of(path) if fmt is None else EXTENSIONS.get(f".{fmt.lower()}", fmt)  # "nq", "tnt", ... too
    if fmt not in STREAM_FORMATS:
        raise StreamFormatError(f"unknown stream format {fmt!r} (known: {', '.join(STREAM_FORMATS)})")
    error_handler(on_error, errors)  # check the arguments now rather than at the first triple
    try:
        handle = open(path, "rb")  # closed by the generator it is handed to
    except OSError as err:
        raise UsageError(f"cannot read stream file {path}: {err.strerror or err}") from None
    return _read_file(handle, path, fmt, on_error, errors, lateness)


def _read_file(handle: BinaryIO, path: str, fmt: str, on_error: str, errors: list | None,
               lateness: int) -> Iterator[TimedTriple]:
    with handle:
        yield from read_stream(_decoded_lines(handle, path), fmt, path, on_error=on_error, errors=errors,
                               lateness=lateness)


def _decoded_lines(handle: BinaryIO, source: str) -> Iterator[str]:
    """The file's lines as text; decoded one line at a time so that bad UTF-8 is reported at its own line."""
    for lineno, raw in enumerate(handle, start=1):
        try:
            yield raw.decode("utf-8-sig" if lineno == 1 else "utf-8")  # -sig: drop a byte order mark
        except UnicodeDecodeError as err:
            raise StreamFormatError(f"not UTF-8 text: {err.reason}", Span(lineno, err.start + 1, source)) from None
