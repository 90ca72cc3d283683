"""A fast reader of N-Triples terms that yields engine constants directly.

Stream ingest is on the hot path, and rdflib's N-Triples parser builds rdflib terms only for us to convert
them again. This reader matches a term with one regular expression and builds the constant itself. The
results agree exactly with rdflib's: typed literals that rdflib would normalise (``xsd:double``,
``xsd:boolean``, a non-canonical ``xsd:integer``, …) go through rdflib, and so do language tags with upper
case letters (tests/test_ntriples.py checks both against rdflib's parser).
"""

from __future__ import annotations

import re
from sys import intern

from ..errors import ParseError, Span
from ..rdfterms import XSD, literal_const, numeric_value
from ..terms import Const

_TERM = re.compile(
    r"[ \t]*(?:"
    r"<([^<>\"{}|^`\\\x00-\x20]*|(?:[^<>\"{}|^`\\\x00-\x20]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*)>"  # 1 IRI
    r"|_:([A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_\-])?)"  # 2 blank node
    r"|\"((?:[^\"\\\n\r]|\\.)*)\""  # 3 literal
    r"(?:@([A-Za-z]+(?:-[A-Za-z0-9]+)*)"  # 4 language
    r"|\^\^<([^<>\"{}|^`\\\x00-\x20]*)>)?"  # 5 datatype
    r")"
)
_ESCAPE = re.compile(r"\\(?:([tbnrf\"'\\])|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8}))")
_ECHAR = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_KEEP_LEXICAL = {None, XSD + "string", XSD + "integer", XSD + "decimal"}


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    return _ESCAPE.sub(lambda m: _ECHAR[m.group(1)] if m.group(1) else chr(int(m.group(2) or m.group(3), 16)), text)


def _via_rdflib(lex: str, lang: str | None, datatype: str | None) -> Const:
    from rdflib import Literal, URIRef

    from ..rdfterms import from_rdflib

    return from_rdflib(Literal(lex, lang=lang, datatype=URIRef(datatype) if datatype else None))


def parse_term(text: str, pos: int = 0) -> tuple[Const, int] | None:
    """The constant of the N-Triples term at ``pos`` (blanks first are skipped) and the position after it."""
    m = _TERM.match(text, pos)
    if m is None:
        return None
    iri, bnode, lex, lang, datatype = m.groups()
    if iri is not None:
        return intern(f"<{_unescape(iri)}>"), m.end()  # one object per IRI: windows repeat them
    if bnode is not None:
        return intern(f"_:{bnode}"), m.end()
    if lex is None:
        return None
    value = _unescape(lex)
    if lang is not None:
        fast = lang == lang.lower()  # rdflib normalises the case of language tags
        return (literal_const(value, lang) if fast else _via_rdflib(value, lang, None)), m.end()
    if datatype in _KEEP_LEXICAL and (datatype not in (XSD + "integer", XSD + "decimal")
                                      or numeric_value(value, datatype) is not None):
        return literal_const(value, None, datatype), m.end()
    return _via_rdflib(value, None, datatype), m.end()


def parse_literal(text: str, pos: int = 0) -> tuple[str, str | None, str | None, int] | None:
    """The N-Triples literal at ``pos`` (blanks first are skipped) as its unescaped lexical form, language tag
    and datatype IRI, and the position after it; None if there is no literal there.

    For readers that want a literal's value rather than its constant: the lexical form is exactly as written,
    where :func:`parse_term` has rdflib normalise some datatypes (slowly, e.g. ``xsd:dateTime``).
    """
    m = _TERM.match(text, pos)
    if m is None or m.group(3) is None:
        return None
    return _unescape(m.group(3)), m.group(4), m.group(5), m.end()


def parse_triple(text: str, line: int = 1, source: str | None = None, pos: int = 0):
    """``(s, p, o)`` of an N-Triples statement starting at ``pos``; the final ``.`` is required."""
    terms = []
    for role in ("subject", "predicate", "object"):
        const, pos = _expect_term(text, pos, role, line, source)
        terms.append(const)
    _expect_end(text, pos, "object", line, source)
    return tuple(terms)


def parse_quad(text: str, line: int = 1, source: str | None = None,
               pos: int = 0) -> tuple[Const, Const, Const, Const | None]:
    """``(s, p, o, g)`` of an N-Quads statement at ``pos``; ``g`` is None for the default graph.

    Unlike :func:`parse_triple` this checks what each position may hold (subject and graph label an IRI or
    a blank node, predicate an IRI), as rdflib's N-Quads parser does, so both accept the same statements.
    """
    s, end = _expect_term(text, pos, "subject", line, source)
    if type(s) is not str or s[0] == '"':
        _misplaced(text, pos, "subject", line, source)
    p, pos = _expect_term(text, end, "predicate", line, source)
    if type(p) is not str or p[0] != "<":
        _misplaced(text, end, "predicate", line, source)
    o, pos = _expect_term(text, pos, "object", line, source)
    found = parse_term(text, pos)
    if found is None:
        _expect_end(text, pos, "object", line, source)
        return s, p, o, None
    g, end = found
    if type(g) is not str or g[0] == '"':
        _misplaced(text, pos, "graph label", line, source)
    _expect_end(text, end, "graph label", line, source)
    return s, p, o, g


def _column(text: str, pos: int) -> int:
    """1-based column of the first non-blank character at or after ``pos``."""
    return pos + 1 + (len(text[pos:]) - len(text[pos:].lstrip(" \t")))


def _expect_term(text: str, pos: int, role: str, line: int, source: str | None) -> tuple[Const, int]:
    found = parse_term(text, pos)
    if found is None:
        col = _column(text, pos)
        raise ParseError(f"expected an N-Triples term as {role}, found {_snippet(text, col - 1)}",
                         Span(line, col, source), text)
    return found


def _misplaced(text: str, pos: int, role: str, line: int, source: str | None) -> None:
    """Report the term that starts at ``pos`` (after blanks) as not allowed in ``role``."""
    col = _column(text, pos)
    allowed = "an IRI" if role == "predicate" else "an IRI or a blank node"
    raise ParseError(f"the {role} must be {allowed}, found {_snippet(text, col - 1)}", Span(line, col, source), text)


def _expect_end(text: str, pos: int, after: str, line: int, source: str | None) -> None:
    rest = text[pos:].strip()
    if not rest.startswith("."):
        col = len(text) - len(text[pos:].lstrip()) + 1
        raise ParseError(f"expected '.' after the {after}, found {_snippet(text, col - 1)}", Span(line, col, source),
                         text)
    tail = rest[1:].strip()
    if tail and not tail.startswith("#"):
        col = text.rindex(tail) + 1
        raise ParseError(f"unexpected text after the statement: {_snippet(text, col - 1)}", Span(line, col, source),
                         text)


def _snippet(text: str, index: int) -> str:
    rest = text[index:].strip()
    return repr(rest[:20]) if rest else "the end of the line"
