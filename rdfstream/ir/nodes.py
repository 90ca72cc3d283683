"""The rule IR: every front end (native LARS, Laser dialect, C-SPARQL) compiles to these nodes.

Nodes are small frozen records that check themselves when built.  Source spans ride along but take
no part in equality, so ``parse(print(parse(text))) == parse(text)`` can be asserted.
``str(node)`` prints canonical native LARS text (see :mod:`rdfstream.ir.printer`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from ..atoms import Atom
from ..errors import CompileError, Span
from ..terms import Term, Var, is_var

#: The stream a window reads when none is named (LARS programs have one input stream).
DEFAULT_STREAM = ""


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """``[size step step]``: the last ``size`` ticks before the pivot ``⌊t/step⌋·step`` (LARS Def. 3, u = 0).

    ``[size step step start offset]`` puts the pivots at ``offset, offset + step, …`` instead; before
    ``offset`` the range is empty.  This is how a C-SPARQL window that first closes at ``t0 + α`` is expressed.
    """

    size: int
    step: int = 1
    stream: str = DEFAULT_STREAM
    offset: int | None = None

    def __post_init__(self) -> None:
        if self.size < 0:
            raise CompileError(f"time window size must be >= 0, got {self.size}")
        if self.step < 1:
            raise CompileError(f"window step must be >= 1, got {self.step}")


@dataclass(frozen=True, slots=True)
class TupleWindow:
    """``[#size]``: the last ``size`` data atoms of the stream, in arrival order."""

    size: int
    stream: str = DEFAULT_STREAM

    def __post_init__(self) -> None:
        if self.size < 1:
            raise CompileError(f"tuple window size must be >= 1, got {self.size}")


@dataclass(frozen=True, slots=True)
class PartitionWindow:
    """``[#size by key]``: LARS's partition-based window (w_p).  The data atoms of the stream that match the
    pattern ``key`` are split by the values of its named variables (``[#1 by tram(Id, _)]``: one part per
    tram); each part keeps its last ``size`` atoms, in arrival order, and the window holds the union of the
    parts.  Atoms that do not match ``key`` are not in the window (the LARS paper's partition 0 of size 0).
    The key's variables are local to the window; anonymous ones (``_``) are not part of the key."""

    size: int
    key: Atom
    stream: str = DEFAULT_STREAM

    def __post_init__(self) -> None:
        if self.size < 1:
            raise CompileError(f"partition window size must be >= 1, got {self.size}")
        if not any(is_var(a) and not a.name.startswith("_") for a in (self.key.pred, *self.key.args)):
            raise CompileError(f"a partition window's key {self.key} names no variable to partition by")

    def parts(self) -> tuple:
        """The key as a pattern: per position of (pred, *args) ``("k", i)`` (the i-th key part), ``("_",)`` or
        ``("c", const)``."""
        order: list = []
        out = []
        for term in (self.key.pred, *self.key.args):
            if is_var(term) and not term.name.startswith("_"):
                if term not in order:
                    order.append(term)
                out.append(("k", order.index(term)))
            elif is_var(term):
                out.append(("_",))
            else:
                out.append(("c", term))
        return tuple(out)


def partition_key(parts: tuple, pred, args: tuple):
    """The key of the atom ``pred(args)`` under a partition pattern (:meth:`PartitionWindow.parts`), or None."""
    if len(args) + 1 != len(parts):
        return None
    key: dict[int, object] = {}
    for part, value in zip(parts, (pred, *args), strict=True):
        kind = part[0]
        if kind == "c":
            if part[1] != value:
                return None
        elif kind == "k":
            seen = key.get(part[1], key)
            if seen is not key and seen != value:
                return None
            key[part[1]] = value
    return tuple(key[i] for i in range(len(key)))


Window = TimeWindow | TupleWindow | PartitionWindow


class Op(enum.Enum):
    DIAMOND = "<>"
    BOX = "[]"
    AT = "@"


@dataclass(frozen=True, slots=True)
class ExtAtom:
    """An extended atom of a rule body: ``[not] [window] [op] [not] atom``.

    ``op`` is None for a plain atom (holds at the evaluation time).  ``time`` is the time term of
    ``@T`` (a variable or an integer).  ``inner_negated`` negates the atom at each point of the
    range (``[3] <> not a``); ``negated`` negates the whole extended atom (``not [3] <> a``).
    """

    atom: Atom
    op: Op | None = None
    time: Term | None = None
    window: Window | None = None
    inner_negated: bool = False
    negated: bool = False
    span: Span | None = field(default=None, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        if self.window is not None and self.op is None:
            raise CompileError("a window must be followed by an operator (<>, [] or @T)", self.span)
        if (self.op is Op.AT) != (self.time is not None):
            raise CompileError("@ needs a time term, and only @ takes one", self.span)
        if self.inner_negated and self.op is None:
            raise CompileError("'not' inside an operator needs the operator", self.span)
        if self.time is not None and not is_var(self.time) and type(self.time) is not int:
            raise CompileError(f"@ takes a variable or an integer time, not {self.time}", self.span)

    @property
    def positive(self) -> bool:
        """True when the literal can bind variables (no negation anywhere)."""
        return not self.negated and not self.inner_negated

    def variables(self) -> list[Var]:
        out = list(self.atom.variables())
        if is_var(self.time):
            out.append(self.time)  # type: ignore[arg-type]
        return out


@dataclass(frozen=True, slots=True)
class BinOp:
    op: str  # + - * /
    left: Expr
    right: Expr

    def __post_init__(self) -> None:
        if self.op not in ARITH_OPS:
            raise CompileError(f"unknown arithmetic operator {self.op!r}")


Expr = Term | BinOp

ARITH_OPS = ("+", "-", "*", "/")
COMPARISON_OPS = ("=", "!=", "<", "<=", ">", ">=")


def expr_variables(expr: Expr) -> list[Var]:
    if type(expr) is BinOp:
        return expr_variables(expr.left) + expr_variables(expr.right)  # type: ignore[union-attr]
    return [expr] if is_var(expr) else []  # type: ignore[list-item]


@dataclass(frozen=True, slots=True)
class Comparison:
    """``left op right``.  ``X = expr`` with ``X`` not bound elsewhere is an assignment."""

    op: str
    left: Expr
    right: Expr
    span: Span | None = field(default=None, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        if self.op not in COMPARISON_OPS:
            raise CompileError(f"unknown comparison {self.op!r}", self.span)

    def variables(self) -> list[Var]:
        return expr_variables(self.left) + expr_variables(self.right)


BodyLiteral = ExtAtom | Comparison


@dataclass(frozen=True, slots=True)
class Head:
    """``atom`` derived at the evaluation time, or placed at ``time`` (``@T atom``)."""

    atom: Atom
    time: Term | None = None

    def __post_init__(self) -> None:
        if self.time is not None and not is_var(self.time) and type(self.time) is not int:
            raise CompileError(f"@ in a head takes a variable or an integer time, not {self.time}")

    def variables(self) -> list[Var]:
        out = list(self.atom.variables())
        if is_var(self.time):
            out.append(self.time)  # type: ignore[arg-type]
        return out


@dataclass(frozen=True, slots=True)
class Rule:
    head: Head
    body: tuple[BodyLiteral, ...]
    span: Span | None = field(default=None, compare=False, hash=False, repr=False)
    name: str | None = field(default=None, compare=False, hash=False, repr=False)  # e.g. "rdfs9", from a comment

    def __str__(self) -> str:
        from .printer import format_rule

        return format_rule(self)


@dataclass(frozen=True, slots=True)
class Program:
    """Rules plus background facts.  ``prefixes`` are kept only for printing."""

    rules: tuple[Rule, ...] = ()
    facts: tuple[Atom, ...] = ()
    prefixes: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        for fact in self.facts:
            if not fact.is_ground():
                raise CompileError(f"fact {fact} is not ground", fact.span)

    def __str__(self) -> str:
        from .printer import format_program

        return format_program(self)

    def intensional(self) -> set[str]:
        """Predicates derived by some rule."""
        return {r.head.atom.pred for r in self.rules}

