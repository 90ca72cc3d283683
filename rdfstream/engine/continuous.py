"""Continuous queries and LARS programs on one shared engine: when to report, and what.

Reporting follows ../shared/SEMANTICS.md §2 and docs/semantics-notes.md ("C-SPARQL reports"):

* a query with time windows reports at the union of its windows' closes ``c = t0 + α + kβ``; the rules read
  each window's latest close (``[α−1 step β start t0+α−1]``), so the answer is read from the engine at tick
  ``c − 1`` and reported with timestamp ``c`` when some window holds a triple (told by the timestamps each
  stream brought, kept for as long as a window can reach back to them);
* a query with ``[ROWS n]`` windows reports at every timestamp at which one of its streams brings data;
* a query with ``[RANGE TRIPLES n]`` runs on an engine of its own whose clock counts batches: batch ``k``
  is pushed at tick ``k`` and reported with the timestamp of its n-th triple;
* ``advance_to(t)`` is a watermark: no triple with a timestamp below ``t`` will come.  It emits every report
  whose content is then complete; ``close()`` ends the streams and emits the rest.

The output of a ``REGISTER STREAM`` query is pushed, with its report timestamp, into the stream named after
the query, where other queries read it (C-SPARQL's composability).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from ..atoms import Atom
from ..errors import EvaluationError, UnsupportedError, UsageError
from ..ir.algebra import ContinuousQuery
from ..ir.nodes import DEFAULT_STREAM, ExtAtom, Program, Rule
from ..ir.windows import INF
from ..reasoning.specialise import SchemaGuard
from .algebra_eval import construct, run
from .session import Engine

Row = tuple  # (pred, args): an atom as the engine takes it


@dataclass
class Output:
    """One report of a query (``form`` select/construct/ask) or one change of a LARS program (``lars``)."""

    query: str
    t: int
    form: str
    variables: list[str] = field(default_factory=list)
    rows: list[dict] = field(default_factory=list)  # SELECT solutions: variable -> engine constant
    triples: list[tuple] = field(default_factory=list)  # CONSTRUCT: (s, p, o) constants
    boolean: bool | None = None  # ASK
    added: frozenset = frozenset()  # LARS programs: atoms that start to hold at t
    removed: frozenset = frozenset()
    holds: frozenset = frozenset()


class _Timestamps:
    """``ctx`` for expression evaluation: f:timestamp(s, p, o) = the latest time of the triple in the windows."""

    def __init__(self, facts: Iterable[tuple]) -> None:
        self.facts = facts
        self.latest: dict[tuple, int] | None = None

    def timestamp(self, s, p, o) -> int | None:
        if self.latest is None:
            self.latest = {}
            for s_, p_, o_, t in self.facts:
                key = (s_, p_, o_)
                if t > self.latest.get(key, -INF):
                    self.latest[key] = t
        return self.latest.get((s, p, o))


class _Query:
    """The reporting state of one registered query."""

    def __init__(self, cq: ContinuousQuery, engine: Engine) -> None:
        self.cq = cq
        self.clock = cq.clock
        self.engine = engine
        self.streams = {w.stream for w in cq.windows}
        self.closes = [cq.t0 + w.size for w in cq.windows] if cq.clock == "time" else []
        self.pending: list[int] = []  # ROWS: data timestamps still to report
        self.batches: list[tuple[int, list, dict]] = []  # TRIPLES: (timestamp, rows, triple -> time)
        self.batch: list[Row] = []
        self.batch_times: dict = {}
        self.batch_no = 0
        self.previous: Counter = Counter()
        self.previous_items: list = []

    def next_close(self) -> int:
        return min(self.closes)

    def skip_past(self, t: int) -> None:
        """Move every window to its first close after ``t``."""
        for i, w in enumerate(self.cq.windows):
            if self.closes[i] <= t:
                self.closes[i] += -(-(t + 1 - self.closes[i]) // w.step) * w.step

    def passed(self, c: int) -> None:
        for i, w in enumerate(self.cq.windows):
            if self.closes[i] == c:
                self.closes[i] = c + w.step


class ContinuousEngine:
    """Queries (compiled IR) and LARS programs sharing one incremental engine; see the module docstring."""

    def __init__(self, queries: list[ContinuousQuery], programs: list[tuple[str, Program]] = (),
                 background: Iterable[Atom] = (), t0: int = 0, program_guards: Iterable[tuple] = ()) -> None:
        self.t0 = t0
        shared = [q for q in queries if q.clock != "triples"]
        rules: list[Rule] = []
        facts: list[Atom] = []
        for q in shared:
            rules.extend(q.program.rules)
            facts.extend(q.program.facts)
        self.programs: list[tuple[str, set[str]]] = []
        for name, program in programs:
            rules.extend(program.rules)
            facts.extend(program.facts)
            self.programs.append((name, program.intensional()))
        background = list(background)
        # queries over the same windows and rules share their closure: identical rules and facts are kept once
        rules, facts = list(dict.fromkeys(rules)), list(dict.fromkeys(facts))
        self.engine = Engine(Program(tuple(rules), tuple(facts)), start=t0, background=background)
        # schema triples the streams must not bring, because rules were specialised against the background;
        # programs read every stream, so their patterns apply to all of them
        by_stream: dict[str, set] = {}
        for q in queries:
            for w in q.windows:
                by_stream.setdefault(w.stream, set()).update(q.guards)
        everywhere = set(program_guards)
        self.program_guard = SchemaGuard(everywhere)
        self.guards = {stream: SchemaGuard(patterns | everywhere) for stream, patterns in by_stream.items()}
        self.queries: list[_Query] = []
        for q in queries:
            engine = self.engine if q.clock != "triples" else Engine(q.program, start=0, background=background)
            self.queries.append(_Query(q, engine))
        produced = {q.name: q for q in queries if q.is_stream}
        for q in queries:
            for w in q.windows:
                source = produced.get(w.stream)
                if source is not None and source.clock != "time":
                    raise UnsupportedError(
                        f"query {q.name} reads the stream of query {source.name}, whose reports follow count"
                        " windows: only streams of queries with time windows can be read by other queries")
        self.watermark = t0
        self.last_data: dict[str, int] = {}
        self.counted = {w.stream for q in queries if q.clock == "triples" for w in q.windows}
        self.seen: dict[str, tuple[int, set]] = {}  # counted streams: the triples of their latest timestamp
        self.times: dict[str, list[int]] = {}  # per stream, the timestamps that brought data (recent ones)
        # how far back of the watermark a report can look: a window's content is that of its latest close
        self.reach = max((w.size + w.step for q in queries for w in q.windows if w.kind == "time"), default=0)
        self.holds_by_program: dict[str, set] = {name: set() for name, _ in self.programs}
        self.outputs: list[Output] = []

    # ---------------------------------------------------------------- input

    def push(self, stream: str, rows: list[Row], t: int) -> None:
        """Triples (as ``(pred, (s, o))``) arriving on ``stream`` (an IRI) at ``t``, in arrival order."""
        self._check_time(stream, t)
        if not rows:
            return
        guard = self.guards.get(stream, self.program_guard)
        if guard:
            self._check_schema(stream, rows, t, guard)
        fresh = rows
        if stream in self.counted:  # RANGE TRIPLES counts a triple once per timestamp, across pushes too
            last_t, seen = self.seen.get(stream, (None, set()))
            if last_t != t:
                seen = set()
                self.seen[stream] = (t, seen)
            fresh = [row for row in dict.fromkeys(rows) if row not in seen]
            if not fresh:
                return
            seen.update(fresh)
        self.engine.push(fresh, t, f"<{stream}>")  # the engine keeps a set of atoms per time point itself
        self._note_time(stream, t)
        for q in self.queries:
            if stream in q.streams and q.clock == "triples":
                size = q.cq.windows[0].size
                for row in fresh:
                    q.batch.append(row)
                    q.batch_times[row] = t
                    if len(q.batch) == size:
                        q.batches.append((t, q.batch, q.batch_times))
                        q.batch, q.batch_times = [], {}

    def touch(self, stream: str, t: int) -> None:
        """``stream`` brought data at ``t`` that this engine does not see: in a keyed run (the Spark backend) the
        triples went to another part, and every part must still report at the report times of the whole."""
        self._check_time(stream, t)
        self._note_time(stream, t)

    def _check_time(self, stream: str, t: int) -> None:
        if t < self.t0:
            raise EvaluationError(f"timestamp {t} is before the start of the streams (t0 = {self.t0})")
        if t < self.watermark:
            raise EvaluationError(f"timestamp {t} on <{stream}> is late: time was already advanced to {self.watermark}")

    def _note_time(self, stream: str, t: int) -> None:
        times = self.times.setdefault(stream, [])
        if not times or times[-1] != t:
            times.append(t)
            if len(times) > 1024 and times[0] < self.watermark - self.reach:  # drop what no window can see
                del times[:bisect_left(times, self.watermark - self.reach)]
        self.last_data[stream] = max(t, self.last_data.get(stream, t))
        for q in self.queries:
            if q.clock == "rows" and stream in q.streams and (not q.pending or q.pending[-1] != t):
                q.pending.append(t)

    @staticmethod
    def _check_schema(stream: str, rows: list[Row], t: int, guard: SchemaGuard) -> None:
        for pred, args in rows:
            if guard.violates(pred, args):
                from ..terms import format_term

                triple = " ".join(format_term(x) for x in (args[0], pred, args[1]))
                raise EvaluationError(
                    f"schema triple {triple} at {t} on <{stream}>: the entailment rules were specialised against"
                    " the background schema, so schema triples must come in a graph (--graph), not a stream;"
                    " or run without specialisation (--no-specialise)")

    # ---------------------------------------------------------------- time

    def advance_to(self, t: int) -> list[Output]:
        """Watermark ``t``: emit every report whose content is complete (see the module docstring)."""
        if t < self.watermark:
            raise UsageError(f"cannot advance to {t}: time is already at {self.watermark}")
        self._run(t, final=False)
        self.watermark = t
        if self.programs and t - 1 >= self.t0:  # LARS programs report every tick; queries their report ticks
            self._tick(t - 1)
        out, self.outputs = self.outputs, []
        return out

    def close(self) -> list[Output]:
        """End of all streams: emit the remaining reports."""
        self._run(INF, final=True)
        out, self.outputs = self.outputs, []
        return out

    def _end_of(self, q: _Query) -> int:
        """After the streams end: the last report time at which some window of ``q`` can still hold data.

        A window's content is that of its latest close, so it holds the last triple (at ``last``) until its
        first close after ``last + α``."""
        end = -INF
        for w in q.cq.windows:
            last = self.last_data.get(w.stream)
            if last is None:
                continue
            k = max(0, (last - q.cq.t0) // w.step + 1)  # closes t0+α+kβ: the first one after last+α
            end = max(end, q.cq.t0 + w.size + k * w.step - 1)
        return end

    def _nonempty(self, q: _Query, c: int) -> bool:
        """Whether some window of ``q`` holds a triple at report time ``c`` (``_report`` has moved the
        windows that closed at ``c`` on to their next close)."""
        if q.clock != "time":
            return True  # a RANGE TRIPLES batch, or a ROWS window of a stream that brought data
        for i, w in enumerate(q.cq.windows):
            latest = q.closes[i] - w.step  # the latest close <= c
            if latest < q.cq.t0 + w.size:
                continue
            times = self.times.get(w.stream, ())
            k = bisect_left(times, latest - w.size)
            if k < len(times) and times[k] < latest:
                return True
        return False

    def _may_hold(self, q: _Query, c: int, bound: int) -> bool:
        """Whether some window of ``q`` may hold data at a report time in ``[c, bound]``.

        At ``c`` a window's content is that of its latest close ``<= c``; later closes hold later ranges. So
        the earliest close that matters is that latest close, or the first close if there was none yet."""
        for i, w in enumerate(q.cq.windows):
            first = q.cq.t0 + w.size
            latest = q.closes[i] if q.closes[i] == c else q.closes[i] - w.step
            earliest = latest if latest >= first else first
            if earliest <= bound and earliest - w.size <= self.last_data.get(w.stream, -INF):
                return True
        return False

    def _next(self, q: _Query, bound: int, final: bool) -> int | None:
        """The tick at which ``q`` reads its next report, if that report is due before ``bound``."""
        clock = q.clock
        if clock == "time":
            c = q.next_close()
            if not final and c <= bound and not self._may_hold(q, c, bound):
                # every report up to the watermark is empty (new data comes at or after it): skip them
                q.skip_past(bound)
                c = q.next_close()
            limit = self._end_of(q) if final else bound
            return c - 1 if c <= limit else None
        if clock == "rows":
            return q.pending[0] if q.pending and q.pending[0] < bound else None
        return q.batches[0][0] if q.batches and q.batches[0][0] < bound else None

    def _run(self, bound: int, final: bool) -> None:
        while True:
            due = [(tick, i) for i, q in enumerate(self.queries) if (tick := self._next(q, bound, final)) is not None]
            if not due:
                return
            tick = min(due)[0]
            self._tick(tick)
            for when, i in sorted(due):
                if when == tick:
                    self._report(self.queries[i], tick)

    def _tick(self, tick: int) -> None:
        """Bring the shared engine to ``tick`` and tell the LARS programs what changed."""
        if not self.programs:  # queries read the state at their report ticks only
            self.engine.catch_up(tick)
            return
        snaps = self.engine.advance_to(tick)
        if not snaps:
            return
        for name, preds in self.programs:
            holds = self.holds_by_program[name]
            for snap in snaps:
                added = frozenset(a for a in snap.added if a.pred in preds)
                removed = frozenset(a for a in snap.removed if a.pred in preds)
                if added or removed:
                    holds.difference_update(removed)
                    holds.update(added)
                    self.outputs.append(Output(name, snap.t, "lars", added=added, removed=removed,
                                               holds=frozenset(holds)))

    # ---------------------------------------------------------------- reports

    def _report(self, q: _Query, tick: int) -> None:
        cq = q.cq
        if q.clock == "time":
            t = tick + 1
            q.passed(t)
            engine, ctx = q.engine, None
        elif q.clock == "rows":
            t = q.pending.pop(0)
            engine, ctx = q.engine, None
        else:
            t, rows, times = q.batches.pop(0)
            engine = q.engine
            engine.push(rows, q.batch_no, f"<{cq.windows[0].stream}>")
            engine.catch_up(q.batch_no)
            q.batch_no += 1
            ctx = _BatchTimes(times)
        if not self._nonempty(q, t):
            return
        if ctx is None and cq.timestamps is not None:
            ctx = _Timestamps(engine.facts(cq.timestamps))
        solutions = run(cq.algebra, engine.facts, ctx)
        out = Output(cq.name, t, cq.form, list(cq.variables))
        if cq.form == "select":
            out.rows = self._policy(q, solutions)
        elif cq.form == "ask":
            out.boolean = bool(solutions)
        else:
            triples = construct(cq.template, solutions, f"r{t}")
            out.triples = [tuple(x) for x in self._policy(q, [tuple(x) for x in triples])]
            if cq.is_stream and out.triples:
                self.push(cq.name, [(p, (s, o)) for s, p, o in out.triples], t)
        self.outputs.append(out)

    @staticmethod
    def _policy(q: _Query, items: list) -> list:
        """RStream: the result; IStream / DStream: what was added / removed since the previous report
        (multiset differences, in result order)."""
        policy = q.cq.policy
        if policy == "rstream":
            return items

        def key(item):  # RDF term equality: the integer 0 and the decimal 0.0 differ
            if type(item) is dict:
                return frozenset((k, type(v), v) for k, v in item.items())
            return tuple((type(x), x) for x in item)

        current = Counter(map(key, items))
        previous, previous_items = q.previous, q.previous_items
        q.previous, q.previous_items = current, items
        diff = current - previous if policy == "istream" else previous - current
        out = []
        for item in items if policy == "istream" else previous_items:
            k = key(item)
            if diff[k] > 0:
                diff[k] -= 1
                out.append(item)
        return out


class _BatchTimes:
    """``ctx`` of a RANGE TRIPLES report: the timestamps of the batch's own triples."""

    def __init__(self, times: dict) -> None:
        self.times = times

    def timestamp(self, s, p, o) -> int | None:
        return self.times.get((p, (s, o)))


def rename_default_stream(program: Program, stream: str) -> Program:
    """``program`` with its windows that name no stream reading ``stream`` (an IRI) instead."""

    def window(w):
        if w is None or w.stream != DEFAULT_STREAM:
            return w
        return replace(w, stream=f"<{stream}>")

    rules = []
    for rule in program.rules:
        body = tuple(replace(lit, window=window(lit.window)) if type(lit) is ExtAtom else lit for lit in rule.body)
        rules.append(replace(rule, body=body))
    return replace(program, rules=tuple(rules))
