"""Executor side, first stage: stream files (one Spark row per file) parsed into keyed rows.

Each file is read whole and parsed by the same readers as the embedded engine uses, so every format is
supported and an error names the file, line and column.  The output has one row per (event time, bucket)
with the event's atoms pickled, plus one *tick* row per bucket telling it the timestamps the other
buckets got (every bucket must report at the report times of the whole stream) and control rows
(``advance``, ``close``) for every bucket.
"""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Iterator

from ...errors import RdfstreamError
from .spec import CONTROL, DATA, ERROR, TICK, WARNING, JobSpec

COLUMNS = ["label", "kind", "t", "src", "path", "seq", "payload"]
SCHEMA = "label long, kind int, t long, src int, path string, seq long, payload binary"


def parse_partition(spec: JobSpec, frames: Iterator) -> Iterator:
    """``mapInPandas`` body: rows ``(value, path, src)`` in, keyed rows (:data:`SCHEMA`) out."""
    import pandas as pd

    for frame in frames:
        out: list[tuple] = []
        times: dict[int, set[int]] = {}
        for row, (value, uri, src) in enumerate(zip(frame["value"], frame["path"], frame["src"], strict=True)):
            src, path = int(src), local_path(uri)
            if src < 0:
                out.extend(_control(spec, value, path))
                continue
            socket = path.startswith("socket://")  # a row per line: its place in the batch orders it
            try:
                for t, seq, label, rows in _events(spec, value, path, src, out):
                    seq = row if socket else seq
                    out.append((label, DATA, t, src, path, seq, pickle.dumps(rows, protocol=5)))
                    times.setdefault(src, set()).add(t)
            except RdfstreamError as err:
                out.append((spec.labels[0], ERROR, 0, src, path, 0, f"{err.exit_code}\t{err}".encode()))
        if times:
            payload = pickle.dumps({s: sorted(ts) for s, ts in times.items()}, protocol=5)
            low = min(min(ts) for ts in times.values())
            for label in spec.labels:
                out.append((label, TICK, low, -1, "", 0, payload))
        yield pd.DataFrame(out, columns=COLUMNS)


def local_path(uri: str) -> str:
    """A file URI as Spark reports it (``file:/data/s.nt``) as the path a user wrote."""
    if uri.startswith("file://"):
        uri = uri[7:]
    elif uri.startswith("file:"):
        uri = uri[5:]
    from urllib.parse import unquote

    return unquote(uri)


def _control(spec: JobSpec, value: str, path: str) -> list[tuple]:
    order = int(os.path.basename(path).split("-")[0])  # control files are named NNNNNN-what.json
    command = json.loads(value)
    t = int(command.get("advance", 0))
    data = json.dumps(command).encode()
    return [(label, CONTROL, t, -1, path, order, data) for label in spec.labels]


def _events(spec: JobSpec, text: str, path: str, src: int, out: list) -> Iterator[tuple]:
    """(t, first line, bucket label, rows) per event time and bucket of one file, in file order.

    ``spec.reader`` parses the file (the API and CLI supply the embedded engine's readers): it yields
    ``(t, line, [(stream, (pred, args)), …])`` per event and collects skipped lines into ``errors``."""
    errors: list[RdfstreamError] = []
    keying, labels = spec.keying, spec.labels
    for t, line, rows in spec.reader(text.splitlines(keepends=True), path, spec.streams[src], spec, errors):
        if not keying.keyed:  # one bucket: no routing per atom
            yield t, line, labels[0], rows
            continue
        groups: dict[int, list] = {}
        for row in rows:
            groups.setdefault(keying.route(row[1][1], t), []).append(row)
        if not groups:  # an event without atoms still moves time
            groups[0] = []
        for bucket, chunk in groups.items():
            yield t, line, labels[bucket], chunk
    for err in errors:
        out.append((labels[0], WARNING, 0, src, path, 0, f"2\tskipped line: {err}".encode()))
