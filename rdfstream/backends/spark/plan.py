"""From an API engine or a ``rdfstream run`` program to a :class:`~.spec.JobSpec`: the template engine every
bucket starts from, and how the stream is keyed (``explain`` prints the same verdicts)."""

from __future__ import annotations

import hashlib
import json
import pickle

from ...ir.nodes import PartitionWindow, Program
from .keys import Keying
from .spec import JobSpec, StreamSpec


def _token(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, default=str, sort_keys=True).encode()).hexdigest()[:16]


def query_keying(engine, partition_by: str | None, buckets: int) -> Keying:
    """How the queries of an API engine split: by ``?var`` when every query allows it, else one key."""
    from ...ir.partition import analyse_query_partition
    from ...vocab import QUAD

    if not partition_by:
        return Keying(note="single key: no --partition-by given")
    if engine.programs:
        return Keying(note="single key: LARS programs registered beside the queries report their changes as a whole")
    if partition_by == "@time":
        return _time_keying(engine, buckets)
    position, notes = None, []
    for handle in engine.queries:
        plan = analyse_query_partition(handle.compiled, partition_by, frozenset({QUAD}))
        notes.append(f"query {handle.name}: {plan.describe()}")
        if not plan.ok:
            return Keying(note="; ".join(notes))
        if position is not None and plan.position != position:
            return Keying(note="; ".join(notes) + "; the queries key the stream by different positions")
        position = plan.position
    if position is None:
        return Keying(note="single key: no query")
    return Keying("argument", position, max(1, buckets), partition_by.lstrip("?$"), "; ".join(notes))


def _time_keying(engine, buckets: int) -> Keying:
    """Key by pane: exact when every window is tumbling with one width and every query reports RStream (a
    pane's report reads that pane only, so one bucket computes it whole)."""
    sizes, why = set(), None
    for handle in engine.queries:
        cq = handle.compiled
        for w in cq.windows:
            if w.kind != "time" or w.step != w.size:
                why = f"query {cq.name}: window {w} is not a tumbling time window"
            sizes.add(w.size)
        if cq.policy != "rstream" or cq.is_stream:
            why = f"query {cq.name}: {cq.policy.upper()} or a stream query compares reports across panes"
    if why is None and len(sizes) != 1:
        why = "the windows have different widths" if sizes else "no window"
    if why is None and engine.t0 is None:
        why = "the panes need a fixed t0"
    if why:
        return Keying(note=f"partitioning by @time: not possible ({why}); it runs as a single key")
    pane = sizes.pop()
    return Keying("time", 0, max(1, buckets), None, f"partitioning by @time: possible; each pane of {pane} ms is a"
                  " key (a tumbling window's report reads one pane)", origin=engine.t0, pane=pane)


def query_spec(engine, streams: list[StreamSpec], keying: Keying, *, lateness: int = 0, on_error: str = "fail",
               advance_on_data: bool = True, reader=None) -> JobSpec:
    """The job of an :class:`rdfstream.api.Engine` (registered, not started) over ``streams``."""
    handles = engine.queries + engine.programs
    consumers = [h.consumers for h in handles]
    saved = engine.backend, engine.spark, engine._spark_options
    try:  # the template is the embedded engine, without the driver's consumers
        for h in handles:
            h.consumers = []
        engine.backend, engine.spark, engine._spark_options = "embedded", None, {}
        template = pickle.dumps(engine, protocol=5)
    finally:
        for h, c in zip(handles, consumers, strict=True):
            h.consumers = c
        engine.backend, engine.spark, engine._spark_options = saved
    ident = {
        "queries": [(h.name, h.text, h.policy, str(h.compiled.entailment)) for h in engine.queries],
        "programs": [(h.name, str(h.program)) for h in engine.programs],
        "graphs": sorted(engine.graphs),
        "t0": engine.t0,
        "streams": [(s.iri, s.path, s.fmt) for s in streams],
        "keying": [keying.kind, keying.position, keying.buckets, keying.owner, keying.origin, keying.pane],
        "lateness": lateness,
        "advance": advance_on_data,
    }
    return JobSpec("query", template, streams, _token("query", ident), keying, start=engine.t0, lateness=lateness,
                   on_error=on_error, advance_on_data=advance_on_data, queries=tuple(h.name for h in handles),
                   reader=reader)


def program_keying(program: Program, background: list, partition_by: str | None, buckets: int) -> Keying:
    """How a LARS program splits: by the argument ``--partition-by`` names (1-based), else by the key of its
    partition windows (``[#n by p(K, _)]``), else one key."""
    from ...ir.partition import analyse_partition

    static = frozenset(a.pred for a in background)
    if partition_by:
        try:
            positions = [int(partition_by) - 1]
        except ValueError:
            from ...errors import UsageError

            raise UsageError(f"--partition-by {partition_by}: for a LARS program, the argument number that keys"
                             " the data atoms (1 for the first)") from None
        source = f"--partition-by {partition_by}"
    else:
        positions = windows_keys(program)
        source = "its partition windows"
        if not positions:
            return Keying(note="single key: no partition window and no --partition-by")
    notes = []
    for position in positions:
        plan = analyse_partition(program, position, static)
        notes.append(plan.describe())
        if plan.ok:
            return Keying("argument", position, max(1, buckets), None, f"from {source}: {plan.describe()}")
    return Keying(note=f"from {source}: " + "; ".join(notes))


def windows_keys(program: Program) -> list[int]:
    """The argument positions the partition windows of ``program`` key by (named variables of their patterns)."""
    from ...ir.nodes import ExtAtom
    from ...terms import is_var

    found: list[int] = []
    for rule in program.rules:
        for lit in rule.body:
            if type(lit) is ExtAtom and type(lit.window) is PartitionWindow:
                for i, arg in enumerate(lit.window.key.args):
                    if is_var(arg) and not arg.name.startswith("_") and i not in found:
                        found.append(i)
    return found


def program_spec(program: Program, background: list, streams: list[StreamSpec], keying: Keying, *,
                 start: int | None, end: int | None, on_error: str, dialect: str, guards=frozenset(),
                 reader=None) -> JobSpec:
    ident = {"program": str(program), "background": sorted(map(str, background)),
             "streams": [(s.iri, s.path, s.fmt) for s in streams], "start": start, "end": end,
             "keying": [keying.kind, keying.position, keying.buckets], "dialect": dialect}
    return JobSpec("program", pickle.dumps((program, background), protocol=5), streams, _token("program", ident),
                   keying, start=start, end=end, on_error=on_error, dialect=dialect, prefixes=program.prefixes,
                   guards=frozenset(guards), reader=reader)
