"""SPARQL 1.1 expressions (FILTER, BIND, SELECT expressions, aggregates) over engine constants.

The C-SPARQL front end translates rdflib's parsed algebra into these nodes; the engine evaluates them
(:mod:`rdfstream.engine.expr_eval`).  Leaves are engine constants (:mod:`rdfstream.terms`), so a literal in a
query and the same literal in the data are the same Python value.  ``str(node)`` prints SPARQL that rdflib's
parser reads back into an equal node; nodes check their own shape when built.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from ..errors import CompileError, UnsupportedError
from ..terms import Const, format_term, string

XSD = "http://www.w3.org/2001/XMLSchema#"

#: C-SPARQL's ``f:timestamp(?s, ?p, ?o)``: the stream timestamp of a triple in the window.
TIMESTAMP_IRI = "http://larkc.eu/csparql/sparql/jena/ext#timestamp"

#: Built-in functions by canonical (lower-case) name, with (min, max) argument counts; max None = any.
BUILTINS: dict[str, tuple[int, int | None]] = {
    "bound": (1, 1),
    "isiri": (1, 1),
    "isblank": (1, 1),
    "isliteral": (1, 1),
    "isnumeric": (1, 1),
    "str": (1, 1),
    "lang": (1, 1),
    "datatype": (1, 1),
    "iri": (1, 1),
    "langmatches": (2, 2),
    "sameterm": (2, 2),
    "strdt": (2, 2),
    "strlang": (2, 2),
    "regex": (2, 3),
    "replace": (3, 4),
    "strlen": (1, 1),
    "ucase": (1, 1),
    "lcase": (1, 1),
    "encode_for_uri": (1, 1),
    "contains": (2, 2),
    "strstarts": (2, 2),
    "strends": (2, 2),
    "strbefore": (2, 2),
    "strafter": (2, 2),
    "concat": (0, None),
    "substr": (2, 3),
    "abs": (1, 1),
    "round": (1, 1),
    "ceil": (1, 1),
    "floor": (1, 1),
    "year": (1, 1),
    "month": (1, 1),
    "day": (1, 1),
    "hours": (1, 1),
    "minutes": (1, 1),
    "seconds": (1, 1),
    "timezone": (1, 1),
    "tz": (1, 1),
    "md5": (1, 1),
    "sha1": (1, 1),
    "sha256": (1, 1),
    "sha384": (1, 1),
    "sha512": (1, 1),
    "if": (3, 3),
    "coalesce": (0, None),
    "timestamp": (3, 3),
}

#: Datatypes a cast function ``xsd:T(x)`` may target (SPARQL 1.1 §17.5).
CAST_TYPES = frozenset(XSD + t for t in ("string", "boolean", "integer", "decimal", "float", "double", "dateTime"))

COMPARE_OPS = ("=", "!=", "<", "<=", ">", ">=")
ARITH_OPS = ("+", "-", "*", "/")
AGGREGATES = ("count", "sum", "avg", "min", "max", "sample", "group_concat")


def _vars(args: tuple[Expr, ...]) -> set[str]:
    out: set[str] = set()
    for arg in args:
        out |= arg.variables()
    return out


def _args(args: tuple[Expr, ...]) -> str:
    return ", ".join(map(str, args))


@dataclass(frozen=True, slots=True, eq=False)
class Value:
    const: Const

    def __post_init__(self) -> None:
        if type(self.const) not in (str, int, Decimal):
            raise CompileError(f"not a constant: {self.const!r}")

    # 1 and Decimal("1.0") are equal in Python but distinct RDF terms (xsd:integer vs xsd:decimal)
    def __eq__(self, other: object) -> bool:
        return type(other) is Value and type(other.const) is type(self.const) and other.const == self.const

    def __hash__(self) -> int:
        return hash((type(self.const), self.const))

    def variables(self) -> set[str]:
        return set()

    def __str__(self) -> str:
        return format_term(self.const)


@dataclass(frozen=True, slots=True)
class VarRef:
    name: str  # without the '?'

    def variables(self) -> set[str]:
        return {self.name}

    def __str__(self) -> str:
        return f"?{self.name}"


@dataclass(frozen=True, slots=True)
class Call:
    """A built-in function call (``regex``, ``str``, ``if``, ...) or C-SPARQL's ``timestamp``."""

    name: str
    args: tuple[Expr, ...]

    def __post_init__(self) -> None:
        arity = BUILTINS.get(self.name)
        if arity is None:
            raise UnsupportedError(f"unsupported SPARQL function {self.name.upper()}()")
        low, high = arity
        if len(self.args) < low or (high is not None and len(self.args) > high):
            raise CompileError(f"{self.name.upper()} takes {low}..{high or 'n'} arguments, not {len(self.args)}")
        if self.name == "bound" and type(self.args[0]) is not VarRef:
            raise CompileError("BOUND takes a variable")

    def variables(self) -> set[str]:
        return _vars(self.args)

    def __str__(self) -> str:
        name = f"<{TIMESTAMP_IRI}>" if self.name == "timestamp" else self.name
        return f"{name}({_args(self.args)})"


@dataclass(frozen=True, slots=True)
class Cast:
    """``xsd:T(arg)``: an XPath cast to one of :data:`CAST_TYPES` (``datatype`` is the full IRI)."""

    datatype: str
    arg: Expr

    def __post_init__(self) -> None:
        if self.datatype not in CAST_TYPES:
            raise UnsupportedError(f"unsupported SPARQL function <{self.datatype}>")

    def variables(self) -> set[str]:
        return self.arg.variables()

    def __str__(self) -> str:
        return f"<{self.datatype}>({self.arg})"


@dataclass(frozen=True, slots=True)
class And:
    args: tuple[Expr, ...]

    def __post_init__(self) -> None:
        if len(self.args) < 2:
            raise CompileError("&& needs at least two operands")

    def variables(self) -> set[str]:
        return _vars(self.args)

    def __str__(self) -> str:
        return "(" + " && ".join(map(str, self.args)) + ")"


@dataclass(frozen=True, slots=True)
class Or:
    args: tuple[Expr, ...]

    def __post_init__(self) -> None:
        if len(self.args) < 2:
            raise CompileError("|| needs at least two operands")

    def variables(self) -> set[str]:
        return _vars(self.args)

    def __str__(self) -> str:
        return "(" + " || ".join(map(str, self.args)) + ")"


@dataclass(frozen=True, slots=True)
class Not:
    arg: Expr

    def variables(self) -> set[str]:
        return self.arg.variables()

    def __str__(self) -> str:
        return f"(!{self.arg})"  # every printed operand is a primary expression, as '!' requires


@dataclass(frozen=True, slots=True)
class Compare:
    op: str
    left: Expr
    right: Expr

    def __post_init__(self) -> None:
        if self.op not in COMPARE_OPS:
            raise CompileError(f"unknown comparison {self.op!r}")

    def variables(self) -> set[str]:
        return self.left.variables() | self.right.variables()

    def __str__(self) -> str:
        return f"({self.left} {self.op} {self.right})"


@dataclass(frozen=True, slots=True)
class Arith:
    op: str
    left: Expr
    right: Expr

    def __post_init__(self) -> None:
        if self.op not in ARITH_OPS:
            raise CompileError(f"unknown arithmetic operator {self.op!r}")

    def variables(self) -> set[str]:
        return self.left.variables() | self.right.variables()

    def __str__(self) -> str:
        return f"({self.left} {self.op} {self.right})"


@dataclass(frozen=True, slots=True)
class Neg:
    arg: Expr

    def variables(self) -> set[str]:
        return self.arg.variables()

    def __str__(self) -> str:
        return f"(-{self.arg})"


@dataclass(frozen=True, slots=True)
class Pos:
    """Unary ``+``: the identity on numbers, a type error on anything else."""

    arg: Expr

    def variables(self) -> set[str]:
        return self.arg.variables()

    def __str__(self) -> str:
        return f"(+{self.arg})"


@dataclass(frozen=True, slots=True)
class In:
    expr: Expr
    options: tuple[Expr, ...]
    negated: bool = False

    def variables(self) -> set[str]:
        return self.expr.variables() | _vars(self.options)

    def __str__(self) -> str:
        return f"({self.expr} {'NOT IN' if self.negated else 'IN'} ({_args(self.options)}))"


@dataclass(frozen=True, slots=True)
class Aggregate:
    """``COUNT``/``SUM``/... over a group; ``arg`` None is ``COUNT(*)``."""

    name: str
    arg: Expr | None
    distinct: bool = False
    separator: str | None = None  # GROUP_CONCAT only; None means the default " "

    def __post_init__(self) -> None:
        if self.name not in AGGREGATES:
            raise UnsupportedError(f"unsupported SPARQL aggregate {self.name.upper()}")
        if self.arg is None and self.name != "count":
            raise CompileError(f"{self.name.upper()}(*) is not SPARQL; only COUNT takes *")
        if self.separator is not None and self.name != "group_concat":
            raise CompileError("only GROUP_CONCAT takes a separator")

    def variables(self) -> set[str]:
        return set() if self.arg is None else self.arg.variables()

    def __str__(self) -> str:
        inner = "*" if self.arg is None else str(self.arg)
        if self.distinct:
            inner = f"DISTINCT {inner}"
        if self.separator is not None:
            inner = f"{inner}; SEPARATOR={string(self.separator)}"
        return f"{self.name.upper()}({inner})"


Expr = Value | VarRef | Call | Cast | And | Or | Not | Compare | Arith | Neg | Pos | In | Aggregate
