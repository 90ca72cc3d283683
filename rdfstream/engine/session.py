"""The incremental engine: push atoms, advance time, read the answer (Laser's Algorithm 1, event-driven).

At each *evaluated* tick ``t``:

1. groundings whose horizon is before ``t`` expire (calendar buckets, cost ∝ what expires);
2. groundings that start to hold at ``t`` (future @-placements, stepped windows) are activated;
3. the atoms pushed for ``t`` are fed to the literals that can see them;
4. strata are evaluated bottom-up: volatile literals (``[]``, tuple windows, clock-dependent parts) are
   recomputed, rules fire semi-naively on their literals' deltas, rules with negation fire once fully;
5. the change of the output is collected.

A tick with no data, nothing expiring and nothing activating has the answer of the tick before it (after
one "settle" tick following data), so it is skipped — unless the program is clock-dependent (it binds
``@U`` over atoms that hold at every point, or looks at derived atoms through ``[]``).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from operator import itemgetter

from ..atoms import Atom
from ..errors import EvaluationError
from ..ir.analysis import analyse
from ..ir.nodes import DEFAULT_STREAM, ExtAtom, Op, PartitionWindow, Program, TupleWindow, partition_key
from ..ir.printer import format_rule
from ..ir.windows import INF, next_pivot
from .annotations import AnnotatedMap, Calendar
from .literals import ALL, ANY_PRED, Literal, LiteralSpec, literal_spec
from .rules import CompiledRule, canonical, compile_rule


class Snapshot:
    """What changed at an evaluated tick ``t``.  Ticks between two snapshots have the earlier answer.

    The changes are kept per predicate as argument tuples (``added_by_pred``); ``added`` and ``removed``
    build :class:`Atom` objects on first use.
    """

    __slots__ = ("_added", "_removed", "added_by_pred", "placed", "removed_by_pred", "t")

    def __init__(self, t: int, added_by_pred: dict, removed_by_pred: dict, placed=None) -> None:
        self.t = t
        self.added_by_pred = added_by_pred
        self.removed_by_pred = removed_by_pred
        self.placed: dict[int, frozenset[Atom]] | None = placed
        self._added = self._removed = None

    @property
    def added(self) -> frozenset[Atom]:
        if self._added is None:
            self._added = frozenset(Atom(p, a) for p, rows in self.added_by_pred.items() for a in rows)
        return self._added

    @property
    def removed(self) -> frozenset[Atom]:
        if self._removed is None:
            self._removed = frozenset(Atom(p, a) for p, rows in self.removed_by_pred.items() for a in rows)
        return self._removed

    def __repr__(self) -> str:
        return f"Snapshot(t={self.t}, added={sorted(map(str, self.added))}, removed={sorted(map(str, self.removed))})"


@dataclass
class _Stratum:
    rules: list[CompiledRule]
    recursive: bool
    volatile: list[Literal]
    supplements: list[Literal]


class Engine:
    """Incremental evaluation of one LARS program.

    >>> e = Engine(program); e.push(atoms, 36); e.advance_to(42); e.holds()
    """

    def __init__(self, program: Program, *, start: int | None = None, background: Iterable[Atom] = (),
                 report_placed: bool = False) -> None:
        strata = analyse(program)
        self.program = program
        self.report_placed = report_placed
        self.start: int | None = None
        self.calendar = Calendar()
        self.activations: dict[int, list] = {}
        self.now = -INF
        self.last: int | None = None  # last evaluated tick
        self.current: int | None = None  # the time the engine has advanced to
        self.pending: dict[int, list] = {}
        self.pending_heap: list[int] = []
        self.intensional = program.intensional()
        self.plain_heads = {r.head.atom.pred for r in program.rules if r.head.time is None}
        self.background: dict[str, set[tuple]] = {}
        for atom in list(program.facts) + list(background):
            self.background.setdefault(atom.pred, set()).add(atom.args)
        self.literals: dict[LiteralSpec, Literal] = {}
        self.now_store: dict[str, AnnotatedMap] = {}
        self.placed_store: dict[str, AnnotatedMap] = {}
        self.extras_prev: set[tuple] = set()
        self.settle = True
        self._build(strata)
        if start is not None:
            self._set_start(start)

    # ---------------------------------------------------------------- compilation

    def _literal(self, ext: ExtAtom):
        spec, vars_ = literal_spec(ext)
        lit = self.literals.get(spec)
        if lit is None:
            lit = self.literals[spec] = Literal(spec, self)
        return lit, vars_

    def _copy_literal(self, pred: str) -> Literal | None:
        """The literal whose groundings *are* ``pred``'s facts, when ``pred`` is defined by one rule of the
        form ``q(X1..Xn) :- <> p(X1..Xn)`` (any time window without step, or none): same tuples, same horizons."""
        defining = [r for r in self.program.rules if r.head.atom.pred == pred]
        if len(defining) != 1:
            return None
        rule = defining[0]
        if rule.head.time is not None or len(rule.body) != 1 or type(rule.body[0]) is not ExtAtom:
            return None
        ext = rule.body[0]
        if not ext.positive or ext.op not in (None, Op.DIAMOND) or type(ext.window) in (TupleWindow, PartitionWindow):
            return None
        if ext.window is not None and (ext.window.step != 1 or ext.window.offset is not None):
            return None
        lit, vars_ = self._literal(ext)
        if not lit.identity or tuple(rule.head.atom.args) != vars_ or lit.spec.pred == pred:
            return None
        return lit

    def _build(self, strata) -> None:
        rules = self.program.rules
        self.copies: dict[str, Literal] = {}
        for pred in self.intensional:
            copy = self._copy_literal(pred)
            if copy is not None:
                self.copies[pred] = copy
            if pred not in self.now_store:  # kept when rebuilding a restored engine
                self.now_store[pred] = copy.map if copy is not None else AnnotatedMap(self.calendar, pred, "now")
                self.placed_store[pred] = AnnotatedMap(self.calendar, pred, "placed")
                self.placed_store[pred].index_on((1,))
        self.data_subs: dict[str, list[Literal]] = {}
        self.point_subs: dict[str, list[Literal]] = {}
        self.now_subs: dict[str, list[Literal]] = {}
        # non-recursive rules with the same body (up to variable names) share one plan: many standing
        # queries over the same patterns compute their join once
        recursive = {i for st in strata if st.recursive for i in st.rules}
        groups: dict[object, list[int]] = {}
        for i, rule in enumerate(rules):
            key = ("solo", i) if i in recursive else canonical(rule).body
            groups.setdefault(key, []).append(i)
        compiled: dict[int, CompiledRule] = {}
        for members in groups.values():
            emits = [self._emitter(rules[i]) for i in members]
            compiled[members[0]] = compile_rule([rules[i] for i in members], members[0], self._literal, emits)
        self.compiled = compiled
        leader = {i: members[0] for members in groups.values() for i in members}
        # who hears about which atoms
        for lit in self.literals.values():
            spec = lit.spec
            if spec.volatile:
                continue
            self.data_subs.setdefault(spec.pred, []).append(lit)
            self.point_subs.setdefault(spec.pred, []).append(lit)
            if spec.pred in self.plain_heads:
                self.now_subs.setdefault(spec.pred, []).append(lit)
        self.data_fan = {pred: _Fanout(lits) for pred, lits in self.data_subs.items() if pred != ANY_PRED}
        self.now_fan = {pred: _Fanout(lits) for pred, lits in self.now_subs.items()}
        # volatile literals and supplements are refreshed by the first stratum that reads them
        refreshed: set[LiteralSpec] = set()
        self.strata: list[_Stratum] = []
        self.clock_dependent = False
        self.steps: set[tuple[int, int | None]] = set()
        self.tuple_sizes: dict[str, int] = {}
        self.partition_sizes: dict[tuple, int] = {}  # (stream, key pattern) -> the largest size that reads it
        self.box_views: dict[tuple, None] = {}
        for lit in self.literals.values():
            spec = lit.spec
            if spec.stepped and spec.op is Op.BOX:
                # a box's truth moves with the pivot even when nothing arrives or expires; <> and @ over a
                # stepped window need no such ticks: their groundings start (activations) and end (horizons)
                # on events of their own
                self.steps.add((spec.step, spec.offset))
            if spec.partition is not None:
                key = (spec.view, spec.partition)
                self.partition_sizes[key] = max(self.partition_sizes.get(key, 0), spec.size)
                if spec.op is Op.AT and spec.pred in self.background:
                    self.clock_dependent = True
            elif spec.tuple_window:
                self.tuple_sizes[spec.view] = max(self.tuple_sizes.get(spec.view, 0), spec.size)
                if spec.op is Op.AT and spec.pred in self.background:
                    self.clock_dependent = True
            elif spec.op is Op.BOX:
                self.box_views[(spec.view, spec.pred)] = None
                if spec.pred in self.intensional:
                    self.clock_dependent = True
            if lit.needs_supplement(spec.pred in self.plain_heads, spec.pred in self.background):
                # @U over atoms that hold at every point, or a stepped window over atoms derived at every
                # tick (true only at pivots): the answer can change at any tick
                self.clock_dependent = True
        for cr in compiled.values():
            if any(n.guard == "in_range" for n in cr.negatives):
                self.clock_dependent = True
        placed_plans: set[int] = set()
        for st in strata:
            # a plan runs in the first stratum of its rules (its body is complete there); a copy rule fires
            # only to tell the literals that read its head, its facts are already there
            crs = []
            for i in st.rules:
                cr = compiled[leader[i]]
                if cr.index in placed_plans:
                    continue
                placed_plans.add(cr.index)
                heads = [r.head.atom.pred for r in cr.rules]
                if all(h in self.copies and not self.now_subs.get(h) for h in heads):
                    continue
                crs.append(cr)
            volatile, supplements = [], []
            for cr in crs:
                for lit in [p.literal for p in cr.positives] + [n.literal for n in cr.negatives]:
                    spec = lit.spec
                    if spec in refreshed and spec.pred not in st.preds:
                        continue
                    if spec.volatile:
                        volatile.append(lit)
                    elif lit.needs_supplement(spec.pred in self.plain_heads, spec.pred in self.background):
                        supplements.append(lit)
                    else:
                        continue
                    refreshed.add(spec)
            self.strata.append(_Stratum(crs, st.recursive, _unique(volatile), _unique(supplements)))
        # data history for boxes over time windows
        if not hasattr(self, "history"):
            self.history: dict[tuple, dict[int, set]] = {(v, p): {} for (v, p) in self.box_views}
            self.tuples: dict[str, deque] = {s: deque(maxlen=n) for s, n in self.tuple_sizes.items()}
            # partition windows: per (stream, key pattern), per key value, the part's latest atoms
            self.partitions: dict[tuple, dict[tuple, deque]] = {k: {} for k in self.partition_sizes}
        self.history_by_pred: dict[str, list] = {}
        for key in self.history:
            self.history_by_pred.setdefault(key[1], []).append(key)
        self.history_keep: dict[tuple, int] = {}
        for lit in self.literals.values():
            spec = lit.spec
            if spec.op is Op.BOX and not spec.tuple_window:
                key = (spec.view, spec.pred)
                self.history_keep[key] = max(self.history_keep.get(key, 0), min(INF, spec.size + spec.step))
        self.cursors: dict[int, list[int]] = {i: [0] * len(cr.positives) for i, cr in compiled.items()}
        # Positive programs without [] or @-heads whose answer does not move with the clock: their state at a
        # tick does not depend on the ticks before it having been evaluated one by one (every grounding's
        # interval follows from its own time point), so catch_up may fold many ticks into one evaluation.
        self.batchable = (
            not self.clock_dependent
            and not any(cr.volatile for cr in compiled.values())
            and not any(r.head.time is not None for r in self.program.rules)
            and not any(spec.op is Op.BOX for spec in self.literals)
        )
        # per-tick bookkeeping, computed once: stores that @-heads fill, background facts of derived predicates,
        # and every annotated map (cleared at the end of a tick when it changed)
        at_heads = {r.head.atom.pred for r in self.program.rules if r.head.time is not None}
        self.placed_heads = [(p, st) for p, st in self.placed_store.items() if p in at_heads]
        self.derived_background = [(p, self.background[p]) for p in self.intensional if p in self.background]
        self.all_maps = _unique([lit.map for lit in self.literals.values()] + list(self.placed_store.values())
                                + list(self.now_store.values()))

    # ---------------------------------------------------------------- serialisation

    _DERIVED = ("compiled", "strata", "data_subs", "point_subs", "now_subs", "data_fan", "now_fan", "cursors",
                "placed_heads",
                "derived_background", "all_maps", "batchable")

    def __getstate__(self) -> dict:
        """The engine's state without its generated code; ``pickle`` round-trips a running engine."""
        return {k: v for k, v in self.__dict__.items() if k not in self._DERIVED}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._build(analyse(self.program))

    def _emitter(self, rule):
        pred = rule.head.atom.pred
        calendar = self.calendar
        if rule.head.time is None and pred in self.copies:
            def emit_copy(out):
                by_h: dict[int, list] = {}
                for args, h in out:
                    by_h.setdefault(h, []).append(args)
                fan = self.now_fan.get(pred)
                if fan is not None:
                    fan.on_now(by_h, self.now)

            return emit_copy
        if rule.head.time is None:
            store = self.now_store[pred]
            entries = store.entries
            born = store.born

            def emit_now(out):
                get = entries.get
                fresh = [item for item in out if get(item[0], -INF) < item[1]]
                if not fresh:
                    return
                first_h = fresh[0][1]
                born.extend({args: None for args, _ in fresh if args not in entries})
                if len(set(map(_horizon, fresh))) == 1:
                    entries.update(fresh)
                    by_h = {first_h: [args for args, _ in fresh]}
                else:
                    fresh.sort(key=_horizon)  # the largest horizon of a repeated key must win
                    entries.update(fresh)
                    by_h = {}
                    for args, h in fresh:
                        if entries[args] == h:
                            batch = by_h.get(h)
                            if batch is None:
                                by_h[h] = [args]
                            else:
                                batch.append(args)
                now = self.now
                for h, batch in by_h.items():
                    calendar.file(store, batch, h, now)
                fan = self.now_fan.get(pred)
                if fan is not None:
                    fan.on_now(by_h, now)

            return emit_now

        text = format_rule(rule)
        store = self.placed_store[pred]

        def emit_at(out):
            now = self.now
            for args, point, h in out:
                if type(point) is not int:
                    raise EvaluationError(f"@{point} is not a time point, in rule: {text}", rule.span)
                if not store.put((args, point), h, now):
                    continue
                if point > now:
                    calendar.add_event(point)
                for lit in self.point_subs.get(pred, ()):
                    lit.on_point(args, point, h, now)

        return emit_at

    # ---------------------------------------------------------------- input

    def _set_start(self, start: int) -> None:
        self.start = start
        for pred, rows in self.background.items():
            for lit in self.point_subs.get(pred, ()):
                for args in rows:
                    lit.on_background(args, start)

    def push(self, atoms: Iterable[Atom | tuple], t: int, stream: str = DEFAULT_STREAM) -> None:
        """Queue atoms (``Atom`` or ``(pred, args)``) arriving at ``t`` on ``stream``, in arrival order."""
        if self.current is not None and t <= self.current:
            raise EvaluationError(f"time {t} is not after {self.current}, which was already evaluated")
        if self.start is None:
            self._set_start(t)
        elif t < self.start:
            raise EvaluationError(f"time {t} is before the start of the timeline ({self.start})")
        rows = [(a.pred, a.args) if type(a) is Atom else a for a in atoms]
        if t not in self.pending:
            self.pending[t] = []
            heapq.heappush(self.pending_heap, t)
        self.pending[t].append((stream, rows))

    def calendar_activate(self, t: int, owner: AnnotatedMap, batch: list, h: int) -> None:
        self.activations.setdefault(t, []).append((owner, batch, h))
        self.calendar.add_event(t)

    # ---------------------------------------------------------------- time

    def _next_tick(self) -> int | None:
        if self.last is None:
            return self.start
        nxt = self.last + 1
        if self.settle or self.clock_dependent:
            return nxt
        candidates = []
        if self.pending_heap:
            candidates.append(self.pending_heap[0])
        ev = self.calendar.next_event()
        if ev is not None:
            candidates.append(max(ev, nxt))
        for d, offset in self.steps:
            candidates.append(next_pivot(nxt, d, offset))
        return min(candidates) if candidates else None

    def ticks(self, until: int) -> Iterator[Snapshot]:
        """Evaluate every tick up to ``until`` that can change the answer; yield a snapshot after each."""
        if self.start is None:
            self._set_start(until)
        while True:
            t = self._next_tick()
            if t is None or t > until:
                break
            yield self._evaluate(t)
        self.current = until if self.current is None else max(self.current, until)

    def advance_to(self, t: int) -> list[Snapshot]:
        return list(self.ticks(t))

    def answers(self, until: int) -> Iterator[tuple[int, frozenset[Atom], dict[int, frozenset[Atom]]]]:
        """``(t, holds, placed)`` for every tick after the last one answered, through ``until``.

        Skipped ticks repeat the answer of the tick before them.  Push the atoms of a tick before asking for
        it; ``placed`` is only filled when the engine was built with ``report_placed=True``.  Use either this
        or ``ticks``/``advance_to`` on one engine: snapshots consumed elsewhere are not seen here.
        """
        if self.start is None:
            self._set_start(until)
        state = self.__dict__.setdefault("_answered", [self.start, set(), {}])  # next t, holds, placed
        holds = state[1]

        def upto(t_stop: int):
            while state[0] < t_stop:
                t = state[0]
                state[0] = t + 1
                yield t, frozenset(holds), state[2]

        for snap in self.ticks(until):
            yield from upto(snap.t)
            holds.difference_update(snap.removed)
            holds.update(snap.added)
            state[2] = snap.placed if snap.placed is not None else {}
            yield from upto(snap.t + 1)
        yield from upto(until + 1)

    def run(self, stream: dict[int, list], start: int | None = None, end: int | None = None):
        """Feed a whole stream (time -> atoms) and yield ``(t, holds, placed)`` for every tick of the timeline."""
        times = sorted(stream)
        if start is None:
            start = times[0] if times else 0
        if end is None:
            end = times[-1] if times else start
        if self.start is None:
            self._set_start(start)
        for time in times:
            if start <= time <= end:
                self.push(stream[time], time)
        yield from self.answers(end)

    # ---------------------------------------------------------------- evaluation

    def catch_up(self, until: int) -> None:
        """Bring the state to ``until`` evaluating that tick only, when the program allows it (``batchable``);
        otherwise evaluate every tick as :meth:`ticks` does.  No snapshots: for readers of :meth:`facts`."""
        if not self.batchable:
            for _ in self.ticks(until):
                pass
            return
        if self.start is None:
            self._set_start(until)
        if self.last is None or until > self.last:
            self._evaluate(until, catch_up=True)
        self.current = until if self.current is None else max(self.current, until)

    def _evaluate(self, t: int, catch_up: bool = False) -> Snapshot:
        """Evaluate tick ``t``.  With ``catch_up``, the ticks since the last evaluated one are folded into this
        one: their data is ingested at its own time points, their activations applied (see ``batchable``)."""
        self.now = t
        calendar = self.calendar
        calendar.pop_events_through(t)
        calendar.expire_before(t)
        active = False
        due = sorted(k for k in self.activations if k <= t) if catch_up else [t]
        for when in due:
            for owner, batch, h in self.activations.pop(when, ()):
                if h >= t:
                    owner.put_many(batch, h, t)
                    active = True
        extras: set[tuple] = set()
        batches = None
        while self.pending_heap and self.pending_heap[0] <= t and (catch_up or self.pending_heap[0] == t):
            point = heapq.heappop(self.pending_heap)
            batches = self.pending.pop(point)
            self._ingest(point, batches, extras if point == t else set(), t)
        for cursor in self.cursors.values():
            for i in range(len(cursor)):
                cursor[i] = 0
        for stratum in self.strata:
            self._run_stratum(stratum, t)
        for pred, store in self.placed_heads:
            for key in store.keyed[(1,)].get((t,), ()):
                extras.add((pred, key[0]))
                active = True
        for pred, rows in self.derived_background:
            for args in rows:
                extras.add((pred, args))
        self.settle = batches is not None or active
        snap = self._snapshot(t, extras)
        for m in self.all_maps:
            if m.delta or m.born or m.died:
                m.end_tick()
        self.last = t
        return snap

    def _ingest(self, t: int, batches, extras: set, now: int | None = None) -> None:
        """Feed the atoms that arrived at point ``t`` (evaluating at ``now``, by default ``t``)."""
        now = t if now is None else now
        per_stream: dict[str, list] = {}
        for stream, rows in batches:
            per_stream.setdefault(stream, []).extend(rows)
        data_subs = self.data_subs
        data_fan = self.data_fan
        intensional = self.intensional
        for stream, rows in per_stream.items():
            rows = list(dict.fromkeys(rows))  # a stream holds a set of atoms per time point
            queue = self.tuples.get(stream)
            if queue is not None:
                queue.extend((t, pred, args) for pred, args in rows)
            for (view, parts_pattern), size in self.partition_sizes.items():
                if view == stream:
                    parts = self.partitions[(view, parts_pattern)]
                    for pred, args in rows:
                        key = partition_key(parts_pattern, pred, args)
                        if key is not None:
                            part = parts.get(key)
                            if part is None:
                                part = parts[key] = deque(maxlen=size)
                            part.append((t, pred, args))
            preds = set(map(_pred, rows))
            if len(preds) == 1:
                by_pred = {preds.pop(): list(map(_horizon, rows))}  # (pred, args)[1] is the args
            else:
                by_pred = {}
                for pred, args in rows:
                    batch = by_pred.get(pred)
                    if batch is None:
                        by_pred[pred] = [args]
                    else:
                        batch.append(args)
            for lit in data_subs.get(ANY_PRED, ()):  # predicate variables see (pred, *args)
                view = lit.spec.view
                if view is ALL or view == stream:
                    for pred, batch in by_pred.items():
                        lit.on_points([(pred, *args) for args in batch], t, INF, now)
            for pred, batch in by_pred.items():
                fan = data_fan.get(pred)
                if fan is not None:
                    fan.on_points(batch, t, now, stream)
                if pred in intensional:
                    extras.update((pred, args) for args in batch)
                for key in self.history_by_pred.get(pred, ()):
                    if key[0] is ALL or key[0] == stream:
                        self.history[key].setdefault(t, set()).update(batch)
        for key, hist in self.history.items():
            keep = self.history_keep.get(key, INF)
            if keep < INF and hist:
                for old in [u for u in hist if u < t - keep]:
                    del hist[old]

    def _run_stratum(self, stratum: _Stratum, t: int) -> None:
        cursors = self.cursors
        first = True
        while True:
            for lit in stratum.volatile:
                lit.refresh_volatile(t)
            for lit in stratum.supplements:
                lit.refresh_supplement(t)
            progress = False
            for cr in stratum.rules:
                cursor = cursors[cr.index]
                cap = t if cr.volatile else INF
                if first and cr.volatile:
                    cr.full(t, cap)
                    for i, pos in enumerate(cr.positives):
                        cursor[i] = len(pos.literal.map.delta)
                    progress = True
                    continue
                for i, pos in enumerate(cr.positives):
                    delta = pos.literal.map.delta
                    start = cursor[i]
                    if start < len(delta):
                        cursor[i] = len(delta)
                        cr.drivers[i](t, cap, delta[start:] if start else delta[:])
                        progress = True
            first = False
            if not stratum.recursive or not progress:
                break

    # ---------------------------------------------------------------- output

    def _snapshot(self, t: int, extras: set) -> Snapshot:
        prev_extras = self.extras_prev
        special = extras | prev_extras if (extras or prev_extras) else ()
        added: dict[str, set] = {}
        removed: dict[str, set] = {}
        for pred, store in self.now_store.items():
            if not store.born and not store.died:
                continue
            born, died = set(store.born), set(store.died)
            plus, minus = born - died, died - born
            if special:
                plus = {a for a in plus if (pred, a) not in special}
                minus = {a for a in minus if (pred, a) not in special}
            if plus:
                added[pred] = plus
            if minus:
                removed[pred] = minus
        for key in special:
            pred, args = key
            store = self.now_store.get(pred)
            now = store is not None and args in store.entries
            was_now = store is not None and (args in store.died or (now and args not in store.born))
            before = was_now or key in prev_extras
            after = now or key in extras
            if after and not before:
                added.setdefault(pred, set()).add(args)
            elif before and not after:
                removed.setdefault(pred, set()).add(args)
        self.extras_prev = extras
        placed = self.placed() if self.report_placed else None
        return Snapshot(t, added, removed, placed)

    def holds(self) -> frozenset[Atom]:
        """The output at the last evaluated tick (also the output of the ticks skipped since)."""
        out = {(pred, args) for pred, store in self.now_store.items() for args in store.entries}
        out |= self.extras_prev
        return frozenset(Atom(p, a) for p, a in out)

    def facts(self, pred: str):
        """The argument tuples of the derived atoms of ``pred`` at the last evaluated tick (a live view)."""
        store = self.now_store.get(pred)
        return store.entries.keys() if store is not None else ()

    def state_size(self) -> dict[str, int]:
        """How many groundings, facts, filed expiries and retained data atoms the engine holds."""
        return {
            "literal_groundings": sum(len(lit.map) for lit in self.literals.values()),
            "derived_facts": sum(len(m) for m in self.now_store.values())
            + sum(len(m) for m in self.placed_store.values()),
            "filed_expiries": sum(len(batch) for bucket in self.calendar.buckets.values() for _, batch in bucket),
            "pending_activations": sum(len(b) for batches in self.activations.values() for _, b, _ in batches),
            "data_history": sum(len(rows) for hist in self.history.values() for rows in hist.values())
            + sum(len(q) for q in self.tuples.values())
            + sum(len(part) for parts in self.partitions.values() for part in parts.values()),
        }

    def placed(self) -> dict[int, frozenset[Atom]]:
        """Atoms that the last evaluation places through @-heads at points other than its own time."""
        out: dict[int, set[Atom]] = {}
        for pred, store in self.placed_store.items():
            for (args, point) in store.entries:
                if point != self.now:
                    out.setdefault(point, set()).add(Atom(pred, args))
        return {p: frozenset(s) for p, s in sorted(out.items())}

    # ---------------------------------------------------------------- helpers for literals

    def now_facts(self, pred: str):
        store = self.now_store.get(pred)
        return list(store.entries) if store is not None else ()

    def background_of(self, pred: str):
        return self.background.get(pred, ())

    def tuple_range(self, stream: str, size: int, t: int):
        queue = self.tuples.get(stream)
        if queue is None or len(queue) < size:
            return (self.start, t)
        return (queue[-size][0], t)

    def partition_range(self, stream: str, pattern: tuple, size: int, t: int):
        """The range of a partition window: from the oldest atom a full part keeps (the start while some part
        holds fewer than ``size`` atoms, or none exists), to ``t``."""
        parts = self.partitions.get((stream, pattern))
        if not parts:
            return (self.start, t)
        oldest = t
        for part in parts.values():
            if len(part) < size:
                return (self.start, t)
            oldest = min(oldest, part[-size][0])
        return (oldest, t)

    def partition_kept(self, stream: str, pattern: tuple, size: int, pred: str):
        out = []
        for part in self.partitions.get((stream, pattern), {}).values():
            kept = list(part)[-size:]
            if pred == ANY_PRED:
                out.extend((point, (p, *args)) for point, p, args in kept)
            else:
                out.extend((point, args) for point, p, args in kept if p == pred)
        return out

    def tuple_kept(self, stream: str, size: int, t: int, pred: str):
        queue = self.tuples.get(stream)
        if not queue:
            return []
        kept = list(queue)[-size:]
        if pred == ANY_PRED:
            return [(point, (p, *args)) for point, p, args in kept]
        return [(point, args) for point, p, args in kept if p == pred]

    def candidates_at(self, pred: str, view, point: int, t: int):
        out = set(self.background.get(pred, ()))
        hist = self.history.get((view, pred))
        if hist is not None:
            out.update(hist.get(point, ()))
        placed = self.placed_store.get(pred)
        if placed is not None:
            out.update(key[0] for key in placed.keyed[(1,)].get((point,), ()))
        if point == t and pred in self.now_store:
            out.update(self.now_store[pred].entries)
        return out

    def holds_throughout(self, pred: str, view, args: tuple, lo: int, hi: int, t: int) -> bool:
        if args in self.background.get(pred, ()):
            return True
        hist = self.history.get((view, pred), {})
        placed = self.placed_store.get(pred)
        placed_entries = placed.entries if placed is not None else {}
        now_entries = self.now_store[pred].entries if pred in self.now_store else {}
        for u in range(lo, hi + 1):
            if args in hist.get(u, ()):
                continue
            if (args, u) in placed_entries:
                continue
            if u == t and args in now_entries:
                continue
            return False
        return True


_pred = itemgetter(0)
_horizon = itemgetter(1)  # of a (key, horizon) pair


class _Fanout:
    """The literals that hear about one predicate's atoms.  When several of them fix the same argument to
    different constants (``rdf:type(S, ub:Student)``, ``rdf:type(S, ub:Course)``, …), a batch is split by that
    argument once and each part goes only to the literals whose constant it carries, instead of every literal
    matching every atom."""

    __slots__ = ("always", "keyed", "pos")

    MIN_KEYED = 2

    def __init__(self, lits: list[Literal]) -> None:
        counts: dict[int, set] = {}
        for lit in lits:
            for i, (kind, value) in enumerate(lit.spec.pattern):
                if kind == "c":
                    counts.setdefault(i, set()).add(value)
        best = max(counts, key=lambda i: len(counts[i]), default=None)
        if best is None or len(counts[best]) < self.MIN_KEYED:
            self.pos, self.keyed, self.always = None, {}, list(lits)
            return
        self.pos = best
        self.keyed: dict = {}
        self.always: list[Literal] = []
        for lit in lits:
            kind, value = lit.spec.pattern[best] if best < len(lit.spec.pattern) else ("v", None)
            if kind == "c":
                self.keyed.setdefault(value, []).append(lit)
            else:
                self.always.append(lit)

    def split(self, batch: list) -> list[tuple[list[Literal], list]]:
        pos = self.pos
        keyed = self.keyed
        groups: dict = {}
        for args in batch:
            if len(args) > pos:
                value = args[pos]
                if value in keyed:
                    group = groups.get(value)
                    if group is None:
                        groups[value] = [args]
                    else:
                        group.append(args)
        return [(keyed[v], g) for v, g in groups.items()]

    def on_points(self, batch: list, t: int, now: int, stream: str) -> None:
        parts = [(self.always, batch)] if self.pos is None else [(self.always, batch), *self.split(batch)]
        for lits, part in parts:
            for lit in lits:
                view = lit.spec.view
                if view is ALL or view == stream:
                    lit.on_points(part, t, INF, now)

    def on_now(self, by_h: dict[int, list], now: int) -> None:
        for lit in self.always:
            lit.on_now(by_h, now)
        if self.pos is None:
            return
        per_lit: dict[int, tuple[Literal, dict]] = {}
        for h, batch in by_h.items():
            for lits, part in self.split(batch):
                for lit in lits:
                    per_lit.setdefault(id(lit), (lit, {}))[1][h] = part
        for lit, parts in per_lit.values():
            lit.on_now(parts, now)


def _unique(items: list) -> list:
    out, seen = [], set()
    for item in items:
        if id(item) not in seen:
            seen.add(id(item))
            out.append(item)
    return out
