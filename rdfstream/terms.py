"""Terms of the rule IR.

A constant is represented by a plain Python value so that hashing and equality inside the engine
are as cheap as they can be:

* ``int`` and ``decimal.Decimal`` for numbers;
* ``str`` for every symbolic constant, holding its canonical lexical form:
  a name ``x1``, an IRI ``<http://example.org/a>``, a string literal ``"abc"`` (N-Triples escapes),
  a literal with language or datatype ``"chat"@fr`` / ``"1"^^<...>``, a blank node ``_:b0``.

The lexical form is unambiguous (IRIs start with ``<``, literals with ``"``, blank nodes with ``_:``),
so two constants are equal exactly when their forms are equal.  Variables are :class:`Var`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

Const = str | int | Decimal


@dataclass(frozen=True, slots=True)
class Var:
    name: str

    def __str__(self) -> str:
        return self.name


Term = Var | Const

#: Lexical forms shared by the front ends and the stream readers (patterns, then whole-string matchers).
NAME_PATTERN = r"[a-z][A-Za-z0-9_]*"  # a LARS name (a constant or a predicate)
VAR_PATTERN = r"[A-Z_][A-Za-z0-9_]*"  # a LARS variable
ABSOLUTE_IRI_PATTERN = r'[A-Za-z][A-Za-z0-9+.\-]*:[^<>"{}|^`\\\x00-\x20]+'  # scheme ":" then IRI characters

NAME_RE = re.compile(NAME_PATTERN + r"\Z")
VAR_RE = re.compile(VAR_PATTERN + r"\Z")
ABSOLUTE_IRI_RE = re.compile(ABSOLUTE_IRI_PATTERN + r"\Z")

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNESCAPES = {v: k for k, v in _ESCAPES.items()}
_UNESCAPE_RE = re.compile(r'\\(["\\nrt])')


def is_var(term: object) -> bool:
    return type(term) is Var


def iri(value: str) -> str:
    """The constant for an IRI."""
    return f"<{value}>"


_NEEDS_ESCAPE = re.compile(r'[\\"\n\r\t]')


def string(value: str) -> str:
    """The constant for a plain string literal."""
    if _NEEDS_ESCAPE.search(value) is None:  # the common case: nothing to escape
        return f'"{value}"'
    return '"' + "".join(_ESCAPES.get(ch, ch) for ch in value) + '"'


def string_value(const: str) -> str:
    """The text of a plain string constant (inverse of :func:`string`)."""
    return _UNESCAPE_RE.sub(lambda m: _UNESCAPES["\\" + m.group(1)], const[1:-1])


def is_iri(const: object) -> bool:
    return type(const) is str and const.startswith("<")


def is_string(const: object) -> bool:
    return type(const) is str and const.startswith('"')


def is_number(const: object) -> bool:
    return type(const) is int or type(const) is Decimal


def format_decimal(value: Decimal) -> str:
    """Canonical decimal text: no exponent, no trailing zeros, at least one fractional digit."""
    text = format(value, "f")
    if "." not in text:
        return text + ".0"
    text = text.rstrip("0")
    return text + "0" if text.endswith(".") else text


def format_term(term: Term) -> str:
    kind = type(term)
    if kind is str:
        return term  # type: ignore[return-value]
    if kind is int:
        return str(term)
    if kind is Decimal:
        return format_decimal(term)  # type: ignore[arg-type]
    if kind is Var:
        return term.name  # type: ignore[union-attr]
    if kind is bool:
        raise TypeError("booleans are not terms")
    raise TypeError(f"not a term: {term!r}")

