"""The Python API, in the shape RSP engines use (RSP4J)::

    from rdfstream.api import Engine

    engine = Engine()
    engine.register_stream("http://ex.org/sensors")
    engine.register_graph("http://ex.org/rooms", "rooms.ttl")
    q = engine.register_query(open("hot.rq").read())
    q.add_consumer(lambda report: print(report.t, report.rows))
    engine.push("http://ex.org/sensors", [(s, p, o)], 1000)      # rdflib terms, timestamp in ms
    engine.advance_to(5000)      # watermark: nothing earlier than 5000 will come; reports up to 5000 go out
    engine.close()               # end of the streams: the remaining reports

Every query and LARS program registered on one ``Engine`` runs on one shared incremental engine (one
set of indexes).  ``Engine(backend="spark", master="local[2]", checkpoint=…, partition_by="?sensor")`` runs the
same registrations on Spark Structured Streaming (``docs/spark.md``): ``push``/``advance_to``/``close`` work
as here (one micro-batch per ``advance_to``), and ``run_files({iri: path})`` reads stream files or a socket.
Register them before the first ``push``/``advance_to``: that is when the engine is built
(the windows are anchored at ``t0``, the first timestamp unless ``Engine(t0=…)`` says otherwise).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .atoms import Atom
from .errors import UsageError
from .ir.algebra import ContinuousQuery
from .ir.nodes import Program

Consumer = Callable[["Report"], None]


@dataclass
class Report:
    """A query's report at ``t`` (or, with ``form == "lars"``, a change of a LARS program's answer).

    ``rows`` / ``triples`` hold rdflib terms; ``raw_rows`` / ``raw_triples`` the engine constants.
    """

    query: str
    t: int
    form: str
    variables: list[str] = field(default_factory=list)
    raw_rows: list[dict] = field(default_factory=list)
    raw_triples: list[tuple] = field(default_factory=list)
    boolean: bool | None = None
    added: frozenset[Atom] = frozenset()
    removed: frozenset[Atom] = frozenset()
    holds: frozenset[Atom] = frozenset()

    @property
    def rows(self) -> list[dict]:
        from .rdfterms import to_rdflib

        return [{k: to_rdflib(v) for k, v in row.items()} for row in self.raw_rows]

    @property
    def triples(self) -> list[tuple]:
        from .rdfterms import to_rdflib

        return [tuple(to_rdflib(x) for x in triple) for triple in self.raw_triples]

    def results(self) -> dict:
        """The SPARQL 1.1 JSON results object (SELECT, ASK)."""
        from .formats import results

        if self.form == "ask":
            return results.sparql_json_ask(bool(self.boolean))
        return results.sparql_json(self.variables, self.raw_rows)

    def serialize(self, fmt: str = "json") -> str:
        """This report as one results document: json, csv, tsv, xml (SELECT, ASK) or nt, ttl (CONSTRUCT)."""
        from .formats import results

        if self.form == "construct":
            return results.construct_document(self.raw_triples, fmt)
        if self.form == "ask":
            return results.ask_document(bool(self.boolean), fmt)
        return results.select_document(self.variables, self.raw_rows, fmt)

    def jsonl(self) -> str:
        """``{"query": …, "t": …, "results": <SPARQL JSON>}`` (CONSTRUCT: ``"triples"``), one line."""
        from .formats import results

        if self.form == "construct":
            return results.report_line_construct(self.query, self.t, self.raw_triples)
        return results.report_line(self.query, self.t, self.results())


class _Handle:
    def __init__(self, name: str) -> None:
        self.name = name
        self.consumers: list[Consumer] = []

    def add_consumer(self, fn: Consumer) -> None:
        self.consumers.append(fn)


class QueryHandle(_Handle):
    """A registered query: its name, its compiled form, and the consumers of its reports."""

    def __init__(self, name: str, text: str, source: str | None, policy: str | None, base: str,
                 compiled: ContinuousQuery) -> None:
        super().__init__(name)
        self.text, self.source, self.policy, self.base = text, source, policy, base
        self.compiled = compiled
        self.entailment = None

    def explain(self) -> str:
        from .ir.printer import format_program

        return explain_query(self.compiled, format_program)


class ProgramHandle(_Handle):
    def __init__(self, name: str, program: Program) -> None:
        super().__init__(name)
        self.program = program


class Engine:
    """Continuous C-SPARQL queries and LARS programs over RDF streams; see the module docstring."""

    def __init__(self, t0: int | None = None, *, allow_fetch: bool = False, backend: str = "embedded",
                 **spark) -> None:
        """``backend``: ``embedded`` (default) or ``spark``; the Spark options are ``master`` (default
        ``local[2]``), ``checkpoint`` (a directory; default a temporary one), ``partition_by`` (``"?var"``: split
        the stream by the variable's value when the queries allow it), ``buckets``, ``partitions`` and
        ``max_files_per_trigger``."""
        if backend not in ("embedded", "spark"):
            raise UsageError(f"unknown backend {backend!r} (embedded or spark)")
        if spark and backend != "spark":
            raise UsageError(f"options {', '.join(sorted(spark))} are for backend='spark'")
        self.backend = backend
        self._spark_options = spark
        self.spark = None
        self.t0 = t0
        self.allow_fetch = allow_fetch
        self.streams: dict[str, None] = {}
        self.graphs: dict[str, object] = {}
        self.queries: list[QueryHandle] = []
        self.programs: list[ProgramHandle] = []
        self.runtime = None
        self.closed = False
        self._closures: dict = {}
        self.program_guards: set = set()  # schema patterns the programs' specialised rules assume static

    # ---------------------------------------------------------------- registration

    def register_stream(self, iri: str) -> str:
        self.streams.setdefault(_plain(iri), None)
        return _plain(iri)

    def register_graph(self, iri: str, graph, fmt: str | None = None) -> None:
        """A static graph that ``FROM <iri>`` may name: an rdflib Graph, a file path, or rdflib triples."""
        from .background.graphs import load_graph

        self._before_start("register a graph")
        self.graphs[_plain(iri)] = load_graph(graph, fmt)

    def register_query(self, text: str, *, report: str | None = None, source: str | None = None,
                       rules: Iterable = (), specialise: bool = True) -> QueryHandle:
        """Compile a C-SPARQL query (``report``: rstream, istream or dstream overrides the query's).

        ``rules``: entailment rule files (paths, bundled names like ``"rdfs"``, or parsed Programs); the query then
        answers over the closure of its windows and FROM graphs under them (SEMANTICS.md §3).  The rules are
        specialised against the FROM graphs (the schema) unless ``specialise=False``; streams must then bring
        no schema triples (an error says so if one comes)."""
        from .frontends.csparql.compile import base_name, compile_query

        self._before_start("register a query")
        if report is not None and report not in ("rstream", "istream", "dstream"):
            raise UsageError(f"unknown report policy {report!r} (rstream, istream or dstream)")
        entailment = self._entailment(list(rules), specialise) if rules else None
        default = f"q{len(self.queries) + 1}"
        compiled = compile_query(text, source=source, t0=self.t0 or 0, default_name=default, policy=report,
                                 entailment=entailment)
        if compiled.name in {h.name for h in self.queries + self.programs}:
            raise UsageError(f"a query or program named {compiled.name} is already registered")
        taken = {h.base for h in self.queries}
        base = base_name(compiled.name)
        if base in taken:  # two names that sanitise alike ("a-b", "a_b"): their predicates must differ
            i = 2
            while f"{base}{i}" in taken:
                i += 1
            base = f"{base}{i}"
            compiled = compile_query(text, source=source, t0=self.t0 or 0, default_name=default, base=base,
                                     policy=report, entailment=entailment)
        for g in compiled.graphs + compiled.named_graphs:
            self._graph(g, f"query {compiled.name}")
        for w in compiled.windows:
            self.streams.setdefault(w.stream, None)
        if compiled.is_stream:
            self.streams.setdefault(compiled.name, None)
        handle = QueryHandle(compiled.name, text, source, report, base, compiled)
        handle.entailment = entailment
        self.queries.append(handle)
        return handle

    def _graph(self, iri: str, who: str):
        if iri not in self.graphs:
            if not self.allow_fetch:
                raise UsageError(f"{who} reads graph <{iri}>, which is not registered: register"
                                 f" it (--graph {iri}=FILE), or allow fetching graphs from their IRIs")
            from .background.graphs import fetch_graph

            self.graphs[iri] = fetch_graph(iri)
        return self.graphs[iri]

    def _entailment(self, rules: list, specialise: bool):
        """A function from a query's FROM graphs to the closure of those graphs under ``rules`` (cached)."""
        from .entailment import load_rules

        loaded, prefixes = load_rules(rules)
        ident = (tuple(str(r) if not isinstance(r, Program) else id(r) for r in rules), specialise)
        return _ClosureFor(self, loaded, tuple(prefixes), ident, specialise)

    def register_program(self, text: str, dialect: str = "native", *, name: str | None = None,
                         stream: str | None = None, source: str | None = None, rules: Iterable = (),
                         specialise: bool = True) -> ProgramHandle:
        """A LARS program over the same streams; windows that name no stream read ``stream`` (default: the
        only registered stream).  ``rules``: entailment rule files added to the program (as ``--rules`` does);
        they hold at every time point and are specialised against the program's facts."""
        from .engine.continuous import rename_default_stream
        from .entailment import add_rules_to_program, load_rules, prepare_program
        from .frontends.registry import parse_program

        self._before_start("register a program")
        program = parse_program(text, dialect, source=source)
        program, guards = prepare_program(program, specialised=specialise)
        if rules:
            loaded, _ = load_rules(list(rules))
            program, more = add_rules_to_program(program, loaded, specialised=specialise)
            guards |= more
        self.program_guards |= guards
        target = stream if stream is not None else (next(iter(self.streams)) if len(self.streams) == 1 else None)
        if target is not None:
            program = rename_default_stream(program, _plain(target))
        name = name or f"program{len(self.programs) + 1}"
        if name in {h.name for h in self.queries + self.programs}:
            raise UsageError(f"a query or program named {name} is already registered")
        handle = ProgramHandle(name, program)
        self.programs.append(handle)
        return handle

    def _before_start(self, what: str) -> None:
        if self.runtime is not None or self.spark is not None and self.spark.job is not None:
            raise UsageError(f"cannot {what} after the streams started: register everything before the first push")

    # ---------------------------------------------------------------- running

    def _start(self, t0: int) -> None:
        from .background.graphs import quad_atoms
        from .engine.continuous import ContinuousEngine
        from .frontends.csparql.compile import compile_query

        self.t0 = t0
        compiled = []
        for h in self.queries:
            if h.compiled.t0 != t0:
                h.compiled = compile_query(h.text, source=h.source, t0=t0, default_name=h.name, base=h.base,
                                           policy=h.policy, entailment=h.entailment)
            compiled.append(h.compiled)
        used = {g for q in compiled for g in q.graphs + q.named_graphs}
        background = [a for g in used for a in quad_atoms(g, self.graphs[g])]
        programs = [(h.name, h.program) for h in self.programs]
        self.runtime = ContinuousEngine(compiled, programs, background, t0, program_guards=self.program_guards)

    def push(self, stream: str, triples: Iterable[tuple], t: int) -> None:
        """Triples (rdflib terms; or one triple) arriving on ``stream`` at ``t`` (milliseconds), in arrival order."""
        from rdflib.term import Node

        from .rdfterms import from_rdflib

        if isinstance(triples, tuple) and len(triples) == 3 and all(isinstance(x, Node) for x in triples):
            triples = [triples]  # one triple, as RSP4J's push takes it
        rows = [(from_rdflib(p), (from_rdflib(s), from_rdflib(o))) for s, p, o in triples]
        self.push_rows(stream, rows, t)

    def push_rows(self, stream: str, rows: list[tuple], t: int) -> None:
        """Like :meth:`push` with triples already as engine atoms ``(p, (s, o))`` (the fast stream readers)."""
        if self.closed:
            raise UsageError("the engine is closed")
        iri = _plain(stream)
        if iri not in self.streams:
            raise UsageError(f"unknown stream <{iri}>: register it, or name it in a query's FROM STREAM")
        if self.backend == "spark":
            self._spark().push_rows(iri, rows, t)
            return
        if self.runtime is None:
            self._start(self.t0 if self.t0 is not None else t)
        self.runtime.push(iri, rows, t)

    def advance_to(self, t: int) -> list[Report]:
        """Watermark ``t``: no triple before ``t`` will come; delivers (and returns) the reports now complete."""
        if self.backend == "spark":
            return self._spark().advance_to(t)
        if self.runtime is None:
            self._start(self.t0 if self.t0 is not None else t)
        return self._deliver(self.runtime.advance_to(t))

    def close(self) -> list[Report]:
        """End of the streams: delivers (and returns) the remaining reports."""
        if self.closed:
            return []
        if self.backend == "spark":
            self.closed = True
            return self.spark.close() if self.spark is not None else []
        if self.runtime is None:
            self.closed = True
            return []
        self.closed = True
        return self._deliver(self.runtime.close())

    def _spark(self):
        if self.spark is None:
            from .spark import SparkRunner

            self.spark = SparkRunner(self, **self._spark_options)
        return self.spark

    def run_files(self, streams: dict[str, str], *, follow: bool = False, **options) -> list[Report]:
        """Spark backend: process stream files (IRI → a file, a directory new files arrive in, or
        ``socket://host:port``) until they are exhausted, then close the streams; ``follow=True`` keeps
        reading until interrupted.  Returns the reports (also handed to the consumers)."""
        if self.backend != "spark":
            raise UsageError("run_files needs Engine(backend='spark'); the embedded engine takes push/advance_to")
        return self._spark().run_files({_plain(k): v for k, v in streams.items()}, follow=follow, **options)

    def _deliver(self, outputs) -> list[Report]:
        return self._hand_out([Report(out.query, out.t, out.form, out.variables, out.rows, out.triples, out.boolean,
                                      out.added, out.removed, out.holds) for out in outputs])

    def _hand_out(self, reports: list[Report]) -> list[Report]:
        """Each report to its query's consumers, in order (the Spark backend's reports come here too)."""
        handles = {h.name: h for h in self.queries + self.programs}
        for report in reports:
            for fn in handles[report.query].consumers:
                fn(report)
        return reports


class _ClosureFor:
    """A query's FROM graphs -> their closure under the rules (cached on the engine); a class, not a closure,
    so that an engine pickles (the Spark backend ships it to the executors)."""

    def __init__(self, engine: Engine, loaded, prefixes: tuple, ident: tuple, specialise: bool) -> None:
        self.engine, self.loaded, self.prefixes = engine, loaded, prefixes
        self.ident, self.specialise = ident, specialise

    def __call__(self, graphs: tuple[str, ...]):
        from .background.graphs import triple_atoms
        from .entailment import build_closure

        key = (self.ident, graphs)
        found = self.engine._closures.get(key)
        if found is None:
            loaded_graphs = [self.engine._graph(g, "a query with rules") for g in graphs]
            static = [a for graph in loaded_graphs for a in triple_atoms(graph)]
            pfx = list(self.prefixes) + [(p, str(ns)) for graph in loaded_graphs for p, ns in graph.namespaces()]
            found = self.engine._closures[key] = build_closure(self.loaded, static, specialised=self.specialise,
                                                               key=repr(key), prefixes=tuple(pfx))
        return found


def _plain(iri: str) -> str:
    return iri[1:-1] if iri.startswith("<") and iri.endswith(">") else iri


def explain_query(cq: ContinuousQuery, format_program) -> str:
    """``rdfstream explain`` for a query: the LARS rules, then how reports are made from them."""
    lines = [f"% query {cq.name}: {cq.form.upper()}, {cq.policy.upper()}"
             + (", its output is the stream <" + cq.name + ">" if cq.is_stream else "")]
    for w in cq.windows:
        if w.kind == "time":
            lines.append(f"% window {w}: closes at t0+{w.size}+k*{w.step} (t0 = {cq.t0}); the report at close c"
                         " reads the rules at tick c-1")
        elif w.kind == "rows":
            lines.append(f"% window {w}: a report at every timestamp the stream brings data")
        else:
            lines.append(f"% window {w}: tumbling batches; the rules run on a clock that counts batches")
    for g in cq.graphs + cq.named_graphs:
        named = "named graph" if g in cq.named_graphs else "static graph"
        lines.append(f"% {named} <{g}>: background facts <urn:rdfstream:quad>(<{g}>, S, P, O)")
    if cq.entailment:
        lines.append(f"% {cq.entailment}")
    lines.append("")
    lines.append(format_rules(cq.program).rstrip("\n"))
    lines.append("")
    lines.append("% report when some window holds a triple, with:")
    lines.append(f"%   {cq.algebra}")
    if cq.answer is not None:
        lines.append(f"% the answers are the facts of {cq.answer}"
                     + (" (as a set)" if cq.form == "select" else ""))
    if cq.template is not None:
        lines.append(f"% CONSTRUCT template: {len(cq.template.triples)} triples")
    return "\n".join(lines) + "\n"


def format_rules(program: Program, max_facts: int | None = 40) -> str:
    """A program as native LARS; rules specialised from an entailment rule file say which rule they come from,
    and a long list of background facts (a static closure) is cut short."""
    from .ir.printer import format_atom_in, format_rule

    pfx = program.prefixes
    lines = [f"@prefix {p}: <{ns}> ." for p, ns in pfx]
    facts = program.facts
    lines += [f"{format_atom_in(f, pfx)}." for f in facts[:max_facts]]
    if max_facts is not None and len(facts) > max_facts:
        lines.append(f"% … and {len(facts) - max_facts} more background facts (the static closure)")
    for rule in program.rules:
        text = format_rule(rule, pfx)
        lines.append(f"{text}   % {rule.name}" if rule.name else text)
    return "\n".join(lines) + "\n"
