"""Acceptance tests: a query registered with ``rules/rdfs.lars`` answers what rdflib answers over owlrl's RDFS closure.

SEMANTICS.md §3: at each report, a query registered with an entailment rule file answers exactly what the same
SPARQL query answers over the closure of (background ∪ current window contents) under the rules.  The oracle
here is independent of ``rdfstream``: the report times and window snapshots come from ``csparql_oracle``
(:func:`snapshots`, the C-SPARQL report rules of SEMANTICS.md §2), the closure from owlrl's
``RDFS_Semantics`` (no axiomatic or datatype-axiomatic triples) and the answers from rdflib's SPARQL engine.

Random small ontologies (``ex:C0 … ex:C4``, ``ex:p0 … ex:p3``; ``rdfs:subClassOf``/``subPropertyOf`` with cycles,
``rdfs:domain``/``range``, some instance triples) are the ``FROM`` graph; random instance triples (``ex:a0 …
ex:a5``, sometimes a literal object, sometimes a class or property IRI in an instance position) arrive on one
stream under a random time window (sometimes ``[ROWS n]`` or ``[RANGE TRIPLES n]``).  With ``specialise=True``
(the default) the stream brings no schema triples; with ``specialise=False`` it may bring any of the four RDFS
schema predicates, whose derivations must expire with them.  A second query on the same engine, with or
without the rules, checks that queries sharing an engine do not see each other's closures.

owlrl also applies the rules that ``rules/rdfs.lars`` switches off (rdf1, rdfs4a/4b, 6, 8, 10, 12, 13): every
query here reads the ``ex:`` vocabulary only (a filter or a constant ``ex:`` term in the position those rules
fill), so their triples (``rdf:type rdfs:Resource``, ``rdf:type rdf:Property``, reflexive ``subPropertyOf``)
never match.  Nothing else is filtered: a literal object of a property with a range becomes the *subject* of an
``rdf:type`` triple in both (generalised RDF), and ``?x a ?c`` answers it.

owlrl treats two literals with equal Python values as the same (``"x"`` and ``"x"@en``, ``1`` and ``true``) and
copies triples between them; that is not RDFS entailment, so the generators use literals of distinct values.
"""

from __future__ import annotations

import os
from collections import Counter

import owlrl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF, RDFS
from rdflib.plugins.sparql import prepareQuery

try:
    from csparql_oracle import (
        Advance,
        Case,
        Push,
        QuerySpec,
        RowsWindow,
        TimeWindow,
        TriplesWindow,
        canonical,
        fmt_row,
        fmt_triple,
        snapshots,
    )
    from csparql_strategies import time_windows
except ImportError:  # pragma: no cover - when tests/ is a package
    from tests.csparql_oracle import (
        Advance,
        Case,
        Push,
        QuerySpec,
        RowsWindow,
        TimeWindow,
        TriplesWindow,
        canonical,
        fmt_row,
        fmt_triple,
        snapshots,
    )
    from tests.csparql_strategies import time_windows

EX = "http://ex.org/"
ONTO = EX + "onto"
STREAM = EX + "s"
RULES = "rules/rdfs.lars"
PROLOGUE = ("PREFIX ex: <http://ex.org/> PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> "
            "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>")
IN_EX = 'STRSTARTS(STR(?{}), "http://ex.org/")'

CLASSES = [URIRef(f"{EX}C{i}") for i in range(5)]
PROPS = [URIRef(f"{EX}p{i}") for i in range(4)]
NODES = [URIRef(f"{EX}a{i}") for i in range(6)]
LITERALS = [Literal("x"), Literal("y", lang="en"), Literal(1)]  # distinct values (see the module docstring)
SCHEMA = (RDFS.subClassOf, RDFS.subPropertyOf, RDFS.domain, RDFS.range)

# ------------------------------------------------------------------------------------------------ data


@st.composite
def schema_triples(draw):
    pred = draw(st.sampled_from(SCHEMA))
    if pred == RDFS.subClassOf:
        return (draw(st.sampled_from(CLASSES)), pred, draw(st.sampled_from(CLASSES)))
    if pred == RDFS.subPropertyOf:
        return (draw(st.sampled_from(PROPS)), pred, draw(st.sampled_from(PROPS)))
    return (draw(st.sampled_from(PROPS)), pred, draw(st.sampled_from(CLASSES)))


@st.composite
def instance_triples(draw):
    """Mostly ``a_i p_j a_k`` and ``a_i rdf:type C_k``; sometimes a literal object or a vocabulary IRI."""
    pred = draw(st.sampled_from(PROPS + [RDF.type, RDF.type]))
    rare = draw(st.integers(0, 11))
    s = draw(st.sampled_from(CLASSES + PROPS)) if rare == 0 else draw(st.sampled_from(NODES))
    if pred == RDF.type:
        return (s, pred, draw(st.sampled_from(CLASSES)))
    if rare in (1, 2):
        o = draw(st.sampled_from(LITERALS))
    elif rare == 3:
        o = draw(st.sampled_from(CLASSES + PROPS))
    else:
        o = draw(st.sampled_from(NODES))
    return (s, pred, o)


@st.composite
def ontologies(draw, max_schema: int = 10):
    schema = draw(st.lists(schema_triples(), min_size=2, max_size=max_schema, unique=True))
    instances = draw(st.lists(instance_triples(), max_size=3, unique=True)) if draw(st.booleans()) else []
    return tuple(schema + instances)


@st.composite
def stream_events(draw, schema_on_stream: bool, max_times: int = 8):
    """Pushes in time order (several may share a timestamp), sometimes a watermark in between."""
    span = draw(st.sampled_from([10, 20, 30]))
    times = sorted(draw(st.lists(st.integers(0, span), min_size=1, max_size=max_times, unique=True)))
    triple = st.one_of(instance_triples(), schema_triples()) if schema_on_stream else instance_triples()
    out = []
    last = None
    for t in times:
        if last is not None and draw(st.integers(0, 4)) == 0:
            out.append(Advance(draw(st.integers(last, t))))
        for _ in range(draw(st.sampled_from([1, 1, 1, 2]))):
            ts = draw(st.lists(triple, min_size=1, max_size=5))
            if draw(st.integers(0, 6)) == 0:  # a triple repeated at the same timestamp
                ts.append(ts[0])
            out.append(Push(STREAM, tuple(ts), t))
        last = t
    return tuple(out)


@st.composite
def windows(draw):
    kind = draw(st.sampled_from(["time"] * 6 + ["rows", "triples"]))
    if kind == "rows":
        return RowsWindow(draw(st.integers(1, 5)))
    if kind == "triples":
        return TriplesWindow(draw(st.integers(1, 4)))
    return draw(time_windows(long=False))


# --------------------------------------------------------------------------------------------- queries


@st.composite
def query_parts(draw):
    """(head, where, modifiers) of one of the query shapes; every answer position reads ex: terms only."""
    c, d = (f"ex:C{draw(st.integers(0, 4))}" for _ in range(2))
    p = f"ex:p{draw(st.integers(0, 3))}"
    shapes = [
        ("SELECT ?x ?c", f"WHERE {{ ?x a ?c FILTER({IN_EX.format('c')}) }}", ""),
        ("SELECT ?x ?y", f"WHERE {{ ?x {p} ?y }}", ""),
        ("SELECT ?x", f"WHERE {{ ?x a {c} }}", ""),
        ("SELECT ?x ?p ?y", f"WHERE {{ ?x ?p ?y FILTER({IN_EX.format('p')}) }}", ""),
        ("SELECT ?x ?y ?c", f"WHERE {{ ?x {p} ?y . ?y a ?c FILTER({IN_EX.format('c')}) }}", ""),
        ("SELECT ?x ?y", f"WHERE {{ ?x {p} ?y . ?x a {c} }}", ""),
        ("SELECT ?x", f"WHERE {{ ?x a {c} . ?x a {d} }}", ""),
        ("SELECT ?x ?d", f"WHERE {{ ?x a ?c . ?c rdfs:subClassOf ?d FILTER({IN_EX.format('d')}) }}", ""),
        ("SELECT (COUNT(*) AS ?n)", f"WHERE {{ ?x a {c} }}", ""),
        ("SELECT (COUNT(*) AS ?n)", f"WHERE {{ ?x a ?c FILTER({IN_EX.format('c')}) }}", ""),
        ("SELECT ?c (COUNT(?x) AS ?n)", f"WHERE {{ ?x a ?c FILTER({IN_EX.format('c')}) }}", "GROUP BY ?c"),
    ]
    return draw(st.sampled_from(shapes))


@st.composite
def query_specs(draw, name: str = "q"):
    head, where, modifiers = draw(query_parts())
    return QuerySpec(name=name, prologue=PROLOGUE, head=head, where=where, modifiers=modifiers,
                     windows=((STREAM, draw(windows())),), graphs=(ONTO,), grouped=bool(modifiers))


# ---------------------------------------------------------------------------------------------- oracle


def _closure(background, snapshot, entail: bool) -> Graph:
    g = Graph()
    for triple in background:
        g.add(triple)
    for triple in snapshot:
        g.add(triple)
    if entail:
        owlrl.DeductiveClosure(owlrl.RDFS_Semantics, axiomatic_triples=False, datatype_axioms=False).expand(g)
    return g


def expected_reports(case: Case, entail: bool, cache: dict) -> list:
    """[(t, variables, rows)]: rdflib's answers over the (owlrl RDFS closure of the) snapshot at each report."""
    q = case.query
    prepared = prepareQuery(q.sparql)
    # rdflib answers a GROUP BY over no solutions with one empty row instead of none: ask first
    probe = prepareQuery(f"{q.prologue} ASK {q.where}") if q.grouped else None
    background = [triple for g in q.graphs for triple in case.graphs.get(g, ())]
    out = []
    for t, contrib in snapshots(case):
        key = (frozenset(contrib), entail)
        graph = cache.get(key)
        if graph is None:
            graph = cache[key] = _closure(background, contrib, entail)
        result = graph.query(prepared)
        rows = [{str(k): v for k, v in row.items() if v is not None} for row in result.bindings]
        if probe is not None and not graph.query(probe).askAnswer:
            rows = []
        out.append((t, [str(v) for v in result.vars], rows))
    return out


# --------------------------------------------------------------------------------------------- the driver


def run_engine(case: Case, specs: list, specialise: bool) -> dict:
    """Feed ``case`` to one engine with every query of ``specs`` ((spec, with rules?)); reports per query name."""
    from rdfstream.api import Engine

    eng = Engine(t0=case.t0)
    eng.register_stream(STREAM)
    graph = Graph()
    for triple in case.graphs[ONTO]:
        graph.add(triple)
    eng.register_graph(ONTO, graph)
    got: dict = {}
    for spec, entail in specs:
        h = (eng.register_query(spec.text, rules=[RULES], specialise=specialise) if entail
             else eng.register_query(spec.text))
        got[spec.name] = []
        h.add_consumer(got[spec.name].append)
    for ev in case.events:
        if isinstance(ev, Push):
            eng.push(ev.stream, list(ev.triples), ev.t)
        else:
            eng.advance_to(ev.t)
    eng.close()
    return got


def _describe(case: Case, spec: QuerySpec, entail: bool, specialise: bool) -> str:
    lines = [f"query: {spec.text}", f"rules: {[RULES] if entail else []} specialise={specialise}  t0: {case.t0}",
             f"rdflib query: {spec.sparql}"]
    lines.append("background: " + " ".join(_fmt(x) for x in case.graphs[ONTO]))
    for ev in case.events:
        if isinstance(ev, Push):
            lines.append(f"  push t={ev.t}: " + " ".join(_fmt(x) for x in ev.triples))
        else:
            lines.append(f"  advance_to({ev.t})")
    return "\n".join(lines)


def _fmt(triple) -> str:
    return fmt_triple(triple).replace(str(RDFS), "rdfs:").replace(str(RDF), "rdf:")


def compare(case: Case, spec: QuerySpec, entail: bool, specialise: bool, expected: list, got: list) -> None:
    def canon(t, variables, rows):
        return canonical(t, "select", variables, rows, [], None, ordered=False, star=False, keep_order=False)

    exp = [canon(t, variables, rows) for t, variables, rows in expected]
    act = [canon(r.t, list(r.variables), list(r.rows)) for r in got]
    if exp == act:
        return
    first = next((i for i, (x, y) in enumerate(zip(exp, act, strict=False)) if x != y), min(len(exp), len(act)))
    lines = [f"reports differ (first difference at report #{first}; {len(exp)} expected, {len(act)} from the"
             f" engine)", _describe(case, spec, entail, specialise), "expected (owlrl + rdflib):"]
    for t, variables, rows in expected:
        lines.append(f"  t={t} vars={variables} rows=[" + ", ".join(sorted(map(fmt_row, rows))) + "]")
    lines.append("engine:")
    for r in got:
        lines.append(f"  t={r.t} vars={list(r.variables)} rows=[" + ", ".join(sorted(map(fmt_row, r.rows))) + "]")
    raise AssertionError("\n".join(lines))


def check(case: Case, specs: list, specialise: bool) -> None:
    """``specs``: [(spec, with rules?)], all registered on one engine, each compared with its oracle."""
    got = run_engine(case, specs, specialise)
    cache: dict = {}
    for spec, entail in specs:
        sub = Case(case.t0, (STREAM,), case.graphs, case.events, spec)
        compare(sub, spec, entail, specialise, expected_reports(sub, entail, cache), got[spec.name])


@st.composite
def cases(draw, schema_on_stream: bool, max_times: int = 8):
    """(case, [(spec, with rules?)]): the first query always has the rules, a second one sometimes."""
    onto = draw(ontologies())
    events = draw(stream_events(schema_on_stream, max_times))
    first = min(ev.t for ev in events if isinstance(ev, Push))
    t0 = draw(st.sampled_from([0, first, max(0, first - 3)]))
    specs = [(draw(query_specs("q")), True)]
    if draw(st.integers(0, 2)) == 0:
        specs.append((draw(query_specs("other")), draw(st.booleans())))
    return Case(t0, (STREAM,), {ONTO: onto}, events, specs[0][0]), specs


COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}

# ------------------------------------------------------------------------------------------ property tests


@settings(max_examples=int(os.environ.get("RDFSTREAM_EXAMPLES", "60")), **COMMON)
@given(cases(schema_on_stream=False))
def test_rdfs_entailment_matches_owlrl(drawn):
    case, specs = drawn
    check(case, specs, specialise=True)


@settings(max_examples=int(os.environ.get("RDFSTREAM_EXAMPLES", "60")) // 2, **COMMON)
@given(cases(schema_on_stream=True))
def test_rdfs_entailment_unspecialised_with_schema_on_the_stream_matches_owlrl(drawn):
    case, specs = drawn
    check(case, specs, specialise=False)


@pytest.mark.soak
@settings(max_examples=int(os.environ.get("RDFSTREAM_SOAK_EXAMPLES", "2000")), **COMMON)
@given(st.booleans().flatmap(lambda schema: st.tuples(st.just(schema), cases(schema, max_times=12))))
def test_rdfs_entailment_matches_owlrl_soak(drawn):
    schema_on_stream, (case, specs) = drawn
    check(case, specs, specialise=not schema_on_stream)


# ------------------------------------------------------------------------------- hand-written examples

C0, C1, C2 = CLASSES[:3]
p0, p1 = PROPS[:2]
a0, a1, a2 = NODES[:3]


def _hand(head, where, window, modifiers=""):
    return QuerySpec(name="q", prologue=PROLOGUE, head=head, where=where, modifiers=modifiers,
                     windows=((STREAM, window),), graphs=(ONTO,), grouped=bool(modifiers))


def test_literal_in_range_is_typed_like_owlrl():
    """rdfs3 with a literal object: owlrl (generalised RDF) types the literal; so does the engine."""
    onto = ((p1, RDFS.subPropertyOf, p0), (p0, RDFS.range, C1), (C1, RDFS.subClassOf, C2))
    events = (Push(STREAM, ((a0, p1, Literal("x")), (a1, p0, a2)), 1),)
    spec = _hand("SELECT ?x ?c", f"WHERE {{ ?x a ?c FILTER({IN_EX.format('c')}) }}",
                 TimeWindow(5, 5, "[RANGE 5ms TUMBLING]"))
    case = Case(0, (STREAM,), {ONTO: onto}, events, spec)
    want = [(5, ["x", "c"], [{"x": x, "c": c} for x in (Literal("x"), a2) for c in (C1, C2)])]
    assert [(t, v, Counter(map(fmt_row, r))) for t, v, r in expected_reports(case, True, {})] == \
        [(t, v, Counter(map(fmt_row, r))) for t, v, r in want]
    for specialise in (True, False):
        check(case, [(spec, True)], specialise)


def test_schema_on_the_stream_expires_with_its_derivations():
    """Unspecialised: a subClassOf triple in the window types a0; once it leaves the window, a0 is only C0."""
    onto = ((p0, RDFS.domain, C0),)
    events = (Push(STREAM, ((C0, RDFS.subClassOf, C1),), 0), Push(STREAM, ((a0, p0, a1),), 3),
              Push(STREAM, ((a0, p0, a2),), 5))
    spec = _hand("SELECT ?x ?c", f"WHERE {{ ?x a ?c FILTER({IN_EX.format('c')}) }}",
                 TimeWindow(4, 2, "[RANGE 4ms STEP 2ms]"))
    case = Case(0, (STREAM,), {ONTO: onto}, events, spec)
    # closes 4 [0,4) {C0<C1, a0 p0 a1}; 6 [2,6) {a0 p0 a1, a0 p0 a2}; 8 [4,8) {a0 p0 a2}; 10: empty
    assert [(t, sorted(map(fmt_row, rows))) for t, _, rows in expected_reports(case, True, {})] == [
        (4, ["{c=<ex:C0>, x=<ex:a0>}", "{c=<ex:C1>, x=<ex:a0>}"]),
        (6, ["{c=<ex:C0>, x=<ex:a0>}"]),
        (8, ["{c=<ex:C0>, x=<ex:a0>}"]),
    ]
    check(case, [(spec, True)], specialise=False)


def test_background_alone_never_reports():
    onto = ((C0, RDFS.subClassOf, C1), (a0, RDF.type, C0))
    spec = _hand("SELECT (COUNT(*) AS ?n)", "WHERE { ?x a ex:C1 }", TimeWindow(5, 5, "[RANGE 5ms TUMBLING]"))
    case = Case(0, (STREAM,), {ONTO: onto}, (Advance(30),), spec)
    assert expected_reports(case, True, {}) == []
    check(case, [(spec, True)], specialise=True)
