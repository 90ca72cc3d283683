"""Command line: ``rdfstream run`` (LARS programs over atom streams) and ``rdfstream explain``.

Exit codes: 0 ok, 1 runtime failure, 2 usage / parse / compile error, 3 unsupported construct.
Errors are one line on stderr: ``file:line:col: message``.
"""

from __future__ import annotations

import argparse
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

    explain = sub.add_parser("explain", help="print the compiled program: rules, strata, plans")
    explain.add_argument("program")
    explain.add_argument("--dialect", default="native")
    explain.add_argument("--plans", action="store_true", help="also print the generated join code")
    return parser


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


def _timeline(engine, events, start: int, end: int) -> Iterator[tuple[int, frozenset, dict]]:
    """Every tick of [start, end] with its answer, pushing each event just before its time comes."""
    pos = 0
    while pos < len(events):
        when = events[pos].t
        atoms: list[Atom] = []
        while pos < len(events) and events[pos].t == when:
            atoms.extend(events[pos].atoms)
            pos += 1
        yield from engine.answers(when - 1)
        engine.push(atoms, when)
    yield from engine.answers(end)


def cmd_explain(args, out: TextIO) -> int:
    from .engine.session import Engine

    program = load_program(args.program, args.dialect)
    engine = Engine(program)
    out.write("% program (canonical native LARS)\n")
    out.write(str(program))
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
    return 0


def _window_text(spec) -> str:
    from .ir.windows import INF

    if spec.tuple_window:
        return f"#{spec.size}"
    if spec.size >= INF:
        return "none"
    return f"{spec.size}" + (f" step {spec.step}" if spec.step > 1 else "")


COMMANDS = {"run": cmd_run, "explain": cmd_explain}


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        with ExitStack() as stack:
            out = sys.stdout
            if getattr(args, "output", "-") != "-":
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


if __name__ == "__main__":
    sys.exit(main())
