"""Parsing C-SPARQL: our grammar for the stream clauses, rdflib's SPARQL 1.1 grammar for the rest.

A C-SPARQL query is a SPARQL 1.1 query with two additions: the ``REGISTER (QUERY|STREAM) name AS`` header
and ``FROM [NAMED] STREAM <iri> [window]`` dataset clauses.  This module parses those with its own pyparsing
grammar, blanks them out of the text (spaces of the same length, line breaks kept, so every position stays
where it was) and hands the remaining, plain SPARQL to rdflib's pyparsing grammar and algebra translation.
That happens once, at registration; at run time nothing but our own engine touches the query.  Errors of
either grammar are reported as ``line:col`` of the original text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

import pyparsing as pp

from ...errors import ParseError, Span, UnsupportedError
from ...ir.algebra import StreamWindow
from ..lars.common import SourceText, describe_found, expected_text

UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
KINDS = ("QUERY", "STREAM", "RSTREAM", "ISTREAM", "DSTREAM")

# strings, IRIs and comments, so that scanning for clauses skips what is inside strings and IRIs
_LEXICAL = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""' r"|'''(?:[^'\\]|\\.|'(?!''))*'''"
    r'|"(?:[^"\\\n]|\\.)*"' r"|'(?:[^'\\\n]|\\.)*'"
    r'|<[^<>"{}|^`\\\x00-\x20]*>'
    r"|#[^\n]*",
    re.S,
)


def blank(text: str, start: int, end: int) -> str:
    """``text`` with ``[start, end)`` replaced by spaces, line breaks kept."""
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def blank_comments(text: str) -> str:
    return _LEXICAL.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)) if m.group(0).startswith("#") else m.group(0), text)


@dataclass
class Envelope:
    """What the C-SPARQL additions say: the header and the stream clauses (windows in milliseconds)."""

    name: str | None
    kind: str  # QUERY | STREAM | RSTREAM | ISTREAM | DSTREAM
    every: int | None
    windows: list[tuple[str, bool, dict, int]]  # (stream IRI or prefixed name, named, window, location)
    sparql: str  # the text with the C-SPARQL parts blanked out


def _duration(s: str, loc: int, toks: pp.ParseResults) -> int:
    number, unit = toks[0], toks[1].lower()
    value = Decimal(number) * UNITS[unit]
    if value != value.to_integral_value():
        raise pp.ParseFatalException(s, loc, f"{number}{unit} is not a whole number of milliseconds")
    return int(value)


class _Grammar:
    def __init__(self) -> None:
        def kw(word: str) -> pp.ParserElement:
            return pp.CaselessKeyword(word).set_name(word)

        lbr, rbr = pp.Suppress("["), pp.Suppress("]").set_name("']'")
        count = pp.Regex(r"\d+").set_name("a number of triples")
        count.set_parse_action(lambda t: int(t[0]))
        number = pp.Regex(r"\d+(?:\.\d+)?").set_name("a duration like 10s")
        unit = pp.Regex(r"(?i)(ms|s|m|h|d)\b").set_name("a time unit (ms, s, m, h, d)")
        duration = (number + pp.Optional(pp.White(" \t")).suppress() - unit).set_name("a duration like 10s")
        duration.set_parse_action(_duration)
        step = (kw("STEP") - duration("step")) | kw("TUMBLING")("tumbling")
        time_range = duration("range") + pp.Optional(step)
        count_range = kw("TRIPLES").suppress() - count("triples")
        body = (kw("RANGE").suppress() - (count_range | time_range)) | (kw("ROWS").suppress() - count("rows"))
        self.window = (lbr - body.set_name("RANGE or ROWS") - rbr).set_name("a window like [RANGE 10s STEP 1s]")
        iri = pp.Regex(r"<[^<>\"{}|^`\\\x00-\x20]*>").set_name("a stream IRI")
        pname = pp.Regex(r"[A-Za-z][\w\-.]*:[\w\-.]*|:[\w\-.]*").set_name("a stream IRI")
        self.stream = (
            kw("FROM").suppress()
            + pp.Optional(kw("NAMED"))("named")
            + kw("STREAM").suppress()
            - (iri | pname)("iri")
            - pp.Group(self.window)("window")
        )
        name = (iri | pp.Regex(r"[A-Za-z_][\w\-.]*")).set_name("a query name")
        every = (kw("COMPUTE") | kw("COMPUTED")).suppress() - kw("EVERY").suppress() - duration("every")
        self.header = (
            kw("REGISTER").suppress()
            - pp.MatchFirst([kw(k) for k in KINDS]).set_name("QUERY or STREAM")("kind")
            - name("name")
            - pp.Optional(every)
            - kw("AS").suppress()
        )


_grammar: _Grammar | None = None


def grammar() -> _Grammar:
    global _grammar
    if _grammar is None:
        _grammar = _Grammar()
    return _grammar


def _error(exc: pp.ParseBaseException, src: SourceText) -> ParseError:
    message = exc.msg if isinstance(exc, pp.ParseFatalException) and "milliseconds" in (exc.msg or "") else None
    if message is None:
        message = f"expected {expected_text(exc)}, found {describe_found(src.text, exc.loc)}"
    return src.error(message, exc.loc)


def parse_envelope(text: str, source: str | None = None) -> Envelope:
    src = SourceText(text, source)
    code = blank_comments(text)
    g = grammar()
    name, kind, every = None, "QUERY", None
    head = re.match(r"\s*", code)
    start = head.end() if head else 0
    sparql = text
    if re.match(r"(?i)REGISTER\b", code[start:]):
        try:
            toks, _, end = _parse_at(g.header, code, start)
        except pp.ParseBaseException as exc:
            raise _error(exc, src) from None
        name = toks["name"]
        if name.startswith("<"):
            name = name[1:-1]
        kind = toks["kind"].upper()
        every = toks.get("every")
        sparql = blank(sparql, start, end)
        code = blank(code, start, end)
    windows = []
    # each FROM [NAMED] STREAM clause, found outside strings, IRIs and comments
    for m in re.finditer(r"(?i)\bFROM\s+(?:NAMED\s+)?STREAM\b", mask_lexical(code)):
        try:
            toks, s, e = _parse_at(g.stream, code, m.start())
        except pp.ParseBaseException as exc:
            raise _error(exc, src) from None
        window = toks["window"]
        spec = {k: window.get(k) for k in ("range", "step", "tumbling", "triples", "rows")}
        windows.append((toks["iri"], bool(toks.get("named")), spec, s))
        sparql = blank(sparql, s, e)
    return Envelope(name, kind, every, windows, sparql)


def mask_lexical(code: str) -> str:
    """``code`` with strings and IRIs blanked (for finding keywords only)."""
    return _LEXICAL.sub(lambda m: " " * len(m.group(0)), code)


def _parse_at(expr: pp.ParserElement, code: str, loc: int) -> tuple[pp.ParseResults, int, int]:
    """Parse ``expr`` starting exactly at ``loc`` of ``code``: (tokens, start, end)."""
    end, toks = expr._parse(code, loc)  # noqa: SLF001 - what scan_string does at each offset
    return toks, loc, end


def stream_window(iri: str, named: bool, spec: dict, every: int | None, loc: int, src: SourceText) -> StreamWindow:
    """The IR window of one stream clause (``every`` stands in for a missing STEP)."""
    if spec.get("rows") is not None:
        size = spec["rows"]
        if size < 1:
            raise src.error("ROWS needs at least 1 triple", loc)
        return StreamWindow(iri, "rows", size, 0, named)
    if spec.get("triples") is not None:
        size = spec["triples"]
        if size < 1:
            raise src.error("RANGE TRIPLES needs at least 1 triple", loc)
        return StreamWindow(iri, "triples", size, 0, named)
    size = spec["range"]
    if size < 1:
        raise src.error("a window RANGE must be at least 1ms", loc)
    if spec.get("tumbling") is not None:
        step = size
    elif spec.get("step") is not None:
        step = spec["step"]
    elif every is not None:
        step = every
    else:
        raise src.error(f"the window on <{iri}> needs STEP or TUMBLING (or COMPUTE EVERY in the header)", loc)
    if step < 1:
        raise src.error("a window STEP must be at least 1ms", loc)
    if every is not None and every != step:
        raise UnsupportedError(
            f"COMPUTE EVERY {every}ms differs from the window step {step}ms: reports follow the window closes",
            src.span(loc),
        )
    return StreamWindow(iri, "time", size, step, named)


def parse_sparql(text: str, src: SourceText):
    """rdflib's parse tree and algebra of plain SPARQL ``text``; errors as ParseError at line:col."""
    from rdflib.plugins.sparql.algebra import translateQuery
    from rdflib.plugins.sparql.parser import parseQuery

    try:
        tree = parseQuery(text)
    except pp.ParseBaseException as exc:
        raise _error(exc, src) from None
    try:
        return translateQuery(tree)
    except Exception as exc:  # rdflib raises plain Exceptions (e.g. an undeclared prefix)
        message = str(exc) or type(exc).__name__
        m = re.match(r"Unknown namespace prefix : (\S*)", message)
        if m:
            found = re.search(rf"(?<![\w:]){re.escape(m.group(1))}:", mask_lexical(blank_comments(text)))
            loc = found.start() if found else 0
            raise src.error(f"undeclared prefix {m.group(1)}:", loc) from None
        raise ParseError(f"invalid query: {message}", Span(1, 1, src.source)) from None
