"""Driver side: the buckets' output of one micro-batch merged into reports, and sinks that write them.

Every bucket reports at the report times of the whole stream, so the merge is a union per (timestamp, query):
rows and triples are concatenated in bucket order, ASK answers or-ed, and a LARS program's answer at a tick is
the union of the buckets' answers.  Reports leave in the embedded engine's order: by time, then by query.

File sinks write exactly once: a log beside the Spark checkpoint records where each micro-batch's text
starts, so a batch that Spark runs again after a crash replaces its own earlier, possibly partial, text.
"""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Callable, Iterable

from ...errors import RdfstreamError
from .spec import ERROR, REPORT, WARNING


class JobFailed(RdfstreamError):
    """A bucket or the parser reported an error: the first one's message, already located (``file:line:col``)."""

    located = True

    def __init__(self, payload: str) -> None:
        code, _, message = payload.partition("\t")
        super().__init__(message)
        self.exit_code = int(code) if code.isdigit() else 1


def merge(rows: Iterable, kind: str, make_report: Callable | None = None) -> tuple[list, list[str]]:
    """``(outputs, warnings)`` of one micro-batch's rows; raises :class:`JobFailed` on an error row.

    ``outputs`` are ``make_report(query, t, form, variables, rows, triples, boolean, added, removed, holds)``
    (queries; the API passes its Report class) or ``(t, holds, placed)`` (programs)."""
    errors, warnings, groups = [], [], {}
    for row in rows:
        kind_ = row["kind"]
        if kind_ == ERROR:
            errors.append(bytes(row["payload"]).decode())
        elif kind_ == WARNING:
            warnings.append(bytes(row["payload"]).decode().partition("\t")[2])
        elif kind_ == REPORT:
            groups.setdefault((row["t"], row["qi"], row["query"]), []).append((row["bucket"], row["payload"]))
    if errors:
        raise JobFailed(sorted(errors)[0])
    outputs = []
    for (t, _, query), parts in sorted(groups.items(), key=lambda item: item[0][:2]):
        payloads = [pickle.loads(payload) for _, payload in sorted(parts, key=lambda p: p[0])]
        outputs.append(_merge_report(make_report, query, t, payloads) if kind == "query"
                       else _merge_tick(t, payloads))
    return outputs, warnings


def _merge_report(make_report: Callable, query: str, t: int, payloads: list):
    form, variables = payloads[0][0], payloads[0][1]
    rows, triples, added, removed, holds = [], [], set(), set(), set()
    boolean = None
    for _, _, r, tr, b, a, rm, h in payloads:
        rows.extend(r)
        triples.extend(tr)
        if b is not None:
            boolean = bool(boolean) or b
        added |= a
        removed |= rm
        holds |= h
    return make_report(query, t, form, list(variables), rows, triples, boolean, frozenset(added),
                       frozenset(removed), frozenset(holds))


def _merge_tick(t: int, payloads: list) -> tuple:
    holds: set[str] = set()
    placed: dict[int, set[str]] = {}
    for h, p in payloads:
        holds.update(h)
        for at, atoms in p.items():
            placed.setdefault(at, set()).update(atoms)
    return t, holds, placed


class ExactlyOnceFile:
    """Text appended per micro-batch to ``path``; a batch written again replaces its earlier text."""

    KEEP = 16  # Spark replays at most the last batch; a few more entries cost nothing

    def __init__(self, path: str, log: str) -> None:
        self.path, self.log = path, log

    def _entries(self) -> list[list[int]]:
        try:
            with open(self.log, encoding="utf-8") as handle:
                return json.load(handle)["batches"]
        except FileNotFoundError:
            return []

    def write(self, batch_id: int, text: str) -> None:
        entries = [e for e in self._entries() if e[0] < batch_id]
        start = entries[-1][2] if entries else 0
        data = text.encode("utf-8")
        mode = "r+b" if os.path.exists(self.path) else "wb"
        with open(self.path, mode) as handle:
            handle.truncate(start)
            handle.seek(start)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        entries.append([batch_id, start, start + len(data)])
        tmp = self.log + ".tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump({"path": os.path.abspath(self.path), "batches": entries[-self.KEEP:]}, handle)
        os.replace(tmp, self.log)


class TextSink:
    """Reports rendered to text by ``render`` and written to a file exactly once, or to a stream as they come."""

    def __init__(self, render: Callable, out=None, file: ExactlyOnceFile | None = None) -> None:
        self.render, self.out, self.file = render, out, file

    def __call__(self, batch_id: int, outputs: list) -> None:
        import io

        buffer = io.StringIO()
        for item in outputs:
            self.render(buffer, item)
        text = buffer.getvalue()
        if self.file is not None:
            self.file.write(batch_id, text)
        elif text:
            self.out.write(text)
            self.out.flush()


class CallbackSink:
    """Each output handed to a Python function on the driver (``fn(report)``)."""

    def __init__(self, fn: Callable) -> None:
        self.fn = fn

    def __call__(self, batch_id: int, outputs: list) -> None:
        for item in outputs:
            self.fn(item)
