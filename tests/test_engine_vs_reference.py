"""Property tests: the incremental engine equals the naive reference evaluator at every time point.

The default run checks a few hundred random (program, stream) pairs; ``pytest -m soak`` runs ≥ 10,000.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import programs, streams

from rdfstream.engine.session import Engine

try:
    from reference import evaluate
except ImportError:  # pragma: no cover - when tests/ is a package
    from tests.reference import evaluate


def engine_outputs(program, stream, start, end):
    """Per-tick (t, holds, placed); ``stream`` is time -> atoms, or stream name -> (time -> atoms)."""
    engine = Engine(program, start=start, report_placed=True)
    named = stream if stream and all(isinstance(k, str) for k in stream) else {"": stream}
    for t in sorted({t for s in named.values() for t in s}):
        for name, data in named.items():
            if t in data:
                engine.push(data[t], t, stream=name)
    out = list(engine.answers(end))
    return out


def check(program, data):
    stream, start, end = data
    expected = evaluate(program, stream, start, end)
    actual = engine_outputs(program, stream, start, end)
    assert [r.t for r in expected] == [t for t, _, _ in actual]
    for ref, (t, holds, placed) in zip(expected, actual, strict=True):
        context = f"\nprogram:\n{program}\nstream: {stream}\nstart={start} end={end}\nat t={t}"
        assert set(holds) == set(ref.holds), f"holds differ{context}\nengine: {sorted(map(str, holds))}" \
                                             f"\nreference: {sorted(map(str, ref.holds))}"
        assert {p: set(a) for p, a in placed.items()} == {p: set(a) for p, a in ref.placed.items()}, \
            f"placed differ{context}\nengine: {placed}\nreference: {ref.placed}"


COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}


@settings(max_examples=int(os.environ.get("RDFSTREAM_EXAMPLES", "300")), **COMMON)
@given(programs(), streams())
def test_engine_matches_reference(program, data):
    check(program, data)


@pytest.mark.soak
@settings(max_examples=int(os.environ.get("RDFSTREAM_SOAK_EXAMPLES", "10000")), **COMMON)
@given(programs(), streams(max_len=16))
def test_engine_matches_reference_soak(program, data):
    check(program, data)


def check_catch_up(program, data, reads):
    """Evaluating only at some ticks (Engine.catch_up) gives the reference answer at those ticks."""
    stream, start, end = data
    expected = {r.t: set(r.holds) for r in evaluate(program, stream, start, end)}
    engine = Engine(program, start=start)
    named = stream if stream and all(isinstance(k, str) for k in stream) else {"": stream}
    times = sorted({t for s in named.values() for t in s})
    done = start - 1
    for r in sorted({start + (x % (end - start + 1)) for x in reads}):
        for t in times:
            if done < t <= r:
                for name, atoms in named.items():
                    if t in atoms:
                        engine.push(atoms[t], t, stream=name)
        engine.catch_up(r)
        done = r
        assert set(engine.holds()) == expected[r], (
            f"\nprogram:\n{program}\nstream: {stream}\nstart={start} read at {r} (batchable={engine.batchable})"
            f"\nengine: {sorted(map(str, engine.holds()))}\nreference: {sorted(map(str, expected[r]))}")


@settings(max_examples=int(os.environ.get("RDFSTREAM_EXAMPLES", "300")), **COMMON)
@given(programs(), streams(), st.lists(st.integers(0, 1000), min_size=1, max_size=6))
def test_catch_up_matches_reference(program, data, reads):
    """About one program in ten is batchable (catch_up folds ticks); the others check the fallback."""
    check_catch_up(program, data, reads)


@pytest.mark.soak
@settings(max_examples=int(os.environ.get("RDFSTREAM_SOAK_EXAMPLES", "10000")), **COMMON)
@given(programs(), streams(max_len=16), st.lists(st.integers(0, 1000), min_size=1, max_size=8))
def test_catch_up_matches_reference_soak(program, data, reads):
    check_catch_up(program, data, reads)
