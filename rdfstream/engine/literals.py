"""Positive extended atoms as materialised, shared literal indexes.

Every positive extended atom of the program (after normalisation) becomes one :class:`Literal`, shared by
all rules that use the same atom pattern under the same window and operator.  A literal holds the
groundings of its variables that make it true *now*, each annotated with its horizon.

* **Stable** literals (``<>`` and ``@`` over time windows, plain atoms) are fed when an atom arrives or is
  derived: the window arithmetic gives at once the evaluation times at which the grounding holds, so
  it is never recomputed (Laser's Algorithm 2).  Parts whose truth moves with the clock (``@U`` over
  background atoms or over atoms derived at every tick) are recomputed per tick ("supplements").
* **Volatile** literals (``[]``, tuple windows) are recomputed at every evaluated tick; their
  groundings hold for that tick only.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.nodes import ExtAtom, Op, PartitionWindow, TupleWindow
from ..ir.windows import INF, next_pivot, range_at, visible_evals
from ..terms import Var, is_var
from .annotations import AnnotatedMap

ALL = None  # a view over the data of every stream
ANY_PRED = "*"  # the predicate of a literal whose predicate is a variable (matched against (pred, *args))


@dataclass(frozen=True, slots=True)
class LiteralSpec:
    """The canonical shape of a positive extended atom; equal specs share one index."""

    pred: str
    pattern: tuple  # per argument: ("c", const) or ("v", position in vals)
    nvals: int  # number of values in a grounding (distinct variables, incl. the @ time variable)
    op: Op
    time: tuple | None  # for @: ("v", position) or ("c", int)
    tuple_window: bool
    size: int  # INF when there is no window
    step: int
    view: str | None  # stream read by the window; ALL for plain atoms / no window
    offset: int | None = None  # first pivot of a window with an offset (see TimeWindow)
    partition: tuple | None = None  # a partition window's key pattern (PartitionWindow.parts); tuple_window too

    @property
    def arity(self) -> int:
        return len(self.pattern)

    @property
    def stepped(self) -> bool:
        """The range moves by pivots rather than with every tick."""
        return self.step > 1 or self.offset is not None

    @property
    def volatile(self) -> bool:
        return self.op is Op.BOX or self.tuple_window


def literal_spec(ext: ExtAtom) -> tuple[LiteralSpec, tuple[Var, ...]]:
    """Canonical spec of the *positive* part of ``ext`` and the rule variables its values bind, in order."""
    order: list[Var] = []
    pattern = []
    pred, args = ext.atom.pred, ext.atom.args
    if is_var(pred):  # matched against (pred, *args): the predicate becomes the first value
        pred, args = ANY_PRED, (pred, *args)
    for arg in args:
        if is_var(arg):
            if arg not in order:
                order.append(arg)  # type: ignore[arg-type]
            pattern.append(("v", order.index(arg)))  # type: ignore[arg-type]
        else:
            pattern.append(("c", arg))
    time = None
    if ext.op is Op.AT:
        if is_var(ext.time):
            if ext.time not in order:
                order.append(ext.time)  # type: ignore[arg-type]
            time = ("v", order.index(ext.time))  # type: ignore[arg-type]
        else:
            time = ("c", ext.time)
    op = ext.op or Op.DIAMOND
    window = ext.window
    offset = None
    partition = None
    if window is None:
        size, step, view, is_tuple = (0 if ext.op is None else INF), 1, ALL, False
    elif type(window) is TupleWindow:
        size, step, view, is_tuple = window.size, 1, window.stream, True
    elif type(window) is PartitionWindow:
        size, step, view, is_tuple = window.size, 1, window.stream, True
        partition = window.parts()
    else:
        size, step, view, is_tuple = window.size, window.step, window.stream, False
        offset = window.offset
    spec = LiteralSpec(pred, tuple(pattern), len(order), op, time, is_tuple, size, step, view, offset, partition)
    return spec, tuple(order)


def compile_matcher(spec: LiteralSpec):
    """A function ``args -> vals`` (without the @ time value) or None when the atom does not match."""
    n_atom_vals = max([p[1] + 1 for p in spec.pattern if p[0] == "v"], default=0)
    checks = [f"len(a) == {spec.arity}"]
    first: dict[int, int] = {}
    consts = {}
    for i, (kind, value) in enumerate(spec.pattern):
        if kind == "c":
            consts[f"c{i}"] = value
            checks.append(f"a[{i}] == c{i}")
        elif value in first:
            checks.append(f"a[{i}] == a[{first[value]}]")
        else:
            first[value] = i
    identity = [first.get(k) for k in range(n_atom_vals)] == list(range(spec.arity))
    result = "a" if identity else "(" + "".join(f"a[{first[k]}], " for k in range(n_atom_vals)) + ")"
    src = f"def match(a):\n    if {' and '.join(checks)}:\n        return {result}\n    return None\n"
    namespace: dict = dict(consts)
    exec(src, namespace)  # noqa: S102 - generated from the program's own atom patterns
    return namespace["match"], identity


class Literal:
    """A shared literal index; see the module docstring."""

    def __init__(self, spec: LiteralSpec, engine) -> None:
        self.spec = spec
        self.engine = engine
        self.map = AnnotatedMap(engine.calendar, repr(spec))
        self.match, self.identity = compile_matcher(spec)
        n_atom_vals = max([p[1] + 1 for p in spec.pattern if p[0] == "v"], default=0)
        # where the @ time goes: appended, checked against an atom variable, or a constant
        self.time_mode = None
        if spec.time is not None:
            kind, value = spec.time
            if kind == "c":
                self.time_mode = ("const", value)
            elif value >= n_atom_vals:
                self.time_mode = ("append", value)
            else:
                self.time_mode = ("same", value)

    def __getstate__(self) -> dict:
        return {"spec": self.spec, "engine": self.engine, "map": self.map, "time_mode": self.time_mode}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.match, self.identity = compile_matcher(self.spec)

    # -- groundings -------------------------------------------------------------------------

    def vals_at(self, args: tuple, point: int):
        """Values of a grounding for an atom holding at ``point`` (the @ time included), or None."""
        vals = self.match(args)
        if vals is None or self.time_mode is None:
            return vals
        mode, value = self.time_mode
        if mode == "append":
            return vals + (point,)
        if mode == "same":
            return vals if vals[value] == point else None
        return vals if point == value else None

    def batch_vals(self, batch: list, point: int) -> list:
        """``vals_at`` over many atoms holding at one point."""
        mode = self.time_mode
        if self.identity and mode is None:
            arity = self.spec.arity
            return [a for a in batch if len(a) == arity]
        found = [v for v in map(self.match, batch) if v is not None]
        if mode is None or not found:
            return found
        kind, value = mode
        if kind == "append":
            return [v + (point,) for v in found]
        if kind == "same":
            return [v for v in found if v[value] == point]
        return found if point == value else []

    # -- stable feeding -----------------------------------------------------------------------

    def on_points(self, batch: list, point: int, horizon: int, now: int) -> None:
        """Atoms that hold at ``point`` from now until evaluation time ``horizon`` (data: INF)."""
        spec = self.spec
        span = visible_evals(spec.size, spec.step, point, self.engine.start, spec.offset)
        if span is None:
            return
        first = span[0] if span[0] > now else now
        last = span[1] if span[1] < horizon else horizon
        if horizon <= now:
            # The atom holds for this tick only (a volatile derivation, recomputed at every evaluated tick).
            # Its window still opens and closes on its own schedule: make those ticks evaluated.
            calendar = self.engine.calendar
            if span[0] > now:
                calendar.add_event(span[0])
            if now <= span[1] < INF:
                calendar.add_event(span[1] + 1)
        if first > last:
            return
        found = self.batch_vals(batch, point)
        if not found:
            return
        if first > now:
            self.engine.calendar_activate(first, self.map, found, last)
        else:
            self.map.put_many(found, last, now)

    def on_point(self, args: tuple, point: int, horizon: int, now: int) -> None:
        self.on_points([args], point, horizon, now)

    def on_now(self, by_horizon: dict[int, list], now: int) -> None:
        """Atoms derived at every evaluation time up to their horizon (plain heads), grouped by horizon."""
        spec = self.spec
        if spec.op is Op.DIAMOND and not spec.stepped:
            for horizon, batch in by_horizon.items():
                found = self.batch_vals(batch, now)
                if found:
                    self.map.put_many(found, horizon, now)
        # @ and stepped windows over such atoms are clock-dependent: see refresh_supplement

    def on_background(self, args: tuple, now: int) -> None:
        spec = self.spec
        if spec.op is Op.DIAMOND and not spec.tuple_window:
            vals = self.match(args)
            if vals is None:
                return
            start = self.engine.start
            first = next_pivot(start, spec.step, spec.offset)  # first tick whose range is not empty
            if first > now:
                self.engine.calendar_activate(first, self.map, [vals], INF)
            else:
                self.map.put(vals, INF, now)

    # -- per-tick recomputation -----------------------------------------------------------------

    def time_range(self, t: int):
        spec = self.spec
        if spec.partition is not None:
            return self.engine.partition_range(spec.view, spec.partition, spec.size, t)
        if spec.tuple_window:
            return self.engine.tuple_range(spec.view, spec.size, t)
        return range_at(spec.size, spec.step, t, self.engine.start, spec.offset)

    def needs_supplement(self, derived_now: bool, has_background: bool) -> bool:
        spec = self.spec
        if spec.volatile:
            return False
        if spec.op is Op.AT:
            return derived_now or has_background
        return derived_now and spec.stepped

    def refresh_supplement(self, t: int) -> None:
        spec = self.spec
        rng = self.time_range(t)
        if rng is None:
            return
        lo, hi = rng
        engine = self.engine
        put = self.map.put
        if hi == t:
            for args in engine.now_facts(spec.pred):
                vals = self.vals_at(args, t)
                if vals is not None:
                    put(vals, t, t)
        if spec.op is Op.AT:
            for args in engine.background_of(spec.pred):
                for u in range(lo, hi + 1):
                    vals = self.vals_at(args, u)
                    if vals is not None:
                        put(vals, t, t)

    def refresh_volatile(self, t: int) -> None:
        """Recompute a box or tuple-window literal for evaluation time ``t``."""
        spec = self.spec
        rng = self.time_range(t)
        if rng is None:
            return
        lo, hi = rng
        engine = self.engine
        put = self.map.put
        if spec.tuple_window:
            if spec.partition is not None:
                kept = engine.partition_kept(spec.view, spec.partition, spec.size, spec.pred)
            else:
                kept = engine.tuple_kept(spec.view, spec.size, t, spec.pred)
            if spec.op is Op.BOX:
                points: dict[tuple, set[int]] = {}
                for point, args in kept:
                    points.setdefault(args, set()).add(point)
                need = hi - lo + 1
                for args, seen in points.items():
                    if len(seen) == need:
                        vals = self.match(args)
                        if vals is not None:
                            put(vals, t, t)
            else:
                for point, args in kept:
                    vals = self.vals_at(args, point)
                    if vals is not None:
                        put(vals, t, t)
            for args in engine.background_of(spec.pred):
                if spec.op is Op.AT:
                    for u in range(lo, hi + 1):
                        vals = self.vals_at(args, u)
                        if vals is not None:
                            put(vals, t, t)
                else:
                    vals = self.match(args)
                    if vals is not None:
                        put(vals, t, t)
            return
        # box over a time window: candidates hold at hi; each must hold at every point of [lo, hi]
        for args in engine.candidates_at(spec.pred, spec.view, hi, t):
            vals = self.match(args)
            if vals is None:
                continue
            if engine.holds_throughout(spec.pred, spec.view, args, lo, hi, t):
                put(vals, t, t)

