"""Window arithmetic: pure functions of window parameters and time points.

``range_at`` is the range a time window selects when evaluating at ``t``.  ``visible_evals`` inverts it:
the evaluation times at which a given point lies in the window's range.  Because the pivot
``⌊t/d⌋·d`` grows monotonically with ``t``, that set is always an interval — which is what lets the
engine annotate a grounding with [consideration, horizon] once, when the atom arrives.
"""

from __future__ import annotations

#: A horizon that never expires.  Larger than any time point the engine will see.
INF = 1 << 62


def pivot(t: int, step: int, offset: int | None = None) -> int | None:
    """The largest pivot ``<= t``: a multiple of ``step``, or ``offset + k·step`` (k >= 0; None before offset)."""
    if offset is None:
        return (t // step) * step
    if t < offset:
        return None
    return offset + ((t - offset) // step) * step


def next_pivot(t: int, step: int, offset: int | None = None) -> int:
    """The smallest pivot ``>= t``."""
    if offset is None:
        return -(-t // step) * step
    if t <= offset:
        return offset
    return offset - (-(t - offset) // step) * step


def range_at(size: int, step: int, t: int, start: int, offset: int | None = None) -> tuple[int, int] | None:
    """The points ``[lo, hi]`` a time window ``[size step step]`` covers at ``t``; None when empty.

    ``size`` may be INF (no window: the whole timeline).
    """
    hi = pivot(t, step, offset)
    if hi is None:
        return None
    lo = start if size >= INF else max(start, hi - size)
    return (lo, hi) if lo <= hi else None


def visible_evals(size: int, step: int, point: int, start: int, offset: int | None = None) -> tuple[int, int] | None:
    """The evaluation times ``t`` (as an interval) at which ``point`` lies in ``range_at(size, step, t)``."""
    if point < start:
        return None
    first = next_pivot(point, step, offset)
    if size >= INF:
        return (first, INF)
    last_pivot = pivot(point + size, step, offset)  # the last pivot whose range still reaches back to point
    if last_pivot is None:
        return None
    last = last_pivot + step - 1
    return (first, last) if first <= last else None
