"""Partition-based windows (LARS's w_p): syntax, checks, and answers derived by hand and by the reference evaluator.

``[#n by key]`` splits the data atoms matching the pattern ``key`` by the values of its named variables and keeps
the last ``n`` atoms of each part (LARS paper, "Partition-based" window function; the tram example of its
Example 5: ``idx(tram(a_i, X)) = i``, ``n(i) = (1, 0)``: each tram's most recent stop).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings

from rdfstream.engine.session import Engine
from rdfstream.errors import CompileError, RdfstreamError
from rdfstream.frontends.registry import parse_atoms, parse_program

try:
    from strategies import programs, streams
    from test_engine_vs_reference import check
except ImportError:  # pragma: no cover - when tests/ is a package
    from tests.strategies import programs, streams
    from tests.test_engine_vs_reference import check


def outputs(text: str, stream: dict[int, str], start: int, end: int) -> dict[int, set[str]]:
    engine = Engine(parse_program(text), start=start)
    out = {}
    for t, holds, _ in engine.run({u: parse_atoms(a) for u, a in stream.items()}, start, end):
        out[t] = {str(a) for a in holds}
    return out


TRAMS = "last(Id, X) :- [#1 by tram(Id, _)] <> tram(Id, X)."


def test_each_tram_keeps_its_latest_stop():
    stream = {36: "tram(a1, b)", 38: "tram(a2, c), tram(a1, d)", 40: "tram(a2, e)", 41: "bus(z1, q)"}
    got = outputs(TRAMS, stream, 35, 42)
    assert got[35] == set()
    assert got[36] == {"last(a1,b)"}
    assert got[37] == {"last(a1,b)"}
    assert got[38] == {"last(a2,c)", "last(a1,d)"}  # a1's stop b is replaced, a2 keeps its own part
    assert got[40] == got[41] == got[42] == {"last(a1,d)", "last(a2,e)"}  # the bus is in no part


def test_a_plain_tuple_window_would_forget_the_quiet_tram():
    # the contrast that motivates w_p: the last two atoms overall drop a1 once a2 reports twice
    plain = "last(Id, X) :- [#2] <> tram(Id, X)."
    stream = {1: "tram(a1, b)", 2: "tram(a2, c)", 3: "tram(a2, e)"}
    assert outputs(plain, stream, 1, 3)[3] == {"last(a2,c)", "last(a2,e)"}
    parted = "last(Id, X) :- [#1 by tram(Id, _)] <> tram(Id, X)."
    assert outputs(parted, stream, 1, 3)[3] == {"last(a1,b)", "last(a2,e)"}


def test_at_binds_the_time_inside_each_part():
    text = "seen(Id, T) :- [#2 by tram(Id, _)] @T tram(Id, X)."
    stream = {1: "tram(a1, b)", 2: "tram(a1, c)", 3: "tram(a1, d), tram(a2, b)"}
    assert outputs(text, stream, 1, 3)[3] == {"seen(a1,2)", "seen(a1,3)", "seen(a2,3)"}


def test_key_with_a_predicate_variable_partitions_every_predicate_by_subject():
    text = "recent(S, P, O) :- [#1 by P(S, _)] <> P(S, O)."
    stream = {1: "temp(s1, 20), hum(s1, 50)", 2: "temp(s2, 22)", 3: "temp(s1, 21)"}
    # one part per (predicate, subject): s1's temp is replaced, its humidity is not
    assert outputs(text, stream, 1, 3)[3] == {"recent(s1,hum,50)", "recent(s1,temp,21)", "recent(s2,temp,22)"}


def test_syntax_round_trip_and_checks():
    program = parse_program("q(X) :- [#2 by b(K, _) from <http://ex.org/s>] <> b(X, Y).")
    assert parse_program(str(program)) == program
    assert "[#2 by b(K,_1) from <http://ex.org/s>]" in str(program)
    with pytest.raises(CompileError, match="takes <> or @"):
        Engine(parse_program("q(X) :- [#2 by a(K)] [] a(X)."))
    with pytest.raises(CompileError, match="derived predicate"):
        Engine(parse_program("d(X) :- a(X).\nq(X) :- [#2 by d(K)] <> d(X)."))
    with pytest.raises(RdfstreamError, match="1:9: a partition window's key a\\(_1\\) names no variable"):
        parse_program("q(X) :- [#2 by a(_)] <> a(X).")


COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large,
                                                      HealthCheck.filter_too_much]}


def _has_partition(program) -> bool:
    return " by " in str(program)


@settings(max_examples=int(os.environ.get("RDFSTREAM_EXAMPLES", "150")), **COMMON)
@given(programs().filter(_has_partition), streams())
def test_engine_matches_reference_with_partition_windows(program, data):
    check(program, data)


@pytest.mark.soak
@settings(max_examples=int(os.environ.get("RDFSTREAM_SOAK_EXAMPLES", "10000")), **COMMON)
@given(programs().filter(_has_partition), streams())
def test_engine_matches_reference_with_partition_windows_soak(program, data):
    check(program, data)
