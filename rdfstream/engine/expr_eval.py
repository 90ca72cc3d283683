"""SPARQL 1.1 expression evaluation over engine constants (SPARQL 1.1 §17, aggregates §18.5, ORDER BY §15.1).

Values are engine constants (:mod:`rdfstream.terms`): ``int`` and ``Decimal`` are canonical ``xsd:integer`` and
``xsd:decimal``; every other literal is its N-Triples form, parsed here on demand (and cached).  A SPARQL error
(unbound variable, type error, ...) is an :class:`ExprError`; FILTER turns it into false, BIND into unbound.

Expressions are compiled once into closures (:func:`compile_expr`); :func:`evaluate` keeps a small cache of
compiled expressions so callers that evaluate the same node repeatedly need not hold on to the closure.

Choices where SPARQL leaves room (XPath "implementation-defined" or operator extensibility, §17.3.1):

* ``=`` on two literals of known but different value spaces (a number and a string, two language tags) is
  false rather than a type error; it is an error when either datatype is unknown or a lexical form is invalid,
  unless the two are the same term.
* A ``xsd:dateTime`` without a timezone is compared as if in UTC (the implicit timezone of XPath).
* ``xsd:float`` arithmetic is done in double precision; decimals use 28 significant digits.
* MIN, MAX, SAMPLE and GROUP_CONCAT skip the rows where their argument errs (COUNT must; SUM and AVG err).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Iterable, Mapping
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal, DecimalException
from functools import lru_cache
from typing import NamedTuple, Protocol
from urllib.parse import quote

from ..ir.expr import (
    Aggregate,
    And,
    Arith,
    Call,
    Cast,
    Compare,
    Expr,
    In,
    Neg,
    Not,
    Or,
    Pos,
    Value,
    VarRef,
)
from ..rdfterms import days_from_civil, days_in_month, literal_const
from ..terms import Const, format_decimal, string, string_value

Binding = Mapping[str, Const]


class ExprError(Exception):
    """A SPARQL expression evaluation error (unbound variable, type error, invalid argument)."""


class EvalContext(Protocol):
    def timestamp(self, s: Const, p: Const, o: Const) -> int | None: ...


Compiled = Callable[[Binding, "EvalContext | None"], Const]

XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_STRING = XSD + "string"
XSD_BOOLEAN = XSD + "boolean"
XSD_INTEGER = XSD + "integer"
XSD_DECIMAL = XSD + "decimal"
XSD_FLOAT = XSD + "float"
XSD_DOUBLE = XSD + "double"
XSD_DATETIME = XSD + "dateTime"
XSD_DATE = XSD + "date"
XSD_DAYTIMEDURATION = XSD + "dayTimeDuration"
RDF_LANGSTRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"

TRUE = literal_const("true", None, XSD_BOOLEAN)
FALSE = literal_const("false", None, XSD_BOOLEAN)

# ---------------------------------------------------------------------------------------------------------------
# Typed views of constants

# numeric ranks of the promotion order integer -> decimal -> float -> double
INTEGER, DECIMAL, FLOAT, DOUBLE = 0, 1, 2, 3
_RANK_TYPE = {INTEGER: XSD_INTEGER, DECIMAL: XSD_DECIMAL, FLOAT: XSD_FLOAT, DOUBLE: XSD_DOUBLE}

_INTEGER_TYPES: dict[str, tuple[int | None, int | None]] = {
    XSD_INTEGER: (None, None),
    XSD + "nonPositiveInteger": (None, 0),
    XSD + "negativeInteger": (None, -1),
    XSD + "long": (-(2**63), 2**63 - 1),
    XSD + "int": (-(2**31), 2**31 - 1),
    XSD + "short": (-(2**15), 2**15 - 1),
    XSD + "byte": (-128, 127),
    XSD + "nonNegativeInteger": (0, None),
    XSD + "unsignedLong": (0, 2**64 - 1),
    XSD + "unsignedInt": (0, 2**32 - 1),
    XSD + "unsignedShort": (0, 2**16 - 1),
    XSD + "unsignedByte": (0, 2**8 - 1),
    XSD + "positiveInteger": (1, None),
}

_INTEGER_RE = re.compile(r"[+-]?[0-9]+\Z")
_DECIMAL_RE = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)\Z")
# rdflib writes infinities and NaN as Python does ("inf", "nan"); XSD as "INF", "NaN"
_DOUBLE_RE = re.compile(r"[+-]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|INF|inf)\Z|NaN\Z|nan\Z")
_DATETIME_RE = re.compile(
    r"(-?[0-9]{4,})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2}(?:\.[0-9]+)?)(Z|[+-][0-9]{2}:[0-9]{2})?\Z"
)
_DATE_RE = re.compile(r"(-?[0-9]{4,})-([0-9]{2})-([0-9]{2})(Z|[+-][0-9]{2}:[0-9]{2})?\Z")
_LITERAL_RE = re.compile(r'(".*")(?:@([A-Za-z0-9\-]+)|\^\^<([^>]*)>)?\Z', re.S)
_LANG_TAG_RE = re.compile(r"[A-Za-z]+(-[A-Za-z0-9]+)*\Z")
_IRI_BAD_RE = re.compile(r'[\x00-\x20<>"{}|^`\\]')

# decimal arithmetic with Python's default precision (as rdflib), trapping what XPath calls errors
_DEC = Context(prec=28)


class Lit(NamedTuple):
    """A literal's lexical form, language tag (or None) and datatype IRI (None for a simple literal)."""

    lex: str
    lang: str | None
    datatype: str | None


@lru_cache(maxsize=1 << 16)
def _parse_literal(const: str) -> Lit | None:
    if const.startswith('"'):
        match = _LITERAL_RE.match(const)
        if match is None:
            raise ExprError(f"malformed literal constant {const}")
        quoted, lang, datatype = match.groups()
        return Lit(string_value(quoted), lang, datatype)
    if const.startswith("<") or const.startswith("_:"):
        return None
    return Lit(const, None, None)  # a bare LARS name: a plain string, as rdfterms.to_rdflib has it


def literal(value: Const) -> Lit | None:
    """The literal view of a constant; None for IRIs and blank nodes."""
    kind = type(value)
    if kind is int:
        return Lit(str(value), None, XSD_INTEGER)
    if kind is Decimal:
        return Lit(format_decimal(value), None, XSD_DECIMAL)  # type: ignore[arg-type]
    return _parse_literal(value)  # type: ignore[arg-type]


def is_iri(value: Const) -> bool:
    return type(value) is str and value.startswith("<")  # type: ignore[union-attr]


def is_blank(value: Const) -> bool:
    return type(value) is str and value.startswith("_:")  # type: ignore[union-attr]


Num = tuple[int, int | Decimal | float]  # (rank, value)


@lru_cache(maxsize=1 << 16)
def _parse_number(lex: str, datatype: str) -> Num | None:
    lex = lex.strip()
    bounds = _INTEGER_TYPES.get(datatype)
    if bounds is not None:
        if not _INTEGER_RE.match(lex):
            return None
        value = int(lex)
        low, high = bounds
        if (low is not None and value < low) or (high is not None and value > high):
            return None
        return INTEGER, value
    if datatype == XSD_DECIMAL:
        return (DECIMAL, Decimal(lex)) if _DECIMAL_RE.match(lex) else None
    if datatype in (XSD_DOUBLE, XSD_FLOAT):
        if not _DOUBLE_RE.match(lex):
            return None
        return (DOUBLE if datatype == XSD_DOUBLE else FLOAT), float(lex)
    return None


def numeric(value: Const) -> Num | None:
    """(rank, Python number) of a numeric literal with a valid lexical form, else None."""
    kind = type(value)
    if kind is int:
        return INTEGER, value  # type: ignore[return-value]
    if kind is Decimal:
        return DECIMAL, value  # type: ignore[return-value]
    lit = _parse_literal(value)  # type: ignore[arg-type]
    if lit is None or lit.datatype is None:
        return None
    return _parse_number(lit.lex, lit.datatype)


def is_numeric_type(datatype: str | None) -> bool:
    return datatype in _INTEGER_TYPES or datatype in (XSD_DECIMAL, XSD_FLOAT, XSD_DOUBLE)


def _float(value: int | Decimal | float) -> float:
    try:
        return float(value)
    except OverflowError:  # an integer beyond the double range
        return math.inf if value > 0 else -math.inf


def _promote(value: int | Decimal | float, rank: int) -> int | Decimal | float:
    if rank >= FLOAT:
        return _float(value)
    if rank == DECIMAL and type(value) is int:
        return Decimal(value)
    return value


def _float_lex(value: float) -> str:
    return repr(float(value))  # what rdflib writes for Literal(value, datatype=xsd:double)


def make_number(rank: int, value: int | Decimal | float) -> Const:
    """The canonical constant of a number of the given rank."""
    if rank == INTEGER:
        return int(value)
    if rank == DECIMAL:
        if value == 0:
            return Decimal("0.0")  # not "-0.0"
        return Decimal(format_decimal(value))  # type: ignore[arg-type]
    return literal_const(_float_lex(value), None, _RANK_TYPE[rank])  # type: ignore[arg-type]


def _tz_minutes(tz: str | None) -> int | None:
    if not tz:
        return None
    if tz == "Z":
        return 0
    hours, minutes = int(tz[1:3]), int(tz[4:6])
    if hours > 14 or minutes > 59 or (hours == 14 and minutes):
        raise ValueError(tz)
    return (hours * 60 + minutes) * (-1 if tz[0] == "-" else 1)


class DateTime(NamedTuple):
    year: int
    month: int
    day: int
    hour: int
    minute: int
    second: Decimal
    tz: int | None  # offset in minutes
    tz_text: str  # the timezone as written in the lexical form ("" when absent)

    def instant(self) -> Decimal:
        """Seconds since the epoch; without a timezone, UTC (the implicit timezone)."""
        hours = days_from_civil(self.year, self.month, self.day) * 24 + self.hour
        minutes = hours * 60 + self.minute - (self.tz or 0)
        return minutes * 60 + self.second


@lru_cache(maxsize=1 << 12)
def _parse_datetime(lex: str, with_time: bool) -> DateTime | None:
    match = (_DATETIME_RE if with_time else _DATE_RE).match(lex.strip())
    if match is None:
        return None
    if with_time:
        y, mo, d, h, mi, s, tz = match.groups()
    else:
        (y, mo, d, tz), h, mi, s = match.groups(), "0", "0", "0"
    try:
        year, month, day, hour, minute, second = int(y), int(mo), int(d), int(h), int(mi), Decimal(s)
        offset = _tz_minutes(tz)
    except ValueError:
        return None
    if not 1 <= month <= 12 or not 1 <= day <= days_in_month(year, month):
        return None
    if hour == 24 and minute == 0 and second == 0:  # 24:00:00 is the first instant of the next day
        return _shift_midnight(year, month, day, offset, tz or "")
    if hour > 23 or minute > 59 or second >= 60:
        return None
    return DateTime(year, month, day, hour, minute, second, offset, tz or "")


def _shift_midnight(year: int, month: int, day: int, offset: int | None, tz: str) -> DateTime:
    day += 1
    if day > days_in_month(year, month):
        day, month = 1, month + 1
        if month > 12:
            month, year = 1, year + 1
    return DateTime(year, month, day, 0, 0, Decimal(0), offset, tz)


def datetime_of(value: Const) -> DateTime | None:
    lit = literal(value)
    if lit is None or lit.datatype != XSD_DATETIME:
        return None
    return _parse_datetime(lit.lex, True)


_BOOLEAN_LEX = {"true": True, "1": True, "false": False, "0": False}


def _boolean_of(lit: Lit) -> bool | None:
    return _BOOLEAN_LEX.get(lit.lex.strip())


# Value categories: values of the same category compare by value; "other" and "bad" (an invalid lexical form)
# are literals whose value we do not know.
_KNOWN = frozenset(("num", "str", "lang", "bool", "dateTime", "date"))
_ORDERED = frozenset(("num", "str", "bool", "dateTime", "date"))
_LITERAL_KINDS = _KNOWN | {"other", "bad"}


def _category(value: Const) -> tuple[str, object]:
    kind = type(value)
    if kind is int:
        return "num", (INTEGER, value)
    if kind is Decimal:
        return "num", (DECIMAL, value)
    lit = _parse_literal(value)  # type: ignore[arg-type]
    if lit is None:
        return ("iri", value) if value.startswith("<") else ("bnode", value)  # type: ignore[union-attr]
    if lit.lang:
        return "lang", (lit.lex, lit.lang.lower())
    datatype = lit.datatype
    if datatype is None or datatype == XSD_STRING:
        return "str", lit.lex
    if is_numeric_type(datatype):
        num = _parse_number(lit.lex, datatype)
        return ("num", num) if num is not None else ("bad", None)
    if datatype == XSD_BOOLEAN:
        flag = _boolean_of(lit)
        return ("bool", flag) if flag is not None else ("bad", None)
    if datatype in (XSD_DATETIME, XSD_DATE):
        parsed = _parse_datetime(lit.lex, datatype == XSD_DATETIME)
        if parsed is None:
            return "bad", None
        return ("dateTime" if datatype == XSD_DATETIME else "date"), parsed.instant()
    return "other", None


def same_term(a: Const, b: Const) -> bool:
    # int 1 and Decimal 1.0 are equal in Python but distinct RDF terms
    return type(a) is type(b) and a == b


def _bool(flag: bool) -> Const:
    return TRUE if flag else FALSE


# ---------------------------------------------------------------------------------------------------------------
# Effective boolean value, comparison, arithmetic


def ebv(value: Const) -> bool:
    """The effective boolean value (SPARQL 1.1 §17.2.2); ExprError where it is undefined."""
    kind = type(value)
    if kind is int or kind is Decimal:
        return value != 0
    lit = _parse_literal(value)  # type: ignore[arg-type]
    if lit is None:
        raise ExprError(f"no effective boolean value for {value}")
    if lit.lang or lit.datatype is None or lit.datatype == XSD_STRING:
        return lit.lex != ""
    if lit.datatype == XSD_BOOLEAN:
        return bool(_boolean_of(lit))  # an invalid lexical form is false
    if is_numeric_type(lit.datatype):
        num = _parse_number(lit.lex, lit.datatype)
        return num is not None and num[1] == num[1] and num[1] != 0  # NaN (x != x) is false
    raise ExprError(f"no effective boolean value for {value}")


def _num_pair(x: Num, y: Num) -> tuple[int, int | Decimal | float, int | Decimal | float]:
    rank = max(x[0], y[0])
    return rank, _promote(x[1], rank), _promote(y[1], rank)


def equal(a: Const, b: Const) -> bool:
    """SPARQL ``=``: value equality for known datatypes, RDF term equality otherwise."""
    if same_term(a, b) and type(a) is not str:
        return True  # canonical numbers (NaN never is one)
    ka, va = _category(a)
    kb, vb = _category(b)
    if ka == kb and ka in _KNOWN:
        if ka == "num":
            _, x, y = _num_pair(va, vb)  # type: ignore[arg-type]
            return x == y
        return va == vb
    if a == b:
        return True
    if ka in _LITERAL_KINDS and kb in _LITERAL_KINDS and (ka not in _KNOWN or kb not in _KNOWN):
        raise ExprError(f"cannot compare {a} and {b}")
    return False


_ORDER_OPS: dict[str, Callable[[object, object], bool]] = {
    "<": lambda x, y: x < y,  # type: ignore[operator]
    "<=": lambda x, y: x <= y,  # type: ignore[operator]
    ">": lambda x, y: x > y,  # type: ignore[operator]
    ">=": lambda x, y: x >= y,  # type: ignore[operator]
}


def compare(op: str, a: Const, b: Const) -> bool:
    """SPARQL ``= != < <= > >=`` (§17.3); ExprError for operands the operator does not apply to."""
    if op == "=":
        return equal(a, b)
    if op == "!=":
        return not equal(a, b)
    ka, va = _category(a)
    kb, vb = _category(b)
    if ka != kb or ka not in _ORDERED:
        raise ExprError(f"cannot order {a} and {b}")
    if ka == "num":
        _, va, vb = _num_pair(va, vb)  # type: ignore[arg-type]
    return _ORDER_OPS[op](va, vb)


def _numeric_arg(value: Const) -> Num:
    num = numeric(value)
    if num is None:
        raise ExprError(f"not a number: {value}")
    return num


def _float_divide(x: float, y: float) -> float:
    if y == 0:  # IEEE 754: x/0 is an infinity (NaN for 0/0 and NaN/0)
        if x != x or x == 0:
            return math.nan
        return math.copysign(math.inf, x) * math.copysign(1.0, y)
    return x / y


def arith(op: str, a: Const, b: Const) -> Const:
    """op:numeric-add/-subtract/-multiply/-divide with type promotion; integer / integer is a decimal."""
    rank, x, y = _num_pair(_numeric_arg(a), _numeric_arg(b))
    if op == "/" and rank == INTEGER:
        rank, x, y = DECIMAL, Decimal(x), Decimal(y)
    try:
        if rank >= FLOAT:
            if op == "/":
                return make_number(rank, _float_divide(x, y))  # type: ignore[arg-type]
            result = x + y if op == "+" else x - y if op == "-" else x * y  # type: ignore[operator]
            return make_number(rank, result)
        if rank == INTEGER:
            return x + y if op == "+" else x - y if op == "-" else x * y  # type: ignore[operator,return-value]
        if op == "+":
            return make_number(DECIMAL, _DEC.add(x, y))  # type: ignore[arg-type]
        if op == "-":
            return make_number(DECIMAL, _DEC.subtract(x, y))  # type: ignore[arg-type]
        if op == "*":
            return make_number(DECIMAL, _DEC.multiply(x, y))  # type: ignore[arg-type]
        if y == 0:
            raise ExprError("division by zero")
        return make_number(DECIMAL, _DEC.divide(x, y))  # type: ignore[arg-type]
    except (DecimalException, OverflowError) as exc:
        raise ExprError(f"arithmetic error: {a} {op} {b}") from exc


def negate(value: Const) -> Const:
    rank, x = _numeric_arg(value)
    return make_number(rank, -x)


# ---------------------------------------------------------------------------------------------------------------
# ORDER BY


def order_key(value: Const | None) -> tuple:
    """A sort key for SPARQL ORDER BY (§15.1): unbound < blank nodes < IRIs < literals; within literals numbers
    by value, then booleans, dateTimes, dates, strings (simple before xsd:string), language-tagged strings and
    other literals; ties broken by term so the order is total and deterministic."""
    if value is None:
        return (0,)
    kind, val = _category(value)
    if kind == "bnode":
        return 1, value
    if kind == "iri":
        return 2, value
    lit = literal(value)
    assert lit is not None
    if kind == "num":
        rank, number = val  # type: ignore[misc]
        if number != number:
            return 3, 0, 0, 0, rank, lit.lex  # NaN before every number
        return 3, 0, 1, number, rank, lit.lex
    if kind == "bool":
        return 3, 1, val, lit.lex
    if kind == "dateTime":
        return 3, 2, val, lit.lex
    if kind == "date":
        return 3, 3, val, lit.lex
    if kind == "str":
        return 3, 4, lit.lex, lit.datatype is not None
    if kind == "lang":
        return 3, 5, lit.lex, lit.lang
    return 3, 6, lit.datatype, lit.lex


def order_compare(a: Const | None, b: Const | None) -> int:
    """-1, 0 or 1 as ``a`` sorts before, with or after ``b`` (see :func:`order_key`)."""
    ka, kb = order_key(a), order_key(b)
    return (ka > kb) - (ka < kb)


# ---------------------------------------------------------------------------------------------------------------
# Built-in functions (§17.4).  Each takes the evaluated arguments.


def _lit_arg(value: Const) -> Lit:
    lit = literal(value)
    if lit is None:
        raise ExprError(f"not a literal: {value}")
    return lit


def _string_arg(value: Const) -> Lit:
    """A string literal: simple, xsd:string or language-tagged."""
    lit = literal(value)
    if lit is None or not (lit.lang or lit.datatype is None or lit.datatype == XSD_STRING):
        raise ExprError(f"not a string literal: {value}")
    return lit


def _simple_arg(value: Const) -> Lit:
    """A simple literal or xsd:string (no language tag)."""
    lit = _string_arg(value)
    if lit.lang:
        raise ExprError(f"a language-tagged string is not allowed here: {value}")
    return lit


def _compatible(a: Const, b: Const) -> tuple[Lit, Lit]:
    """Argument compatibility of §17.4.3.1.2: b has no language tag or the same one as a."""
    x, y = _string_arg(a), _string_arg(b)
    if y.lang and y.lang.lower() != (x.lang or "").lower():
        raise ExprError(f"incompatible string arguments {a} and {b}")
    return x, y


def _like(text: str, model: Lit) -> Const:
    """A string literal of the same kind (language tag, xsd:string or simple) as ``model``."""
    return literal_const(text, model.lang, model.datatype)


def _fn_str(value: Const) -> Const:
    if is_iri(value):
        return string(value[1:-1])  # type: ignore[index]
    return string(_lit_arg(value).lex)


def _fn_lang(value: Const) -> Const:
    return string(_lit_arg(value).lang or "")


def _fn_datatype(value: Const) -> Const:
    lit = _lit_arg(value)
    if lit.lang:
        return f"<{RDF_LANGSTRING}>"
    return f"<{lit.datatype or XSD_STRING}>"


def _fn_iri(value: Const) -> Const:
    if is_iri(value):
        return value
    text = _simple_arg(value).lex
    if _IRI_BAD_RE.search(text):
        raise ExprError(f"not an IRI: {text!r}")
    return f"<{text}>"


def _fn_langmatches(tag: Const, range_: Const) -> Const:
    # RFC 4647 basic filtering, as SPARQL's langMatches: '*' matches any non-empty tag, else prefix on '-'
    t, r = _simple_arg(tag).lex.lower(), _simple_arg(range_).lex.lower()
    if r == "*":
        return _bool(t != "")
    return _bool(t == r or t.startswith(r + "-"))


def _fn_strdt(lex: Const, datatype: Const) -> Const:
    if not is_iri(datatype):
        raise ExprError(f"STRDT needs a datatype IRI, not {datatype}")
    lit = _simple_arg(lex)
    return literal_const(lit.lex, None, datatype[1:-1])  # type: ignore[index]


def _fn_strlang(lex: Const, tag: Const) -> Const:
    text, lang = _simple_arg(lex).lex, _simple_arg(tag).lex
    if not _LANG_TAG_RE.match(lang):
        raise ExprError(f"not a language tag: {lang!r}")
    return literal_const(text, lang)


def _xpath_flags(flags: str) -> int:
    out = 0
    for flag in flags:
        if flag not in _REGEX_FLAGS:
            raise ExprError(f"unknown regex flag {flag!r}")
        out |= _REGEX_FLAGS[flag]
    return out


_REGEX_FLAGS = {"i": re.IGNORECASE, "s": re.DOTALL, "m": re.MULTILINE, "x": re.VERBOSE, "q": 0}


@lru_cache(maxsize=256)
def _regex(pattern: str, flags: str) -> re.Pattern[str]:
    try:
        return re.compile(re.escape(pattern) if "q" in flags else pattern, _xpath_flags(flags))
    except re.error as exc:
        raise ExprError(f"invalid regular expression {pattern!r}: {exc}") from exc


def _flags_arg(flags: Const | None) -> str:
    return "" if flags is None else _simple_arg(flags).lex


def _fn_regex(text: Const, pattern: Const, flags: Const | None = None) -> Const:
    compiled = _regex(_simple_arg(pattern).lex, _flags_arg(flags))
    return _bool(compiled.search(_string_arg(text).lex) is not None)


_REPLACEMENT_RE = re.compile(r"\\(.)|\$([0-9]+)|(\\|\$)", re.S)


def _fn_replace(text: Const, pattern: Const, replacement: Const, flags: Const | None = None) -> Const:
    lit = _string_arg(text)
    compiled = _regex(_simple_arg(pattern).lex, _flags_arg(flags))
    if compiled.fullmatch(""):
        raise ExprError("REPLACE pattern matches the empty string")  # XPath err:FORX0003
    template = _simple_arg(replacement).lex
    if "q" in _flags_arg(flags):
        return _like(compiled.sub(lambda _: template, lit.lex), lit)

    def expand(match: re.Match[str]) -> str:
        def part(piece: re.Match[str]) -> str:
            escaped, group, bare = piece.groups()
            if bare is not None or (escaped is not None and escaped not in "\\$"):
                raise ExprError(f"invalid replacement string {template!r}")
            if escaped is not None:
                return escaped
            # $N takes as many digits as still name a group (XPath fn:replace)
            digits = group
            while len(digits) > 1 and int(digits) > compiled.groups:
                digits = digits[:-1]
            number = int(digits)
            captured = match.group(number) if number <= compiled.groups else ""
            return (captured or "") + group[len(digits) :]

        return _REPLACEMENT_RE.sub(part, template)

    return _like(compiled.sub(expand, lit.lex), lit)


def _fn_substr(text: Const, start: Const, length: Const | None = None) -> Const:
    lit = _string_arg(text)
    first = _round_half_up(_numeric_arg(start)[1])
    end = math.inf if length is None else first + _round_half_up(_numeric_arg(length)[1])
    # XPath fn:substring: the characters at 1-based positions p with first <= p < end
    if first != first or end != end:
        return _like("", lit)
    low = max(first, 1)
    high = min(end, len(lit.lex) + 1)
    return _like(lit.lex[int(low) - 1 : int(high) - 1] if low < high else "", lit)


def _round_half_up(value: int | Decimal | float) -> int | Decimal | float:
    if type(value) is int:
        return value
    if type(value) is float:
        if value != value or value in (math.inf, -math.inf):
            return value
        value = Decimal(value)  # exact, so that 0.49999999999999994 rounds down
    return int((value + Decimal("0.5")).to_integral_value(rounding=ROUND_FLOOR))  # type: ignore[operator]


def _fn_strlen(text: Const) -> Const:
    return len(_string_arg(text).lex)


def _fn_ucase(text: Const) -> Const:
    lit = _string_arg(text)
    return _like(lit.lex.upper(), lit)


def _fn_lcase(text: Const) -> Const:
    lit = _string_arg(text)
    return _like(lit.lex.lower(), lit)


def _fn_encode_for_uri(text: Const) -> Const:
    return string(quote(_string_arg(text).lex, safe=""))


def _fn_contains(a: Const, b: Const) -> Const:
    x, y = _compatible(a, b)
    return _bool(y.lex in x.lex)


def _fn_strstarts(a: Const, b: Const) -> Const:
    x, y = _compatible(a, b)
    return _bool(x.lex.startswith(y.lex))


def _fn_strends(a: Const, b: Const) -> Const:
    x, y = _compatible(a, b)
    return _bool(x.lex.endswith(y.lex))


def _fn_strbefore(a: Const, b: Const) -> Const:
    x, y = _compatible(a, b)
    index = x.lex.find(y.lex)
    return string("") if index < 0 else _like(x.lex[:index], x)


def _fn_strafter(a: Const, b: Const) -> Const:
    x, y = _compatible(a, b)
    index = x.lex.find(y.lex)
    return string("") if index < 0 else _like(x.lex[index + len(y.lex) :], x)


def _fn_concat(*parts: Const) -> Const:
    lits = [_string_arg(p) for p in parts]
    text = "".join(lit.lex for lit in lits)
    langs = {lit.lang for lit in lits}
    if len(langs) == 1 and None not in langs:
        return literal_const(text, langs.pop())
    if lits and all(lit.datatype == XSD_STRING for lit in lits):
        return literal_const(text, None, XSD_STRING)
    return string(text)


def _fn_abs(value: Const) -> Const:
    rank, x = _numeric_arg(value)
    return make_number(rank, abs(x))


def _fn_round(value: Const) -> Const:
    rank, x = _numeric_arg(value)
    if rank == INTEGER:
        return x
    rounded = _round_half_up(x)
    if rank >= FLOAT:
        # fn:round keeps the sign of a zero result: round(-0.4) is -0.0
        return make_number(rank, math.copysign(float(rounded), x) if rounded == 0 else float(rounded))
    return make_number(rank, Decimal(rounded))


def _rounding(mode: str, fn: Callable[[float], int]) -> Callable[[Const], Const]:
    def apply(value: Const) -> Const:
        rank, x = _numeric_arg(value)
        if rank == INTEGER:
            return x
        if rank == DECIMAL:
            return make_number(rank, x.to_integral_value(rounding=mode))  # type: ignore[union-attr]
        if x != x or x in (math.inf, -math.inf):
            return make_number(rank, x)
        result = float(fn(x))  # type: ignore[arg-type]
        return make_number(rank, math.copysign(result, x) if result == 0 else result)

    return apply


def _datetime_arg(value: Const) -> DateTime:
    parsed = datetime_of(value)
    if parsed is None:
        raise ExprError(f"not an xsd:dateTime: {value}")
    return parsed


def _fn_timezone(value: Const) -> Const:
    offset = _datetime_arg(value).tz
    if offset is None:
        raise ExprError(f"no timezone in {value}")
    hours, minutes = divmod(abs(offset), 60)
    text = ("-" if offset < 0 else "") + "PT" + (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
    return literal_const(text if offset else "PT0S", None, XSD_DAYTIMEDURATION)


def _fn_tz(value: Const) -> Const:
    parsed = _datetime_arg(value)
    # the canonical form of the timezone: "Z" for UTC however written, else as written (+hh:mm / -hh:mm)
    return string("Z" if parsed.tz == 0 else parsed.tz_text)


def _hash(algorithm: str) -> Callable[[Const], Const]:
    def apply(value: Const) -> Const:
        return string(hashlib.new(algorithm, _simple_arg(value).lex.encode("utf-8")).hexdigest())

    return apply


def _fn_sameterm(a: Const, b: Const) -> Const:
    return _bool(same_term(a, b))


def _fn_isnumeric(value: Const) -> Const:
    return _bool(numeric(value) is not None)


_FUNCTIONS: dict[str, Callable[..., Const]] = {
    "isiri": lambda v: _bool(is_iri(v)),
    "isblank": lambda v: _bool(is_blank(v)),
    "isliteral": lambda v: _bool(literal(v) is not None),
    "isnumeric": _fn_isnumeric,
    "str": _fn_str,
    "lang": _fn_lang,
    "datatype": _fn_datatype,
    "iri": _fn_iri,
    "langmatches": _fn_langmatches,
    "sameterm": _fn_sameterm,
    "strdt": _fn_strdt,
    "strlang": _fn_strlang,
    "regex": _fn_regex,
    "replace": _fn_replace,
    "strlen": _fn_strlen,
    "ucase": _fn_ucase,
    "lcase": _fn_lcase,
    "encode_for_uri": _fn_encode_for_uri,
    "contains": _fn_contains,
    "strstarts": _fn_strstarts,
    "strends": _fn_strends,
    "strbefore": _fn_strbefore,
    "strafter": _fn_strafter,
    "concat": _fn_concat,
    "substr": _fn_substr,
    "abs": _fn_abs,
    "round": _fn_round,
    "ceil": _rounding(ROUND_CEILING, math.ceil),
    "floor": _rounding(ROUND_FLOOR, math.floor),
    "year": lambda v: _datetime_arg(v).year,
    "month": lambda v: _datetime_arg(v).month,
    "day": lambda v: _datetime_arg(v).day,
    "hours": lambda v: _datetime_arg(v).hour,
    "minutes": lambda v: _datetime_arg(v).minute,
    "seconds": lambda v: make_number(DECIMAL, _datetime_arg(v).second),
    "timezone": _fn_timezone,
    "tz": _fn_tz,
    "md5": _hash("md5"),
    "sha1": _hash("sha1"),
    "sha256": _hash("sha256"),
    "sha384": _hash("sha384"),
    "sha512": _hash("sha512"),
}

# ---------------------------------------------------------------------------------------------------------------
# Casts (§17.5, XPath casting)


def _cast_string(value: Const) -> Const:
    if is_iri(value):
        return literal_const(value[1:-1], None, XSD_STRING)  # type: ignore[index]
    lit = _lit_arg(value)
    if lit.lang:
        raise ExprError(f"cannot cast a language-tagged string: {value}")
    return literal_const(lit.lex, None, XSD_STRING)


def _cast_source(value: Const) -> tuple[str, object, Lit]:
    """(category, value, literal) of a cast operand; IRIs, blank nodes, tagged strings, unknown types fail."""
    lit = literal(value)
    if lit is None or lit.lang:
        raise ExprError(f"cannot cast {value}")
    kind, val = _category(value)
    if kind not in _KNOWN:
        raise ExprError(f"cannot cast {value}")
    return kind, val, lit


def _number_from_string(lex: str, target: str) -> Num:
    lex = lex.strip()
    num = _parse_number(lex, target)
    if num is None:
        raise ExprError(f"cannot cast {lex!r} to <{target}>")
    return num


def _cast_number(target: str, rank: int) -> Callable[[Const], Const]:
    def apply(value: Const) -> Const:
        kind, val, lit = _cast_source(value)
        if kind == "str":
            return make_number(rank, _number_from_string(lit.lex, target)[1])
        if kind == "bool":
            return make_number(rank, int(val))  # type: ignore[call-overload]
        if kind != "num":
            raise ExprError(f"cannot cast {value} to <{target}>")
        x = val[1]  # type: ignore[index]
        if rank >= FLOAT:
            return make_number(rank, _float(x))
        if type(x) is float:
            if x != x or x in (math.inf, -math.inf):
                raise ExprError(f"cannot cast {value} to <{target}>")
            x = Decimal(repr(x))  # the shortest decimal that reads back as x
        if rank == INTEGER:
            return int(x)  # truncation towards zero
        return make_number(DECIMAL, Decimal(x))

    return apply


def _cast_boolean(value: Const) -> Const:
    kind, val, lit = _cast_source(value)
    if kind == "bool":
        return _bool(val)  # type: ignore[arg-type]
    if kind == "num":
        x = val[1]  # type: ignore[index]
        return _bool(x == x and x != 0)
    if kind == "str" and lit.lex.strip() in _BOOLEAN_LEX:
        return _bool(_BOOLEAN_LEX[lit.lex.strip()])
    raise ExprError(f"cannot cast {value} to xsd:boolean")


def _cast_datetime(value: Const) -> Const:
    kind, _, lit = _cast_source(value)
    if kind == "dateTime":
        return value
    if kind == "str" and _parse_datetime(lit.lex, True) is not None:
        return literal_const(lit.lex.strip(), None, XSD_DATETIME)
    raise ExprError(f"cannot cast {value} to xsd:dateTime")


_CASTS: dict[str, Callable[[Const], Const]] = {
    XSD_STRING: _cast_string,
    XSD_BOOLEAN: _cast_boolean,
    XSD_INTEGER: _cast_number(XSD_INTEGER, INTEGER),
    XSD_DECIMAL: _cast_number(XSD_DECIMAL, DECIMAL),
    XSD_FLOAT: _cast_number(XSD_FLOAT, FLOAT),
    XSD_DOUBLE: _cast_number(XSD_DOUBLE, DOUBLE),
    XSD_DATETIME: _cast_datetime,
}

# ---------------------------------------------------------------------------------------------------------------
# Compilation of expression trees into closures


def _compile_value(e: Value) -> Compiled:
    const = e.const
    return lambda b, ctx: const


def _compile_var(e: VarRef) -> Compiled:
    name = e.name

    def var(b: Binding, ctx: EvalContext | None) -> Const:
        try:
            return b[name]
        except KeyError:
            raise ExprError(f"?{name} is unbound") from None

    return var


def _compile_and(e: And) -> Compiled:
    parts = [compile_expr(a) for a in e.args]

    def conj(b: Binding, ctx: EvalContext | None) -> Const:
        # §17.2: false wins over an error, an error over true
        error: ExprError | None = None
        for part in parts:
            try:
                if not ebv(part(b, ctx)):
                    return FALSE
            except ExprError as exc:
                error = exc
        if error is not None:
            raise error
        return TRUE

    return conj


def _compile_or(e: Or) -> Compiled:
    parts = [compile_expr(a) for a in e.args]

    def disj(b: Binding, ctx: EvalContext | None) -> Const:
        # §17.2: true wins over an error, an error over false
        error: ExprError | None = None
        for part in parts:
            try:
                if ebv(part(b, ctx)):
                    return TRUE
            except ExprError as exc:
                error = exc
        if error is not None:
            raise error
        return FALSE

    return disj


def _compile_not(e: Not) -> Compiled:
    arg = compile_expr(e.arg)
    return lambda b, ctx: FALSE if ebv(arg(b, ctx)) else TRUE


def _compile_compare(e: Compare) -> Compiled:
    op, left, right = e.op, compile_expr(e.left), compile_expr(e.right)
    return lambda b, ctx: _bool(compare(op, left(b, ctx), right(b, ctx)))


def _compile_arith(e: Arith) -> Compiled:
    op, left, right = e.op, compile_expr(e.left), compile_expr(e.right)
    return lambda b, ctx: arith(op, left(b, ctx), right(b, ctx))


def _compile_neg(e: Neg) -> Compiled:
    arg = compile_expr(e.arg)
    return lambda b, ctx: negate(arg(b, ctx))


def _compile_pos(e: Pos) -> Compiled:
    arg = compile_expr(e.arg)

    def pos(b: Binding, ctx: EvalContext | None) -> Const:
        rank, x = _numeric_arg(arg(b, ctx))
        return make_number(rank, x)

    return pos


def _compile_in(e: In) -> Compiled:
    needle, options, negated = compile_expr(e.expr), [compile_expr(o) for o in e.options], e.negated

    def member(b: Binding, ctx: EvalContext | None) -> Const:
        # IN is a disjunction of '=' tests, NOT IN a conjunction of '!=' tests, with their error rules
        value = needle(b, ctx)
        error: ExprError | None = None
        for option in options:
            try:
                if equal(value, option(b, ctx)):
                    return FALSE if negated else TRUE
            except ExprError as exc:
                error = exc
        if error is not None:
            raise error
        return TRUE if negated else FALSE

    return member


def _compile_cast(e: Cast) -> Compiled:
    cast, arg = _CASTS[e.datatype], compile_expr(e.arg)
    return lambda b, ctx: cast(arg(b, ctx))


def _compile_call(e: Call) -> Compiled:
    name = e.name
    special = _SPECIAL_FORMS.get(name)
    if special is not None:
        return special(e)
    fn = _FUNCTIONS[name]
    args = [compile_expr(a) for a in e.args]
    if len(args) == 1:
        only = args[0]
        return lambda b, ctx: fn(only(b, ctx))
    return lambda b, ctx: fn(*[a(b, ctx) for a in args])


def _form_bound(e: Call) -> Compiled:
    name = e.args[0].name  # type: ignore[union-attr]  # checked by Call
    return lambda b, ctx: TRUE if name in b else FALSE


def _form_if(e: Call) -> Compiled:
    cond, then, other = (compile_expr(a) for a in e.args)
    return lambda b, ctx: then(b, ctx) if ebv(cond(b, ctx)) else other(b, ctx)


def _form_coalesce(e: Call) -> Compiled:
    args = [compile_expr(a) for a in e.args]

    def coalesce(b: Binding, ctx: EvalContext | None) -> Const:
        for arg in args:
            try:
                return arg(b, ctx)
            except ExprError:
                continue
        raise ExprError("COALESCE: every argument is an error")

    return coalesce


def _form_timestamp(e: Call) -> Compiled:
    s, p, o = (compile_expr(a) for a in e.args)

    def timestamp(b: Binding, ctx: EvalContext | None) -> Const:
        triple = s(b, ctx), p(b, ctx), o(b, ctx)
        stamp = None if ctx is None else ctx.timestamp(*triple)
        if stamp is None:
            raise ExprError("timestamp(): no such triple in the window")
        return stamp

    return timestamp


def _compile_aggregate(e: Aggregate) -> Compiled:
    def outside(b: Binding, ctx: EvalContext | None) -> Const:
        raise ExprError(f"{e} outside a group")

    return outside


_SPECIAL_FORMS: dict[str, Callable[[Call], Compiled]] = {
    "bound": _form_bound,
    "if": _form_if,
    "coalesce": _form_coalesce,
    "timestamp": _form_timestamp,
}

_COMPILERS: dict[type, Callable[[Expr], Compiled]] = {
    Value: _compile_value,
    VarRef: _compile_var,
    And: _compile_and,
    Or: _compile_or,
    Not: _compile_not,
    Compare: _compile_compare,
    Arith: _compile_arith,
    Neg: _compile_neg,
    Pos: _compile_pos,
    In: _compile_in,
    Cast: _compile_cast,
    Call: _compile_call,
    Aggregate: _compile_aggregate,
}  # type: ignore[dict-item]


def compile_expr(expr: Expr) -> Compiled:
    """A closure ``f(binding, ctx) -> Const`` evaluating ``expr``; it raises :class:`ExprError`."""
    return _COMPILERS[type(expr)](expr)


_cached = lru_cache(maxsize=1024)(compile_expr)


def evaluate(expr: Expr, binding: Binding, ctx: EvalContext | None = None) -> Const:
    """The value of ``expr`` under ``binding``; ExprError on a SPARQL evaluation error."""
    return _cached(expr)(binding, ctx)


def try_evaluate(expr: Expr, binding: Binding, ctx: EvalContext | None = None) -> Const | None:
    """The value, or None on error (BIND and SELECT expressions leave the variable unbound)."""
    try:
        return _cached(expr)(binding, ctx)
    except ExprError:
        return None


def filter_holds(expr: Expr, binding: Binding, ctx: EvalContext | None = None) -> bool:
    """FILTER semantics: the effective boolean value, an error counting as false."""
    try:
        return ebv(_cached(expr)(binding, ctx))
    except ExprError:
        return False


# ---------------------------------------------------------------------------------------------------------------
# Aggregates (§18.5.1)

_ERROR = object()  # an argument that erred on a row


def _term_key(value: object) -> tuple:
    return (type(value), value)  # term identity: 1 and 1.0 stay apart, as they are distinct terms


def _distinct(values: Iterable[object]) -> list[object]:
    seen: set[tuple] = set()
    out = []
    for value in values:
        key = _term_key(value)
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


def _sum(values: list[object]) -> Const:
    total: Const = 0
    for value in values:
        if value is _ERROR:
            raise ExprError("SUM over an error")
        total = arith("+", total, value)  # type: ignore[arg-type]  # 0 + x checks x is a number
    return total


def _group_text(value: Const) -> str:
    if is_iri(value):
        return value[1:-1]  # type: ignore[index]
    return _lit_arg(value).lex


def aggregate(agg: Aggregate, rows: Iterable[Binding], ctx: EvalContext | None = None) -> Const | None:
    """The value of ``agg`` over one group of solutions; None when it is an error (the variable stays unbound)."""
    rows = list(rows)
    if agg.arg is None:  # COUNT(*)
        if not agg.distinct:
            return len(rows)
        return len({frozenset((k, *_term_key(v)) for k, v in r.items()) for r in rows})
    arg = _cached(agg.arg)
    values: list[object] = []
    for row in rows:
        try:
            values.append(arg(row, ctx))
        except ExprError:
            values.append(_ERROR)
    if agg.distinct:
        values = _distinct(values)
    good: list[Const] = [v for v in values if v is not _ERROR]  # type: ignore[misc]
    try:
        name = agg.name
        if name == "count":
            return len(good)
        if name == "sum":
            return _sum(values)
        if name == "avg":
            return 0 if not values else arith("/", _sum(values), len(values))
        if name == "min":
            return min(good, key=order_key) if good else None
        if name == "max":
            return max(good, key=order_key) if good else None
        if name == "sample":
            return good[0] if good else None
        texts = []
        for value in good:
            try:
                texts.append(_group_text(value))
            except ExprError:
                continue  # a blank node has no string form
        return string((" " if agg.separator is None else agg.separator).join(texts))
    except ExprError:
        return None
