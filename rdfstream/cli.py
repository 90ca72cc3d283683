"""Command line: ``rdfstream run`` (LARS programs over atom streams), ``rdfstream query`` (C-SPARQL queries
over RDF streams) and ``rdfstream explain`` (either, compiled).

Exit codes: 0 ok, 1 runtime failure, 2 usage / parse / compile error, 3 unsupported construct.
Errors are one line on stderr: ``file:line:col: message``.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from typing import TextIO

from .atoms import Atom
from .errors import RdfstreamError, UsageError
from .ir.nodes import Program


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # usage errors exit 2 with one line, like every other error
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rdfstream", description="Stream reasoning over LARS programs and RDF streams.")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = sub.add_parser("run", help="evaluate a LARS program over a stream of timestamped atoms")
    run.add_argument("program", help="LARS program file ('-' for stdin)")
    run.add_argument("--stream", required=True, help="stream file: JSON lines {\"t\": T, \"atoms\": [...]}")
    run.add_argument("--dialect", default="native", help="program and atom syntax: native (default) or laser")
    run.add_argument("--start", type=int, help="first time point of the timeline (default: first t in the stream)")
    run.add_argument("--end", type=int, help="last time point of the timeline (default: last t in the stream)")
    run.add_argument("--background", action="append", default=[], metavar="FILE",
                     help="file of background facts in the program's dialect (repeatable)")
    run.add_argument("-f", "--format", default="jsonl", choices=["jsonl", "text"], help="output format")
    run.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    run.add_argument("--on-error", default="fail", choices=["fail", "skip"],
                     help="malformed stream lines: stop (default) or report on stderr and skip")
    _rules_arguments(run)
    _spark_arguments(run, "the number of the argument that keys the data atoms (1 = first); default: the key of"
                          " the program's partition windows")

    query = sub.add_parser("query", help="run C-SPARQL queries over timestamped RDF streams")
    query.add_argument("queries", nargs="+", metavar="QUERY", help="C-SPARQL query file(s) ('-' for stdin)")
    query.add_argument("--stream", action="append", default=[], metavar="IRI=FILE",
                       help="stream file for the stream IRI (repeatable; FILE alone when the queries read one"
                            " stream; '-' for stdin); format from the extension: .nt .csv .jsonl .nq .trig")
    query.add_argument("--graph", action="append", default=[], metavar="IRI=FILE",
                       help="static graph that FROM <IRI> may name (repeatable; rdflib reads the file)")
    query.add_argument("--t0", type=int, help="time the windows start from (default: the first timestamp)")
    query.add_argument("-f", "--format", default="jsonl", choices=["jsonl", "json", "csv", "tsv", "xml", "nt", "ttl"],
                       help="report format (default jsonl: one line per report)")
    query.add_argument("-o", "--output", default="-",
                       help="output file, or an existing directory for one file per report (default: stdout)")
    query.add_argument("-i", "--input-format", help="stream file format, when the extensions do not say it")
    query.add_argument("--report", choices=["rstream", "istream", "dstream"],
                       help="report policy for every query (default: the query's own, RStream)")
    query.add_argument("--on-error", default="fail", choices=["fail", "skip"],
                       help="malformed stream lines: stop (default) or report on stderr and skip")
    query.add_argument("--lateness", type=int, default=0, metavar="MS",
                       help="accept triples up to MS earlier than the latest timestamp seen (default 0)")
    query.add_argument("--fetch-graphs", action="store_true",
                       help="let FROM <IRI> load graphs that were not given with --graph from their IRIs")
    query.add_argument("--progress", choices=["auto", "on", "off"], default="auto",
                       help="progress bar on stderr (auto: when stderr is a terminal)")
    _rules_arguments(query)
    _spark_arguments(query, "?VAR: split the stream by this variable's value (e.g. ?sensor), when the queries"
                            " allow it (explain says)")

    lubm = sub.add_parser("lubm", help="the LUBM benchmark: data generator (UBA 1.7)")
    lubm_sub = lubm.add_subparsers(dest="lubm_command", required=True, parser_class=_Parser)
    from .lubm.generator import add_arguments

    add_arguments(lubm_sub.add_parser("generate", help="generate LUBM data, one file per department"))
    lrun = lubm_sub.add_parser("run", help="stream LUBM(N) by department through the 14 queries, with reasoning")
    lrun.add_argument("--univ", type=int, default=1, help="number of universities (default 1)")
    lrun.add_argument("--index", type=int, default=0, help="index of the first university (default 0)")
    lrun.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    lrun.add_argument("--queries", default="all", help="all (default) or a list such as Q1,Q5,Q12")
    lrun.add_argument("--check", metavar="DIR",
                      help="compare the answers with answers_queryN.csv[.gz] files in DIR (exit 1 if they differ);"
                           " tests/data/lubm-answers holds the official ones for LUBM(1, seed 0)")
    lrun.add_argument("-o", "--output", default=None, metavar="DIR", help="write each query's answers to DIR/QN.csv")
    lrun.add_argument("--progress", choices=["auto", "on", "off"], default="auto",
                      help="progress bar on stderr (auto: when stderr is a terminal)")
    _rules_arguments(lrun, default_note=" (default: rules/owl2rl.lars)")
    _spark_arguments(lrun, None, files=False)
    lrun.add_argument("--departments-per-batch", type=int, metavar="N",
                      help="Spark: departments per micro-batch (default: all that are written)")

    explain = sub.add_parser("explain", help="print the compiled program or query: rules, strata, plans")
    explain.add_argument("program", help="a LARS program or a C-SPARQL query (.rq)")
    explain.add_argument("--dialect", default="native")
    explain.add_argument("--plans", action="store_true", help="also print the generated join code")
    explain.add_argument("--t0", type=int, default=0, help="queries: time the windows start from (default 0)")
    explain.add_argument("--graph", action="append", default=[], metavar="IRI=FILE",
                         help="queries: a static graph that FROM <IRI> names (the schema rules are specialised to)")
    explain.add_argument("--background", action="append", default=[], metavar="FILE",
                         help="programs: background facts (the schema rules are specialised to)")
    explain.add_argument("--partition-by", metavar="KEY",
                         help="the key a Spark run would split by: ?VAR or @time (queries), an argument number"
                              " (programs); explain says whether it can")
    _rules_arguments(explain)
    return parser


def _spark_arguments(parser, partition_help: str | None, files: bool = True) -> None:
    group = parser.add_argument_group("Spark engine (docs/spark.md)")
    group.add_argument("--engine", choices=["embedded", "spark"], default="embedded",
                       help="embedded (default): this process; spark: Spark Structured Streaming via PySpark")
    group.add_argument("--master", default="local[2]", help="Spark master URL (default local[2])")
    if partition_help:
        group.add_argument("--partition-by", metavar="KEY", help=partition_help)
    group.add_argument("--buckets", type=int, metavar="N",
                       help="keyed runs: buckets the keys are hashed into (default: --partitions)")
    group.add_argument("--partitions", type=int, metavar="N",
                       help="Spark shuffle partitions = parallel tasks per micro-batch (default: the master's cores)")
    if files:
        group.add_argument("--checkpoint", metavar="DIR",
                           help="checkpoint directory: a killed run restarts from it with the same command"
                                " (default: OUTPUT.checkpoint with -o FILE, else a temporary one)")
        group.add_argument("--max-files-per-trigger", type=int, metavar="N",
                           help="stream files per micro-batch (default: all that are there)")
        group.add_argument("--follow", action="store_true",
                           help="keep reading new files from the stream directories until interrupted")


def _rules_arguments(parser, default_note: str = "") -> None:
    parser.add_argument("--rules", action="append", default=[], metavar="FILE",
                        help="entailment rule file in native LARS, e.g. rules/rdfs.lars (repeatable)" + default_note)
    parser.add_argument("--no-specialise", dest="specialise", action="store_false",
                        help="run the rules as written instead of specialising them against the background schema"
                             " (needed when streams bring schema triples)")


def _version() -> str:
    from . import __version__

    return f"rdfstream {__version__}"


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as err:
        raise UsageError(f"cannot read {path}: {err.strerror}") from None


def load_program(path: str, dialect: str) -> Program:
    from .frontends.registry import parse_program

    return parse_program(_read(path), dialect, source=path)


def load_background(paths: list[str], dialect: str) -> list[Atom]:
    from .frontends.registry import parse_program

    facts: list[Atom] = []
    for path in paths:
        program = parse_program(_read(path), dialect, source=path)
        if program.rules:
            rule = program.rules[0]
            raise UsageError(f"background file holds facts only, found a rule: {rule}", rule.span).with_source(path)
        facts.extend(program.facts)
    return facts


def cmd_run(args, out: TextIO) -> int:
    from .engine.session import Engine
    from .formats.atom_stream import WRITERS, read_jsonl
    from .frontends.registry import parse_atoms

    program = load_program(args.program, args.dialect)
    background = load_background(args.background, args.dialect)
    program, guards = prepare(program, background, args.specialise)
    if args.rules:
        program, more = with_rules(program, args.rules, background, args.specialise)
        guards |= more
    if args.engine == "spark":
        return _run_on_spark(args, program, background, guards, out)
    engine = Engine(program, background=background, report_placed=True)

    def parse(text: str, line: int) -> list[Atom]:
        return parse_atoms(text, args.dialect, program.prefixes, source=args.stream, line=line)

    try:
        handle = open(args.stream, encoding="utf-8")
    except OSError as err:
        raise UsageError(f"cannot read {args.stream}: {err.strerror}") from None
    errors: list[RdfstreamError] = []
    with handle:
        events = list(read_jsonl(handle, parse, args.stream, args.on_error, errors))
    for err in errors:
        print(f"warning: skipped line: {err}", file=sys.stderr)
    if guards:
        _check_schema(events, guards, args.stream)
    start = args.start if args.start is not None else (events[0].t if events else 0)
    end = args.end if args.end is not None else (events[-1].t if events else start)
    if end < start:
        raise UsageError(f"--end {end} is before the start {start}")
    outside = sum(len(e.atoms) for e in events if not start <= e.t <= end)
    if outside:
        print(f"warning: {outside} atoms lie outside the timeline [{start}, {end}] and were not evaluated",
              file=sys.stderr)
    engine._set_start(start)
    write = WRITERS[args.format]
    for t, holds, placed in _timeline(engine, [e for e in events if start <= e.t <= end], start, end):
        write(out, t, [str(a) for a in holds], {p: [str(a) for a in atoms] for p, atoms in placed.items()})
    return 0


def with_rules(program: Program, paths: list[str], background: list[Atom], specialise: bool):
    """The program with entailment rule files added, and the schema patterns streams must not bring."""
    from .entailment import add_rules_to_program, load_rules

    try:
        rules, _ = load_rules(paths)
    except FileNotFoundError as err:
        raise UsageError(str(err)) from None
    return add_rules_to_program(program, rules, background, specialised=specialise)


def prepare(program: Program, background: list[Atom], specialise: bool):
    """Entailment rules a program @includes are specialised like --rules files."""
    from .entailment import prepare_program

    return prepare_program(program, background, specialised=specialise)


def _check_schema(events, guards: set, source: str) -> None:
    from .errors import Span
    from .reasoning.specialise import SchemaGuard

    guard = SchemaGuard(guards)
    for event in events:
        for atom in event.atoms:
            if guard.violates(atom.pred, atom.args):
                raise SchemaGuard.atom_error(str(atom), Span(event.line, 1, source))


def _timeline(engine, events, start: int, end: int) -> Iterator[tuple[int, frozenset, dict]]:
    """Every tick of [start, end] with its answer, pushing each event just before its time comes."""
    pos = 0
    while pos < len(events):
        when = events[pos].t
        by_stream: dict[str, list[Atom]] = {}
        while pos < len(events) and events[pos].t == when:
            by_stream.setdefault(events[pos].stream, []).extend(events[pos].atoms)
            pos += 1
        yield from engine.answers(when - 1)
        for stream, atoms in by_stream.items():
            engine.push(atoms, when, stream)
    yield from engine.answers(end)


def is_query(path: str, text: str) -> bool:
    """A C-SPARQL query rather than a LARS program: by extension, else by its first keyword."""
    if path.endswith((".rq", ".sparql", ".csparql")):
        return True
    if path.endswith((".lars", ".laser")):
        return False
    code = re.sub(r"(?m)^\s*#.*$", "", text)
    return re.match(r"\s*(REGISTER|PREFIX|BASE|SELECT|CONSTRUCT|ASK)\b", code, re.I) is not None


def cmd_explain(args, out: TextIO) -> int:
    from .engine.session import Engine

    text = _read(args.program)
    if is_query(args.program, text):
        from .api import explain_query
        from .frontends.csparql.compile import compile_query
        from .ir.printer import format_program

        if args.rules:
            from .api import Engine as Api

            api = Api(t0=args.t0)
            _register_graphs(api, args.graph)
            handle = api.register_query(text, source=args.program, rules=args.rules, specialise=args.specialise)
            out.write(handle.explain())
            out.write(_query_keys(handle.compiled, args.partition_by, args.t0))
            return 0
        cq = compile_query(text, source=args.program, t0=args.t0)
        out.write(explain_query(cq, format_program))
        out.write(_query_keys(cq, args.partition_by, args.t0))
        return 0
    program = load_program(args.program, args.dialect)
    background = load_background(args.background, args.dialect)
    program, _ = prepare(program, background, args.specialise)
    if args.rules:
        program, _ = with_rules(program, args.rules, background, args.specialise)
    engine = Engine(program)
    from .api import format_rules

    out.write("% program (canonical native LARS; rules specialised from a rule file end with its rule's name)\n")
    out.write(format_rules(program, max_facts=None))
    out.write("\n% strata, in evaluation order\n")
    for i, stratum in enumerate(engine.strata):
        preds = sorted({r.head.atom.pred for cr in stratum.rules for r in cr.rules})
        kind = "recursive" if stratum.recursive else "non-recursive"
        out.write(f"% {i}: {', '.join(preds)} ({kind})\n")
        for cr in stratum.rules:
            mode = "re-evaluated every tick (negation)" if cr.volatile else "semi-naive on deltas"
            shared = f", one plan shared by {len(cr.rules)} rules with this body" if len(cr.rules) > 1 else ""
            for rule in cr.rules:
                out.write(f"%    {rule}   -- {mode}{shared}\n")
            if args.plans:
                for name, src in cr.source.items():
                    out.write(f"%    [{name}]\n")
                    out.write("".join(f"%      {line}\n" for line in src.splitlines()))
    out.write("\n% shared literal indexes\n")
    for spec in engine.literals:
        kind = "volatile" if spec.volatile else "stable"
        out.write(f"% {spec.pred}/{spec.arity} {spec.op.value} window={_window_text(spec)} ({kind})\n")
    if engine.clock_dependent:
        out.write("% clock-dependent: every tick is evaluated\n")
    from .backends.spark.plan import program_keying
    from .ir.partition import analyse_partition

    keying = program_keying(program, background, args.partition_by, 2)
    out.write(f"\n% keyed scale-out (--engine spark): {keying.note}\n")
    if not keying.keyed and not args.partition_by:
        plan = analyse_partition(program, 0, frozenset(a.pred for a in background))
        out.write(f"%   with --partition-by 1: {plan.describe()}\n")
    return 0


def _query_keys(cq, partition_by: str | None, t0: int) -> str:
    """What a Spark run would key the query by: the --partition-by verdict, or the variables that would do."""
    from types import SimpleNamespace

    from .backends.spark.plan import query_keying
    from .ir.partition import analyse_query_partition
    from .vocab import QUAD

    if partition_by:
        fake = SimpleNamespace(queries=[SimpleNamespace(compiled=cq, name=cq.name)], programs=[], t0=t0)
        return f"\n% keyed scale-out (--engine spark): {query_keying(fake, partition_by, 2).note}\n"
    good = [f"?{v}" for v in cq.variables if analyse_query_partition(cq, v, frozenset({QUAD})).ok]
    hint = (f"--partition-by {' or '.join(good)} would split the stream by key" if good
            else "no projected variable can key the stream")
    return f"\n% keyed scale-out (--engine spark): single key without --partition-by; {hint}\n"


def _window_text(spec) -> str:
    from .ir.windows import INF

    if spec.tuple_window:
        return f"#{spec.size}"
    if spec.size >= INF:
        return "none"
    return f"{spec.size}" + (f" step {spec.step}" if spec.step > 1 else "")


def _stream_files(specs: list[str], engine) -> list[tuple[str, str]]:
    """``IRI=FILE`` pairs; a bare FILE goes to the one stream the queries read."""
    pairs = []
    for spec in specs:
        iri, sep, path = spec.partition("=")
        if not sep or "://" not in iri and not iri.startswith("urn:") and ":" not in iri:
            if len(engine.streams) != 1:
                raise UsageError(f"--stream {spec}: say which stream it is (IRI=FILE); the queries read"
                                 f" {', '.join('<' + s + '>' for s in engine.streams) or 'no stream'}")
            iri, path = next(iter(engine.streams)), spec
        pairs.append((iri.strip("<>"), path))
    return pairs


def cmd_query(args, out: TextIO) -> int:
    import heapq

    from tqdm import tqdm

    from .api import Engine
    spark = {}
    if args.engine == "spark":
        spark = dict(master=args.master, checkpoint=_checkpoint(args), partition_by=args.partition_by,
                     buckets=args.buckets, partitions=args.partitions,
                     max_files_per_trigger=args.max_files_per_trigger)
    engine = Engine(t0=args.t0, allow_fetch=args.fetch_graphs, backend=args.engine, **spark)
    _register_graphs(engine, args.graph)
    for path in args.queries:
        try:
            engine.register_query(_read(path), report=args.report, source=path, rules=args.rules,
                                  specialise=args.specialise)
        except FileNotFoundError as err:
            raise UsageError(str(err)) from None
    pairs = _stream_files(args.stream, engine)
    for iri, _ in pairs:
        if iri not in engine.streams:
            raise UsageError(f"--stream {iri}: no query reads this stream (they read"
                             f" {', '.join('<' + s + '>' for s in engine.streams)})")
    produced = {h.name for h in engine.queries if h.compiled.is_stream}
    missing = [s for s in engine.streams if s not in {i for i, _ in pairs} and s not in produced]
    if missing:
        print(f"warning: no --stream for {', '.join('<' + s + '>' for s in missing)}: it stays empty",
              file=sys.stderr)
    if args.engine == "spark":
        return _query_on_spark(args, engine, pairs, out)
    write = _report_writer(args, out)
    for handle in engine.queries:
        handle.add_consumer(write)
    errors: list[RdfstreamError] = []
    sources = [((t.t, i, t.line, iri, t) for t in _open_stream(path, args, errors))
               for i, (iri, path) in enumerate(pairs)]
    disable = {"on": False, "off": True}.get(args.progress)
    bar = tqdm(unit=" triples", unit_scale=True, file=sys.stderr, disable=disable, mininterval=0.5, leave=False)
    current: int | None = None
    batch: dict[str, list] = {}
    for count, (t, _, _, iri, triple) in enumerate(heapq.merge(*sources), start=1):
        if t != current:
            _flush(engine, batch, current)
            if current is not None:
                engine.advance_to(t)
            current = t
        batch.setdefault(iri, []).append((triple.p, (triple.s, triple.o)))
        if count % 4096 == 0:
            bar.update(4096)
    _flush(engine, batch, current)
    engine.close()
    bar.close()
    for err in errors:
        print(f"warning: skipped line: {err}", file=sys.stderr)
    return 0


def _checkpoint(args) -> str | None:
    """--checkpoint, else OUTPUT.checkpoint beside an output file, else None (a temporary directory)."""
    if args.checkpoint:
        return args.checkpoint
    if args.output != "-" and not os.path.isdir(args.output):
        return args.output + ".checkpoint"
    return None


def _spark_output(args, out: TextIO, render, checkpoint: str):
    """The sink of a Spark run: an output file written exactly once, per-report files, or stdout."""
    from .backends.spark.sinks import ExactlyOnceFile, TextSink

    if args.output != "-" and not os.path.isdir(args.output):
        os.makedirs(checkpoint, exist_ok=True)
        return TextSink(render, file=ExactlyOnceFile(args.output, os.path.join(checkpoint, "output-log.json")))
    return TextSink(render, out=out)


def _spark_note(checkpoint: str | None, keying, resumed: bool) -> None:
    where = (f"checkpoint {checkpoint}" if checkpoint
             else "temporary checkpoint (--checkpoint DIR makes the run restartable)")
    print(f"rdfstream: spark: {keying.note}; {where}" + (" (resuming)" if resumed else ""), file=sys.stderr)


def _query_on_spark(args, engine, pairs, out: TextIO) -> int:
    streams: dict[str, str] = {}
    for iri, path in pairs:
        if path == "-":
            raise UsageError("--engine spark reads stream files, directories or socket://HOST:PORT, not stdin")
        if iri in streams:
            raise UsageError(f"--stream {iri}: give one file or directory per stream with --engine spark (put the"
                             " stream's files in one directory)")
        streams[iri] = path
    if any(p.startswith("socket://") for p in streams.values()) and not args.follow:
        raise UsageError("a socket stream does not end: add --follow (and stop the run with Ctrl-C)")

    def render(buffer, report) -> None:
        _report_writer(args, buffer)(report)

    runner = engine._spark()
    resumed = os.path.exists(os.path.join(runner.checkpoint, "rdfstream.json"))
    sink = _spark_output(args, out, render, runner.checkpoint)
    formats = dict.fromkeys(streams, args.input_format) if args.input_format else None

    def started(keying) -> None:
        _spark_note(args.checkpoint or _checkpoint(args), keying, resumed)

    runner.run_files(streams, follow=args.follow, sink=sink, formats=formats, lateness=args.lateness,
                     on_error=args.on_error, on_start=started)
    return 0


def _run_on_spark(args, program, background, guards, out: TextIO) -> int:
    from .backends.spark.job import SparkJob
    from .backends.spark.plan import program_keying, program_spec
    from .backends.spark.session import parallelism
    from .backends.spark.spec import StreamSpec
    from .formats.atom_stream import WRITERS
    from .spark import read_atoms

    if not os.path.exists(args.stream) and not args.stream.startswith("socket://"):
        raise UsageError(f"cannot read {args.stream}: No such file or directory")
    buckets = args.buckets or args.partitions or parallelism(args.master)
    keying = program_keying(program, background, args.partition_by, buckets)
    spec = program_spec(program, background, [StreamSpec("", args.stream, None)], keying, start=args.start,
                        end=args.end, on_error=args.on_error, dialect=args.dialect, guards=guards, reader=read_atoms)
    write = WRITERS[args.format]

    def render(buffer, item) -> None:
        t, holds, placed = item
        write(buffer, t, holds, placed)

    import tempfile

    with tempfile.TemporaryDirectory(prefix="rdfstream-spark-") as tmp:
        checkpoint = _checkpoint(args) or tmp
        resumed = os.path.exists(os.path.join(checkpoint, "rdfstream.json"))
        sink = _spark_output(args, out, render, checkpoint)
        job = SparkJob(spec, sink, checkpoint, master=args.master, partitions=args.partitions,
                       max_files_per_trigger=args.max_files_per_trigger)
        _spark_note(_checkpoint(args), keying, resumed)
        job.run_all(args.follow)
    return 0


def _register_graphs(engine, specs: list[str]) -> None:
    for spec in specs:
        iri, sep, path = spec.partition("=")
        if not sep:
            raise UsageError(f"--graph {spec}: expected IRI=FILE")
        engine.register_graph(iri.strip("<>"), path)


def _open_stream(path: str, args, errors: list):
    """The triples of a stream file, or of standard input for ``-`` (format from -i, default nt)."""
    from .formats.rdf_streams import read_stream, read_stream_file

    if path == "-":
        return read_stream(sys.stdin, args.input_format or "nt", "<stdin>", on_error=args.on_error, errors=errors,
                           lateness=args.lateness)
    return read_stream_file(path, args.input_format, on_error=args.on_error, errors=errors, lateness=args.lateness)


def _flush(engine, batch: dict, t: int | None) -> None:
    for iri, rows in batch.items():
        engine.push_rows(iri, rows, t)
    batch.clear()


_EXTENSIONS = {"json": "srj", "xml": "srx", "csv": "csv", "tsv": "tsv", "nt": "nt", "ttl": "ttl", "jsonl": "jsonl"}


def _report_writer(args, out: TextIO):
    """A consumer writing each report: JSON lines, or one document per report (a file each with -o DIR)."""
    import os

    fmt = args.format
    directory = args.output if args.output != "-" and os.path.isdir(args.output) else None

    def write(report) -> None:
        if fmt == "jsonl":
            out.write(report.jsonl() + "\n")
        else:
            if report.form == "construct" and fmt not in ("nt", "ttl"):
                raise UsageError(f"query {report.query} is a CONSTRUCT query: use -f nt, ttl or jsonl")
            if report.form != "construct" and fmt in ("nt", "ttl"):
                raise UsageError(f"query {report.query} is not a CONSTRUCT query: -f {fmt} does not fit it")
            doc = report.serialize(fmt)
            if directory is not None:
                name = re.sub(r"[^\w.\-]", "_", report.query)
                path = os.path.join(directory, f"{name}-{report.t}.{_EXTENSIONS[fmt]}")
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(doc)
                return
            out.write(f"#report query={report.query} t={report.t}\n")
            out.write(doc if doc.endswith("\n") else doc + "\n")
        out.flush()

    return write


def cmd_lubm(args, out: TextIO) -> int:
    if args.lubm_command == "run":
        return cmd_lubm_run(args, out)
    from .lubm.generator import write

    if args.univ < 1 or args.index < 0:
        raise UsageError("--univ must be at least 1 and --index at least 0")
    try:
        paths = write(args.univ, args.index, args.seed, args.format, args.output, args.onto, args.base)
    except OSError as err:
        raise UsageError(f"cannot write to {args.output}: {err.strerror or err}") from None
    print(f"wrote {len(paths)} department files to {args.output}", file=sys.stderr)
    return 0


def cmd_lubm_run(args, out: TextIO) -> int:
    from pathlib import Path

    from tqdm import tqdm

    from .lubm import run as lubm

    if args.univ < 1 or args.index < 0:
        raise UsageError("--univ must be at least 1 and --index at least 0")
    try:
        queries = lubm.parse_query_list(args.queries)
    except ValueError as err:
        raise UsageError(f"--queries: {err}") from None
    if args.check and not Path(args.check).is_dir():
        raise UsageError(f"--check {args.check}: not a directory")
    if args.output and not Path(args.output).is_dir():
        raise UsageError(f"-o {args.output}: not a directory")
    disable = {"on": False, "off": True}.get(args.progress)
    bar = tqdm(unit=" dept", file=sys.stderr, disable=disable, leave=False)
    try:
        if args.engine == "spark":
            result = lubm.run_spark(args.univ, args.index, args.seed, queries, args.rules, args.specialise,
                                    master=args.master, partitions=args.partitions, buckets=args.buckets,
                                    files_per_batch=args.departments_per_batch,
                                    on_department=lambda i, n: bar.update(1))
            print(f"rdfstream: spark: {result.keying}", file=sys.stderr)
        else:
            result = lubm.run(args.univ, args.index, args.seed, queries, args.rules, args.specialise,
                              on_department=lambda i, n: bar.update(1))
    except FileNotFoundError as err:
        raise UsageError(str(err)) from None
    finally:
        bar.close()
    checked = lubm.compare(result, Path(args.check)) if args.check else {}
    out.write(f"{'query':>5} {'answers':>8}" + (f" {'official':>8}  result" if checked else "") + "\n")
    for n in queries:
        line = f"{'Q' + str(n):>5} {len(result.answers[n]):>8}"
        if checked:
            mine, official, diff = checked[n]
            line += f" {official:>8}  " + ("equal" if diff == 0 else f"DIFFERENT ({diff} rows)")
        out.write(line + "\n")
    clock = f"s on Spark {args.master}, wall" if args.engine == "spark" else "s CPU"
    out.write(f"LUBM({args.univ}): {result.departments} departments, {result.triples} triples in"
              f" {result.seconds:.2f} {clock} ({result.throughput:,.0f} triples/s, {len(queries)} queries;"
              f" compiling {result.compile_seconds:.2f} s)\n")
    if args.output:
        import csv

        for n in queries:
            with open(Path(args.output) / f"Q{n}.csv", "w", newline="", encoding="utf-8") as f:
                writer = csv.writer(f)
                writer.writerow(result.variables[n])
                writer.writerows(sorted(result.answers[n]))
    if checked and any(diff for _, _, diff in checked.values()):
        return 1
    return 0


COMMANDS = {"run": cmd_run, "explain": cmd_explain, "query": cmd_query, "lubm": cmd_lubm}


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        with ExitStack() as stack:
            out = sys.stdout
            if args.command in ("run", "query") and args.output != "-" and not os.path.isdir(args.output) \
                    and args.engine != "spark":  # the Spark sink writes its file itself, exactly once
                try:
                    out = stack.enter_context(open(args.output, "w", encoding="utf-8"))
                except OSError as err:
                    raise UsageError(f"cannot write {args.output}: {err.strerror}") from None
            return COMMANDS[args.command](args, out)
    except RdfstreamError as err:
        print(f"rdfstream: error: {err}" if err.span is None else str(err), file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as err:  # a bug, not bad input: one line, the traceback on request
        if os.environ.get("RDFSTREAM_DEBUG"):
            raise
        print(f"rdfstream: internal error: {type(err).__name__}: {err} (set RDFSTREAM_DEBUG=1 for the traceback)",
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
