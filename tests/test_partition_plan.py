"""Keyed scale-out: when ``analyse_partition`` says a program may run as one copy per key, running the reference
evaluator on each key's part of the stream and taking the union gives, at every time point, the output over the
whole stream.  (The reference evaluator is independent of the engine and of the analysis.)"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, assume, given, settings

from rdfstream.frontends.registry import parse_program
from rdfstream.ir.partition import analyse_partition

try:
    from reference import evaluate
    from strategies import programs, streams
except ImportError:  # pragma: no cover - when tests/ is a package
    from tests.reference import evaluate
    from tests.strategies import programs, streams


def split(stream: dict, position: int) -> dict:
    """time -> atoms (or stream name -> that) into key -> the same shape with that key's atoms only."""
    named = stream if stream and all(isinstance(k, str) for k in stream) else None
    parts: dict = {}
    for name, points in (named or {None: stream}).items():
        for t, atoms in points.items():
            for atom in atoms:
                key = atom.args[position] if len(atom.args) > position else None
                part = parts.setdefault(key, {})
                target = part.setdefault(name, {}) if named else part
                target.setdefault(t, []).append(atom)
    return parts


COMMON = {"deadline": None,
          "suppress_health_check": [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]}


@settings(max_examples=int(os.environ.get("RDFSTREAM_EXAMPLES", "20")), **COMMON)
@given(programs(), streams())
def test_partitionable_programs_give_the_union_of_their_parts(program, data):
    check(program, data)


@pytest.mark.soak
@settings(max_examples=int(os.environ.get("RDFSTREAM_SOAK_EXAMPLES", "10000")) // 10, **COMMON)
@given(programs(), streams())
def test_partitionable_programs_give_the_union_of_their_parts_soak(program, data):
    check(program, data)


def check(program, data):
    plan = analyse_partition(program, 0, frozenset({"g"}))
    assume(plan.ok)
    stream, start, end = data
    whole = evaluate(program, stream, start, end)
    union = [set() for _ in whole]
    # one more part with no data: what background alone derives holds even before any key has data
    for part in [*split(stream, 0).values(), {}]:
        for i, result in enumerate(evaluate(program, part, start, end)):
            union[i] |= set(result.holds)
    for result, got in zip(whole, union, strict=True):
        assert got == set(result.holds), f"{program}\nat t={result.t}: {sorted(map(str, got ^ set(result.holds)))}"


def test_reasons_name_the_rule():
    ok = analyse_partition(parse_program("hot(S) :- [3] <> temp(S, V), V > 30.\nalarm :- hot(S).\n"
                                         "calm :- not alarm."), 0)
    assert not ok.ok and "calm :- not alarm" in ok.reason and "alarm combines several keys" in ok.reason
    out = analyse_partition(parse_program("hot(S) :- [3] <> temp(S, V), V > 30."), 0)
    assert out.ok and out.keyed["hot"] == 0
    joined = analyse_partition(parse_program("near(A, B) :- pos(A, X), pos(B, X)."), 0)
    assert not joined.ok and "different keys" in joined.reason
    counted = analyse_partition(parse_program("last(S) :- [#3] <> temp(S, V)."), 0)
    assert not counted.ok and "tuple window" in counted.reason
    parted = analyse_partition(parse_program("last(S, V) :- [#1 by temp(S, _)] <> temp(S, V)."), 0)
    assert parted.ok
    negated = analyse_partition(parse_program("quiet(S) :- sensor(S), not [5] <> temp(S, V).\nsensor(s1)."), 0)
    assert not negated.ok and "negated" in negated.reason
    local = analyse_partition(parse_program("cold(S) :- [5] <> temp(S, V), not [5] <> hot(S).\n"
                                            "hot(S) :- [2] <> temp(S, V), V > 30."), 0)
    assert local.ok and local.keyed == {"temp": 0, "cold": 0, "hot": 0}
    total = analyse_partition(parse_program("seen(V) :- temp(S, V)."), 0)
    assert total.ok and total.global_preds == {"seen"}  # output only: the union is the answer


def test_explain_says_whether_a_program_splits_by_key(tmp_path):
    import subprocess
    import sys

    prog = tmp_path / "p.lars"
    prog.write_text("hot(S) :- [3] <> temp(S, V), V > 30.\ncold(S) :- [5] <> temp(S, V), not [5] <> hot(S).\n")
    out = subprocess.run([sys.executable, "-m", "rdfstream.cli", "explain", str(prog)], capture_output=True, text=True)
    assert "%   with --partition-by 1: partitioning by argument 1 of the data atoms: possible" in out.stdout
    out = subprocess.run([sys.executable, "-m", "rdfstream.cli", "explain", str(prog), "--partition-by", "1"],
                         capture_output=True, text=True)
    assert "% keyed scale-out (--engine spark): from --partition-by 1: partitioning by argument 1" in out.stdout
    prog.write_text("hot(S) :- [3] <> temp(S, V), V > 30.\nalarm :- hot(S).\ncalm :- not alarm.\n")
    out = subprocess.run([sys.executable, "-m", "rdfstream.cli", "explain", str(prog)], capture_output=True, text=True)
    assert "not possible (alarm combines several keys" in out.stdout and "single key" in out.stdout


CITY = """REGISTER QUERY busy AS PREFIX ex: <http://example.org/city#>
SELECT ?s (AVG(?v) AS ?avg) FROM STREAM <http://example.org/traffic> [RANGE 10s STEP 5s]
WHERE { ?s ex:vehicleCount ?v . ?s ex:limit ?l FILTER(?v > ?l) } GROUP BY ?s"""


@pytest.mark.parametrize("text, var, verdict", [
    (CITY, "s", "possible"),
    (CITY.replace("GROUP BY ?s", "GROUP BY ?s ORDER BY ?avg"), "s", "OrderBy looks at the whole answer"),
    (CITY.replace("?s (AVG(?v) AS ?avg)", "(AVG(?v) AS ?avg)").replace("GROUP BY ?s", ""), "s",
     "?s is not a projected variable"),
    # the observation joins its sensor through the object position: no single triple position keys both
    ("REGISTER QUERY j AS PREFIX ex: <http://ex.org/> SELECT ?s ?v FROM STREAM <http://ex.org/st> [RANGE 5s STEP 1s]"
     " WHERE { ?o ex:sensor ?s ; ex:value ?v }", "s", "the stream splits by ?o, which is not projected"),
    ("REGISTER ISTREAM i AS PREFIX ex: <http://ex.org/> SELECT ?s ?v FROM STREAM <http://ex.org/st> [RANGE 5s STEP 1s]"
     " WHERE { ?s ex:value ?v }", "s", "ISTREAM compares each report"),
    ("REGISTER QUERY r AS PREFIX ex: <http://ex.org/> SELECT ?s ?v FROM STREAM <http://ex.org/st> [ROWS 5]"
     " WHERE { ?s ex:value ?v }", "s", "count window"),
    ("REGISTER QUERY u AS PREFIX ex: <http://ex.org/> SELECT ?s FROM STREAM <http://ex.org/st> [RANGE 5s STEP 1s]"
     " WHERE { { ?s ex:a ?x } UNION { ?s ex:b ?y } }", "s", "possible"),
    ("REGISTER QUERY c AS PREFIX ex: <http://ex.org/> SELECT (COUNT(*) AS ?n) ?s FROM STREAM <http://ex.org/st>"
     " [RANGE 5s STEP 1s] WHERE { ?s ex:a ?x } GROUP BY ?x", "s", "GROUP BY does not group by the key"),
])
def test_query_partition_verdicts(text, var, verdict):
    from rdfstream.frontends.csparql.compile import compile_query
    from rdfstream.ir.partition import analyse_query_partition

    plan = analyse_query_partition(compile_query(text), var)
    assert verdict in plan.describe()
    assert plan.ok == (verdict == "possible")
