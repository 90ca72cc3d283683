"""The API and CLI side of the Spark backend (:mod:`rdfstream.backends.spark`): the embedded engine's stream
readers for the executors, and the runner behind ``Engine(backend="spark")``.

The API engine keeps its registration and hands running to :class:`SparkRunner`.

Two ways in, one per engine:

* ``push``/``advance_to``/``close`` as on the embedded engine: pushed triples are written, per
  ``advance_to``, as stream files into the checkpoint's ``inbox/``, and one micro-batch runs them;
* ``run_files({iri: path})``: stream files (a file, or a directory that new files are dropped into) or a
  ``socket://host:port``, processed until they are exhausted (then the streams close) or, with
  ``follow=True``, until stopped.
"""

from __future__ import annotations

import json
import os
import tempfile

from .backends.spark.plan import query_keying, query_spec
from .backends.spark.spec import StreamSpec
from .errors import UsageError


def read_triples(lines, path: str, stream: StreamSpec, spec, errors: list):
    """A triple stream file (any format of :mod:`rdfstream.formats.rdf_streams`) as events
    ``(t, line, [(stream IRI, (p, (s, o))), …])``, one per timestamp."""
    from .formats.rdf_streams import format_of, read_stream

    fmt = stream.fmt or ("nt" if path.startswith("socket://") else format_of(path))  # sockets: nt, as stdin
    current, first, rows = None, 0, []
    for tr in read_stream(lines, fmt, path, on_error=spec.on_error, errors=errors, lateness=spec.lateness):
        if tr.t != current:
            if current is not None:
                yield current, first, rows
            current, first, rows = tr.t, tr.line, []
        rows.append((stream.iri, (tr.p, (tr.s, tr.o))))
    if current is not None:
        yield current, first, rows


def read_atoms(lines, path: str, stream: StreamSpec, spec, errors: list):
    """An atom stream file (``{"t": …, "atoms": […]}`` lines in the program's dialect) as events."""
    from .formats.atom_stream import read_jsonl
    from .frontends.registry import parse_atoms

    def parse(item: str, line: int):
        return parse_atoms(item, spec.dialect, spec.prefixes, source=path, line=line)

    for event in read_jsonl(lines, parse, path, spec.on_error, errors):
        name = event.stream or stream.iri
        yield event.t, event.line, [(name, (a.pred, a.args)) for a in event.atoms]


class SparkRunner:
    def __init__(self, engine, master: str = "local[2]", checkpoint: str | None = None,
                 partition_by: str | None = None, buckets: int | None = None, partitions: int | None = None,
                 max_files_per_trigger: int | None = None) -> None:
        self.engine = engine
        self.master, self.partition_by, self.partitions = master, partition_by, partitions
        self.buckets = buckets
        self.max_files = max_files_per_trigger
        self._tmp = None
        if checkpoint is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="rdfstream-spark-")
            checkpoint = self._tmp.name
        self.checkpoint = checkpoint
        self.job = None
        self.mode: str | None = None
        self.buffer: dict[str, list] = {}
        self.files = 0
        self.delivered: list = []
        self.keying = None

    # ---------------------------------------------------------------- job

    def _buckets(self) -> int:
        if self.buckets:
            return self.buckets
        from .backends.spark.session import parallelism

        return self.partitions or parallelism(self.master)

    def _job(self, streams: list[StreamSpec], sink, advance_on_data: bool, lateness: int = 0,
             on_error: str = "fail"):
        from .api import Report
        from .backends.spark.job import SparkJob

        self.keying = query_keying(self.engine, self.partition_by, self._buckets())
        spec = query_spec(self.engine, streams, self.keying, lateness=lateness, on_error=on_error,
                          advance_on_data=advance_on_data, reader=read_triples)
        return SparkJob(spec, sink or self._deliver, self.checkpoint, master=self.master,
                        partitions=self.partitions, max_files_per_trigger=self.max_files, make_report=Report)

    def _deliver(self, batch_id: int, reports: list) -> None:
        self.delivered.extend(self.engine._hand_out(reports))

    # ---------------------------------------------------------------- push mode

    def _inbox(self) -> None:
        if self.mode == "files":
            raise UsageError("this engine reads stream files (run_files): it takes no pushes")
        if self.job is None:
            self.mode = "push"
            streams = []
            for i, iri in enumerate(self.engine.streams):
                path = os.path.join(self.checkpoint, "inbox", str(i))
                os.makedirs(path, exist_ok=True)
                streams.append(StreamSpec(iri, path, "jsonl"))
            self.index = {s.iri: i for i, s in enumerate(streams)}
            self.job = self._job(streams, None, advance_on_data=False)

    def push_rows(self, iri: str, rows: list, t: int) -> None:
        self._inbox()
        self.buffer.setdefault(iri, []).extend((t, row) for row in rows)

    def _flush(self) -> None:
        from .terms import format_term

        for iri, items in self.buffer.items():
            if not items:
                continue
            self.files += 1
            directory = self.job.spec.streams[self.index[iri]].path
            name = f"{self.files:08d}.jsonl"
            tmp = os.path.join(directory, "." + name)
            with open(tmp, "w", encoding="utf-8") as handle:
                for t, (p, (s, o)) in sorted(items, key=lambda item: item[0]):  # pushes may come out of order
                    handle.write(json.dumps({"t": t, "s": format_term(s), "p": format_term(p),
                                             "o": format_term(o)}) + "\n")
            os.replace(tmp, os.path.join(directory, name))
        self.buffer.clear()

    def advance_to(self, t: int) -> list:
        self._inbox()
        self._flush()
        self.job.command({"advance": t})
        return self._run()

    def close(self) -> list:
        if self.job is None:
            return []
        if self.mode == "push":
            self._flush()
        self.job.command({"close": True})
        try:
            return self._run()
        finally:
            self.job.stop()

    def _run(self) -> list:
        """One micro-batch (or a few) for what was just written; the streaming query keeps running between."""
        self.delivered = []
        self.job.drain()
        return self.delivered

    # ---------------------------------------------------------------- file mode

    def run_files(self, streams: dict[str, str], *, follow: bool = False, sink=None, formats: dict | None = None,
                  lateness: int = 0, on_error: str = "fail", on_start=None) -> list:
        """Process the stream files of ``streams`` (IRI → file, directory or ``socket://host:port``); see the
        module docstring.  Returns the reports (also handed to the consumers, or to ``sink``)."""
        if self.mode == "push":
            raise UsageError("this engine takes pushes: it cannot also read stream files")
        unknown = [iri for iri in streams if iri not in self.engine.streams]
        if unknown:
            raise UsageError(f"no query reads the stream <{unknown[0]}>")
        specs = []
        for iri, path in streams.items():
            if not path.startswith("socket://") and not os.path.exists(path):
                raise UsageError(f"stream {iri}: {path} does not exist")
            specs.append(StreamSpec(iri, path, (formats or {}).get(iri)))
        self.mode = "files"
        if self.job is None:
            self.job = self._job(specs, sink, advance_on_data=True, lateness=lateness, on_error=on_error)
        if on_start is not None:
            on_start(self.keying)
        self.delivered = []
        self.job.run_all(follow)
        return self.delivered

    def stop(self) -> None:
        """Stop a ``follow`` run (from another thread): its state stays in the checkpoint for a restart."""
        if self.job is not None:
            self.job.stop()
