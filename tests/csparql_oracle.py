"""An independent oracle for C-SPARQL continuous queries: window snapshots + rdflib's own SPARQL engine.

Nothing here comes from ``rdfstream``.  The oracle is told everything a test generator knows: the engine's t0
(or None: the timestamp of the first push), the timed push/advance events, the static graphs, and for each
query its windows, the graphs it names in ``FROM`` and the query text *without* the C-SPARQL clauses.  It
computes the report sequence by the report rules (SEMANTICS.md §2 as refined in the test brief):

* a stream holds a set of triples per timestamp; arrival order = order of first occurrence at that timestamp;
* time window ``[RANGE a STEP b]`` closes at ``c = t0 + a + k*b`` and holds the triples with ``c - a <= tau < c``;
  report times are the union of the close times of the query's windows; at a report time each window
  contributes its content as of its latest close ``<= c``; a non-empty union is evaluated together with the
  ``FROM`` graphs and reported even if the result is empty;
* ``[ROWS n]``: the last n triples of the stream, reported at every timestamp at which one of the query's ROWS
  streams brings data; ``[RANGE TRIPLES n]``: tumbling batches of n triples, reported at the timestamp of the
  batch's n-th triple (an incomplete batch is never reported);
* RStream reports the result, IStream ``current - previous``, DStream ``previous - current`` (multisets);
* ``f:timestamp(s, p, o)`` is the latest timestamp of the triple in the current window contributions.

Results are compared after :func:`norm_term`: numeric, boolean and date/time literals by (datatype, value)
(decimals to 18 significant digits, the XPath minimum precision), plain and ``xsd:string`` literals alike
(RDF 1.1), everything else by term.

Known rdflib 7 deviations from SPARQL 1.1 that the generators stay away from (so that rdflib's answer is the
SPARQL answer): ``integer * integer`` gives ``xsd:decimal``; ordering comparisons and ``=``/``!=`` between a
string and a number are not type errors; ``MIN``/``MAX`` over IRIs return literals; ``SUM`` over a non-number
fails the whole query and ``AVG`` skips it; ``ORDER BY`` over values of different kinds is rdflib-specific;
``OPTIONAL { P FILTER(e) }`` after an inline ``VALUES`` that binds a variable of P or e loses solutions.
Some joins collapse duplicate solutions of their right operand (repeated ``VALUES`` rows).
Two more are corrected here: iterating a SELECT result skips solutions that bind no projected variable (the
oracle reads ``result.bindings``), and ``GROUP BY`` over no solutions gives one empty row instead of none.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Context, Decimal

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import XSD
from rdflib.plugins.sparql import operators as sparql_operators
from rdflib.plugins.sparql import prepareQuery
from rdflib.plugins.sparql.operators import register_custom_function, unregister_custom_function
from rdflib.plugins.sparql.sparql import SPARQLError

F_NS = "http://larkc.eu/csparql/sparql/jena/ext#"
F_TIMESTAMP = URIRef(F_NS + "timestamp")

# --------------------------------------------------------------------------------------------- case model


@dataclass(frozen=True)
class TimeWindow:
    range: int  # ms
    step: int  # ms
    text: str  # as written in the query, e.g. "[RANGE 5ms STEP 2ms]"

    kind = "time"


@dataclass(frozen=True)
class RowsWindow:
    n: int

    kind = "rows"

    @property
    def text(self) -> str:
        return f"[ROWS {self.n}]"


@dataclass(frozen=True)
class TriplesWindow:
    n: int

    kind = "triples"

    @property
    def text(self) -> str:
        return f"[RANGE TRIPLES {self.n}]"


@dataclass(frozen=True)
class Push:
    stream: str
    triples: tuple  # rdflib triples, in arrival order (may repeat)
    t: int


@dataclass(frozen=True)
class Advance:
    t: int


@dataclass
class QuerySpec:
    """A query as its generator knows it: the parts of the text and the C-SPARQL clauses as data."""

    name: str
    prologue: str  # PREFIX lines
    head: str  # "SELECT ...", "CONSTRUCT { ... }", "ASK"
    where: str  # "WHERE { ... }"
    modifiers: str = ""  # GROUP BY / HAVING / ORDER BY / LIMIT / OFFSET
    windows: tuple = ()  # ((stream iri, window), ...)
    graphs: tuple = ()  # FROM <g> iris
    form: str = "select"
    ordered: bool = False  # ORDER BY over a total order: compare rows as lists
    star: bool = False  # SELECT *: compare the variable lists as sets
    grouped: bool = False  # has a GROUP BY clause
    report: str | None = None  # None (engine default, rstream), "rstream", "istream", "dstream"

    @property
    def sparql(self) -> str:
        """The query with the C-SPARQL clauses removed (what rdflib evaluates)."""
        return " ".join(x for x in (self.prologue, self.head, self.where, self.modifiers) if x)

    @property
    def text(self) -> str:
        """The C-SPARQL text registered with the engine."""
        froms = [f"FROM <{g}>" for g in self.graphs]
        froms += [f"FROM STREAM <{s}> {w.text}" for s, w in self.windows]
        body = " ".join(x for x in (self.prologue, self.head, *froms, self.where, self.modifiers) if x)
        return f"REGISTER QUERY {self.name} AS {body}"

    @property
    def kind(self) -> str:
        kinds = {w.kind for _, w in self.windows}
        return "time" if kinds == {"time"} else ("triples" if "triples" in kinds else "rows")


@dataclass
class Case:
    t0: int | None
    streams: tuple  # registered stream iris
    graphs: dict  # registered graph iri -> tuple of triples
    events: tuple  # Push / Advance, in call order
    query: QuerySpec

    def describe(self) -> str:
        lines = [f"query: {self.query.text}", f"report: {self.query.report or 'default'}", f"t0: {self.t0}"]
        for g, triples in self.graphs.items():
            lines.append(f"graph <{g}>: " + " ".join(fmt_triple(x) for x in triples))
        for ev in self.events:
            if isinstance(ev, Push):
                lines.append(f"  push <{ev.stream}> t={ev.t}: " + " ".join(fmt_triple(x) for x in ev.triples))
            else:
                lines.append(f"  advance_to({ev.t})")
        return "\n".join(lines)


@dataclass
class Expected:
    t: int
    form: str
    variables: list = field(default_factory=list)
    rows: list = field(default_factory=list)  # list of {var name: term}
    triples: list = field(default_factory=list)
    boolean: bool | None = None


# ---------------------------------------------------------------------------------------------- normalising

_DEC = Context(prec=18, rounding=ROUND_HALF_EVEN)
_BY_VALUE = {
    XSD.integer, XSD.decimal, XSD.float, XSD.double, XSD.int, XSD.long, XSD.short, XSD.byte,
    XSD.nonNegativeInteger, XSD.positiveInteger, XSD.negativeInteger, XSD.nonPositiveInteger,
    XSD.unsignedLong, XSD.unsignedInt, XSD.unsignedShort, XSD.unsignedByte,
    XSD.boolean, XSD.dateTime, XSD.dateTimeStamp, XSD.date, XSD.time,
}


def norm_term(term):
    """A hashable key: equal keys <=> the terms count as the same answer value."""
    if term is None:
        return None
    if isinstance(term, Literal):
        dt = term.datatype
        if dt in _BY_VALUE and term.ill_typed is not True:
            value = term.toPython()
            if not isinstance(value, Literal):
                if isinstance(value, Decimal):
                    value = _DEC.plus(value)
                elif isinstance(value, float) and value != value:
                    value = "NaN"
                return ("value", str(dt), value)
        if dt == XSD.string:
            dt = None
        return ("literal", str(term), str(dt) if dt else None, term.language.lower() if term.language else None)
    if isinstance(term, URIRef):
        return ("iri", str(term))
    if isinstance(term, BNode):
        return ("bnode", str(term))
    return ("other", repr(term))


def row_key(row: dict):
    return tuple(sorted((str(k), norm_term(v)) for k, v in row.items() if v is not None))


def triple_key(triple):
    return tuple(norm_term(x) for x in triple)


def fmt_term(term) -> str:
    return term.n3() if hasattr(term, "n3") else repr(term)


def fmt_triple(triple) -> str:
    return "(" + " ".join(fmt_term(x).replace("http://ex.org/", "ex:") for x in triple) + ")"


def fmt_row(row: dict) -> str:
    return "{" + ", ".join(f"{k}={fmt_term(v)}".replace("http://ex.org/", "ex:")
                           for k, v in sorted(row.items())) + "}"


def canonical(t, form, variables, rows, triples, boolean, *, ordered: bool, star: bool, keep_order: bool):
    """A comparable form of one report (expected or engine's)."""
    if form == "select":
        vars_key = frozenset(variables) if star else tuple(variables)
        keys = [row_key(r) for r in rows]
        payload = tuple(keys) if (ordered and keep_order) else frozenset(Counter(keys).items())
    elif form == "construct":
        vars_key = None
        payload = frozenset(Counter(triple_key(x) for x in triples).items())
    else:
        vars_key = None
        payload = bool(boolean)
    return (t, form, vars_key, payload)


# ------------------------------------------------------------------------------------------------- windows


def stream_occurrences(events, stream: str):
    """[(tau, triple)] of a stream in arrival order; a triple counts once per timestamp (first occurrence)."""
    seen = set()
    out = []
    for ev in events:
        if isinstance(ev, Push) and ev.stream == stream:
            for triple in ev.triples:
                if (ev.t, triple) not in seen:
                    seen.add((ev.t, triple))
                    out.append((ev.t, triple))
    return out


def effective_t0(case: Case) -> int | None:
    if case.t0 is not None:
        return case.t0
    for ev in case.events:
        if isinstance(ev, Push):
            return ev.t
    return None


def snapshots(case: Case):
    """[(report time, {triple: latest timestamp})] in report order (before evaluation)."""
    q = case.query
    occ = {s: stream_occurrences(case.events, s) for s, _ in q.windows}
    kind = q.kind
    if kind == "time":
        t0 = effective_t0(case)
        if t0 is None:
            return []
        last = max((tau for s in occ for tau, _ in occ[s]), default=None)
        if last is None:
            return []
        # past the first close of each window whose range starts after all data, every contribution is empty;
        # up to the latest such close, all windows keep closing (a window's old contribution stays visible
        # at the closes of the other windows)
        horizon = 0
        for _, w in q.windows:
            k = max(0, (last - t0) // w.step + 1)  # smallest k with t0 + k*step > last
            while t0 + k * w.step <= last:
                k += 1
            horizon = max(horizon, t0 + w.range + k * w.step)
        closes = {}  # window index -> sorted close times up to the horizon
        for i, (_, w) in enumerate(q.windows):
            closes[i] = list(range(t0 + w.range, horizon + 1, w.step))
        out = []
        for c in sorted({c for cs in closes.values() for c in cs}):
            contrib: dict = {}
            for i, (s, w) in enumerate(q.windows):
                latest = [ci for ci in closes[i] if ci <= c]
                if not latest:
                    continue
                ci = latest[-1]
                for tau, triple in occ[s]:
                    if ci - w.range <= tau < ci:
                        contrib[triple] = max(contrib.get(triple, tau), tau)
            if contrib:
                out.append((c, contrib))
        return out
    if kind == "rows":
        times = sorted({tau for s in occ for tau, _ in occ[s]})
        out = []
        for tau in times:
            contrib = {}
            for s, w in q.windows:
                kept = [(x, triple) for x, triple in occ[s] if x <= tau][-w.n:]
                for x, triple in kept:
                    contrib[triple] = max(contrib.get(triple, x), x)
            out.append((tau, contrib))
        return out
    # triples: a single stream, tumbling batches
    (s, w), = q.windows
    out = []
    seq = occ[s]
    for start in range(0, len(seq) - w.n + 1, w.n):
        batch = seq[start:start + w.n]
        contrib = {}
        for x, triple in batch:
            contrib[triple] = max(contrib.get(triple, x), x)
        out.append((batch[-1][0], contrib))
    return out


# ---------------------------------------------------------------------------------------------- evaluation


class _Timestamps:
    """f:timestamp for rdflib, answering from the snapshot being evaluated."""

    def __init__(self):
        self.current: dict = {}

    def __call__(self, s, p, o):
        ts = self.current.get((s, p, o))
        if ts is None:
            raise SPARQLError(f"f:timestamp: {(s, p, o)} is not in a window")
        return Literal(ts)


def _evaluate(prepared, graph: Graph, form: str):
    result = graph.query(prepared)
    if form == "select":
        variables = [str(v) for v in result.vars]
        # result.bindings, not iteration: iterating a Result skips solutions that bind nothing
        rows = [{str(k): v for k, v in row.items() if v is not None} for row in result.bindings]
        return variables, rows, [], None
    if form == "construct":
        return [], [], list(result.graph), None
    return [], [], [], bool(result.askAnswer)


def rstream(case: Case) -> list[Expected]:
    """The RStream report sequence of ``case.query``."""
    q = case.query
    prepared = prepareQuery(q.sparql)
    # rdflib answers a GROUP BY over no solutions with one empty row instead of none: ask first
    probe = prepareQuery(f"{q.prologue} ASK {q.where}") if q.grouped else None
    static = [triple for g in q.graphs for triple in case.graphs.get(g, ())]
    fn = _Timestamps()
    previous = sparql_operators._CUSTOM_FUNCTIONS.get(F_TIMESTAMP)
    register_custom_function(F_TIMESTAMP, fn, override=True)
    try:
        out = []
        for c, contrib in snapshots(case):
            graph = Graph()
            for triple in static:
                graph.add(triple)
            for triple in contrib:
                graph.add(triple)
            fn.current = contrib
            variables, rows, triples, boolean = _evaluate(prepared, graph, q.form)
            if probe is not None and not graph.query(probe).askAnswer:
                rows = []
            out.append(Expected(c, q.form, variables, rows, triples, boolean))
        return out
    finally:
        if previous is not None:
            register_custom_function(F_TIMESTAMP, previous[0], override=True, raw=previous[1])
        else:
            unregister_custom_function(F_TIMESTAMP)


def _minus(a: list, b: list, key) -> list:
    """Multiset difference a - b (order of a kept)."""
    left = Counter(key(x) for x in b)
    out = []
    for x in a:
        k = key(x)
        if left[k] > 0:
            left[k] -= 1
        else:
            out.append(x)
    return out


def expected_reports(case: Case) -> list[Expected]:
    """The report sequence of ``case.query`` under its report mode."""
    full = rstream(case)
    mode = case.query.report or "rstream"
    if mode == "rstream":
        return full
    out = []
    prev = Expected(0, case.query.form)
    for cur in full:
        a, b = (cur, prev) if mode == "istream" else (prev, cur)
        out.append(Expected(cur.t, cur.form, cur.variables, _minus(a.rows, b.rows, row_key),
                            _minus(a.triples, b.triples, triple_key), cur.boolean))
        prev = cur
    return out


def report_kind_bound(kind: str, t: int, watermark: int) -> bool:
    """Is a report with timestamp ``t`` due once ``advance_to(watermark)`` has been called?"""
    return t <= watermark if kind == "time" else t < watermark
