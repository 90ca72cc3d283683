"""rdflib terms at the edges, engine constants inside.

A triple ⟨s, p, o⟩ becomes the atom ``p(s, o)`` whose arguments are engine constants (see :mod:`terms`):

* an IRI is ``"<iri>"``, a blank node ``"_:id"``;
* an ``xsd:integer`` literal in canonical lexical form is a Python ``int`` and an ``xsd:decimal`` in canonical
  form a ``Decimal``, so that arithmetic and comparisons work on them directly;
* every other literal keeps its exact lexical form: ``"lex"``, ``"lex"@lang``, ``"lex"^^<datatype>``.

The mapping is exact in both directions: two rdflib terms are equal iff their constants are equal, so joins
in the engine behave like RDF term equality in SPARQL basic graph patterns (``"05"^^xsd:integer`` and
``"5"^^xsd:integer`` stay distinct).  rdflib is imported on first use only.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from sys import intern

from .terms import Const, format_decimal, string, string_value

XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_INTEGER = XSD + "integer"
XSD_DECIMAL = XSD + "decimal"

_LITERAL_RE = re.compile(r'^(".*")(?:@([A-Za-z0-9\-]+)|\^\^<([^>]*)>)?\Z', re.S)


def from_rdflib(term) -> Const:
    """The engine constant of an rdflib term (URIRef, BNode or Literal)."""
    from rdflib.term import BNode, Literal, URIRef

    if isinstance(term, URIRef):
        return intern(f"<{term}>")
    if isinstance(term, BNode):
        return intern(f"_:{term}")
    if isinstance(term, Literal):
        datatype = str(term.datatype) if term.datatype is not None else None
        return literal_const(str(term), term.language, datatype)
    raise TypeError(f"not an RDF term: {term!r}")


_CANONICAL_INT = re.compile(r"-?(0|[1-9][0-9]*)\Z")


def numeric_value(lex: str, datatype: str | None):
    """The Python number for a canonical ``xsd:integer`` / ``xsd:decimal`` lexical form, else None."""
    if datatype == XSD_INTEGER:
        if _CANONICAL_INT.match(lex) and lex != "-0":
            return int(lex)
    elif datatype == XSD_DECIMAL:
        try:
            value = Decimal(lex)
        except InvalidOperation:
            return None
        if value.is_finite() and format_decimal(value) == lex:
            return value
    return None


def literal_const(lex: str, lang: str | None = None, datatype: str | None = None) -> Const:
    """The constant of a literal given by its (already normalised) lexical form, language or datatype."""
    if lang:
        return f"{string(lex)}@{lang}"
    if datatype is None:
        return string(lex)
    number = numeric_value(lex, datatype)
    if number is not None:
        return number
    return f"{string(lex)}^^<{datatype}>"


def to_rdflib(const: Const):
    """The rdflib term of an engine constant.  A bare LARS name becomes a plain literal."""
    from rdflib.term import BNode, Literal, URIRef

    kind = type(const)
    if kind is int:
        return Literal(str(const), datatype=URIRef(XSD_INTEGER))
    if kind is Decimal:
        return Literal(format_decimal(const), datatype=URIRef(XSD_DECIMAL))  # type: ignore[arg-type]
    if kind is not str:
        raise TypeError(f"not a constant: {const!r}")
    if const.startswith("<") and const.endswith(">"):
        return URIRef(const[1:-1])
    if const.startswith("_:"):
        return BNode(const[2:])
    if const.startswith('"'):
        match = _LITERAL_RE.match(const)
        if match is None:
            raise ValueError(f"malformed literal constant: {const}")
        quoted, lang, datatype = match.groups()
        lex = string_value(quoted)
        if lang:
            return Literal(lex, lang=lang)
        if datatype:
            return Literal(lex, datatype=URIRef(datatype))
        return Literal(lex)
    return Literal(const)


# ---------------------------------------------------------------- calendar arithmetic for xsd:date / xsd:dateTime


def days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 in the proleptic Gregorian calendar, astronomical years (XSD 1.1: 0000 is 1 BCE).

    Counted in 400-year eras that start on March 1st so that the leap day is the last day of a year; Python's
    floor division keeps this right for negative years, where datetime cannot go.
    """
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146_097 + day_of_era - 719_468
