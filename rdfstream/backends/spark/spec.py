"""What a Spark job runs, as one picklable record shipped to the executors (broadcast once per job)."""

from __future__ import annotations

from dataclasses import dataclass

from .keys import SINGLE, Keying

# row kinds between the stages
DATA, TICK, CONTROL, ERROR, WARNING, REPORT = range(6)


@dataclass
class StreamSpec:
    """One input stream: the IRI the queries read (``""`` for a program's default stream), the path or socket
    it comes from, and its format (None: from each file's extension)."""

    iri: str
    path: str
    fmt: str | None = None


@dataclass
class JobSpec:
    """``kind``: ``query`` (C-SPARQL queries, and programs registered beside them, on the API engine) or
    ``program`` (``rdfstream run``: a LARS program, answers at every tick).

    ``template`` is the pickled, not yet started engine every bucket starts from: an
    :class:`rdfstream.api.Engine` with its queries and graphs registered (``query``), or
    ``(program, background)`` (``program``)."""

    kind: str
    template: bytes
    streams: list[StreamSpec]
    token: str
    keying: Keying = SINGLE
    labels: tuple[int, ...] = (0,)  # the Spark grouping key of each bucket
    start: int | None = None  # t0 of the queries, --start of a program (None: the first timestamp)
    end: int | None = None  # --end of a program (None: the last timestamp)
    lateness: int = 0
    on_error: str = "fail"
    advance_on_data: bool = True  # the data's timestamps move the watermark (files); False: only advance_to
    dialect: str = "native"
    prefixes: tuple = ()
    queries: tuple[str, ...] = ()  # report order within one timestamp (registration order)
    guards: frozenset = frozenset()  # programs: schema patterns the stream must not bring (specialised rules)
    reader: object = None  # (lines, path, StreamSpec, JobSpec, errors) -> (t, line, [(stream, (pred, args))])

    @property
    def keyed_query(self) -> bool:
        """Queries split by argument: every bucket must learn the report times of the whole stream.  (Split by
        pane, a report's pane has all its data in one bucket, and only that bucket's report counts.)"""
        return self.kind == "query" and self.keying.keyed and self.keying.kind == "argument"
