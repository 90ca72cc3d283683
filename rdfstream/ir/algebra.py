"""Continuous queries in the IR: LARS rules for windows and basic graph patterns, a SPARQL algebra on top.

A C-SPARQL query compiles into a :class:`ContinuousQuery`:

* ``program`` — LARS rules (the same IR every front end produces).  The window part is the LARS translation
  of the C-SPARQL windows (LARS paper, Table 2: ``S[RANGE L]`` ↦ ``⊞^L ◇ S``); every basic graph pattern
  becomes one rule whose head predicate holds the pattern's solutions.  The shared incremental engine
  maintains them as the windows slide.
* ``algebra`` — the SPARQL operators above the basic graph patterns (join, OPTIONAL, UNION, FILTER, BIND,
  VALUES, grouping and aggregates, solution modifiers), evaluated over the rule relations at each report.
  Its leaves are :class:`Relation` nodes that name a head predicate of ``program``.

Nodes are frozen records; ``str(node)`` prints a compact algebra expression (used by ``rdfstream explain``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .nodes import Program

#: SPARQL expressions (rdfstream.ir.expr) are opaque here: anything with ``variables()`` and ``__str__``.
Expr = object


@dataclass(frozen=True, slots=True)
class Relation:
    """The solutions of a basic graph pattern: the facts of ``pred``, column ``i`` bound to ``columns[i]``."""

    pred: str
    columns: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.pred}({', '.join('?' + c for c in self.columns)})"


@dataclass(frozen=True, slots=True)
class Unit:
    """The empty group pattern: one solution that binds nothing."""

    def __str__(self) -> str:
        return "{}"


@dataclass(frozen=True, slots=True)
class Join:
    left: Node
    right: Node

    def __str__(self) -> str:
        return f"Join({self.left}, {self.right})"


@dataclass(frozen=True, slots=True)
class LeftJoin:
    """OPTIONAL: ``expr`` (or None) is the filter of the optional part, tested on the merged solution."""

    left: Node
    right: Node
    expr: Expr | None = None

    def __str__(self) -> str:
        cond = f", {self.expr}" if self.expr is not None else ""
        return f"LeftJoin({self.left}, {self.right}{cond})"


@dataclass(frozen=True, slots=True)
class Union:
    left: Node
    right: Node

    def __str__(self) -> str:
        return f"Union({self.left}, {self.right})"


@dataclass(frozen=True, slots=True)
class Minus:
    left: Node
    right: Node

    def __str__(self) -> str:
        return f"Minus({self.left}, {self.right})"


@dataclass(frozen=True, slots=True)
class Filter:
    expr: Expr
    inner: Node

    def __str__(self) -> str:
        return f"Filter({self.expr}, {self.inner})"


@dataclass(frozen=True, slots=True)
class Extend:
    """BIND(expr AS ?var); an error leaves ``var`` unbound."""

    inner: Node
    var: str
    expr: Expr

    def __str__(self) -> str:
        return f"Extend({self.inner}, ?{self.var} := {self.expr})"


@dataclass(frozen=True, slots=True)
class Values:
    """Inline data: ``rows[i][j]`` is the constant of ``variables[j]`` or None (UNDEF)."""

    variables: tuple[str, ...]
    rows: tuple[tuple, ...]

    def __str__(self) -> str:
        return f"Values(({' '.join('?' + v for v in self.variables)}), {len(self.rows)} rows)"


@dataclass(frozen=True, slots=True)
class Group:
    """GROUP BY ``keys`` (None: one group of everything) and the aggregates ``(result var, Aggregate)``.

    Like SPARQL's AggregateJoin, the output binds only the aggregate results; grouped variables are read
    back through SAMPLE aggregates, as rdflib's algebra translation writes them.
    """

    inner: Node
    keys: tuple[Expr, ...] | None
    aggregates: tuple[tuple[str, Expr], ...]

    def __str__(self) -> str:
        keys = "all" if self.keys is None else ", ".join(map(str, self.keys))
        aggs = ", ".join(f"?{v} := {a}" for v, a in self.aggregates)
        return f"Group({self.inner}, by [{keys}], [{aggs}])"


@dataclass(frozen=True, slots=True)
class Project:
    inner: Node
    variables: tuple[str, ...]

    def __str__(self) -> str:
        return f"Project({self.inner}, {' '.join('?' + v for v in self.variables)})"


@dataclass(frozen=True, slots=True)
class Distinct:
    inner: Node

    def __str__(self) -> str:
        return f"Distinct({self.inner})"


@dataclass(frozen=True, slots=True)
class OrderBy:
    """``conditions``: (expression, descending) pairs, most significant first."""

    inner: Node
    conditions: tuple[tuple[Expr, bool], ...]

    def __str__(self) -> str:
        conds = ", ".join(f"DESC({e})" if d else str(e) for e, d in self.conditions)
        return f"OrderBy({self.inner}, {conds})"


@dataclass(frozen=True, slots=True)
class Slice:
    inner: Node
    offset: int = 0
    limit: int | None = None

    def __str__(self) -> str:
        return f"Slice({self.inner}, offset {self.offset}, limit {self.limit})"


Node = Relation | Unit | Join | LeftJoin | Union | Minus | Filter | Extend | Values | Group | Project | Distinct
Node = Node | OrderBy | Slice


@dataclass(frozen=True, slots=True)
class StreamWindow:
    """One ``FROM [NAMED] STREAM <iri> [window]`` clause.

    ``kind`` is ``time`` (RANGE ``size`` ms STEP ``step`` ms), ``rows`` (the last ``size`` triples) or
    ``triples`` (C-SPARQL's RANGE TRIPLES: tumbling batches of ``size`` triples).
    """

    stream: str  # the stream IRI, without angle brackets
    kind: str
    size: int
    step: int = 0
    named: bool = False

    def __str__(self) -> str:
        if self.kind == "time":
            return f"<{self.stream}> [RANGE {self.size}ms STEP {self.step}ms]"
        if self.kind == "rows":
            return f"<{self.stream}> [ROWS {self.size}]"
        return f"<{self.stream}> [RANGE TRIPLES {self.size}]"


@dataclass(frozen=True, slots=True)
class Template:
    """A CONSTRUCT template: triples of constants, variable names (``?x`` as ``("var", "x")``) and blank nodes."""

    triples: tuple[tuple, ...]


@dataclass(frozen=True)
class ContinuousQuery:
    """A registered C-SPARQL query, compiled.  See the module docstring."""

    name: str
    form: str  # select | construct | ask
    windows: tuple[StreamWindow, ...]
    graphs: tuple[str, ...]  # FROM <g>: IRIs of static graphs
    program: Program
    algebra: Node
    named_graphs: tuple[str, ...] = ()  # FROM NAMED <g>
    variables: tuple[str, ...] = ()  # SELECT: the projected variables, in order
    template: Template | None = None  # CONSTRUCT
    is_stream: bool = False  # REGISTER STREAM: reports feed a stream named after the query
    policy: str = "rstream"  # rstream | istream | dstream
    t0: int = 0
    timestamps: str | None = None  # 4-ary predicate (s, p, o, τ) of the triples in the windows, for f:timestamp
    answer: str | None = None  # a predicate whose facts are the answers, when the whole query is rules
    prefixes: tuple[tuple[str, str], ...] = field(default=())
    guards: frozenset = frozenset()  # (pred, object or None): schema triples the streams must not bring
    entailment: str | None = None  # how the query reasons, for explain

    @property
    def clock(self) -> str:
        """How reports are timed: ``time`` windows, ``rows`` (every timestamp with data) or ``triples`` batches."""
        kinds = {w.kind for w in self.windows}
        return kinds.pop() if len(kinds) == 1 else "time"
