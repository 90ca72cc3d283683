"""A fast reader of N-Triples terms that yields engine constants directly.

Stream ingest is on the hot path, and rdflib's N-Triples parser builds rdflib terms only for us to convert
them again. This reader matches a term with one regular expression and builds the constant itself. The
results agree exactly with rdflib's: typed literals that rdflib would normalise (``xsd:double``,
``xsd:boolean``, a non-canonical ``xsd:integer``, …) go through rdflib, and so do language tags with upper
case letters (tests/test_ntriples.py checks both against rdflib's parser).
"""

from __future__ import annotations

import re

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
        return f"<{_unescape(iri)}>", m.end()
    if bnode is not None:
        return f"_:{bnode}", m.end()
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


def parse_triple(text: str, line: int = 1, source: str | None = None, pos: int = 0):
    """``(s, p, o)`` of an N-Triples statement starting at ``pos``; the final ``.`` is required."""
    terms = []
    for role in ("subject", "predicate", "object"):
        found = parse_term(text, pos)
        if found is None:
            col = pos + 1 + (len(text[pos:]) - len(text[pos:].lstrip(" \t")))
            raise ParseError(f"expected an N-Triples term as {role}, found {_snippet(text, col - 1)}",
                             Span(line, col, source), text)
        const, pos = found
        terms.append(const)
    rest = text[pos:].strip()
    if not rest.startswith("."):
        col = len(text) - len(text[pos:].lstrip()) + 1
        raise ParseError(f"expected '.' after the object, found {_snippet(text, col - 1)}", Span(line, col, source),
                         text)
    tail = rest[1:].strip()
    if tail and not tail.startswith("#"):
        col = text.rindex(tail) + 1
        raise ParseError(f"unexpected text after the statement: {_snippet(text, col - 1)}", Span(line, col, source),
                         text)
    return tuple(terms)


def _snippet(text: str, index: int) -> str:
    rest = text[index:].strip()
    return repr(rest[:20]) if rest else "the end of the line"
