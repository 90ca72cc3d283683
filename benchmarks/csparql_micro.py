"""C-SPARQL forms of the Laser ◇ and join programs: rdfstream's engine against rdflib from scratch per window.

    python benchmarks/csparql_micro.py [--quick] [--experiments diamond,join] [--seconds 300]
                                       [--windows 1,20,40,80] [--rates 200,400,800]
                                       [--timestamps start|spread] [--naive-budget 20] [--check 3]
                                       [--no-rdflib-push] [--profile N] [--out benchmarks/results]

For every configuration (query, window RANGE w seconds, stream rate k triples per second) the stream is
generated first (seeded, as engine rows and as rdflib triples), then the timed region feeds it to
``rdfstream.api.Engine`` one second at a time (``push_rows``, then ``advance_to`` the end of the second),
consumes every report (``len(report.raw_rows)``) and finally calls ``close()``.  The naive baseline answers
every report from scratch: an rdflib ``Graph`` of the window's triples and the same SELECT through
``graph.query``, under a CPU budget per configuration.  Times are CPU times (``time.process_time``), reported
as µs per input triple.  See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import cProfile
import csv
import gc
import io
import json
import os
import platform
import pstats
import random
import signal
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# always measure the working tree, never an installed copy that may be older
sys.path.insert(0, str(ROOT))
from rdflib import Graph, URIRef  # noqa: E402
from rdflib.plugins.sparql import prepareQuery  # noqa: E402

from rdfstream.api import Engine  # noqa: E402
from rdfstream.rdfterms import from_rdflib  # noqa: E402

EXPERIMENTS = ("diamond", "join")
DEFAULT_WINDOWS = (1, 20, 40, 80)
DEFAULT_RATES = (200, 400, 800)
SEED = 20180101
STREAM = "http://ex.org/s"
EX = "http://ex.org/"
PRED = f"<{EX}p>"

# ------------------------------------------------------------------------------------------------ queries

WHERE = {
    "diamond": ("?s ?o", "?s <http://ex.org/p> ?o"),
    "join": ("?x ?z", "?x <http://ex.org/p> ?y . ?y <http://ex.org/p> ?z"),
}


def csparql_text(experiment: str, w: int) -> str:
    select, where = WHERE[experiment]
    return (f"REGISTER QUERY q AS SELECT {select} FROM STREAM <{STREAM}> [RANGE {w}s STEP 1s] "
            f"WHERE {{ {where} }}")


def sparql_text(experiment: str) -> str:
    """The same query without the C-SPARQL clauses (REGISTER, FROM STREAM … [RANGE …])."""
    select, where = WHERE[experiment]
    return f"SELECT {select} WHERE {{ {where} }}"


def variables(experiment: str) -> list[str]:
    return [v.lstrip("?") for v in WHERE[experiment][0].split()]


# ------------------------------------------------------------------------------------------------ data


class Stream:
    """``seconds`` seconds of ``k`` triples each, as engine rows ``(pred, (s, o))`` and as rdflib triples,
    both built here, outside every timed region.  ``pushes[sec]`` lists the ``(ms, rows)`` calls of that second:
    one call at the second's start (``start``), or one per triple at distinct ms inside the second
    (``spread``: triple i at sec·1000 + ⌊i·1000/k⌋, distinct while k ≤ 1000)."""

    def __init__(self, experiment: str, k: int, seconds: int, timestamps: str):
        self.experiment, self.k, self.seconds = experiment, k, seconds
        self.rows: list[list[tuple]] = []
        if experiment == "diamond":  # k fresh, distinct triples (s_t_i, p, o_t_i) per second
            for t in range(seconds):
                self.rows.append([(PRED, (f"<{EX}s{t}_{i}>", f"<{EX}o{t}_{i}>")) for i in range(k)])
        elif experiment == "join":  # k/2 fresh chains c_j p c_j+1 . c_j+1 p c_j+2 per second
            j = 0
            for _ in range(seconds):
                rows = []
                for _ in range(k // 2):
                    a, b, c = f"<{EX}c{j}>", f"<{EX}c{j + 1}>", f"<{EX}c{j + 2}>"
                    rows.append((PRED, (a, b)))
                    rows.append((PRED, (b, c)))
                    j += 3
                self.rows.append(rows)
        else:
            raise ValueError(experiment)
        terms: dict[str, URIRef] = {}

        def term(c: str) -> URIRef:
            u = terms.get(c)
            if u is None:
                u = terms[c] = URIRef(c[1:-1])
            return u

        # rdflib triples (s, p, o), the same terms the naive baseline's graphs and engine.push receive
        self.triples = [[(term(s), term(p), term(o)) for p, (s, o) in rows] for rows in self.rows]
        self.pushes: list[list[tuple[int, list]]] = []
        self.rdflib_pushes: list[list[tuple[int, list]]] = []
        for t in range(seconds):
            if timestamps == "start":
                self.pushes.append([(t * 1000, self.rows[t])])
                self.rdflib_pushes.append([(t * 1000, self.triples[t])])
            else:
                by_ms: dict[int, tuple[list, list]] = {}
                for i, (row, triple) in enumerate(zip(self.rows[t], self.triples[t], strict=True)):
                    ms = t * 1000 + i * 1000 // len(self.rows[t])
                    group = by_ms.setdefault(ms, ([], []))
                    group[0].append(row)
                    group[1].append(triple)
                self.pushes.append([(ms, g[0]) for ms, g in by_ms.items()])
                self.rdflib_pushes.append([(ms, g[1]) for ms, g in by_ms.items()])

    @property
    def input_triples(self) -> int:
        return sum(len(rows) for rows in self.rows)

    def report_times(self, w: int) -> list[int]:
        """The closes c (ms) at which the query reports: every second from t0+w while [c−w, c) holds data."""
        return [c * 1000 for c in range(w, self.seconds + w)]

    def window(self, c: int, w: int) -> list[tuple]:
        """The rdflib triples with timestamps in [c−w, c) (c, w in seconds)."""
        out = []
        for sec in range(max(0, c - w), min(c, self.seconds)):
            out.extend(self.triples[sec])
        return out


# ------------------------------------------------------------------------------------------------ ours


def run_ours(experiment: str, w: int, stream: Stream, rdflib_terms: bool = False) -> dict:
    """Feed the stream second by second (``push_rows``, or ``push`` with rdflib terms), advance to the end of
    each second, consume every report, close.  CPU-timed; the reports' times and row counts are kept."""
    engine = Engine(t0=0)
    engine.register_query(csparql_text(experiment, w))
    pushes = stream.rdflib_pushes if rdflib_terms else stream.pushes
    push = engine.push if rdflib_terms else engine.push_rows
    sizes: list[tuple[int, int]] = []  # (report time, rows): the consumption, and the cross-check
    gc.collect()
    cpu0 = time.process_time()
    for sec, calls in enumerate(pushes):
        for ms, rows in calls:
            push(STREAM, rows, ms)
        for report in engine.advance_to((sec + 1) * 1000):
            sizes.append((report.t, len(report.raw_rows)))
    for report in engine.close():
        sizes.append((report.t, len(report.raw_rows)))
    cpu = time.process_time() - cpu0
    return {"cpu": cpu, "triples": stream.input_triples, "reports": len(sizes),
            "rows": sum(n for _, n in sizes), "sizes": sizes}


def profile_ours(experiment: str, w: int, stream: Stream, top: int) -> str:
    """cProfile of one ``run_ours`` (untimed): the ``top`` rdfstream functions by cumulative time."""
    prof = cProfile.Profile()
    prof.enable()
    run_ours(experiment, w, stream)
    prof.disable()
    stats = pstats.Stats(prof)
    entries = []
    for (path, line, name), (_cc, nc, tt, ct, _callers) in stats.stats.items():
        if f"{os.sep}rdfstream{os.sep}" in path and f"{os.sep}benchmarks{os.sep}" not in path:
            rel = path.split(f"{os.sep}rdfstream{os.sep}", 1)[1]
            entries.append((ct, tt, nc, f"rdfstream/{rel}:{line}({name})"))
    entries.sort(reverse=True)
    out = io.StringIO()
    out.write(f"  {'cumtime s':>9}  {'tottime s':>9}  {'calls':>9}  function\n")
    for ct, tt, nc, where in entries[:top]:
        out.write(f"  {ct:9.3f}  {tt:9.3f}  {nc:9d}  {where}\n")
    return out.getvalue()


# ------------------------------------------------------------------------------------------------ naive


class _OutOfBudget(Exception):
    pass


class _CpuAlarm:
    """Raises inside the guarded code once ``seconds`` of process CPU time have passed (``ITIMER_PROF``), so
    one report that would take very long cannot overrun the budget; swallows that interrupt on exit.
    Without ``setitimer`` (Windows) the budget is only checked between reports."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def __enter__(self):
        self.armed = hasattr(signal, "setitimer") and self.seconds > 0
        if self.armed:
            self.previous = signal.signal(signal.SIGPROF, self._fire)
            signal.setitimer(signal.ITIMER_PROF, self.seconds)
        return self

    @staticmethod
    def _fire(signum, frame):
        raise _OutOfBudget

    def __exit__(self, *exc):
        if self.armed:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, self.previous)
        return exc[0] is _OutOfBudget


def naive_report(query, triples: list[tuple]) -> list:
    """One report from scratch: a fresh rdflib Graph of the window's triples, the SELECT, rows materialised."""
    g = Graph()
    add = g.add
    for triple in triples:
        add(triple)
    return [tuple(row) for row in g.query(query)]


def naive_order(reports: int) -> list[int]:
    """The report indices in a seeded random order, so that a run cut short by the budget is a uniform
    sample of all reports (steady windows and the shrinking windows after the stream ends) and its mean
    cost per report estimates the complete run's."""
    order = list(range(reports))
    random.Random(SEED).shuffle(order)
    return order


def run_naive(experiment: str, w: int, stream: Stream, budget: float, ours_sizes: dict[int, int]) -> dict:
    """Every report of the query from scratch, in ``naive_order``, until ``budget`` CPU seconds are spent.

    The window's triple list is gathered outside the timing (as the engine gets its rows pre-built); the
    timed part is building the Graph, running the prepared query and materialising its rows.  The row
    count of every completed report must equal the engine's at the same time.  Estimated µs per input
    triple = CPU of the completed reports / their number × all reports / input triples; when not one
    report completes, the CPU spent on the cut-off one gives a lower bound (``bound``)."""
    query = prepareQuery(sparql_text(experiment))  # parsed once, outside the timing
    times = stream.report_times(w)
    cpu = 0.0
    done = rows = 0
    cut = 0.0
    for i in naive_order(len(times)):
        c = times[i]
        triples = stream.window(c // 1000, w)
        result = None
        gc.collect()
        cpu0 = time.process_time()
        with _CpuAlarm(budget - cpu):
            result = naive_report(query, triples)
        elapsed = time.process_time() - cpu0
        if result is None:  # interrupted by the budget
            cut = elapsed
            break
        if ours_sizes.get(c) != len(result):
            raise AssertionError(f"{experiment} w={w} k={stream.k}: at t={c} rdflib has {len(result)} rows, "
                                 f"the engine {ours_sizes.get(c)}")
        cpu += elapsed
        rows += len(result)
        done += 1
        if cpu >= budget:
            break
    out = {"cpu": cpu, "done": done, "reports": len(times), "rows": rows, "bound": False, "us": None}
    if done:
        out["us"] = cpu / done * len(times) / stream.input_triples * 1e6
    elif cut > 0:
        out.update(us=cut * len(times) / stream.input_triples * 1e6, bound=True)
    return out


# ------------------------------------------------------------------------------------------------ check


def check(experiment: str, w: int, stream: Stream, count: int) -> int:
    """Untimed: the engine's rows equal rdflib's rows as multisets at the first ``count`` reports (and the
    reports come at the expected times).  Returns the number of reports compared; raises if they differ."""
    if count <= 0:
        return 0
    engine = Engine(t0=0)
    engine.register_query(csparql_text(experiment, w))
    query = prepareQuery(sparql_text(experiment))
    names = variables(experiment)
    expected_times = stream.report_times(w)[:count]
    reports = []
    for sec, calls in enumerate(stream.pushes):
        if len(reports) >= count:
            break
        for ms, rows in calls:
            engine.push_rows(STREAM, rows, ms)
        reports.extend(engine.advance_to((sec + 1) * 1000))
    if len(reports) < count:
        reports.extend(engine.close())
    reports = reports[:count]
    got_times = [r.t for r in reports]
    if got_times != expected_times[:len(got_times)] or len(got_times) < min(count, len(expected_times)):
        raise AssertionError(f"{experiment} w={w} k={stream.k}: report times {got_times[:5]}…, "
                             f"expected {expected_times[:5]}…")
    for report in reports:
        ours = Counter(tuple(row[v] for v in names) for row in report.raw_rows)
        result = Graph()
        for triple in stream.window(report.t // 1000, w):
            result.add(triple)
        theirs = Counter(tuple(from_rdflib(row[v]) for v in names)
                         for row in result.query(query))
        if ours != theirs:
            raise AssertionError(
                f"{experiment} w={w} k={stream.k}: engine and rdflib differ at t={report.t}: "
                f"engine-only {sorted((ours - theirs).elements())[:3]}, "
                f"rdflib-only {sorted((theirs - ours).elements())[:3]} "
                f"({sum(ours.values())} vs {sum(theirs.values())} rows)")
    return len(reports)


# ------------------------------------------------------------------------------------------------ output

COLUMNS = ["experiment", "w", "k", "seconds", "timestamps", "input_triples", "reports", "output_rows",
           "ours_cpu_s", "ours_us_per_triple", "ours_reports_per_s", "push_rdflib_cpu_s",
           "push_rdflib_us_per_triple", "naive_reports_done", "naive_cpu_s", "naive_us_per_triple",
           "naive_reports_per_s", "naive_lower_bound", "ratio", "checked_reports", "loadavg_1min"]


def fmt_table(rows: list[dict]) -> str:
    head = ["experiment", "w", "k", "ours µs/triple", "push() µs/triple", "naive µs/triple", "naive reports",
            "ratio naive/ours", "reports", "ours reports/s"]
    lines = []
    for r in rows:
        bound = ">" if r["naive_lower_bound"] else ""
        naive = "-" if r["naive_us_per_triple"] is None else f"{bound}{r['naive_us_per_triple']:.1f}"
        ratio = "-" if r["ratio"] is None else f"{bound}{r['ratio']:.1f}x"
        done = f"{r['naive_reports_done']}/{r['reports']}"
        if r["naive_cpu_s"] is None:
            done = "-"
        elif r["naive_reports_done"] < r["reports"]:
            done = "sample " + done
        rdf = "-" if r["push_rdflib_us_per_triple"] is None else f"{r['push_rdflib_us_per_triple']:.2f}"
        lines.append([r["experiment"], str(r["w"]), str(r["k"]), f"{r['ours_us_per_triple']:.2f}", rdf, naive,
                      done, ratio, str(r["reports"]), f"{r['ours_reports_per_s']:.0f}"])
    widths = [max(len(h), *(len(line[i]) for line in lines)) if lines else len(h) for i, h in enumerate(head)]
    out = ["  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(head, widths, strict=True)))]
    out.append("  ".join("-" * w for w in widths))
    for line in lines:
        out.append("  ".join(c.rjust(w) if i else c.ljust(w)
                             for i, (c, w) in enumerate(zip(line, widths, strict=True))))
    return "\n".join(out)


def plot(rows: list[dict], path: Path, meta: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    experiments = [e for e in EXPERIMENTS if any(r["experiment"] == e for r in rows)]
    titles = {
        "diamond": "diamond: SELECT ?s ?o … [RANGE w s STEP 1s] { ?s p ?o }",
        "join": "join: SELECT ?x ?z … [RANGE w s STEP 1s] { ?x p ?y . ?y p ?z }",
    }
    fig, axes = plt.subplots(1, len(experiments) or 1, figsize=(6.2 * max(1, len(experiments)), 4.8),
                             squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, exp in zip(axes.flat, experiments, strict=False):
        sub = [r for r in rows if r["experiment"] == exp]
        for i, k in enumerate(sorted({r["k"] for r in sub})):
            pts = sorted((r for r in sub if r["k"] == k), key=lambda r: r["w"])
            color = colors[i % len(colors)]
            ax.plot([r["w"] for r in pts], [r["ours_us_per_triple"] for r in pts], "-o", color=color,
                    label=f"ours k={k}")
            rdf = [r for r in pts if r["push_rdflib_us_per_triple"] is not None]
            if rdf:
                ax.plot([r["w"] for r in rdf], [r["push_rdflib_us_per_triple"] for r in rdf], ":", color=color,
                        alpha=0.7, label=f"ours push() k={k}")
            naive = [r for r in pts if r["naive_us_per_triple"] is not None]
            if naive:
                ax.plot([r["w"] for r in naive], [r["naive_us_per_triple"] for r in naive], "--", color=color,
                        label=f"naive k={k}")
                full = [r for r in naive if r["naive_reports_done"] >= r["reports"]]
                part = [r for r in naive if 0 < r["naive_reports_done"] < r["reports"]]
                bound = [r for r in naive if r["naive_lower_bound"]]
                ax.plot([r["w"] for r in full], [r["naive_us_per_triple"] for r in full], "s", color=color)
                ax.plot([r["w"] for r in part], [r["naive_us_per_triple"] for r in part], "s", color=color,
                        markerfacecolor="none")
                ax.plot([r["w"] for r in bound], [r["naive_us_per_triple"] for r in bound], "^", color=color,
                        markerfacecolor="none")
        ax.set_yscale("log")
        ax.set_title(titles[exp], fontsize=9)
        ax.set_xlabel("window RANGE w (seconds)")
        ax.set_ylabel("CPU µs per input triple (log)")
        ax.set_xticks(sorted({r["w"] for r in sub}))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=3)
    fig.suptitle(
        f"rdfstream C-SPARQL (solid: push_rows, dotted: push with rdflib terms) vs rdflib from scratch per "
        f"report (dashed; filled square = all reports, hollow = sample within {meta['naive_budget']:g} s CPU, "
        f"triangle = lower bound)\n{meta['seconds']} s of stream per configuration, timestamps "
        f"{meta['timestamps']}, {meta['python']}, rdflib {meta['rdflib']}, CPU time",
        fontsize=8,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _write(rows: list[dict], meta: dict, out_dir: Path) -> None:
    with open(out_dir / "csparql_micro.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        for r in rows:
            writer.writerow({c: ("" if r[c] is None else r[c]) for c in COLUMNS})
    with open(out_dir / "csparql_micro.json", "w", encoding="utf-8") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1, ensure_ascii=False)


# ------------------------------------------------------------------------------------------------ main


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def _load() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):  # pragma: no cover - not on every platform
        return None


def _loads() -> list[float] | None:
    """The 1, 5 and 15 minute load averages."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):  # pragma: no cover
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--experiments", default=",".join(EXPERIMENTS), help="diamond,join")
    ap.add_argument("--seconds", type=int, default=None, help="seconds of stream per configuration (300)")
    ap.add_argument("--windows", default=None, help="window RANGE w in seconds (1,20,40,80)")
    ap.add_argument("--rates", default=None, help="triples per second k (200,400,800)")
    ap.add_argument("--timestamps", choices=["start", "spread"], default="start",
                    help="a second's k triples all at its first ms, one push_rows call (start, default), or "
                         "at distinct ms inside the second, one call per ms (spread)")
    ap.add_argument("--naive-budget", type=float, default=None,
                    help="CPU seconds of the rdflib baseline per configuration (20; 0: no baseline)")
    ap.add_argument("--check", type=int, default=None,
                    help="untimed: compare engine and rdflib rows (multisets) at the first N reports (3)")
    ap.add_argument("--no-rdflib-push", action="store_true",
                    help="skip the second engine run that pushes rdflib terms with Engine.push")
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="after each configuration, cProfile one more engine run (untimed) and print the top N "
                         "rdfstream functions by cumulative time")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"), help="output directory")
    ap.add_argument("--quick", action="store_true", help="smoke run: 30 s of stream, w ∈ {1, 20}, k = 200")
    args = ap.parse_args(argv)

    q = args.quick
    experiments = [e.strip() for e in args.experiments.split(",") if e.strip()]
    bad = [e for e in experiments if e not in EXPERIMENTS]
    if bad:
        ap.error(f"unknown experiments: {', '.join(bad)}")
    seconds = args.seconds or (30 if q else 300)
    windows = _ints(args.windows) if args.windows else ([1, 20] if q else list(DEFAULT_WINDOWS))
    rates = _ints(args.rates) if args.rates else ([200] if q else list(DEFAULT_RATES))
    budget = args.naive_budget if args.naive_budget is not None else (2.0 if q else 20.0)
    check_n = args.check if args.check is not None else (10 if q else 3)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)

    import rdflib

    meta = {
        "seconds": seconds, "windows": windows, "rates": rates, "timestamps": args.timestamps,
        "naive_budget": budget, "check": check_n, "rdflib_push": not args.no_rdflib_push, "seed": SEED,
        "quick": q, "python": f"{platform.python_implementation()} {platform.python_version()}",
        "rdflib": rdflib.__version__, "machine": platform.machine(), "cpus": os.cpu_count(),
        "clock": "time.process_time (CPU)", "loadavg_start": _loads(),
        "queries": {e: csparql_text(e, 0).replace("RANGE 0s", "RANGE w s") for e in experiments},
    }
    plan = [(e, w, k) for e in experiments for k in rates for w in windows]
    rows: list[dict] = []
    profiles: list[str] = []
    stream_key, stream = None, None
    wall0 = time.time()
    cpu_all0 = time.process_time()
    for exp, w, k in plan:
        print(f"[{len(rows) + 1}/{len(plan)}] {exp} w={w} k={k} (load {_load()})", file=sys.stderr, flush=True)
        if (exp, k) != stream_key:
            stream = None
            gc.collect()
            stream = Stream(exp, k, seconds, args.timestamps)
            stream_key = (exp, k)
        load = _load()
        checked = check(exp, w, stream, check_n)
        ours = run_ours(exp, w, stream)
        expected = stream.report_times(w)
        if [t for t, _ in ours["sizes"]] != expected:
            raise AssertionError(f"{exp} w={w} k={k}: the engine reported at {ours['sizes'][:3]}…, "
                                 f"expected every second from {expected[0]} to {expected[-1]}")
        rdf = None if args.no_rdflib_push else run_ours(exp, w, stream, rdflib_terms=True)
        if rdf is not None and rdf["sizes"] != ours["sizes"]:
            raise AssertionError(f"{exp} w={w} k={k}: push() and push_rows() reports differ")
        naive = run_naive(exp, w, stream, budget, dict(ours["sizes"])) if budget > 0 else None
        if args.profile:
            text = profile_ours(exp, w, stream, args.profile)
            profiles.append(f"{exp} w={w} k={k}\n{text}")
            print(profiles[-1], file=sys.stderr, end="")
        ours_us = ours["cpu"] / ours["triples"] * 1e6
        naive_us = naive["us"] if naive else None
        rows.append({
            "experiment": exp, "w": w, "k": k, "seconds": seconds, "timestamps": args.timestamps,
            "input_triples": ours["triples"], "reports": ours["reports"], "output_rows": ours["rows"],
            "ours_cpu_s": round(ours["cpu"], 4), "ours_us_per_triple": round(ours_us, 3),
            "ours_reports_per_s": round(ours["reports"] / ours["cpu"], 1) if ours["cpu"] > 0 else None,
            "push_rdflib_cpu_s": round(rdf["cpu"], 4) if rdf else None,
            "push_rdflib_us_per_triple": round(rdf["cpu"] / rdf["triples"] * 1e6, 3) if rdf else None,
            "naive_reports_done": naive["done"] if naive else 0,
            "naive_cpu_s": round(naive["cpu"], 4) if naive else None,
            "naive_us_per_triple": round(naive_us, 3) if naive_us is not None else None,
            "naive_reports_per_s": (round(naive["done"] / naive["cpu"], 2)
                                    if naive and naive["done"] and naive["cpu"] > 0 else None),
            "naive_lower_bound": bool(naive and naive["bound"]),
            "ratio": round(naive_us / ours_us, 2) if naive_us is not None else None,
            "checked_reports": checked,
            "loadavg_1min": load,
        })
        _write(rows, meta, out_dir)  # partial results survive an interrupted run

    meta["loadavg_end"] = _loads()
    meta["total_cpu_s"] = round(time.process_time() - cpu_all0, 1)
    meta["total_wall_s"] = round(time.time() - wall0, 1)
    _write(rows, meta, out_dir)
    plot(rows, out_dir / "csparql_micro.png", meta)
    notes = [f"{seconds} s of stream per configuration, timestamps: {args.timestamps}",
             f"naive budget {budget:g} s CPU per configuration (reports in seeded random order)",
             f"checked the first {check_n} reports of every configuration against rdflib" if check_n
             else "no --check",
             f"{meta['python']}, rdflib {meta['rdflib']}",
             f"load average (1 min) {meta['loadavg_start'][0] if meta['loadavg_start'] else '?'} at start, "
             f"{meta['loadavg_end'][0] if meta['loadavg_end'] else '?'} at end, {os.cpu_count()} CPUs",
             f"total {meta['total_cpu_s']} s CPU, {meta['total_wall_s']} s wall"]
    text = fmt_table(rows) + "\n" + "\n".join(notes) + "\n"
    if profiles:
        text += "\ncProfile of the engine run (top rdfstream functions by cumulative time):\n" + "".join(profiles)
    (out_dir / "csparql_micro.txt").write_text(text, encoding="utf-8")
    print(text, end="")
    print(f"wrote {out_dir / 'csparql_micro.csv'}, .json, .png, .txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
