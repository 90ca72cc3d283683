"""Window arithmetic: pure functions of window parameters and time points.

``range_at`` is the range a time window selects when evaluating at ``t``.  ``visible_evals`` inverts it:
the evaluation times at which a given point lies in the window's range.  Because the pivot
``⌊t/d⌋·d`` grows monotonically with ``t``, that set is always an interval — which is what lets the
engine annotate a grounding with [consideration, horizon] once, when the atom arrives.
"""

from __future__ import annotations

#: A horizon that never expires.  Larger than any time point the engine will see.
INF = 1 << 62


def pivot(t: int, step: int) -> int:
    return (t // step) * step


def range_at(size: int, step: int, t: int, start: int) -> tuple[int, int] | None:
    """The points ``[lo, hi]`` a time window ``[size step step]`` covers at ``t``; None when empty.

    ``size`` may be INF (no window: the whole timeline).
    """
    hi = pivot(t, step)
    lo = start if size >= INF else max(start, hi - size)
    return (lo, hi) if lo <= hi else None


def visible_evals(size: int, step: int, point: int, start: int) -> tuple[int, int] | None:
    """The evaluation times ``t`` (as an interval) at which ``point`` lies in ``range_at(size, step, t)``."""
    if point < start:
        return None
    first = -(-point // step) * step  # smallest pivot >= point
    if size >= INF:
        return (first, INF)
    last = pivot(point + size, step) + step - 1  # largest t whose pivot <= point + size
    return (first, last) if first <= last else None
