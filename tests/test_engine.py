"""Engine properties beyond answers: serialisation, bounded state, event-driven cost, the push API."""

from __future__ import annotations

import pickle
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import programs, streams

from rdfstream.atoms import Atom
from rdfstream.engine.session import Engine
from rdfstream.errors import EvaluationError
from rdfstream.frontends.registry import parse_program

try:
    from reference import evaluate
except ImportError:  # pragma: no cover
    from tests.reference import evaluate


def outputs(engine, stream, start, end, restore_at=None):
    """Per-tick (t, holds, placed) feeding ``stream``; optionally pickle and restore the engine at ``restore_at``."""
    out = []
    for when in range(start, end + 1):
        if when == restore_at:
            engine = pickle.loads(pickle.dumps(engine))
        if when in stream:
            engine.push(stream[when], when)
        out.extend(engine.answers(when))
    return out


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), streams(), st.integers(0, 20))
def test_pickled_engine_continues_exactly(program, data, cut):
    stream, start, end = data
    if stream and all(isinstance(k, str) for k in stream):
        stream = stream[""]  # the default stream only: this test is about serialisation
    restore_at = start + cut % (end - start + 1)
    engine = Engine(program, start=start, report_placed=True)
    got = outputs(engine, stream, start, end, restore_at=restore_at)
    expected = evaluate(program, stream, start, end)
    assert [(t, set(h)) for t, h, _ in got] == [(r.t, set(r.holds)) for r in expected]
    assert [{p: set(a) for p, a in pl.items()} for _, _, pl in got] == \
        [{p: set(a) for p, a in r.placed.items()} for r in expected]


WINDOWED = """
q(X, Z) :- [4] <> p(X, Y), [4] <> p(Y, Z).
r(X) :- [3] [] s(X).
@T m(X) :- [2] @T p(X, Y), not [1] <> s(Y).
c(X) :- [#5] <> s(X).
"""


def test_state_stays_bounded_on_an_unbounded_stream():
    engine = Engine(parse_program(WINDOWED), start=0)
    peak_late, peak_early = 0, 0
    for t in range(3000):
        rows = [("p", (f"a{t}", f"b{t}")), ("p", (f"b{t}", f"c{t}")), ("s", (f"k{t % 7}",)), ("s", (f"b{t}",))]
        engine.push(rows, t)
        engine.advance_to(t)
        size = sum(engine.state_size().values())
        if t < 100:
            peak_early = max(peak_early, size)
        else:
            peak_late = max(peak_late, size)
    assert peak_late <= peak_early  # nothing accumulates: state depends on the windows, not on the stream length
    assert peak_late < 400


def test_sparse_timestamps_cost_what_their_data_costs():
    program = parse_program("q(X) :- [3] <> p(X).\nr(X) :- q(X), not [2] <> s(X).\n")

    def run(gap: int) -> tuple[int, float]:
        engine = Engine(program, start=0)
        evaluated = 0
        t0 = time.process_time()
        for i in range(300):
            engine.push([("p", (f"x{i % 20}",)), ("s", (f"x{i % 7}",))], i * gap)
            evaluated += len(engine.advance_to(i * gap))
        return evaluated, time.process_time() - t0

    dense_ticks, dense_cpu = run(1)
    sparse_ticks, sparse_cpu = run(1000)
    # per data tick: itself, the settle tick after it, and the two window expiries ([3] and [2]) at most
    assert sparse_ticks <= 4 * 300
    assert dense_ticks <= 300
    assert sparse_cpu < 5 * dense_cpu + 0.05


def test_deltas_add_up_to_the_answer():
    program = parse_program("q(X) :- [2] <> p(X), not s(X).\n")
    engine = Engine(program, start=0)
    stream = {0: [Atom("p", ("a",))], 1: [Atom("p", ("b",)), Atom("s", ("a",))], 4: [Atom("p", ("a",))]}
    expected = evaluate(program, stream, 0, 6)
    current: set = set()
    snaps = {}
    for t in range(7):
        if t in stream:
            engine.push(stream[t], t)
        for snap in engine.ticks(t):
            assert not (snap.added & snap.removed)
            assert snap.added.isdisjoint(current) and snap.removed <= current
            current = (current - snap.removed) | snap.added
            snaps[snap.t] = frozenset(current)
            assert current == set(engine.holds())
    last = frozenset()
    for r in expected:
        last = snaps.get(r.t, last)
        assert last == r.holds


def test_push_rejects_time_going_backwards():
    engine = Engine(parse_program("q(X) :- p(X).\n"), start=0)
    engine.push([("p", ("a",))], 5)
    engine.advance_to(5)
    with pytest.raises(EvaluationError, match="already evaluated"):
        engine.push([("p", ("b",))], 3)
    with pytest.raises(EvaluationError, match="before the start"):
        Engine(parse_program("q(X) :- p(X).\n"), start=10).push([("p", ("b",))], 3)
