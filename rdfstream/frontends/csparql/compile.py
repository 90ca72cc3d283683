"""C-SPARQL → IR: windows and basic graph patterns become LARS rules, the rest a SPARQL algebra over them.

For a query named ``q`` (its predicates are prefixed with ``base``, by default the sanitised name):

* every FROM STREAM window becomes a LARS window (LARS paper, Table 2).  ``[RANGE α STEP β]`` first closing
  at ``t0 + α`` and holding ``[c − α, c)`` at close ``c`` is ``[α−1 step β start t0+α−1] <>`` read at tick
  ``c − 1``; ``[ROWS n]`` is the tuple window ``[#n] <>``; ``[RANGE TRIPLES n]`` is ``[0] <>`` on a clock that
  counts batches;
* the default graph is the union of the windows and the ``FROM <g>`` graphs, whose triples are background
  facts ``<urn:rdfstream:quad>(g, s, p, o)`` (so a query sees only the graphs it names);
* each basic graph pattern becomes one rule ``q__bK(vars) :- pattern atoms`` whose facts are the pattern's
  solutions; with one window and no static graph, its atoms read the window directly, otherwise they read
  one union predicate per triple predicate;
* ``q__ts`` gives the timestamps that ``f:timestamp`` needs (whether a window holds a triple at all, which
  decides whether C-SPARQL reports, the runtime reads from the streams' timestamps);
* the SPARQL operators above the patterns become :mod:`rdfstream.ir.algebra` nodes.
"""

from __future__ import annotations

import re
from dataclasses import fields, is_dataclass

from ...atoms import Atom
from ...errors import Span, UnsupportedError
from ...ir.algebra import (
    ContinuousQuery,
    Distinct,
    Extend,
    Filter,
    Group,
    Join,
    LeftJoin,
    Minus,
    Node,
    OrderBy,
    Project,
    Relation,
    Slice,
    StreamWindow,
    Template,
    Union,
    Unit,
    Values,
)
from ...ir.nodes import ExtAtom, Head, Op, Program, Rule, TimeWindow, TupleWindow
from ...rdfterms import from_rdflib
from ...terms import Var
from ...vocab import QUAD
from ..lars.common import SourceText
from .expressions import translate_aggregate, translate_expr
from .parser import Envelope, blank_comments, mask_lexical, parse_envelope, parse_sparql, stream_window

_FORMS = {"SelectQuery": "select", "ConstructQuery": "construct", "AskQuery": "ask"}
_POLICIES = {"QUERY": "rstream", "STREAM": "rstream", "RSTREAM": "rstream", "ISTREAM": "istream",
             "DSTREAM": "dstream"}


def base_name(name: str) -> str:
    """A LARS predicate name for a query name: lower-case initial, word characters only."""
    text = re.sub(r"\W", "_", name.rsplit("/", 1)[-1].rsplit("#", 1)[-1]) or "q"
    if not text[0].isalpha() or not text.isascii():
        text = "q_" + text.encode("ascii", "replace").decode().replace("?", "_")
    return text[0].lower() + text[1:]


class _Names:
    """LARS variable names for SPARQL variables: ``?sensor`` → ``Sensor``, unique within a query."""

    def __init__(self) -> None:
        self.by_sparql: dict[str, Var] = {}
        self.taken: set[str] = set()

    def __call__(self, sparql: str) -> Var:
        var = self.by_sparql.get(sparql)
        if var is None:
            hidden = sparql.startswith("_:")
            text = re.sub(r"\W", "_", sparql[2:] if hidden else sparql).encode("ascii", "replace").decode()
            text = text.replace("?", "_")
            text = ("B_" + text) if hidden else (text[0].upper() + text[1:] if text[0].isalpha() else "V_" + text)
            name, i = text, 1
            while name in self.taken or name == "_":
                i += 1
                name = f"{text}{i}"
            self.taken.add(name)
            var = self.by_sparql[sparql] = Var(name)
        return var


Source = tuple  # ("window", StreamWindow) or ("graph", graph IRI)


class _Compiler:
    def __init__(self, base: str, windows: tuple[StreamWindow, ...], graphs: tuple[str, ...],
                 named_graphs: tuple[str, ...], t0: int, src: SourceText) -> None:
        self.base = base
        self.windows = windows
        self.t0 = t0
        self.src = src
        # the default graph: unnamed windows and FROM graphs; named graphs: NAMED windows and FROM NAMED graphs
        self.default: tuple[Source, ...] = tuple(("window", w) for w in windows if not w.named) + tuple(
            ("graph", g) for g in graphs)
        self.named: dict[str, Source] = {w.stream: ("window", w) for w in windows if w.named}
        self.named.update({g: ("graph", g) for g in named_graphs})
        self.active: tuple[Source, ...] = self.default
        self.rules: list[Rule] = []
        self.unions: dict[tuple, str] = {}
        self.names = _Names()
        self.bgps = 0
        self.uses_timestamp = False
        self.scope = None  # with entailment rules: the closure the default graph's patterns read

    # ---------------------------------------------------------------- windows and sources

    def lars_window(self, w: StreamWindow) -> TimeWindow | TupleWindow:
        stream = f"<{w.stream}>"
        if w.kind == "time":
            return TimeWindow(w.size - 1, w.step, stream, self.t0 + w.size - 1)
        if w.kind == "rows":
            return TupleWindow(w.size, stream)
        return TimeWindow(0, 1, stream)

    def window_atom(self, w: StreamWindow, atom: Atom, op: Op = Op.DIAMOND, time: Var | None = None) -> ExtAtom:
        return ExtAtom(atom, op, time, self.lars_window(w))

    def source_atom(self, source: Source, pred: str | Var, s, o) -> ExtAtom:
        """The atom that reads triple ``s pred o`` from one window or one static graph."""
        kind, what = source
        if kind == "window":
            return self.window_atom(what, Atom(pred, (s, o)))
        return ExtAtom(Atom(QUAD, (f"<{what}>", s, pred, o)))

    def union_pred(self, sources: tuple[Source, ...], pred: str | None) -> str:
        """The predicate holding the triples of ``pred`` (None: of every predicate) in several sources."""
        name = self.unions.get((sources, pred))
        if name is None:
            name = self.unions[(sources, pred)] = f"{self.base}__g{len(self.unions)}"
            s, p, o = Var("S"), Var("P"), Var("O")
            head = Atom(name, (s, p, o)) if pred is None else Atom(name, (s, o))
            for source in sources:
                self.rules.append(Rule(Head(head), (self.source_atom(source, p if pred is None else pred, s, o),)))
        return name

    def pattern(self, s, p, o) -> ExtAtom:
        from rdflib.paths import Path

        if isinstance(p, Path):
            raise UnsupportedError(f"unsupported SPARQL construct: property path {p.n3()}")
        subj, obj = self.term(s), self.term(o)
        pred = self.term(p)
        if type(pred) is not Var and not (type(pred) is str and pred.startswith("<")):
            raise UnsupportedError(f"a triple pattern's predicate must be an IRI or a variable, not {p.n3()}")
        sources = self.active
        if self.scope is not None and sources == self.default:
            return self.scope.read(pred, subj, obj)
        if len(sources) == 1:
            return self.source_atom(sources[0], pred, subj, obj)
        if type(pred) is Var:
            return ExtAtom(Atom(self.union_pred(sources, None), (subj, pred, obj)))
        return ExtAtom(Atom(self.union_pred(sources, pred), (subj, obj)))

    def term(self, term):
        from rdflib.term import BNode, Variable

        if isinstance(term, Variable):
            return self.names(str(term))
        if isinstance(term, BNode):
            return self.names(f"_:{term}")
        return from_rdflib(term)

    # ---------------------------------------------------------------- algebra

    def bgp(self, triples) -> Node:
        if not triples:
            return Unit()
        if not self.active:  # GRAPH <g> of a graph the dataset does not have
            return Values((), ())
        columns: list[str] = []
        for triple in triples:
            for term in triple:
                key = self.sparql_name(term)
                if key is not None and key not in columns:
                    columns.append(key)
        body = tuple(self.pattern(*triple) for triple in triples)
        pred = f"{self.base}__b{self.bgps}"
        self.bgps += 1
        head = Atom(pred, tuple(self.names(c) for c in columns))
        self.rules.append(Rule(Head(head), body))
        return Relation(pred, tuple(columns))

    @staticmethod
    def sparql_name(term) -> str | None:
        from rdflib.term import BNode, Variable

        if isinstance(term, Variable):
            return str(term)
        if isinstance(term, BNode):
            return f"_:{term}"
        return None

    def expr(self, cv):
        node = translate_expr(cv)
        self.uses_timestamp = self.uses_timestamp or _mentions_timestamp(node)
        return node

    def node(self, cv) -> Node:
        name = cv.name
        if name == "BGP":
            return self.bgp(cv.triples)
        if name == "Join":
            return Join(self.node(cv.p1), self.node(cv.p2))
        if name == "LeftJoin":
            cond = cv.expr
            expr = None if getattr(cond, "name", None) == "TrueFilter" else self.expr(cond)
            return LeftJoin(self.node(cv.p1), self.node(cv.p2), expr)
        if name == "Filter":
            return Filter(self.expr(cv.expr), self.node(cv.p))
        if name == "Union":
            return Union(self.node(cv.p1), self.node(cv.p2))
        if name == "Minus":
            return Minus(self.node(cv.p1), self.node(cv.p2))
        if name == "Extend":
            return Extend(self.node(cv.p), str(cv.var), self.expr(cv.expr))
        if name == "ToMultiSet":
            return self.node(cv.p)
        if name == "values":
            return self.values(cv.res)
        if name == "AggregateJoin":
            group = cv.p
            keys = None if group.expr is None else tuple(self.expr(e) for e in group.expr)
            aggs = []
            for agg in cv.A:
                node = translate_aggregate(agg)
                self.uses_timestamp = self.uses_timestamp or _mentions_timestamp(node)
                aggs.append((str(agg.res), node))
            return Group(self.node(group.p), keys, tuple(aggs))
        if name == "Project":
            return Project(self.node(cv.p), tuple(str(v) for v in cv.PV))
        if name in ("Distinct", "Reduced"):
            return Distinct(self.node(cv.p))
        if name == "OrderBy":
            conds = []
            for cond in cv.expr:
                if getattr(cond, "name", None) == "OrderCondition":
                    conds.append((self.expr(cond.expr), cond.order == "DESC"))
                else:
                    conds.append((self.expr(cond), False))
            return OrderBy(self.node(cv.p), tuple(conds))
        if name == "Slice":
            return Slice(self.node(cv.p), cv.start or 0, cv.length)
        if name == "Graph":
            return self.graph(cv.term, cv.p)
        what = {"ServiceGraphPattern": "SERVICE", "Group": "GROUP BY without an aggregate"}
        raise UnsupportedError(f"unsupported SPARQL construct: {what.get(name, name)}")

    def graph(self, term, inner) -> Node:
        """GRAPH <g> { … } reads one named window or graph; GRAPH ?g { … } each of them, binding ?g."""
        from rdflib.term import Variable

        outer = self.active
        try:
            if not isinstance(term, Variable):
                source = self.named.get(str(term))
                self.active = (source,) if source is not None else ()
                return self.node(inner)
            branches: list[Node] = []
            for iri, source in self.named.items():
                self.active = (source,)
                branches.append(Join(self.node(inner), Values((str(term),), ((f"<{iri}>",),))))
            if not branches:
                return Values((), ())
            out = branches[0]
            for branch in branches[1:]:
                out = Union(out, branch)
            return out
        finally:
            self.active = outer

    def values(self, res) -> Values:
        variables: list[str] = []
        for row in res:
            for var in row:
                if str(var) not in variables:
                    variables.append(str(var))
        rows = []
        for row in res:
            by_name = {str(k): v for k, v in row.items()}
            rows.append(tuple(_value(by_name.get(v)) for v in variables))
        return Values(tuple(variables), tuple(rows))

    # ---------------------------------------------------------------- bookkeeping rules

    def timestamp_rule(self) -> str:
        pred = f"{self.base}__ts"
        s, p, o, t = Var("S"), Var("P"), Var("O"), Var("T")
        for w in self.windows:
            atom = self.window_atom(w, Atom(p, (s, o)), Op.AT, t)
            self.rules.append(Rule(Head(Atom(pred, (s, p, o, t))), (atom,)))
        return pred

    def answer_rule(self, algebra: Node, variables: tuple[str, ...]) -> str | None:
        """When the query is a projection of one pattern, a rule whose facts are exactly its answers."""
        inner = algebra.inner if type(algebra) is Distinct else algebra
        if type(inner) is not Project or type(inner.inner) is not Relation:
            return None
        rel = inner.inner
        if not set(variables) <= set(rel.columns):
            return None
        head = Atom(self.base, tuple(self.names(v) for v in variables))
        body = ExtAtom(Atom(rel.pred, tuple(self.names(c) for c in rel.columns)))
        self.rules.append(Rule(Head(head), (body,)))
        return self.base


def _value(term):
    """A VALUES cell: a constant, or None for UNDEF (which rdflib's algebra writes as the string 'UNDEF')."""
    from rdflib.term import Identifier

    return from_rdflib(term) if isinstance(term, Identifier) else None


def _mentions_timestamp(node) -> bool:
    if type(node).__name__ == "Call" and getattr(node, "name", None) == "timestamp":
        return True
    if is_dataclass(node):
        for f in fields(node):
            value = getattr(node, f.name)
            items = value if isinstance(value, tuple) else (value,)
            if any(_mentions_timestamp(v) for v in items if is_dataclass(v)):
                return True
    return False


def _template(triples, names: _Names) -> Template:
    from rdflib.term import BNode, Variable

    out = []
    for triple in triples:
        row = []
        for term in triple:
            if isinstance(term, Variable):
                row.append(("var", str(term)))
            elif isinstance(term, BNode):
                row.append(("bnode", str(term)))
            else:
                row.append(("const", from_rdflib(term)))
        out.append(tuple(row))
    return Template(tuple(out))


def _resolve_stream(iri: str, query, loc: int, src: SourceText) -> str:
    if iri.startswith("<"):
        return iri[1:-1]
    prefix, _, local = iri.partition(":")
    try:
        return str(query.prologue.resolvePName(prefix, local))
    except Exception:  # rdflib raises a bare Exception for an unknown prefix
        raise src.error(f"undeclared prefix {prefix}:", loc) from None


def _declared_prefixes(text: str) -> tuple[tuple[str, str], ...]:
    found = re.findall(r"(?i)\bPREFIX\s+([A-Za-z][\w\-.]*|)\s*:\s*<([^<>\s]*)>", text)
    return tuple(dict(found).items())


def compile_query(text: str, *, source: str | None = None, t0: int = 0, base: str | None = None,
                  default_name: str = "q", policy: str | None = None, entailment=None) -> ContinuousQuery:
    """Parse and compile one C-SPARQL query (see the module docstring).

    ``entailment``, when given, maps the query's FROM graph IRIs to a :class:`~rdfstream.reasoning.scope.Closure`
    (a rule set with the static closure of those graphs): the default graph's patterns then read the closure of
    the windows and graphs under the rules (SEMANTICS.md §3)."""
    try:
        return _compile(text, source, t0, base, default_name, policy, entailment)
    except UnsupportedError as err:
        if err.span is None:  # rdflib's algebra has no positions: point at the construct's keyword
            err.span = _locate(err.message, text, source)
        raise


def _locate(message: str, text: str, source: str | None) -> Span | None:
    code = mask_lexical(blank_comments(text))
    for word in re.findall(r"\b[A-Z][A-Z_]{2,}\b", message):
        found = re.search(rf"(?i)\b{word}\b", code)
        if found:
            return SourceText(text, source).span(found.start())
    path = re.search(r"property path (\S+)$", message)
    if path and path.group(1) in text:
        return SourceText(text, source).span(text.index(path.group(1)))
    return None


def _compile(text: str, source: str | None, t0: int, base: str | None, default_name: str,
             policy: str | None, entailment=None) -> ContinuousQuery:
    src = SourceText(text, source)
    env: Envelope = parse_envelope(text, source)
    query = parse_sparql(env.sparql, src)
    algebra = query.algebra
    form = _FORMS.get(algebra.name)
    if form is None:
        raise UnsupportedError(f"unsupported query form {algebra.name.removesuffix('Query').upper()}")
    windows = []
    for iri, named, spec, loc in env.windows:
        stream = _resolve_stream(iri, query, loc, src)
        windows.append(stream_window(stream, named, spec, env.every, loc, src))
    if not windows:
        raise src.error("a continuous query needs at least one FROM STREAM <iri> [window] clause", 0)
    kinds = {w.kind for w in windows}
    if len(kinds) > 1 and "time" in kinds or "triples" in kinds and len(windows) > 1:
        raise UnsupportedError("a query mixes time windows with count windows ([ROWS n], [RANGE TRIPLES n]), or"
                               " has RANGE TRIPLES on several streams: reports could not follow one clock",
                               src.span(env.windows[0][3]))
    graphs, named_graphs = [], []
    for clause in algebra.datasetClause or ():
        if clause.named is not None:
            named_graphs.append(str(clause.named))
        else:
            graphs.append(str(clause.default))
    name = env.name or default_name
    base = base or base_name(name)
    graphs, named_graphs = list(dict.fromkeys(graphs)), list(dict.fromkeys(named_graphs))
    compiler = _Compiler(base, tuple(windows), tuple(graphs), tuple(named_graphs), t0, src)
    guards: frozenset = frozenset()
    entailment_note = None
    if entailment is not None:
        from ...reasoning.scope import Scope

        closure = entailment(tuple(graphs))
        compiler.scope = Scope(closure, tuple(compiler.lars_window(w) for w in windows if not w.named))
        guards = frozenset(closure.guards)
        spec = closure.specialised
        entailment_note = (
            f"the default graph is read through closure {compiler.scope.name}: the windows and FROM graphs under"
            f" {len(closure.rules)} entailment rules"
            + (f", specialised against the FROM graphs into {len(spec.rules)} rules (the streams must bring no"
               " schema triples)" if spec is not None else " (not specialised)"))
    tree = compiler.node(algebra.p)
    facts: list = []
    if compiler.scope is not None:
        scope_rules, facts = compiler.scope.program()
        compiler.rules[:0] = scope_rules
    variables = tuple(str(v) for v in algebra.PV) if form == "select" else ()
    template = _template(algebra.template, compiler.names) if form == "construct" else None
    timestamps = compiler.timestamp_rule() if compiler.uses_timestamp else None
    answer = compiler.answer_rule(tree, variables) if form == "select" else None
    if env.kind == "STREAM" and form != "construct":
        raise UnsupportedError("REGISTER STREAM needs a CONSTRUCT query (its triples form the stream)", src.span(0))
    prefixes = _declared_prefixes(env.sparql)
    program = Program(tuple(compiler.rules), tuple(facts), prefixes)
    return ContinuousQuery(
        name=name, form=form, windows=tuple(windows), graphs=tuple(graphs), program=program,
        named_graphs=tuple(named_graphs), algebra=tree, variables=variables, template=template,
        is_stream=env.kind == "STREAM",
        policy=policy or _POLICIES[env.kind], t0=t0, timestamps=timestamps, answer=answer,
        prefixes=prefixes, guards=guards, entailment=entailment_note,
    )
