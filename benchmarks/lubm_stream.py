"""LUBM over a department stream: ``rdfstream.lubm.run`` against rdflib + owlrl per department.

    python benchmarks/lubm_stream.py [--quick] [--univ 1 10 [50]] [--baseline-departments 3]
                                     [--per-query all|Q1,Q9,…] [--profile N] [--out benchmarks/results]

Ours: ``run(univ=N)`` (the 14 queries together) and ``run(univ=N, queries=(n,))`` (each query alone), every
configuration in a fresh child process, so that its peak RSS (``ru_maxrss``) is its own.  Time is the CPU time
``Result.seconds`` (streaming and reasoning, generating the departments included; compiling excluded); the
child also times the generator alone, for the throughput without it, and samples its RSS after every
department.

Naive baseline, per department of a sample (the first K departments of LUBM(1)): an rdflib ``Graph`` of the
ontology and the department (N-Triples text parsed), ``owlrl.DeductiveClosure(OWLRL_Semantics).expand``, then
the 14 official queries (prepared once) through ``Graph.query``; answers are unioned over the departments.
Its closure is shared by the queries, so it is timed once and every query's SPARQL time separately.

Checks (fail loudly): ours on the sampled departments (``run(departments=…)``) gives the baseline's answers;
every query alone gives the answers it gives among the 14; ours on LUBM(1) gives the official answers
(``tests/data/lubm-answers``); the engine's source does not change during the run.  See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import cProfile
import csv
import gc
import hashlib
import io
import itertools
import json
import os
import platform
import pstats
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# always measure the working tree, never an installed copy that may be older
sys.path.insert(0, str(ROOT))

ALL = tuple(range(1, 15))
ANSWERS = ROOT / "tests" / "data" / "lubm-answers"
QUERY_DIR = ROOT / "queries" / "lubm"
ONTOLOGY_TTL = ROOT / "ontologies" / "univ-bench.ttl"
RSS_POINTS = 200  # RSS samples kept per run (downsampled evenly over the departments)

# ------------------------------------------------------------------------------------------------ memory


def rss_mb() -> float:
    """The current resident set size (Linux ``/proc/self/statm``), MB; ``ru_maxrss`` elsewhere."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:  # pragma: no cover - not Linux
        return peak_rss_mb()


def peak_rss_mb() -> float:
    """This process's peak RSS so far, MB (``ru_maxrss`` is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def answers_mb(answers: dict[int, set[tuple]]) -> float:
    """What the collected answer sets (``Result.answers``: sets of tuples of strings) hold, MB (getsizeof)."""
    total, seen = 0, set()
    for rows in answers.values():
        total += sys.getsizeof(rows)
        for row in rows:
            total += sys.getsizeof(row)
            for v in row:
                if id(v) not in seen:
                    seen.add(id(v))
                    total += sys.getsizeof(v)
    return total / 2**20


def downsample(samples: list, points: int = RSS_POINTS) -> list:
    if len(samples) <= points:
        return samples
    step = (len(samples) - 1) / (points - 1)
    return [samples[round(i * step)] for i in range(points)]


# ------------------------------------------------------------------------------------------------ ours


class TimedDepartments:
    """The generator's departments, the CPU time spent drawing them (inside ``next``) summed on the side."""

    def __init__(self, departments):
        self.departments = iter(departments)
        self.cpu = 0.0

    def __iter__(self):
        while True:
            t0 = time.process_time()
            try:
                dept = next(self.departments)
            except StopIteration:
                self.cpu += time.process_time() - t0
                return
            self.cpu += time.process_time() - t0
            yield dept


def digest(rows: set[tuple]) -> str:
    h = hashlib.sha256()
    for row in sorted(rows):
        h.update("\x1f".join(row).encode("utf-8"))
        h.update(b"\x1e")
    return h.hexdigest()[:16]


def child_ours(spec: dict) -> dict:
    """One configuration of ours, in this (fresh) process: ``run`` on LUBM(univ) or on the first
    ``sample`` departments of LUBM(1)."""
    from rdfstream.lubm.generator import generate
    from rdfstream.lubm.run import compare, run

    queries = tuple(spec["queries"])
    rss_start = rss_mb()
    if spec.get("sample"):
        source = TimedDepartments(list(itertools.islice(generate(1, 0, 0), spec["sample"])))
    else:
        source = TimedDepartments(generate(spec["univ"], 0, 0))
    samples: list[tuple[int, float]] = []

    def on_department(i: int, _n: int) -> None:
        samples.append((i, round(rss_mb(), 2)))

    gc.collect()
    result = run(univ=spec["univ"], queries=queries, on_department=on_department, departments=source)
    samples.append((result.departments, round(rss_mb(), 2)))  # after close(): run() reasons there otherwise
    out = {
        "seconds": result.seconds, "compile_seconds": result.compile_seconds, "generate_seconds": source.cpu,
        "triples": result.triples, "departments": result.departments,
        "answers": {str(n): len(result.answers[n]) for n in queries},
        "digests": {str(n): digest(result.answers[n]) for n in queries},
        "variables": {str(n): result.variables[n] for n in queries},
        "peak_rss_mb": round(peak_rss_mb(), 2), "rss_start_mb": round(rss_start, 2),
        "rss_end_mb": round(rss_mb(), 2), "answers_mb": round(answers_mb(result.answers), 2),
        "rss_samples": downsample(samples[:-1]) + samples[-1:],
    }
    if spec.get("official"):
        out["official"] = {str(n): list(v) for n, v in compare(result, ANSWERS).items()}
    if spec.get("return_answers"):
        out["rows"] = {str(n): sorted(result.answers[n]) for n in queries}
    return out


# ------------------------------------------------------------------------------------------------ naive


def child_baseline(spec: dict) -> dict:
    """The naive baseline on the first ``departments`` departments of LUBM(1), in this (fresh) process."""
    import owlrl
    from rdflib import Graph
    from rdflib.plugins.sparql import prepareQuery

    from rdfstream.lubm.generator import generate

    rss_start = rss_mb()
    onto = list(Graph().parse(ONTOLOGY_TTL, format="turtle"))  # parsed once, outside the timing
    prepared = {n: prepareQuery((QUERY_DIR / f"q{n}.rq").read_text(encoding="utf-8")) for n in ALL}
    variables = {n: [str(v) for v in q.algebra["PV"]] for n, q in prepared.items()}
    answers: dict[int, set[tuple]] = {n: set() for n in ALL}
    per_dept = []
    for dept in itertools.islice(generate(1, 0, 0), spec["departments"]):
        text = "\n".join(dept.lines()) + "\n"  # the department as an N-Triples document, untimed
        triples = text.count("\n")
        gc.collect()
        t0 = time.process_time()
        g = Graph()
        for triple in onto:
            g.add(triple)
        g.parse(data=text, format="nt")
        t1 = time.process_time()
        owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(g)
        t2 = time.process_time()
        closed = len(g)
        sparql = {}
        for n in ALL:
            q0 = time.process_time()
            rows = [tuple("" if v is None else str(v) for v in row) for row in g.query(prepared[n])]
            sparql[str(n)] = time.process_time() - q0
            answers[n].update(rows)
        per_dept.append({"department": dept.name, "triples": triples, "load_seconds": t1 - t0,
                         "closure_seconds": t2 - t1, "closed_triples": closed, "sparql_seconds": sparql,
                         "rss_mb": round(rss_mb(), 2)})
        print(f"  baseline {dept.name}: {triples} triples, load {t1 - t0:.2f} s, closure {t2 - t1:.2f} s, "
              f"SPARQL {sum(sparql.values()):.2f} s (Q9 {sparql['9']:.2f} s)", file=sys.stderr, flush=True)
        del g
    return {"departments": per_dept, "variables": {str(n): v for n, v in variables.items()},
            "rows": {str(n): sorted(rows) for n, rows in answers.items()},
            "peak_rss_mb": round(peak_rss_mb(), 2), "rss_start_mb": round(rss_start, 2)}


def baseline_summary(base: dict) -> dict:
    """Totals over the sampled departments: triples/s for the closure alone, each query, all 14."""
    depts = base["departments"]
    triples = sum(d["triples"] for d in depts)
    load = sum(d["load_seconds"] for d in depts)
    closure = sum(d["closure_seconds"] for d in depts)
    sparql = {n: sum(d["sparql_seconds"][str(n)] for d in depts) for n in ALL}
    out = {"departments": len(depts), "names": [d["department"] for d in depts], "triples": triples,
           "load_seconds": load, "closure_seconds": closure, "sparql_seconds": sparql,
           "closure_only_tps": triples / (load + closure),
           "all_seconds": load + closure + sum(sparql.values()),
           "per_query_tps": {n: triples / (load + closure + sparql[n]) for n in ALL},
           "peak_rss_mb": base["peak_rss_mb"]}
    out["all_tps"] = triples / out["all_seconds"]
    return out


def reorder(rows: list, have: list[str], want: list[str]) -> set[tuple]:
    """Rows whose columns are named ``have``, as tuples in the order ``want``."""
    order = [have.index(v) for v in want]
    return {tuple(row[i] for i in order) for row in rows}


def cross_check(ours: dict, base: dict, k: int) -> dict[int, int]:
    """Ours on the sampled departments must answer exactly what the baseline answers; raises otherwise."""
    counts = {}
    for n in ALL:
        mine = {tuple(r) for r in ours["rows"][str(n)]}
        theirs = reorder(base["rows"][str(n)], base["variables"][str(n)], ours["variables"][str(n)])
        if mine != theirs:
            raise AssertionError(
                f"Q{n} on the first {k} department(s) of LUBM(1): ours {len(mine)} rows, rdflib+owlrl "
                f"{len(theirs)}; ours only {sorted(mine - theirs)[:3]}, baseline only {sorted(theirs - mine)[:3]}")
        counts[n] = len(mine)
    return counts


# ------------------------------------------------------------------------------------------------ processes


def source_digest() -> str:
    """A hash of what the measured code reads (rdfstream's sources, the queries, rules and ontology): the run
    stops if it changes under it, since every child process imports the working tree afresh."""
    h = hashlib.sha256()
    for folder, pattern in (("rdfstream", "*.py"), ("queries/lubm", "*.rq"), ("rules", "*"), ("ontologies", "*")):
        for path in sorted((ROOT / folder).rglob(pattern)):
            if path.is_file() and "__pycache__" not in path.parts:
                h.update(str(path.relative_to(ROOT)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()[:16]


def git_head() -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=False)
        return out.stdout.strip() or None
    except OSError:  # pragma: no cover - no git
        return None


SOURCE = {"digest": None}


def spawn(spec: dict) -> dict:
    """Run one configuration in a fresh interpreter; its last stdout line is the JSON result."""
    if SOURCE["digest"] is None:
        SOURCE["digest"] = source_digest()
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)],
                          capture_output=True, text=True, check=False)
    if proc.stderr:
        sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        raise RuntimeError(f"child {spec} failed with exit code {proc.returncode}")
    if source_digest() != SOURCE["digest"]:
        raise RuntimeError("rdfstream's sources (or the queries, rules, ontology) changed during the run: "
                           "the configurations measured different code; run again")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def profile_ours(queries: tuple[int, ...], top: int) -> str:
    """cProfile of ``run(univ=1, queries=…)`` in this process (untimed), streaming only (the profiler starts
    when ``run`` asks for the first department, after compiling): the ``top`` rdfstream functions by own
    time, then by cumulative time."""
    from rdfstream.lubm.generator import generate
    from rdfstream.lubm.run import run

    prof = cProfile.Profile()

    def departments():
        prof.enable()
        yield from generate(1, 0, 0)

    run(univ=1, queries=queries, departments=departments())
    prof.disable()
    stats = pstats.Stats(prof)
    entries = []
    for (path, line, name), (_cc, nc, tt, ct, _callers) in stats.stats.items():
        if f"{os.sep}rdfstream{os.sep}" in path and f"{os.sep}benchmarks{os.sep}" not in path:
            rel = path.split(f"{os.sep}rdfstream{os.sep}", 1)[1]
            entries.append((tt, ct, nc, f"rdfstream/{rel}:{line}({name})"))
    out = io.StringIO()
    for title, key in (("own time", 0), ("cumulative", 1)):
        out.write(f"  by {title}:\n  {'tottime s':>9}  {'cumtime s':>9}  {'calls':>9}  function\n")
        for tt, ct, nc, where in sorted(entries, key=lambda e: -e[key])[:top]:
            out.write(f"  {tt:9.3f}  {ct:9.3f}  {nc:9d}  {where}\n")
    return out.getvalue()


# ------------------------------------------------------------------------------------------------ output

COLUMNS = ["univ", "query", "departments", "triples", "ours_cpu_s", "ours_tps", "generate_cpu_s",
           "ours_tps_without_generation", "compile_cpu_s", "baseline_tps", "baseline_departments", "ratio",
           "peak_rss_mb", "rss_start_mb", "rss_first_department_mb", "rss_last_department_mb",
           "rss_after_close_mb", "answers_mb", "peak_rss_less_answers_mb", "answers", "loadavg_1min"]


def fmt_table(rows: list[dict]) -> str:
    head = ["config", "query", "triples", "ours CPU s", "ours triples/s", "w/o gen. triples/s",
            "baseline triples/s", "ratio", "peak RSS MB", "answers MB", "peak - answers MB", "answers"]
    lines = []
    for r in rows:
        query = r["query"]
        base = "-" if r["baseline_tps"] is None else f"{r['baseline_tps']:,.0f}"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:,.0f}x"
        lines.append([f"LUBM({r['univ']})", query, f"{r['triples']:,}", f"{r['ours_cpu_s']:.2f}",
                      f"{r['ours_tps']:,.0f}", f"{r['ours_tps_without_generation']:,.0f}", base, ratio,
                      f"{r['peak_rss_mb']:.0f}", f"{r['answers_mb']:.1f}", f"{r['peak_rss_less_answers_mb']:.0f}",
                      f"{r['answers']:,}"])
    widths = [max(len(h), *(len(line[i]) for line in lines)) if lines else len(h) for i, h in enumerate(head)]
    out = ["  ".join(h.rjust(w) if i > 1 else h.ljust(w) for i, (h, w) in enumerate(zip(head, widths, strict=True)))]
    out.append("  ".join("-" * w for w in widths))
    for line in lines:
        out.append("  ".join(c.rjust(w) if i > 1 else c.ljust(w)
                             for i, (c, w) in enumerate(zip(line, widths, strict=True))))
    return "\n".join(out)


def fmt_baseline(b: dict) -> str:
    per = ", ".join(f"Q{n} {b['sparql_seconds'][n]:.2f}" for n in ALL)
    return (f"baseline (rdflib + owlrl OWL 2 RL, per department): {b['departments']} department(s) of LUBM(1) "
            f"({', '.join(b['names'])}), {b['triples']:,} triples; CPU s: load {b['load_seconds']:.2f}, closure "
            f"{b['closure_seconds']:.2f}, SPARQL {per}; closure alone {b['closure_only_tps']:,.0f} triples/s, "
            f"all 14 {b['all_tps']:,.0f} triples/s; peak RSS {b['peak_rss_mb']:.0f} MB")


def plot(rows: list[dict], base: dict | None, runs: dict, path: Path, meta: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(19, 5.2), gridspec_kw={"width_ratios": [1.6, 1, 1.2]})
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    univs = sorted({r["univ"] for r in rows})
    labels = [f"Q{n}" for n in ALL] + ["all"]
    xs = range(len(labels))

    ax = axes[0]
    for i, u in enumerate(univs):
        by_q = {r["query"]: r["ours_tps"] for r in rows if r["univ"] == u}
        pts = [(x, by_q[lab]) for x, lab in zip(xs, labels, strict=True) if lab in by_q]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "-o", color=colors[i % len(colors)], label=f"ours LUBM({u})")
    if base:
        ys = [base["per_query_tps"][n] for n in ALL] + [base["all_tps"]]
        ax.plot(list(xs), ys, "--s", color="black",
                label=f"rdflib + owlrl, {base['departments']} dept(s) of LUBM(1)")
        ax.axhline(base["closure_only_tps"], color="grey", linestyle=":", label="rdflib + owlrl: closure alone")
    ax.axhline(50_000, color="red", alpha=0.4, linewidth=1, label="target 50k triples/s")
    ax.set_yscale("log")
    ax.set_xticks(list(xs), labels)
    ax.set_ylabel("triples/s (CPU, log)")
    ax.set_title("throughput per query and for all 14 together", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)

    ax = axes[1]
    every = sorted((r["univ"], r["peak_rss_mb"], r["peak_rss_less_answers_mb"]) for r in rows if r["query"] == "all")
    if every:
        ax.plot([p[0] for p in every], [p[1] for p in every], "-o", label="all 14")
        ax.plot([p[0] for p in every], [p[2] for p in every], "--o", label="all 14, less the answer sets held")
    per = [r for r in rows if r["query"] != "all"]
    if per:
        sizes = sorted({r["univ"] for r in per})
        lo = [min(r["peak_rss_mb"] for r in per if r["univ"] == u) for u in sizes]
        hi = [max(r["peak_rss_mb"] for r in per if r["univ"] == u) for u in sizes]
        ax.fill_between(sizes, lo, hi, alpha=0.2, label="one query alone: min–max")
        ax.plot(sizes, lo, "-", alpha=0.4, color="C2")
        ax.plot(sizes, hi, "-", alpha=0.4, color="C2")
    if base:
        ax.axhline(base["peak_rss_mb"], color="black", linestyle=":", label="rdflib + owlrl (one department at a time)")
    ax.set_xscale("log")
    ax.set_xticks(univs, [str(u) for u in univs])
    ax.set_ylim(bottom=0)
    ax.set_xlabel("N (universities)")
    ax.set_ylabel("peak RSS of the process, MB")
    ax.set_title("peak memory against N (fresh process per configuration)", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)

    ax = axes[2]
    for i, u in enumerate(univs):
        for query, style in (("all", "-"), ("Q1", "--")):
            samples = runs.get((u, query), {}).get("rss_samples")
            if samples:
                ax.plot([s[0] + 1 for s in samples], [s[1] for s in samples], style, color=colors[i % len(colors)],
                        label=f"LUBM({u}) {'all 14' if query == 'all' else query + ' alone'}")
    ax.set_xscale("log")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("departments streamed (last point: after close())")
    ax.set_ylabel("RSS, MB")
    ax.set_title("RSS while streaming (all 14 hold 22,778 answers at LUBM(1), Q1 4)", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)

    fig.suptitle(f"rdfstream lubm run vs rdflib + owlrl closure + rdflib SPARQL per department; "
                 f"{meta['python']}, rdflib {meta['rdflib']}, owlrl {meta['owlrl']}, CPU time", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(rows: list[dict], meta: dict, extra: dict, out_dir: Path) -> None:
    with open(out_dir / "lubm_stream.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        for r in rows:
            writer.writerow({c: ("" if r.get(c) is None else r[c]) for c in COLUMNS})
    with open(out_dir / "lubm_stream.json", "w", encoding="utf-8") as f:
        json.dump({"meta": meta, "rows": rows, **extra}, f, indent=1, ensure_ascii=False)


# ------------------------------------------------------------------------------------------------ main


def _loads() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):  # pragma: no cover
        return None


def _queries(text: str) -> tuple[int, ...]:
    from rdfstream.lubm.run import parse_query_list

    return () if text.strip().lower() == "none" else parse_query_list(text)


def make_row(univ: int, query: str, res: dict, base: dict | None, base_tps: float | None) -> dict:
    samples = res["rss_samples"]
    tps = res["triples"] / res["seconds"]
    return {
        "univ": univ, "query": query, "departments": res["departments"],
        "triples": res["triples"], "ours_cpu_s": round(res["seconds"], 3), "ours_tps": round(tps),
        "generate_cpu_s": round(res["generate_seconds"], 3),
        "ours_tps_without_generation": round(res["triples"] / (res["seconds"] - res["generate_seconds"])),
        "compile_cpu_s": round(res["compile_seconds"], 3),
        "baseline_tps": round(base_tps) if base_tps else None,
        "baseline_departments": base["departments"] if base else None,
        "ratio": round(tps / base_tps, 1) if base_tps else None,
        "peak_rss_mb": res["peak_rss_mb"], "rss_start_mb": res["rss_start_mb"],
        "rss_first_department_mb": samples[0][1] if samples else None,
        "rss_last_department_mb": samples[-2][1] if len(samples) > 1 else None,
        "rss_after_close_mb": samples[-1][1] if samples else None,
        "answers_mb": res["answers_mb"], "peak_rss_less_answers_mb": round(res["peak_rss_mb"] - res["answers_mb"], 2),
        "answers": sum(res["answers"].values()),
        "loadavg_1min": (_loads() or [None])[0],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--univ", type=int, nargs="+", default=None, help="LUBM sizes N (1 10; --quick: 1)")
    ap.add_argument("--baseline-departments", type=int, default=None,
                    help="departments of LUBM(1) the naive baseline runs on (3; --quick: 1; 0: no baseline)")
    ap.add_argument("--per-query", default="all",
                    help="queries run alone, per N (all, a list such as Q1,Q9, or none)")
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="afterwards, cProfile run(univ=1) for all 14 and for each query alone (untimed) and "
                         "keep the top N rdfstream functions in the JSON (also printed)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"), help="output directory")
    ap.add_argument("--quick", action="store_true", help="LUBM(1) only, baseline on 1 department")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child:
        spec = json.loads(args.child)
        result = child_ours(spec) if spec["task"] == "ours" else child_baseline(spec)
        print(json.dumps(result))
        return 0

    univs = args.univ or ([1] if args.quick else [1, 10])
    k = args.baseline_departments if args.baseline_departments is not None else (1 if args.quick else 3)
    per_query = _queries(args.per_query)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)

    import owlrl
    import rdflib

    meta = {
        "univ": univs, "seed": 0, "baseline_departments": k, "per_query": list(per_query),
        "quick": args.quick,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "rdflib": rdflib.__version__, "owlrl": getattr(owlrl, "__version__", "?"), "machine": platform.machine(),
        "cpus": os.cpu_count(), "clock": "time.process_time (CPU), in a fresh child process per configuration",
        "memory": "ru_maxrss of that child process (peak RSS)", "loadavg_start": _loads(),
        "git_head": git_head(), "source_digest": source_digest(),
    }
    rows: list[dict] = []
    runs: dict = {}
    extra: dict = {"baseline": None, "checks": {}, "profiles": {}}
    wall0 = time.time()
    child0 = resource.getrusage(resource.RUSAGE_CHILDREN)

    base = None
    if k > 0:
        print(f"baseline: rdflib + owlrl on the first {k} department(s) of LUBM(1) (load {_loads()})",
              file=sys.stderr, flush=True)
        raw = spawn({"task": "baseline", "departments": k})
        base = baseline_summary(raw)
        extra["baseline"] = {**base, "per_department": raw["departments"], "rss_start_mb": raw["rss_start_mb"]}
        print(f"cross-check: ours on the same {k} department(s)", file=sys.stderr, flush=True)
        sample = spawn({"task": "ours", "univ": 1, "queries": list(ALL), "sample": k, "return_answers": True})
        counts = cross_check(sample, raw, k)
        extra["checks"]["baseline_sample"] = {
            "departments": k, "answers": counts, "equal": True,
            "ours_seconds": sample["seconds"], "ours_tps_on_sample": round(sample["triples"] / sample["seconds"])}
        print(f"  equal answers on all 14 queries: {counts}", file=sys.stderr, flush=True)
        write(rows, meta, extra, out_dir)

    for univ in univs:
        plan = [("all", ALL)] + [(f"Q{n}", (n,)) for n in per_query]
        reference = None
        for query, queries in plan:
            print(f"LUBM({univ}) {query} (load {_loads()})", file=sys.stderr, flush=True)
            spec = {"task": "ours", "univ": univ, "queries": list(queries), "official": univ == 1 and query == "all"}
            res = spawn(spec)
            runs[(univ, query)] = res
            if "official" in res:
                wrong = {n: v for n, v in res["official"].items() if v[2]}
                if wrong:
                    raise AssertionError(f"LUBM(1): answers differ from the official ones: {wrong}")
                extra["checks"]["LUBM(1) = official answers"] = "all 14 equal"
            if reference is None:
                reference = res["digests"]
            else:
                for n, d in res["digests"].items():
                    if reference[n] != d:
                        raise AssertionError(f"LUBM({univ}) Q{n}: its answers alone differ from those among all 14")
            if base is None:
                base_tps = None
            elif query == "all":
                base_tps = base["all_tps"]
            else:
                base_tps = base["per_query_tps"][queries[0]]
            rows.append(make_row(univ, query, res, base, base_tps))
            r = rows[-1]
            print(f"  {r['triples']:,} triples, {r['ours_cpu_s']:.2f} s CPU, {r['ours_tps']:,} triples/s, "
                  f"peak RSS {r['peak_rss_mb']:.0f} MB", file=sys.stderr, flush=True)
            extra["rss_samples"] = {f"LUBM({u}) {q}": x["rss_samples"] for (u, q), x in runs.items()
                                    if q in ("all", "Q1")}  # what the plot shows; the rest is in the rows
            write(rows, meta, extra, out_dir)
        extra["checks"][f"LUBM({univ}) per query = all 14"] = "equal"

    if args.profile:
        for queries, name in [(ALL, "all")] + [((n,), f"Q{n}") for n in per_query]:
            text = profile_ours(queries, args.profile)
            extra["profiles"][f"LUBM(1) {name}"] = text
            print(f"cProfile run(univ=1) {name}:\n{text}", file=sys.stderr, end="")

    child1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    meta["loadavg_end"] = _loads()
    meta["total_child_cpu_s"] = round(child1.ru_utime + child1.ru_stime - child0.ru_utime - child0.ru_stime, 1)
    meta["total_wall_s"] = round(time.time() - wall0, 1)
    notes = []
    if base:
        notes.append(fmt_baseline(base))
        notes.append("baseline triples/s of a query = sampled triples / (load + closure + that query's SPARQL); "
                     "the same sample is compared with every N (the baseline's cost per department does not "
                     "depend on N); ratio = ours triples/s (generation included) / baseline")
        notes.append(f"checked: ours = baseline on the {k} sampled department(s), all 14 queries")
    notes.append("checked: LUBM(1) all 14 = the official answers; every query alone = the same query among the 14")
    notes.append(f"{meta['python']}, rdflib {meta['rdflib']}, owlrl {meta['owlrl']}; load average (1 min) "
                 f"{meta['loadavg_start'][0] if meta['loadavg_start'] else '?'} at start, "
                 f"{meta['loadavg_end'][0] if meta['loadavg_end'] else '?'} at end, {os.cpu_count()} CPUs; "
                 f"{meta['total_child_cpu_s']} s CPU in the child processes, {meta['total_wall_s']} s wall")
    text = fmt_table(rows) + "\n" + "\n".join(notes) + "\n"
    meta["table"] = text
    write(rows, meta, extra, out_dir)
    plot(rows, base, runs, out_dir / "lubm_stream.png", meta)
    print(text, end="")
    print(f"wrote {out_dir / 'lubm_stream.csv'}, .json, .png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
