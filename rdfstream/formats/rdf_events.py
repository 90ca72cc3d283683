"""Timestamped named graphs: RSP-style event streams in N-Quads or TriG.

**Convention.** Every event is a named graph ``G``. Its triples are the triples of ``G``; its timestamp is the
object ``T`` of a default-graph triple ``G <http://www.w3.org/ns/prov#generatedAtTime> T``, where ``T`` is

* an ``xsd:dateTime`` (or ``xsd:dateTimeStamp``), read as milliseconds since 1970-01-01T00:00:00Z; a time
  without a zone is UTC, digits below the millisecond are dropped (rounded down); or
* an integer literal (``xsd:integer`` or one of its derived types such as ``xsd:long``), in milliseconds.

Other default-graph triples describe the events and belong to none of them; they are not returned. A named
graph without a timestamp is an error that names the graph and the line where it first appears; a second,
different timestamp for a graph is an error at its line; a timestamp that is neither of the above is an error
at its line (and the graph's triples are dropped with it).

**Output.** The :class:`~.rdf_streams.TimedTriple` records of :mod:`.rdf_streams`, one per triple of an event,
carrying the event's timestamp, in time order. ``on_error``, ``errors`` and ``lateness`` work as in
:func:`.rdf_streams.read_stream`: events must not go back in time, except that with ``lateness`` an event may
be up to that much earlier than the latest one read; one further behind is an error (or skipped).

**N-Quads** is read line by line with the term reader of :mod:`.ntriples` (rdflib is not involved), and
malformed lines are errors at their line and column. A graph's timestamp triple may come before or after its
quads. Until it has been read the graph's quads are held back, in one buffer per graph; an event *arrives* when
both its timestamp and a first quad have been read (all its buffered quads at once), and the lateness rule is
applied then. A quad of a graph whose event has already arrived is a triple at the graph's timestamp and
follows the same rule by itself, so interleaved graphs are fine while they stay within the lateness bound.
Held-back quads of a graph that never gets a timestamp are reported at the end of the stream. The reader
remembers the timestamp of every graph it has seen (one dictionary entry per graph name).

**TriG** is parsed by rdflib as a whole document, so it has no arrival order: events come out in timestamp
order (ties in document order) and ``lateness`` has no effect. rdflib cannot resume after a syntax error, so a
TriG syntax error ends the read even with ``on_error="skip"``; it carries the line (and column) rdflib reports.
rdflib does not say where a triple was written: the ``line`` of a TriG triple is the line where its graph's
block opens (found by scanning the text for ``label {``), or 0 when the label cannot be found there (blank
node labels, relative IRIs).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from ..errors import ParseError, RdfstreamError, Span, StreamFormatError
from ..rdfterms import XSD, days_from_civil, days_in_month
from ..terms import Const, format_term
from .ntriples import parse_literal, parse_quad, parse_term
from .rdf_streams import TimedTriple, TimeOrder, error_handler, late_message

PROV_GENERATED_AT_TIME = "http://www.w3.org/ns/prov#generatedAtTime"
_STAMP = f"<{PROV_GENERATED_AT_TIME}>"

_INTEGER_TYPES = frozenset(XSD + name for name in (
    "integer", "long", "int", "short", "byte", "nonNegativeInteger", "positiveInteger", "nonPositiveInteger",
    "negativeInteger", "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte"))
_DATE_TIME_TYPES = frozenset((XSD + "dateTime", XSD + "dateTimeStamp"))
_TYPED = re.compile(r'"(.*)"\^\^<([^>]*)>\Z', re.S)  # the lexical forms we accept need no unescaping
_INTEGER = re.compile(r"[+-]?[0-9]+\Z")
_DATE_TIME = re.compile(
    r"(-?(?:[1-9][0-9]{4,}|[0-9]{4}))-([0-9]{2})-([0-9]{2})"  # year (more than 4 digits: no leading 0)
    r"T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?"
    r"(Z|[+-][0-9]{2}:[0-9]{2})?\Z")
_MS_PER_DAY = 86_400_000
_END = re.compile(r"[ \t]*\.[ \t]*(?:#.*)?\Z")  # the rest of a statement after its last term


def timestamp_millis(value: Const) -> int:
    """The timestamp, in milliseconds, that an event's ``prov:generatedAtTime`` object stands for.

    Raises ValueError for anything but an ``xsd:dateTime``/``xsd:dateTimeStamp`` or an integer literal.
    """
    if type(value) is int:
        return value  # a canonical xsd:integer is already an int constant
    if type(value) is str:
        m = _TYPED.match(value)
        if m is not None:
            millis = _literal_millis(m.group(1), m.group(2))
            if millis is not None:
                return millis
    raise ValueError(_not_a_timestamp(format_term(value)))


def _literal_millis(lex: str, datatype: str | None) -> int | None:
    if datatype in _INTEGER_TYPES:
        return int(lex) if _INTEGER.match(lex) else None
    if datatype in _DATE_TIME_TYPES:
        return _date_time_millis(lex, zone_required=datatype.endswith("Stamp"))  # type: ignore[union-attr]
    return None


def _not_a_timestamp(written: str) -> str:
    return f"the timestamp must be an xsd:dateTime or an integer literal, found {written}"


def _date_time_millis(lex: str, zone_required: bool = False) -> int | None:
    """Epoch milliseconds of an xsd:dateTime lexical form, or None if it is not one."""
    m = _DATE_TIME.match(lex)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    fraction, zone = m.group(7) or "", m.group(8)
    if zone is None and zone_required:
        return None
    if not (1 <= month <= 12 and 1 <= day <= days_in_month(year, month) and minute <= 59 and second <= 59):
        return None
    if hour > 24 or (hour == 24 and (minute or second or fraction.strip("0"))):
        return None  # 24:00:00 is the end of the day, i.e. the next midnight; nothing later
    offset = 0
    if zone is not None and zone != "Z":
        zh, zm = int(zone[1:3]), int(zone[4:6])
        if zm > 59 or zh > 14 or (zh == 14 and zm):
            return None
        offset = (zh * 60 + zm) * (1 if zone[0] == "+" else -1)
    millis = int((fraction + "000")[:3])
    return (days_from_civil(year, month, day) * _MS_PER_DAY + ((hour * 60 + minute - offset) * 60 + second) * 1000
            + millis)


# -- N-Quads ---------------------------------------------------------------------------------------------------


def read_nquads(lines: Iterable[str], source: str = "<stream>", *, on_error: str = "fail",
                errors: list | None = None, lateness: int = 0) -> Iterator[TimedTriple]:
    """Triples of an N-Quads event stream in time order; see the module docstring."""
    return _read_nquads(lines, source, error_handler(on_error, errors), TimeOrder(lateness))


def _read_nquads(lines: Iterable[str], source: str, report: Callable[[RdfstreamError], None],
                 order: TimeOrder) -> Iterator[TimedTriple]:
    events = _Events(source, report, order)
    for lineno, raw in enumerate(lines, start=1):
        text = raw.rstrip("\r\n")
        if _STAMP in text:  # cheap test first; most lines are not timestamps
            stamp = _stamp_line(text)
            if stamp is not None:
                if events.stamp(*stamp, lineno, text):
                    yield from order.ready()
                continue
        try:
            s, p, o, g = parse_quad(text, lineno, source)
        except ParseError as err:
            body = text.lstrip(" \t")
            if body and body[0] != "#":  # blank and comment lines fail to parse too, and are fine
                report(StreamFormatError(err.message, err.span, text))
            continue
        if g is not None:
            if events.quad(s, p, o, g, lineno, text):
                yield from order.ready()
        elif p == _STAMP:  # a timestamp line that _stamp_line left to parse_quad, e.g. with an IRI object
            try:
                t = timestamp_millis(o)
            except ValueError as err:
                events.stamp(s, err, text.rfind(format_term(o)) + 1 or 1, lineno, text)
                continue
            if events.stamp(s, t, 1, lineno, text):
                yield from order.ready()
        # any other default-graph triple describes the events and is not part of one
    events.finish()
    yield from order.drain()


def _stamp_line(text: str) -> tuple[Const, int | ValueError, int] | None:
    """``(graph, timestamp or the error, column of the object)`` for a default-graph timestamp line whose object
    is a literal; None for any other line, left to the general path (which reports malformed ones).

    The timestamp is read from the literal as written: building its constant would have rdflib normalise an
    xsd:dateTime, which costs more than the rest of the event's quads.
    """
    found = parse_term(text)
    if found is None or type(found[0]) is not str or found[0][0] == '"':
        return None
    g, end = found
    found = parse_term(text, end)
    if found is None or found[0] != _STAMP:
        return None
    start = found[1]
    literal = parse_literal(text, start)
    if literal is None or _END.match(text, literal[3]) is None:
        return None  # not a literal, a quad in a named graph, or malformed
    lex, _, datatype, end = literal
    col = len(text) - len(text[start:].lstrip(" \t")) + 1
    millis = _literal_millis(lex, datatype)
    return g, (ValueError(_not_a_timestamp(text[col - 1:end])) if millis is None else millis), col


class _Events:
    """The state of an N-Quads event stream: timestamps, held-back quads, the time order of the output."""

    def __init__(self, source: str, report: Callable[[RdfstreamError], None], order: TimeOrder):
        self.source, self.report, self.order = source, report, order
        self.stamps: dict[Const, tuple[int, int]] = {}  # graph -> (timestamp, line of its timestamp triple)
        self.held: dict[Const, list[tuple[Const, Const, Const, int]]] = {}  # graph without timestamp -> quads
        self.first_seen: dict[Const, Span] = {}  # graph in ``held`` -> where its label first appears
        self.bad_stamp: set[Const] = set()  # timestamp reported as malformed: no missing-timestamp error too

    # quad() and stamp() say whether they gave the time order new triples; they are plain methods rather than
    # generators because they run once per line, where a generator each is measurable on the ingest path

    def quad(self, s: Const, p: Const, o: Const, g: Const, lineno: int, text: str) -> bool:
        stamp = self.stamps.get(g)
        if stamp is None:
            held = self.held.get(g)
            if held is None:
                held = self.held[g] = []
                self.first_seen[g] = Span(lineno, text.rfind(g) + 1 or 1, self.source)
            held.append((s, p, o, lineno))
            return False
        t = stamp[0]
        if not self.order.offer(t, TimedTriple(t, s, p, o, lineno)):
            self.report(StreamFormatError(f"{late_message(t, self.order)} (a quad of graph {g})",
                                          Span(lineno, 1, self.source), text))
            return False
        return True

    def stamp(self, g: Const, t: int | ValueError, col: int, lineno: int, text: str) -> bool:
        if isinstance(t, ValueError):
            self.bad_stamp.add(g)
            self.report(StreamFormatError(f"{t} for graph {g}", Span(lineno, col, self.source), text))
            return False
        previous = self.stamps.get(g)
        if previous is not None:
            if previous[0] != t:
                self.report(StreamFormatError(f"graph {g} already has the timestamp {previous[0]} (line"
                                              f" {previous[1]}), here it is {t}", Span(lineno, 1, self.source), text))
            return False
        self.stamps[g] = (t, lineno)
        quads = self.held.pop(g, None)
        if quads is None:
            return False  # the graph's quads are still to come
        del self.first_seen[g]
        order = self.order
        bound = order.bound()
        if bound is not None and t < bound:
            self.report(StreamFormatError(f"{late_message(t, order)}: the event of graph {g} ({len(quads)} quads"
                                          f" from line {quads[0][3]}) is dropped", Span(lineno, 1, self.source),
                                          text))
            return False
        for s, p, o, line in quads:
            order.offer(t, TimedTriple(t, s, p, o, line))  # accepted: t is within the bound checked above
        return True

    def finish(self) -> None:
        """Report the graphs that never got a timestamp (their quads are dropped)."""
        for g, where in self.first_seen.items():
            if g not in self.bad_stamp:
                self.report(StreamFormatError(f"named graph {g} has no timestamp: expected a default-graph triple"
                                              f" {g} {_STAMP} T", where))


# -- TriG ------------------------------------------------------------------------------------------------------


def read_trig(text: str, source: str = "<stream>", *, on_error: str = "fail", errors: list | None = None,
              lateness: int = 0) -> Iterator[TimedTriple]:
    """Triples of a TriG document of events in timestamp order; see the module docstring.

    ``lateness`` is accepted for a uniform signature; a whole document has no arrival order to be late in.
    """
    del lateness
    return _read_trig(text, source, error_handler(on_error, errors))


def _read_trig(text: str, source: str, report: Callable[[RdfstreamError], None]) -> Iterator[TimedTriple]:
    from rdflib import Dataset, URIRef
    from rdflib.graph import DATASET_DEFAULT_GRAPH_ID

    from ..rdfterms import from_rdflib

    dataset = Dataset()
    try:
        dataset.parse(data=text, format="trig")
    except Exception as err:  # rdflib also fails with IndexError etc. on some malformed input
        raise _trig_error(err, text, source) from None

    lines = _graph_block_lines(text)
    stamps: dict[Const, int] = {}
    unusable: set[Const] = set()  # graphs whose timestamp was reported: no missing-timestamp error as well
    for subject, obj in dataset.graph(DATASET_DEFAULT_GRAPH_ID).subject_objects(URIRef(PROV_GENERATED_AT_TIME)):
        g, value = from_rdflib(subject), from_rdflib(obj)
        where = _span(lines.get(g, 0), source)
        try:
            t = timestamp_millis(value)
        except ValueError as err:
            unusable.add(g)
            report(StreamFormatError(f"{err} for graph {g}", where))
            continue
        if stamps.setdefault(g, t) != t:
            unusable.add(g)
            report(StreamFormatError(f"graph {g} has two timestamps, {stamps[g]} and {t}", where))

    events = []
    for graph in dataset.graphs():
        if graph.identifier == DATASET_DEFAULT_GRAPH_ID or len(graph) == 0:
            continue
        g = from_rdflib(graph.identifier)
        line = lines.get(g, 0)
        if g in unusable:
            continue
        if g not in stamps:
            report(StreamFormatError(f"named graph {g} has no timestamp: expected a default-graph triple"
                                     f" {g} {_STAMP} T", _span(line, source)))
            continue
        events.append((stamps[g], line, len(events), graph))
    events.sort(key=lambda event: event[:3])  # the third field keeps ties in document order, never graphs
    for t, line, _, graph in events:
        for s, p, o in graph:
            yield TimedTriple(t, from_rdflib(s), from_rdflib(p), from_rdflib(o), line)


def _span(line: int, source: str) -> Span | None:
    return Span(line, 1, source) if line else None


def _trig_error(err: Exception, text: str, source: str) -> StreamFormatError:
    """A StreamFormatError for an rdflib TriG parse failure, at the place rdflib points to when it does."""
    where = getattr(err, "_i", None)  # BadSyntax: offset into the document (it has no public accessor)
    why = getattr(err, "_why", None)
    message = f"TriG syntax error: {why}" if why else f"TriG parse error: {type(err).__name__}: {err}"
    if isinstance(where, int) and 0 <= where <= len(text):
        line = text.count("\n", 0, where) + 1
        return StreamFormatError(message, Span(line, where - text.rfind("\n", 0, where), source))
    lines = getattr(err, "lines", None)
    if isinstance(lines, int):
        return StreamFormatError(message, Span(lines + 1, 1, source))
    return StreamFormatError(f"{source}: {message}")


_PREFIX = re.compile(r"(?:@prefix|PREFIX)\s+([A-Za-z][\w.\-]*)?:\s*<([^<>\s]*)>", re.I)
_BLOCK = re.compile(r"(<[^<>\s]*>|(?:[A-Za-z][\w.\-]*)?:[\w.\-:%]*)\s*\{")


def _graph_block_lines(text: str) -> dict[Const, int]:
    """Where each graph's block opens: the line of the first ``label {`` in the text, per absolute IRI label.

    A plain scan, so a ``label {`` inside a string or comment can mislead it; it only feeds the ``line`` fields
    and messages, never what is read.
    """
    prefixes = {m.group(1) or "": m.group(2) for m in _PREFIX.finditer(text)}
    found: dict[Const, int] = {}
    line, counted = 1, 0  # lines counted up to offset ``counted``: one pass over the text, not one per block
    for m in _BLOCK.finditer(text):
        line += text.count("\n", counted, m.start())
        counted = m.start()
        label = m.group(1)
        if label.startswith("<"):
            iri = label[1:-1]
        else:
            prefix, _, local = label.partition(":")
            if prefix not in prefixes:
                continue
            iri = prefixes[prefix] + local
        found.setdefault(f"<{iri}>", line)
    return found


# -- both ------------------------------------------------------------------------------------------------------


def read_events(lines: Iterable[str], fmt: str, source: str = "<stream>", *, on_error: str = "fail",
                errors: list | None = None, lateness: int = 0) -> Iterator[TimedTriple]:
    """Triples of an event stream in ``nquads`` or ``trig`` (TriG lines are joined into one document)."""
    if fmt == "nquads":
        return read_nquads(lines, source, on_error=on_error, errors=errors, lateness=lateness)
    if fmt == "trig":
        return read_trig("".join(lines), source, on_error=on_error, errors=errors, lateness=lateness)
    raise StreamFormatError(f"unknown event stream format {fmt!r} (known: nquads, trig)")
