"""``rdfstream lubm run``: the 14 LUBM queries, continuously, over departments streamed as events.

The ontology is a background graph; the departments of LUBM(N) stream one per tick (department ``i`` at
``t = i`` ms) through a tumbling window of one tick, so each department's triples and everything derived from
them expire together when the next department has streamed (SEMANTICS.md §4: no LUBM query joins across
departments).  Each query is the official SPARQL text, registered as a continuous query with the entailment
rules (``rules/owl2rl.lars`` by default); its answers are collected over all departments.
"""

from __future__ import annotations

import csv
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .generator import ONTOLOGY, generate

STREAM = "urn:rdfstream:lubm:departments"


def _root() -> Path:
    """The folder with queries/lubm, ontologies/ and rules/: the source checkout, else the working directory."""
    here = Path(__file__).resolve().parent.parent.parent
    return here if (here / "queries" / "lubm").is_dir() else Path.cwd()


ROOT = _root()
QUERIES = ROOT / "queries" / "lubm"
ONTOLOGY_FILE = ROOT / "ontologies" / "univ-bench.ttl"
DEFAULT_RULES = ROOT / "rules" / "owl2rl.lars"
ALL = tuple(range(1, 15))


def parse_query_list(text: str) -> tuple[int, ...]:
    """``all`` or ``Q1,Q5,7`` -> query numbers."""
    if text.strip().lower() == "all":
        return ALL
    out = []
    for part in text.split(","):
        found = re.fullmatch(r"\s*[Qq]?(\d+)\s*", part)
        if not found or not 1 <= int(found.group(1)) <= 14:
            raise ValueError(f"not a LUBM query: {part.strip()!r} (Q1 … Q14, or all)")
        out.append(int(found.group(1)))
    return tuple(dict.fromkeys(out))


def continuous(text: str, name: str, onto: str = ONTOLOGY, stream: str = STREAM) -> str:
    """A LUBM SPARQL query as a continuous query over the department stream, with the ontology as FROM graph."""
    select = re.search(r"(?im)^\s*SELECT\b", text)
    where = re.search(r"(?i)\bWHERE\b", text[select.start():]) if select else None
    if select is None or where is None:
        raise ValueError(f"{name}: expected SELECT … WHERE")
    at = select.start() + where.start()
    return (f"REGISTER QUERY {name} AS\n{text[:at]}FROM <{onto}>\nFROM STREAM <{stream}> [RANGE 1ms TUMBLING]\n"
            f"{text[at:]}")


@dataclass
class Result:
    queries: tuple[int, ...]
    answers: dict[int, set[tuple]] = field(default_factory=dict)  # query -> rows (lexical forms, in SELECT order)
    variables: dict[int, list[str]] = field(default_factory=dict)
    triples: int = 0
    departments: int = 0
    seconds: float = 0.0  # CPU time streaming and reasoning (generating the data included), after compiling
    compile_seconds: float = 0.0  # CPU time loading the ontology, compiling and specialising the queries
    keying: str = ""  # Spark: how the departments were keyed

    @property
    def throughput(self) -> float:
        return self.triples / self.seconds if self.seconds else 0.0


def _lexical(value) -> str:
    """An engine constant as the official answer files write it (IRIs bare, literals by lexical form)."""
    from ..rdfterms import to_rdflib

    return str(to_rdflib(value))


def department_rows(departments: Iterable) -> Iterator[list[tuple]]:
    """Each department's triples as engine rows ``(p, (s, o))``."""
    from ..formats.ntriples import parse_term

    cache: dict[str, object] = {}

    def const(term: str):
        found = cache.get(term)
        if found is None:
            found = sys.intern(term) if term[0] == "<" else parse_term(term)[0]
            cache[term] = found
        return found

    for dept in departments:
        yield [(const(p), (const(s), const(o))) for s, p, o in dept.triples()]
        if len(cache) > 100_000:  # terms rarely repeat across departments: keep memory flat
            cache.clear()


def run(univ: int = 1, index: int = 0, seed: int = 0, queries: tuple[int, ...] = ALL, rules: Iterable = (),
        specialise: bool = True, on_department: Callable[[int, int], None] | None = None,
        departments: Iterable | None = None) -> Result:
    """Stream LUBM(univ) by department through the queries; see the module docstring."""
    from ..api import Engine

    rules = _check_files(rules)
    result = Result(queries)
    start = time.process_time()
    engine = Engine(t0=0)
    _register(engine, queries, rules, specialise, result)
    result.compile_seconds = time.process_time() - start
    start = time.process_time()
    source = departments if departments is not None else generate(univ, index, seed)
    for i, rows in enumerate(department_rows(source)):
        engine.push_rows(STREAM, rows, i)
        engine.advance_to(i + 1)  # a watermark: department i is complete, its report and expiry can go
        result.triples += len(rows)
        result.departments += 1
        if on_department is not None:
            on_department(i, len(rows))
    engine.close()
    result.seconds = time.process_time() - start
    return result


def _check_files(rules: list) -> list:
    for needed in (ONTOLOGY_FILE, QUERIES):
        if not needed.exists():
            raise FileNotFoundError(f"{needed} not found: run from the rdfstream source folder (it holds queries/lubm,"
                                    " ontologies/ and rules/)")
    return list(rules) or [DEFAULT_RULES]


def _register(engine, queries: tuple[int, ...], rules: list, specialise: bool, result: Result) -> None:
    """The ontology and the queries (with ``rules``) on ``engine``; answers collected into ``result``."""
    engine.register_graph(ONTOLOGY, str(ONTOLOGY_FILE))
    seen: dict[tuple, str] = {}  # (type, constant) -> lexical form: 1 and 1.0 are equal constants, not equal text

    def lexical(value) -> str:
        key = (type(value), value)
        text = seen.get(key)
        if text is None:
            text = seen[key] = _lexical(value)
            if len(seen) > 200_000:
                seen.clear()
        return text

    for n in queries:
        text = (QUERIES / f"q{n}.rq").read_text(encoding="utf-8")
        handle = engine.register_query(continuous(text, f"Q{n}"), rules=rules, specialise=specialise,
                                       source=str(QUERIES / f"q{n}.rq"))
        result.variables[n] = list(handle.compiled.variables)
        result.answers[n] = set()

        def collect(report, n=n, names=handle.compiled.variables):
            rows = result.answers[n]
            for row in report.raw_rows:
                rows.add(tuple(lexical(row[v]) if v in row else "" for v in names))

        handle.add_consumer(collect)


def write_departments(departments: Iterable, directory: Path, on_department=None) -> tuple[int, int]:
    """Department ``i`` as the stream file ``dept-i.nt`` (every triple at ``t = i``); (departments, triples)."""
    directory.mkdir(parents=True, exist_ok=True)
    count = triples = 0
    for i, dept in enumerate(departments):
        path = directory / f"dept-{i:05d}.nt"
        with open(path.with_name("." + path.name), "w", encoding="utf-8") as handle:
            for s, p, o in dept.triples():
                handle.write(f"{i} {s} {p} {o} .\n")
                triples += 1
        path.with_name("." + path.name).replace(path)  # whole files only: Spark may be watching the folder
        count += 1
        if on_department is not None:
            on_department(i, 0)
    return count, triples


def run_spark(univ: int = 1, index: int = 0, seed: int = 0, queries: tuple[int, ...] = ALL, rules: Iterable = (),
              specialise: bool = True, *, master: str = "local[2]", partitions: int | None = None,
              buckets: int | None = None, files_per_batch: int | None = None, workdir: str | None = None,
              on_department: Callable[[int, int], None] | None = None) -> Result:
    """The same run on Spark: the departments are written as stream files (one per department), and the job
    keys them by department (``@time``: one department per pane of the one-tick tumbling window), so the
    buckets reason over different departments in parallel.  ``Result.seconds`` is wall time here (the work
    happens in the executors), data generation not included."""
    import tempfile

    from ..api import Engine

    rules = _check_files(rules)
    result = Result(queries)
    with tempfile.TemporaryDirectory(prefix="rdfstream-lubm-", dir=workdir) as tmp:
        stream = Path(tmp) / "departments"
        result.departments, result.triples = write_departments(generate(univ, index, seed), stream, on_department)
        start = time.perf_counter()
        engine = Engine(t0=0, backend="spark", master=master, checkpoint=str(Path(tmp) / "checkpoint"),
                        partition_by="@time", buckets=buckets, partitions=partitions,
                        max_files_per_trigger=files_per_batch)
        _register(engine, queries, rules, specialise, result)
        result.compile_seconds = time.perf_counter() - start
        start = time.perf_counter()
        engine.run_files({STREAM: str(stream)})
        result.seconds = time.perf_counter() - start
        result.keying = engine.spark.keying.note
    return result


def official_answers(directory: Path, n: int) -> tuple[list[str], set[tuple]]:
    """The official answers of query ``n``: its variables and its rows (as sets of lexical forms)."""
    import gzip

    path = Path(directory) / f"answers_query{n}.csv"
    opener = open if path.exists() else gzip.open
    with opener(path if path.exists() else path.with_suffix(".csv.gz"), "rt", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0] == ["NO ANSWERS."]:  # how the official files write an empty answer
        return [], set()
    head = [h.strip() for h in rows[0]]
    return head, {tuple(x.strip() for x in r) for r in rows[1:] if r}


def compare(result: Result, directory: Path) -> dict[int, tuple[int, int, int]]:
    """Per query: (answers, official answers, rows that differ either way)."""
    out = {}
    for n in result.queries:
        head, official = official_answers(directory, n)
        mine_vars = result.variables[n]
        order = [mine_vars.index(h) for h in head] if head else list(range(len(mine_vars)))
        mine = {tuple(row[i] for i in order) for row in result.answers[n]}
        out[n] = (len(mine), len(official), len(mine ^ official))
    return out
