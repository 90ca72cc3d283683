"""rdflib's SPARQL algebra expressions -> :mod:`rdfstream.ir.expr` nodes.

rdflib (``parseQuery`` + ``translateQuery``) gives expressions as ``CompValue`` trees keyed by grammar rule
names, with ``Variable``/``URIRef``/``Literal`` leaves.  We translate them once, at registration, into typed
nodes over engine constants, so evaluation never touches rdflib.  Whatever we cannot evaluate is refused here
with an :class:`UnsupportedError` naming the construct, rather than failing (or silently erring) per solution.
"""

from __future__ import annotations

from typing import Any

from rdflib.namespace import RDF
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.term import BNode, Literal, URIRef, Variable

from ...errors import CompileError, UnsupportedError
from ...ir.expr import (
    CAST_TYPES,
    TIMESTAMP_IRI,
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
from ...rdfterms import from_rdflib, literal_const

XSD_BOOLEAN = "http://www.w3.org/2001/XMLSchema#boolean"
_TRUE = literal_const("true", None, XSD_BOOLEAN)

# rdflib rule name -> (our builtin name, the CompValue keys holding its arguments, in order)
_BUILTINS: dict[str, tuple[str, tuple[str, ...]]] = {
    "Builtin_REGEX": ("regex", ("text", "pattern", "flags")),
    "Builtin_SUBSTR": ("substr", ("arg", "start", "length")),
    "Builtin_REPLACE": ("replace", ("arg", "pattern", "replacement", "flags")),
    "Builtin_IF": ("if", ("arg1", "arg2", "arg3")),
    "Builtin_URI": ("iri", ("arg",)),
    "Builtin_isURI": ("isiri", ("arg",)),
}
for _name in ("LANGMATCHES", "sameTerm", "STRDT", "STRLANG", "CONTAINS", "STRSTARTS", "STRENDS", "STRBEFORE",
              "STRAFTER"):
    _BUILTINS[f"Builtin_{_name}"] = (_name.lower(), ("arg1", "arg2"))
for _name in ("STR", "LANG", "DATATYPE", "BOUND", "IRI", "ABS", "CEIL", "FLOOR", "ROUND", "STRLEN", "UCASE", "LCASE",
              "ENCODE_FOR_URI", "YEAR", "MONTH", "DAY", "HOURS", "MINUTES", "SECONDS", "TIMEZONE", "TZ", "MD5",
              "SHA1", "SHA256", "SHA384", "SHA512", "isIRI", "isBLANK", "isLITERAL", "isNUMERIC"):
    _BUILTINS[f"Builtin_{_name}"] = (_name.lower(), ("arg",))

_VARIADIC = {"Builtin_CONCAT": "concat", "Builtin_COALESCE": "coalesce"}

# Builtins whose value depends on more than the solution (fresh terms, the clock, randomness) or on graph
# patterns: they need the query evaluator, not the expression layer.
_REFUSED = {
    "Builtin_NOW": "NOW()",
    "Builtin_RAND": "RAND()",
    "Builtin_UUID": "UUID()",
    "Builtin_STRUUID": "STRUUID()",
    "Builtin_BNODE": "BNODE()",
    "Builtin_EXISTS": "EXISTS",
    "Builtin_NOTEXISTS": "NOT EXISTS",
}

_AGGREGATES = {
    "Aggregate_Count": "count",
    "Aggregate_Sum": "sum",
    "Aggregate_Avg": "avg",
    "Aggregate_Min": "min",
    "Aggregate_Max": "max",
    "Aggregate_Sample": "sample",
    "Aggregate_GroupConcat": "group_concat",
}


def _field(cv: CompValue, key: str) -> Any:
    # CompValue.get(key) defaults to the key itself, and attribute access evaluates; read the dict directly
    return dict.get(cv, key)


def _as_list(value: Any) -> list:
    """An rdflib ExpressionList: NIL for ``()``, else a list (the algebra may unwrap one-element lists)."""
    if value is None or (isinstance(value, URIRef) and value == RDF.nil):
        return []
    return list(value) if isinstance(value, list) else [value]


def translate_expr(cv: Any) -> Expr:
    """The expression node for an rdflib algebra expression (``CompValue`` or term)."""
    if isinstance(cv, Variable):
        return VarRef(str(cv))
    if isinstance(cv, (URIRef, Literal)):
        return Value(from_rdflib(cv))
    if isinstance(cv, BNode):
        raise UnsupportedError("unsupported SPARQL expression: a blank node")
    if not isinstance(cv, CompValue):
        raise CompileError(f"not a SPARQL expression: {cv!r}")
    name = cv.name
    if name in _BUILTINS:
        builtin, keys = _BUILTINS[name]
        args = [_field(cv, key) for key in keys]
        while args and args[-1] is None:  # optional trailing arguments (regex flags, substr length)
            args.pop()
        return Call(builtin, tuple(translate_expr(a) for a in args))
    if name in _VARIADIC:
        return Call(_VARIADIC[name], tuple(translate_expr(a) for a in _as_list(_field(cv, "arg"))))
    if name in _AGGREGATES:
        return translate_aggregate(cv)
    translate = _TRANSLATORS.get(name)
    if translate is not None:
        return translate(cv)
    if name in _REFUSED:
        raise UnsupportedError(f"unsupported SPARQL function {_REFUSED[name]}")
    raise UnsupportedError(f"unsupported SPARQL expression {name}")


def translate_aggregate(cv: CompValue) -> Aggregate:
    """An entry of an ``AggregateJoin``'s ``A`` list (``Aggregate_Count`` ...) as an :class:`Aggregate`."""
    name = _AGGREGATES.get(cv.name)
    if name is None:
        raise UnsupportedError(f"unsupported SPARQL aggregate {cv.name}")
    target = _field(cv, "vars")
    arg = None if target == "*" else translate_expr(target)
    separator = _field(cv, "separator")
    return Aggregate(name, arg, bool(_field(cv, "distinct")), None if separator is None else str(separator))


def _chain(cv: CompValue, node: type[And] | type[Or]) -> Expr:
    first = translate_expr(_field(cv, "expr"))
    others = _as_list(_field(cv, "other"))
    if not others:
        return first
    return node((first, *(translate_expr(o) for o in others)))


def _arith(cv: CompValue) -> Expr:
    # a left fold: a - b + c is (a - b) + c
    result = translate_expr(_field(cv, "expr"))
    for op, other in zip(_field(cv, "op") or [], _as_list(_field(cv, "other")), strict=True):
        result = Arith(str(op), result, translate_expr(other))
    return result


def _relational(cv: CompValue) -> Expr:
    left = translate_expr(_field(cv, "expr"))
    op = _field(cv, "op")
    if op is None:
        return left
    op = str(op)
    if op in ("IN", "NOT IN"):
        options = tuple(translate_expr(o) for o in _as_list(_field(cv, "other")))
        return In(left, options, op == "NOT IN")
    return Compare(op, left, translate_expr(_field(cv, "other")))


def _function(cv: CompValue) -> Expr:
    iri = str(_field(cv, "iri"))
    if _field(cv, "distinct"):
        raise UnsupportedError(f"unsupported SPARQL function <{iri}> with DISTINCT")
    args = tuple(translate_expr(a) for a in (_field(cv, "expr") or []))
    if iri == TIMESTAMP_IRI:
        return Call("timestamp", args)
    if iri in CAST_TYPES:
        if len(args) != 1:
            raise CompileError(f"the cast <{iri}> takes one argument, not {len(args)}")
        return Cast(iri, args[0])
    raise UnsupportedError(f"unsupported SPARQL function <{iri}>")


_TRANSLATORS = {
    "ConditionalOrExpression": lambda cv: _chain(cv, Or),
    "ConditionalAndExpression": lambda cv: _chain(cv, And),
    "RelationalExpression": _relational,
    "AdditiveExpression": _arith,
    "MultiplicativeExpression": _arith,
    "UnaryNot": lambda cv: Not(translate_expr(_field(cv, "expr"))),
    "UnaryMinus": lambda cv: Neg(translate_expr(_field(cv, "expr"))),
    "UnaryPlus": lambda cv: Pos(translate_expr(_field(cv, "expr"))),
    "Function": _function,
    # the algebra puts this in a LeftJoin without a filter
    "TrueFilter": lambda cv: Value(_TRUE),
}
