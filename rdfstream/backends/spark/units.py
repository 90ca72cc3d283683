"""Executor side, second stage: one bucket's reasoning, an embedded engine kept in Spark keyed state.

Every micro-batch calls :func:`process_group` once per bucket with the bucket's event rows, a tick row per
parsed partition (the timestamps the whole batch brought) and the control rows.  The bucket replays the batch
in the embedded engine's order (by time, then stream, file and line), moving the watermark exactly as
``rdfstream query``/``run`` do on one machine, and emits its reports.  Its state is the pickled engine (which
round-trips mid-stream); the engine object itself stays cached in the Python worker between batches, and the
pickle is read back only after a restart or a retried batch (when the cached version is not the stored one).
"""

from __future__ import annotations

import json
import pickle
from collections import OrderedDict
from collections.abc import Iterator

from ...errors import RdfstreamError
from .spec import CONTROL, DATA, ERROR, REPORT, TICK, WARNING, JobSpec

OUT_COLUMNS = ["kind", "query", "t", "qi", "bucket", "payload"]
OUT_SCHEMA = "kind int, query string, t long, qi int, bucket int, payload binary"
STATE_SCHEMA = "token string, version long, blob binary"

_SPECS: dict[str, JobSpec] = {}
_CACHE: OrderedDict[tuple[str, int], tuple[int, Bucket]] = OrderedDict()
_CACHED = 64  # buckets a worker keeps (a worker may serve several jobs; older entries are read back if needed)


def load_spec(token: str, blob) -> JobSpec:
    """The job's spec, unpickled once per worker process (``blob``: a broadcast variable or bytes)."""
    spec = _SPECS.get(token)
    if spec is None:
        spec = _SPECS[token] = pickle.loads(blob.value if hasattr(blob, "value") else blob)
    return spec


class Bucket:
    """The reasoning state of one bucket: its engine, watermark and whether the streams have ended."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.engine = None
        self.watermark: int | None = None
        self.last_t: int | None = None
        self.closed = False
        self.guard = None  # programs: the schema atoms the stream must not bring

    # ---------------------------------------------------------------- engines

    def _start(self, spec: JobSpec, start: int) -> None:
        if spec.kind == "query":  # the API engine compiles at start; the bucket keeps its runtime only
            api = pickle.loads(spec.template)
            api._start(start)
            engine = api.runtime
        else:
            from ...engine.session import Engine

            program, background = pickle.loads(spec.template)
            engine = Engine(program, background=background, report_placed=True)
            engine._set_start(start)
            if spec.guards:  # built once: checked for every pushed atom
                from ...reasoning.specialise import SchemaGuard

                self.guard = SchemaGuard(spec.guards)
        self.engine, self.watermark = engine, start

    def _push(self, spec: JobSpec, name: str, rows: list, t: int) -> None:
        if spec.kind == "query":
            self.engine.push(name, rows, t)
            return
        guard = self.guard
        if guard:
            for pred, args in rows:
                if guard.violates(pred, args):
                    from ...atoms import Atom
                    from ...reasoning.specialise import SchemaGuard

                    raise SchemaGuard.atom_error(f"{Atom(pred, args)} at {t}")
        self.engine.push(rows, t, name)

    def _advance(self, spec: JobSpec, t: int, out: list) -> None:
        if t <= self.watermark:
            return
        self.watermark = t
        if spec.kind == "query":
            self._reports(spec, self.engine.advance_to(t), out)
        else:  # every tick before t, within the timeline
            self._ticks(self.engine.answers(t - 1 if spec.end is None else min(t - 1, spec.end)), out)

    def _close(self, spec: JobSpec, out: list) -> None:
        if spec.kind == "query":
            self._reports(spec, self.engine.close(), out)
        else:
            end = spec.end if spec.end is not None else self.last_t
            if end is not None:
                self._ticks(self.engine.answers(end), out)
        self.closed = True

    def _reports(self, spec: JobSpec, reports, out: list) -> None:
        keying = spec.keying
        owner = keying.owner if keying.keyed else None
        for r in reports:  # engine.continuous.Output records
            if keying.keyed and keying.kind == "time" and keying.report_owner(r.t) != self.index:
                continue  # another bucket holds this pane
            rows = r.rows
            if owner is not None:
                rows = [row for row in rows if spec.keying.bucket_of(row.get(owner)) == self.index]
            payload = (r.form, r.variables, rows, r.triples, r.boolean, r.added, r.removed, r.holds)
            out.append((REPORT, r.query, r.t, spec.queries.index(r.query), self.index, _dump(payload)))

    def _ticks(self, answers, out: list) -> None:
        for t, holds, placed in answers:
            payload = (sorted(map(str, holds)), {p: sorted(map(str, atoms)) for p, atoms in placed.items()})
            out.append((REPORT, "", t, 0, self.index, _dump(payload)))

    # ---------------------------------------------------------------- one batch

    def process(self, spec: JobSpec, data: list[tuple], times: dict[int, set], controls: list[tuple]) -> list:
        """Run one micro-batch: ``data`` rows ``(t, src, path, seq, rows)``, the batch's timestamps per stream,
        and control commands ``(order, command)``; returns output rows (:data:`OUT_COLUMNS`)."""
        out: list[tuple] = []
        if self.closed:
            if data:
                t, src, path, seq, _ = data[0]
                out.append(_error(self.index, f"{path}:{seq}: data at {t} after the streams were closed", code=2))
            return out
        if self.engine is None:
            start = spec.start
            if start is None:
                candidates = [t for ts in times.values() for t in ts] + [t for t, *_ in data]
                candidates += [c["advance"] for _, c in controls if "advance" in c]
                if not candidates:
                    return out
                start = min(candidates)
            self._start(spec, start)
        own: dict[int, list] = {}
        for t, src, path, seq, rows in sorted(data, key=lambda d: d[:4]):
            own.setdefault(t, []).append((src, path, seq, rows))
        everything = set(own)
        for ts in times.values():
            everything.update(ts)
        touch = spec.keyed_query
        try:
            for t in sorted(everything):
                if spec.kind == "program" and (t < self.engine.start or spec.end is not None and t > spec.end):
                    for _src, path, seq, _ in own.get(t, ()):
                        out.append(_error(self.index, f"{path}:{seq}: atoms at {t} lie outside the timeline"
                                          f" [{self.engine.start}, {spec.end if spec.end is not None else '…'}] and"
                                          " were not evaluated", warning=True))
                    continue
                if t < self.watermark:
                    for _src, path, seq, _ in own.get(t, ()):
                        message = (f"{path}:{seq}: timestamp {t} is late: time was already advanced to"
                                   f" {self.watermark} (stream files must arrive in time order; --lateness MS"
                                   " holds the watermark back)")
                        out.append(_error(self.index, message, warning=spec.on_error == "skip", code=2))
                    continue
                if spec.advance_on_data:
                    self._advance(spec, t - spec.lateness, out)
                pushed = set()
                for _src, _, _, rows in own.get(t, ()):
                    for name, chunk in _by_stream(rows):
                        self._push(spec, name, chunk, t)
                        pushed.add(name)
                if touch:
                    for src, ts in times.items():
                        name = spec.streams[src].iri
                        if t in ts and name not in pushed:
                            self.engine.touch(name, t)
                self.last_t = t if self.last_t is None else max(self.last_t, t)
            for _, command in sorted(controls, key=lambda c: c[0]):
                if "advance" in command:
                    self._advance(spec, int(command["advance"]), out)
                if command.get("close"):
                    self._close(spec, out)
        except RdfstreamError as err:
            out.append(_error(self.index, str(err), code=err.exit_code))
        return out


def _by_stream(rows: list) -> Iterator[tuple[str, list]]:
    """Consecutive rows of one stream, as ``(stream, [(pred, args), …])``."""
    name, chunk = None, []
    for stream, row in rows:
        if stream != name and chunk:
            yield name, chunk
            chunk = []
        name = stream
        chunk.append(row)
    if chunk:
        yield name, chunk


def _dump(obj) -> bytes:
    return pickle.dumps(obj, protocol=5)


def _error(bucket: int, message: str, warning: bool = False, code: int = 1) -> tuple:
    """An error row: ``code<TAB>message`` (the CLI's exit code and the one-line message)."""
    return (WARNING if warning else ERROR, "", 0, 0, bucket, f"{code}\t{message}".encode())


def process_group(spec_blob, token: str, key: tuple, frames: Iterator, state) -> Iterator:
    """``applyInPandasWithState`` body for the bucket labelled ``key[0]``."""
    import pandas as pd

    spec = load_spec(token, spec_blob)
    label = int(key[0])
    index = spec.labels.index(label)
    data, controls, out = [], [], []
    times: dict[int, set] = {}
    for frame in frames:
        for kind, t, src, path, seq, payload in zip(frame["kind"], frame["t"], frame["src"], frame["path"],
                                                     frame["seq"], frame["payload"], strict=True):
            if kind == DATA:
                data.append((int(t), int(src), path, int(seq), pickle.loads(payload)))
            elif kind == TICK:
                for s, ts in pickle.loads(payload).items():
                    times.setdefault(s, set()).update(ts)
            elif kind == CONTROL:
                controls.append((int(seq), json.loads(bytes(payload))))
            elif index == 0:  # parse errors and warnings, reported once
                out.append((int(kind), "", 0, 0, index, bytes(payload)))
    version, bucket = 0, None
    if state.exists:
        _, version, blob = state.get
        cached = _CACHE.get((token, label))
        bucket = cached[1] if cached is not None and cached[0] == version else pickle.loads(blob)
    if bucket is None:
        bucket = Bucket(index)
    out.extend(bucket.process(spec, data, times, controls))
    if any(row[0] == ERROR for row in out):
        _CACHE.pop((token, label), None)  # the batch fails: the next attempt starts from the stored state
    else:
        version += 1
        state.update((token, version, pickle.dumps(bucket, protocol=5)))
        _CACHE[(token, label)] = (version, bucket)
        _CACHE.move_to_end((token, label))
        while len(_CACHE) > _CACHED:
            _CACHE.popitem(last=False)
    yield pd.DataFrame(out, columns=OUT_COLUMNS)
