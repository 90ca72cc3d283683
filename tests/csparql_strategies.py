"""Hypothesis strategies for C-SPARQL acceptance tests: streams, static graphs, windows and queries.

Vocabulary (small, so that joins happen): nodes ``ex:a … ex:d``; ``ex:p``/``ex:q`` link nodes, ``ex:v`` gives
numbers (mostly integers, sometimes a decimal or a double), ``ex:name`` strings, ``ex:r`` anything (nodes,
integers, strings, a language-tagged string), ``rdf:type`` classes ``ex:A``/``ex:B``.  Query variables are typed
by the predicates that bind them, so that the generators can keep away from the places where rdflib is not a
SPARQL 1.1 oracle (see ``csparql_oracle``): ``?s ?t ?p ?c`` IRIs, ``?v ?w`` numbers, ``?n`` strings, ``?o``
anything.  ``ORDER BY`` is generated only over all projected variables when they are all certainly bound and
of one kind each (a total order), and ``LIMIT``/``OFFSET`` only with such an ``ORDER BY``.  Some pushes carry
triples that match all the query's patterns at once, so that joins succeed often.
"""

from __future__ import annotations

from decimal import Decimal

from hypothesis import strategies as st
from rdflib import Literal, URIRef
from rdflib.namespace import RDF

try:
    from csparql_oracle import Advance, Case, Push, QuerySpec, RowsWindow, TimeWindow, TriplesWindow
except ImportError:  # pragma: no cover - when tests/ is a package
    from tests.csparql_oracle import Advance, Case, Push, QuerySpec, RowsWindow, TimeWindow, TriplesWindow

EX = "http://ex.org/"
S1, S2 = EX + "s1", EX + "s2"
G1, G2 = EX + "g1", EX + "g2"
STREAMS = (S1, S2)
GRAPHS = (G1, G2)

NODES = [URIRef(EX + x) for x in "abcd"]
CLASSES = [URIRef(EX + "A"), URIRef(EX + "B")]
INTS = [Literal(i) for i in (-1, 0, 1, 2, 3, 5)]
NUMS = INTS * 3 + [Literal(Decimal("1.5")), Literal(2.5)]  # mostly integers, sometimes a decimal or a double
STRS = [Literal(x) for x in ("a", "b", "ab", "B", 'x"y', "é")]
LANG = Literal("a", lang="en")
P, Q, V, NAME, R = (URIRef(EX + x) for x in ("p", "q", "v", "name", "r"))

PROLOGUE = ("PREFIX ex: <http://ex.org/> PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> "
            "PREFIX f: <http://larkc.eu/csparql/sparql/jena/ext#>")

# ------------------------------------------------------------------------------------------------ data


@st.composite
def triples(draw):
    pred = draw(st.sampled_from([P, P, Q, V, V, NAME, R, RDF.type]))
    s = draw(st.sampled_from(NODES[:3] * 3 + NODES))
    if pred in (P, Q):
        o = draw(st.sampled_from(NODES[:3] * 3 + NODES))
    elif pred == V:
        o = draw(st.sampled_from(NUMS))
    elif pred == NAME:
        o = draw(st.sampled_from(STRS))
    elif pred == R:
        o = draw(st.sampled_from(NODES[:2] + INTS[2:4] + STRS[:2] + [LANG]))
    else:
        o = draw(st.sampled_from(CLASSES))
    return (s, pred, o)


@st.composite
def events(draw, favoured=STREAMS, max_times: int = 10, patterns=()):
    """Pushes in time order (timestamps 0..40, several pushes may share one), with watermarks in between.

    With ``patterns`` (a query's triple patterns), some pushes carry triples that match them all.
    """
    span = draw(st.sampled_from([10, 20, 40]))
    times = sorted(draw(st.lists(st.integers(0, span), min_size=2, max_size=max_times, unique=True)))
    pool = list(favoured) * 4 + list(STREAMS)
    out = []
    last = None
    for t in times:
        if last is not None and draw(st.integers(0, 3)) == 0:
            out.append(Advance(draw(st.integers(last, t))))
        for _ in range(draw(st.sampled_from([1, 1, 1, 2]))):
            ts = draw(st.lists(triples(), min_size=1, max_size=5))
            if patterns and draw(st.booleans()):
                ts[draw(st.integers(0, len(ts))):0] = draw(matching_triples(patterns))
            if draw(st.integers(0, 6)) == 0:  # a triple repeated at the same timestamp
                ts.append(ts[0])
            out.append(Push(draw(st.sampled_from(pool)), tuple(ts), t))
        last = t
    if draw(st.booleans()):
        out.append(Advance(last + draw(st.integers(0, 12))))
    return tuple(out)


@st.composite
def static_graphs(draw):
    return {g: tuple(draw(st.lists(triples(), max_size=6, unique=True))) for g in GRAPHS}


# --------------------------------------------------------------------------------------------- windows


@st.composite
def time_windows(draw, long=True):
    kind = draw(st.integers(0 if long else 1, 9))
    if kind == 0:  # other units: one window much longer than the data (alone in its query: with a second
        # window of a short step it would report at every close of that window for the whole range)
        return draw(st.sampled_from([
            TimeWindow(1000, 1000, "[RANGE 1s TUMBLING]"),
            TimeWindow(1000, 7, "[RANGE 1s STEP 7ms]"),
            TimeWindow(60_000, 60_000, "[RANGE 1m STEP 1m]"),
            TimeWindow(3_600_000, 3_600_000, "[RANGE 1h TUMBLING]"),
            TimeWindow(86_400_000, 20, "[RANGE 1d STEP 20ms]"),
        ]))
    a = draw(st.integers(1, 20))
    if kind <= 3:
        return TimeWindow(a, a, f"[RANGE {a}ms TUMBLING]" if draw(st.booleans()) else f"[RANGE {a}ms STEP {a}ms]")
    b = draw(st.integers(1, 10))  # b > a: hopping windows with gaps
    return TimeWindow(a, b, f"[RANGE {a}ms STEP {b}ms]")


@st.composite
def window_specs(draw, kind: str | None = None):
    """((stream, window), ...) for one query: time windows, ROWS, or a single RANGE TRIPLES."""
    kind = kind or draw(st.sampled_from(["time", "time", "time", "rows", "triples"]))
    if kind == "triples":
        return ((draw(st.sampled_from(STREAMS)), TriplesWindow(draw(st.integers(1, 5)))),)
    streams = draw(st.sampled_from([(S1,), (S1,), (S2,), (S1, S2)]))
    if kind == "rows":
        return tuple((s, RowsWindow(draw(st.integers(1, 5)))) for s in streams)
    return tuple((s, draw(time_windows(long=len(streams) == 1))) for s in streams)


# --------------------------------------------------------------------------------------------- queries

# (pattern, {variable: kind}); kinds: iri, int, str, any
BLOCKS = [
    ("?s ex:p ?t", {"s": "iri", "t": "iri"}),
    ("?t ex:q ?s", {"s": "iri", "t": "iri"}),
    ("?s ex:q ?t", {"s": "iri", "t": "iri"}),
    ("?s ex:v ?v", {"s": "iri", "v": "int"}),
    ("?t ex:v ?w", {"t": "iri", "w": "int"}),
    ("?s ex:name ?n", {"s": "iri", "n": "str"}),
    ("?s ex:r ?o", {"s": "iri", "o": "any"}),
    ("?s ?p ?o", {"s": "iri", "p": "iri", "o": "any"}),
    ("?s a ?c", {"s": "iri", "c": "iri"}),
    ("?s ex:p ex:b", {"s": "iri"}),
    ("ex:a ex:p ?t", {"t": "iri"}),
    ("?s a ex:A", {"s": "iri"}),
]
CONST = {"iri": ["ex:a", "ex:b", "ex:c"], "int": ["0", "1", "2", "3"], "str": ['"a"', '"b"', '"ab"']}


def _triple_of(pattern: str) -> tuple[str, str, str]:
    s, p, o = pattern.split()
    return s, ("rdf:type" if p == "a" else p), o


@st.composite
def comparisons(draw, env: dict):
    """A FILTER expression over the variables in ``env`` (variable -> kind), kind-correct."""
    var = draw(st.sampled_from(sorted(env)))
    kind = env[var]
    x = "?" + var
    if draw(st.integers(0, 7)) == 0:
        return draw(st.sampled_from([f"bound({x})", f"!bound({x})"]))
    if kind == "int":
        k = draw(st.integers(-1, 4))
        others = [v for v in env if env[v] == "int" and v != var]
        forms = [f"{x} > {k}", f"{x} <= {k}", f"{x} = {k}", f"{x} != {k}", f"{x} + {k} >= 3",
                 f"{x} * 2 > {k}", f"{x} / 2 < {k}", f"-{x} < {k}", f"{x} - 1 >= {k}", f"isLiteral({x})"]
        if others:
            y = "?" + draw(st.sampled_from(others))
            forms += [f"{x} < {y}", f"{x} + {y} > {k}", f"{x} = {y}"]
        return draw(st.sampled_from(forms))
    if kind == "str":
        c = draw(st.sampled_from(CONST["str"]))
        return draw(st.sampled_from([f"{x} = {c}", f"{x} != {c}", f"{x} < {c}", f"{x} >= {c}",
                                     f'regex({x}, "^a")', f'regex({x}, "b", "i")', f"str({x}) = {c}",
                                     f"isLiteral({x})"]))
    if kind == "iri":
        c = draw(st.sampled_from(CONST["iri"]))
        others = [v for v in env if env[v] == "iri" and v != var]
        forms = [f"{x} = {c}", f"{x} != {c}", f"isIRI({x})", f'regex(str({x}), "[ab]$")',
                 f'str({x}) = "http://ex.org/a"', f"isLiteral({x})"]
        if others:
            forms.append(f"{x} != ?{draw(st.sampled_from(others))}")
        return draw(st.sampled_from(forms))
    # any kind: only kind-agnostic tests
    c = draw(st.sampled_from(CONST["iri"]))
    return draw(st.sampled_from([f"isIRI({x})", f"isLiteral({x})", f'regex(str({x}), "1|a")', f"{x} = {c}",
                                 f"{x} != {c}", f'str({x}) = "1"', f"!isIRI({x})"]))


@st.composite
def filters(draw, env: dict):
    a = draw(comparisons(env))
    shape = draw(st.integers(0, 5))
    if shape == 0:
        return f"!({a})"
    if shape == 1:
        return f"({a}) && ({draw(comparisons(env))})"
    if shape == 2:
        return f"({a}) || ({draw(comparisons(env))})"
    return a


@st.composite
def bgp(draw, min_size=1, max_size=3):
    size = draw(st.sampled_from([x for x in (1, 1, 2, 2, 3) if min_size <= x <= max_size]))
    picks = draw(st.lists(st.sampled_from(BLOCKS), min_size=size, max_size=size, unique_by=lambda b: b[0]))
    env: dict = {}
    for _, vs in picks:
        env.update(vs)
    return [p for p, _ in picks], env


@st.composite
def group_patterns(draw):
    """(text inside WHERE { }, certainly bound {var: kind}, maybe bound {var: kind}, main triple patterns,
    every triple pattern used)."""
    parts = []
    maybe: dict = {}
    if draw(st.integers(0, 4)) == 0:  # UNION
        left, lenv = draw(bgp(1, 2))
        right, renv = draw(bgp(1, 2))
        branches = []
        for pats, benv in ((left, lenv), (right, renv)):
            inner = " . ".join(pats)
            if draw(st.integers(0, 3)) == 0:
                inner += f" FILTER({draw(filters(benv))})"
            branches.append("{ " + inner + " }")
        parts.append(" UNION ".join(branches))
        used = left + right
        certain = {v: k for v, k in lenv.items() if v in renv}
        maybe.update({v: k for v, k in {**lenv, **renv}.items() if v not in certain})
        main = []
        if draw(st.booleans()):
            extra, eenv = draw(bgp(1, 1))
            parts.append(extra[0])
            main = extra
            used += extra
            for v, k in eenv.items():
                certain[v] = k
                maybe.pop(v, None)
    else:
        main, certain = draw(bgp())
        parts.append(" . ".join(main))
        used = list(main)
    before_values = {**maybe, **certain}
    if draw(st.integers(0, 6)) == 0:  # VALUES (no repeated rows: rdflib may collapse them, see csparql_oracle)
        shape = draw(st.integers(0, 2))
        if shape == 0:
            vals = draw(st.lists(st.sampled_from(CONST["iri"]), min_size=1, max_size=3, unique=True))
            parts.append("VALUES ?s { " + " ".join(vals) + " }")
            if "s" not in certain:
                certain["s"] = "iri"
                maybe.pop("s", None)
        elif shape == 1:
            vals = draw(st.lists(st.sampled_from(CONST["int"]), min_size=1, max_size=3, unique=True))
            parts.append("VALUES ?v { " + " ".join(vals) + " }")
            if "v" not in certain:
                certain["v"] = "int"
                maybe.pop("v", None)
        else:
            rows = draw(st.lists(st.tuples(st.sampled_from(CONST["iri"] + ["UNDEF"]),
                                           st.sampled_from(CONST["str"] + ["UNDEF"])), min_size=1, max_size=3,
                                 unique=True))
            parts.append("VALUES (?s ?n) { " + " ".join(f"({a} {b})" for a, b in rows) + " }")
            for v, k in (("s", "iri"), ("n", "str")):
                if v not in certain:
                    maybe[v] = k
    # rdflib loses solutions of OPTIONAL { P FILTER(e) } when P or e use a variable bound only by an inline
    # VALUES before it (it re-checks P and e without that binding): no such OPTIONAL
    values_only = {v for v in {**maybe, **certain} if v not in before_values}
    for i in range(draw(st.sampled_from([0, 0, 1, 1, 2]))):  # OPTIONALs, sharing a certainly bound variable
        # (a second one shares no variable with the first one's new ones: the patterns stay well designed)
        options = [(p, vs) for p, vs in BLOCKS if any(v in certain for v in vs) and not values_only & set(vs)
                   and not (i and set(maybe) & set(vs))]
        if options:
            pattern, vs = draw(st.sampled_from(options))
            inner = pattern
            new = {v: k for v, k in vs.items() if v not in certain}
            if new and draw(st.integers(0, 2)) == 0:
                env = {v: k for v, k in {**certain, **new}.items() if v not in values_only}
                inner += f" FILTER({draw(filters(env))})"
            parts.append("OPTIONAL { " + inner + " }")
            used.append(pattern)
            for v, k in new.items():
                maybe.setdefault(v, k)
    if draw(st.integers(0, 3)) == 0:  # BIND
        ints = [v for v, k in certain.items() if k == "int"]
        iris = [v for v, k in certain.items() if k == "iri"]
        choices = ["ts"] if main else []
        choices += ["plus"] * bool(ints) + ["str"] * bool(iris)
        if choices:
            what = draw(st.sampled_from(choices))
            if what == "plus":
                parts.append(f"BIND(?{draw(st.sampled_from(ints))} + {draw(st.integers(-2, 3))} AS ?b)")
                certain["b"] = "int"
            elif what == "str":
                parts.append(f"BIND(str(?{draw(st.sampled_from(iris))}) AS ?bs)")
                certain["bs"] = "str"
            else:
                s, p, o = _triple_of(draw(st.sampled_from(main)))
                parts.append(f"BIND(f:timestamp({s}, {p}, {o}) AS ?ts)")
                maybe["ts"] = "int"
    env = {**maybe, **certain}
    for _ in range(draw(st.sampled_from([0, 0, 1, 1, 2]))):
        if draw(st.integers(0, 5)) == 0 and main:
            s, p, o = _triple_of(draw(st.sampled_from(main)))
            parts.append(f"FILTER(f:timestamp({s}, {p}, {o}) >= {draw(st.integers(0, 40))})")
        else:
            parts.append(f"FILTER({draw(filters(env))})")
    return " ".join(parts), certain, maybe, main, used


_PREDICATES = {"ex:p": P, "ex:q": Q, "ex:v": V, "ex:name": NAME, "ex:r": R, "a": RDF.type}
_KIND_VALUES = {"s": NODES[:3], "t": NODES[:3], "v": INTS, "w": INTS, "n": STRS, "c": CLASSES,
                "o": NODES[:2] + INTS[2:4] + STRS[:2]}


@st.composite
def matching_triples(draw, patterns: list[str]):
    """Triples that match all of ``patterns`` together (one consistent assignment), so that joins succeed."""
    env = {v: draw(st.sampled_from(vals)) for v, vals in _KIND_VALUES.items()}
    out = []
    for pattern in patterns:
        s, p, o = pattern.split()
        subj = env[s[1:]] if s.startswith("?") else URIRef(EX + s[3:])
        obj = env[o[1:]] if o.startswith("?") else URIRef(EX + o[3:])
        pred = R if p == "?p" else _PREDICATES[p]
        out.append((subj, pred, obj))
    return out


def _order_by(draw, names: list[str]):
    keys = list(draw(st.permutations(names)))
    return "ORDER BY " + " ".join(draw(st.sampled_from([f"?{k}", f"ASC(?{k})", f"DESC(?{k})"])) for k in keys)


def _limit(draw):
    out = []
    if draw(st.booleans()):
        out.append(f"LIMIT {draw(st.integers(0, 3))}")
    if draw(st.integers(0, 2)) == 0:
        out.append(f"OFFSET {draw(st.integers(0, 2))}")
    return out


@st.composite
def select_query(draw, body, certain, maybe):
    env = {**maybe, **certain}
    if draw(st.integers(0, 9)) == 0:
        return dict(head="SELECT *", star=True)
    names = draw(st.lists(st.sampled_from(sorted(env)), min_size=1, max_size=4, unique=True))
    distinct = "DISTINCT " if draw(st.integers(0, 2)) == 0 else ""
    shown = ["?" + n for n in names]
    kinds = {n: certain.get(n, "maybe") for n in names}
    if draw(st.integers(0, 4)) == 0:  # a projected expression
        ints = [v for v, k in env.items() if k == "int"]
        iris = [v for v, k in env.items() if k == "iri"]
        options = [(f"(?{v} - {k} AS ?e)", v) for v in ints for k in (1, 2)] + [(f"(str(?{v}) AS ?e)", v) for v in iris]
        if options:
            text, var = draw(st.sampled_from(options))
            shown.insert(draw(st.integers(0, len(shown))), text)
            kinds["e"] = ("int" if "str(" not in text else "str") if var in certain else "maybe"
    mods = []
    ordered = False
    if all(k not in ("any", "maybe") for k in kinds.values()) and draw(st.integers(0, 2)) == 0:
        mods.append(_order_by(draw, list(kinds)))
        mods += _limit(draw)
        ordered = True
    return dict(head=f"SELECT {distinct}" + " ".join(shown), modifiers=" ".join(mods), ordered=ordered)


@st.composite
def aggregate_query(draw, body, certain, maybe):
    keys = draw(st.lists(st.sampled_from(sorted(certain)), max_size=2, unique=True)) if certain else []
    if maybe and draw(st.integers(0, 5)) == 0:
        keys.append(draw(st.sampled_from(sorted(maybe))))
    env = {**maybe, **certain}
    nums = [v for v, k in certain.items() if k == "int"]
    strs = [v for v, k in certain.items() if k == "str"]
    options = [("COUNT(*)", "int"), ("COUNT(DISTINCT *)", "int")]
    options += [(f"COUNT(?{v})", "int") for v in env] + [(f"COUNT(DISTINCT ?{v})", "int") for v in env]
    for v in nums:
        options += [(f"{a}(?{v})", "int") for a in ("SUM", "AVG", "MIN", "MAX")]
        options += [(f"{a}(DISTINCT ?{v})", "int") for a in ("SUM", "AVG", "MAX")] + [(f"SUM(?{v} + 1)", "int")]
    for v in strs:
        options += [(f"MIN(?{v})", "str"), (f"MAX(?{v})", "str")]
    aggs = draw(st.lists(st.sampled_from([a for a, _ in options]), min_size=1, max_size=3, unique=True))
    shown = [k for k in keys if draw(st.integers(0, 4)) > 0]
    head = "SELECT " + " ".join([f"?{k}" for k in shown] + [f"({a} AS ?a{i})" for i, a in enumerate(aggs)])
    mods = []
    if keys:
        mods.append("GROUP BY " + " ".join("?" + k for k in keys))
    if draw(st.integers(0, 2)) == 0:
        conds = []
        for _ in range(draw(st.sampled_from([1, 1, 2]))):
            agg, kind = draw(st.sampled_from(options))
            op = draw(st.sampled_from([">", ">=", "<", "!="]))
            conds.append(f"{agg} {op} {draw(st.sampled_from(CONST[kind]))}")
        mods.append(f"HAVING ({draw(st.sampled_from([' && ', ' || '])).join(conds)})")
    ordered = False
    projected = shown + [f"a{i}" for i in range(len(aggs))]
    if all(k in certain and certain[k] != "any" for k in shown) and draw(st.integers(0, 2)) == 0:
        mods.append(_order_by(draw, projected))
        mods += _limit(draw)
        ordered = True
    return dict(head=head, modifiers=" ".join(mods), ordered=ordered, grouped=bool(keys))


@st.composite
def construct_query(draw, body, certain, maybe):
    env = {**maybe, **certain}
    iris = [v for v, k in env.items() if k == "iri"]
    template = []
    for i in range(draw(st.integers(1, 2))):
        s = "?" + draw(st.sampled_from(iris)) if iris and draw(st.integers(0, 4)) else "ex:a"
        p = "?p" if "p" in env and draw(st.integers(0, 3)) == 0 else f"ex:out{i}"
        o = draw(st.sampled_from(["?" + v for v in env] + ["ex:c", "7"]))
        template.append(f"{s} {p} {o}")
    return dict(head="CONSTRUCT { " + " . ".join(template) + " }", form="construct")


@st.composite
def queries(draw, windows, forms=("select", "select", "select", "aggregate", "aggregate", "construct", "ask"),
            name: str = "q"):
    body, certain, maybe, _, used = draw(group_patterns())
    form = draw(st.sampled_from(forms))
    if form == "select":
        parts = draw(select_query(body, certain, maybe))
    elif form == "aggregate":
        parts = draw(aggregate_query(body, certain, maybe))
    elif form == "construct":
        parts = draw(construct_query(body, certain, maybe))
    else:
        parts = dict(head="ASK", form="ask")
    graphs = tuple(draw(st.sampled_from([(), (), (G1,), (G2,), (G1, G2)])))
    spec = QuerySpec(name=name, prologue=PROLOGUE, where="WHERE { " + body + " }", windows=windows,
                     graphs=graphs, **{"form": "select", **parts})
    spec.patterns = used  # for the data generator: streams that match the query
    return spec


@st.composite
def cases(draw, kind: str | None = None, report=None, forms=None, max_times: int = 10):
    windows = draw(window_specs(kind))
    query = draw(queries(windows, **({"forms": forms} if forms else {})))
    query.report = report
    evs = draw(events(favoured=tuple(s for s, _ in windows), patterns=query.patterns, max_times=max_times))
    base = draw(st.sampled_from([0, 0, 0, 1_700_000_000_000]))  # sometimes epoch milliseconds
    if base:
        evs = tuple(Push(e.stream, e.triples, e.t + base) if isinstance(e, Push) else Advance(e.t + base)
                    for e in evs)
    first = next(e.t for e in evs if isinstance(e, Push))
    t0 = None if draw(st.booleans()) else draw(st.integers(max(0, first - 6), first))
    if t0 is not None and draw(st.booleans()):  # watermarks may come before the first push when t0 is given
        evs = (Advance(draw(st.integers(t0, first))),) + evs
    return Case(t0=t0, streams=STREAMS, graphs=draw(static_graphs()), events=evs, query=query)
