"""The evaluation programs of the Laser paper, incremental engine against from-scratch recomputation.

    python benchmarks/laser_micro.py [--quick] [--experiments diamond,box,join,multi,cooling]
                                     [--points 2000] [--windows 1,20,40,80] [--rates 200,400,800]
                                     [--rules 10,20,50,100] [--multi-rate 200] [--multi-points N]
                                     [--naive-budget 10] [--check N] [--out benchmarks/results]

For every configuration (experiment, window size n, stream rate k or rule count R) the stream is generated
first (seeded, as ``(pred, args)`` tuples), then the timed region feeds it to an :class:`Engine` one time
point at a time and reads the output change of every evaluated tick ("with output").  The naive baseline
answers each time point from scratch with ``tests/reference.py``'s ``evaluate_at`` over the data its window
can see, under a CPU budget per configuration.  Times are CPU times (``time.process_time``), reported as
µs per input atom.  See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import csv
import gc
import json
import platform
import random
import re
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# always measure the working tree, never an installed copy that may be older
sys.path.insert(0, str(ROOT))
from rdfstream.atoms import Atom  # noqa: E402
from rdfstream.engine.session import Engine  # noqa: E402
from rdfstream.frontends.registry import parse_program  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from reference import evaluate_at  # noqa: E402  (tests/reference.py, the naive evaluator)

try:
    from tqdm import tqdm
except ImportError:  # pragma: no cover - the progress bar is optional
    tqdm = None

EXPERIMENTS = ("diamond", "box", "join", "multi", "cooling")
DEFAULT_WINDOWS = (1, 20, 40, 80)
DEFAULT_RATES = (200, 400, 800)
DEFAULT_RULES = (10, 20, 50, 100)
SEED = 20180101

# ------------------------------------------------------------------------------------------------ programs

COOLING_FILE = ROOT / "queries" / "lars" / "cooling.lars"


def program_text(experiment: str, n: int, rules: int = 1) -> str:
    if experiment == "diamond":
        return f"q(A, B) :- [{n}] <> p(A, B).\n"
    if experiment == "box":
        return f"z(X) :- [{n}] [] p(X).\n"
    if experiment == "join":
        return f"q(X, Z) :- [{n}] <> p(X, Y), [{n}] <> p(Y, Z).\n"
    if experiment == "multi":
        return "".join(f"q{i}(X, Z) :- [{n}] <> p(X, Y), [{n}] <> p(Y, Z).\n" for i in range(1, rules + 1))
    if experiment == "cooling":
        text = COOLING_FILE.read_text(encoding="utf-8")
        text, count = re.subn(r"\[3\]", f"[{n}]", text)
        assert count == 8, f"expected 8 windows in {COOLING_FILE}, found {count}"
        return text
    raise ValueError(experiment)


# ------------------------------------------------------------------------------------------------ data


def generate(experiment: str, k: int, points: int, join_data: str = "pairs") -> list[list[tuple]]:
    """``points`` lists of ``k`` input rows ``(pred, args)``, deterministic for (experiment, k, points)."""
    rng = random.Random(f"{SEED}-{experiment}-{k}")
    data: list[list[tuple]] = []
    if experiment == "diamond":  # k new, distinct atoms at every point
        for t in range(points):
            data.append([("p", (f"s{t}_{i}", f"o{t}_{i}")) for i in range(k)])
    elif experiment == "box":  # k atoms p(r), r in [0, k/3 + 1]; repetitions at one point collapse
        hi = k // 3 + 1
        for _ in range(points):
            data.append([("p", (rng.randint(0, hi),)) for _ in range(k)])
    elif experiment in ("join", "multi"):
        if join_data == "pairs":  # k/2 fresh chains c_j -> c_j+1 -> c_j+2 per point
            j = 0
            for _ in range(points):
                rows = []
                for _ in range(k // 2):
                    a, b, c = f"c{j}", f"c{j + 1}", f"c{j + 2}"
                    rows.append(("p", (a, b)))
                    rows.append(("p", (b, c)))
                    j += 3
                data.append(rows)
        else:  # "path": one path c_tk -> ... -> c_tk+k per point, as Laser's generator (RDFStream2) makes it
            for t in range(points):
                base = t * k
                data.append([("p", (f"c{base + i}", f"c{base + i + 1}")) for i in range(k)])
    elif experiment == "cooling":  # k readings temp(V), V in [0, 200]
        for _ in range(points):
            data.append([("temp", (rng.randint(0, 200),)) for _ in range(k)])
    else:
        raise ValueError(experiment)
    return data


# ------------------------------------------------------------------------------------------------ runs


def run_ours(program, data: list[list[tuple]]) -> dict:
    """Feed the stream point by point, consume every snapshot and touch its output delta.  CPU-timed."""
    engine = Engine(program, start=0)
    changes = 0
    gc.collect()
    cpu0 = time.process_time()
    for t, rows in enumerate(data):
        engine.push(rows, t)
        for snap in engine.ticks(t):
            for delta in snap.added_by_pred.values():
                changes += len(delta)
            for delta in snap.removed_by_pred.values():
                changes += len(delta)
    cpu = time.process_time() - cpu0
    atoms = sum(len(rows) for rows in data)
    return {"cpu": cpu, "atoms": atoms, "changes": changes}


class _AtomCache:
    """``Atom`` objects for the reference evaluator, built outside the timed calls."""

    def __init__(self, data: list[list[tuple]]):
        self.data = data
        self.cache: dict[int, list[Atom]] = {}

    def window(self, lo: int, t: int) -> dict[int, list[Atom]]:
        for u in [u for u in self.cache if u < lo or u > t]:
            del self.cache[u]
        out = {}
        for u in range(lo, t + 1):
            atoms = self.cache.get(u)
            if atoms is None:
                atoms = self.cache[u] = [Atom(p, a) for p, a in self.data[u]]
            out[u] = atoms
        return out


def naive_order(n: int, points: int) -> list[int]:
    """Steady-state points (full window) first, then the warm-up points: every point is answered from
    scratch, so the order does not change the answers, and a partial run measures the steady state."""
    w = min(n, points)
    return list(range(w, points)) + list(range(w))


class _OutOfBudget(Exception):
    pass


class _CpuAlarm:
    """Interrupts the code it guards once ``seconds`` of process CPU time have passed (``ITIMER_PROF``), so
    that one from-scratch evaluation that would take hours cannot overrun the budget.  Without
    ``setitimer`` (Windows) the budget is only checked between time points."""

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
        return exc[0] is _OutOfBudget  # swallow the interrupt


def run_naive(program, data: list[list[tuple]], n: int, budget: float) -> dict:
    """``evaluate_at`` per time point over the window's data, until ``budget`` CPU seconds are spent.

    A time point interrupted by the budget does not count; if not even the first one completes, the CPU
    spent on it divided by its atoms is a lower bound (``bound``)."""
    cache = _AtomCache(data)
    cpu = 0.0
    done = atoms = size = 0
    order = naive_order(n, len(data))
    spent_on_cut = 0.0
    for t in order:
        lo = max(0, t - n)
        stream = cache.window(lo, t)
        result = None
        cpu0 = time.process_time()
        with _CpuAlarm(budget - cpu):
            result = evaluate_at(program, stream, lo, t)
        elapsed = time.process_time() - cpu0
        if result is None:  # interrupted
            spent_on_cut = elapsed
            cut_atoms = len(data[t])
            break
        cpu += elapsed
        size += len(result.holds)
        done += 1
        atoms += len(data[t])
        if cpu >= budget:
            break
    out = {"cpu": cpu, "atoms": atoms, "points": done, "holds": size, "bound": False}
    if done == 0 and spent_on_cut > 0:
        out.update(cpu=spent_on_cut, atoms=cut_atoms, bound=True)
    return out


def check(program, data: list[list[tuple]], n: int, count: int, budget: float) -> int:
    """Untimed: the engine's answer equals ``evaluate_at`` over the window at up to ``count`` early and
    ``count`` steady-state points, as far as ``budget`` CPU seconds of reference evaluation go.  Returns
    the number of points compared."""
    engine = Engine(program, start=0)
    cache = _AtomCache(data)
    wanted = set(range(min(count, len(data)))) | set(range(n, min(n + count, len(data))))
    holds: dict[str, set] = {}
    compared = 0
    spent = 0.0
    for t, rows in enumerate(data):
        if spent >= budget or t > max(wanted):
            break
        engine.push(rows, t)
        for snap in engine.ticks(t):
            for pred, delta in snap.removed_by_pred.items():
                holds.get(pred, set()).difference_update(delta)
            for pred, delta in snap.added_by_pred.items():
                holds.setdefault(pred, set()).update(delta)
        if t in wanted:
            lo = max(0, t - n)
            ref = None
            cpu0 = time.process_time()
            with _CpuAlarm(budget - spent):
                ref = evaluate_at(program, cache.window(lo, t), lo, t)
            spent += time.process_time() - cpu0
            if ref is None:
                break
            expected = {(a.pred, a.args) for a in ref.holds}
            actual = {(p, a) for p, rows in holds.items() for a in rows}
            if expected != actual:
                raise AssertionError(
                    f"engine and reference differ at t={t}: engine-only {sorted(actual - expected)[:5]}, "
                    f"reference-only {sorted(expected - actual)[:5]}"
                )
            compared += 1
    return compared


# ------------------------------------------------------------------------------------------------ output

COLUMNS = ["experiment", "n", "k", "R", "points", "input_atoms", "ours_cpu_s", "ours_us_per_atom",
           "output_changes", "naive_points", "naive_cpu_s", "naive_us_per_atom", "naive_lower_bound", "ratio",
           "checked_points"]


def fmt_table(rows: list[dict]) -> str:
    head = ["experiment", "n", "k (or R)", "ours µs/atom", "naive µs/atom", "naive points", "ratio"]
    lines = []
    for r in rows:
        kr = f"R={r['R']}" if r["experiment"] == "multi" else str(r["k"])
        npts = f"{r['naive_points']}/{r['points']}"
        if r["naive_points"] < r["points"]:
            npts = "partial " + npts
        bound = ">" if r["naive_lower_bound"] else ""
        naive = "-" if r["naive_us_per_atom"] is None else f"{bound}{r['naive_us_per_atom']:.1f}"
        ratio = "-" if r["ratio"] is None else f"{bound}{r['ratio']:.1f}x"
        lines.append([r["experiment"], str(r["n"]), kr, f"{r['ours_us_per_atom']:.2f}", naive, npts, ratio])
    widths = [max(len(h), *(len(line[i]) for line in lines)) if lines else len(h) for i, h in enumerate(head)]
    out = ["  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(head, widths, strict=True)))]
    out.append("  ".join("-" * w for w in widths))
    for line in lines:
        cells = enumerate(zip(line, widths, strict=True))
        out.append("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in cells))
    return "\n".join(out)


def plot(rows: list[dict], path: Path, meta: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    experiments = [e for e in EXPERIMENTS if any(r["experiment"] == e for r in rows)]
    titles = {
        "diamond": "diamond: q(A,B) :- [n] ◇ p(A,B)",
        "box": "box: z(X) :- [n] □ p(X)",
        "join": "join: q(X,Z) :- [n]◇p(X,Y), [n]◇p(Y,Z)",
        "multi": f"multiple join rules (k={meta.get('multi_rate')})",
        "cooling": "cooling (Laser Fig. 4, 9 rules)",
    }
    cols = min(3, len(experiments)) or 1
    nrows = -(-len(experiments) // cols) or 1
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 4.2 * nrows), squeeze=False)
    for ax in axes.flat[len(experiments):]:
        ax.axis("off")
    for ax, exp in zip(axes.flat, experiments, strict=False):
        sub = [r for r in rows if r["experiment"] == exp]
        key = "R" if exp == "multi" else "k"
        series = sorted({r[key] for r in sub})
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for i, s in enumerate(series):
            pts = sorted((r for r in sub if r[key] == s), key=lambda r: r["n"])
            color = colors[i % len(colors)]
            label = f"R={s}" if key == "R" else f"k={s}"
            ax.plot([r["n"] for r in pts], [r["ours_us_per_atom"] for r in pts], "-o", color=color,
                    label=f"ours {label}")
            naive = [r for r in pts if r["naive_us_per_atom"] is not None]
            if naive:
                ax.plot([r["n"] for r in naive], [r["naive_us_per_atom"] for r in naive], "--", color=color,
                        label=f"naive {label}")
                full = [r for r in naive if r["naive_points"] >= r["points"]]
                part = [r for r in naive if 0 < r["naive_points"] < r["points"]]
                bound = [r for r in naive if r["naive_lower_bound"]]
                ax.plot([r["n"] for r in full], [r["naive_us_per_atom"] for r in full], "s", color=color)
                ax.plot([r["n"] for r in part], [r["naive_us_per_atom"] for r in part], "s", color=color,
                        markerfacecolor="none")
                ax.plot([r["n"] for r in bound], [r["naive_us_per_atom"] for r in bound], "^", color=color,
                        markerfacecolor="none")
        ax.set_yscale("log")
        ax.set_title(titles[exp], fontsize=10)
        ax.set_xlabel("window size n (time points)")
        ax.set_ylabel("CPU µs per input atom (log)")
        ax.set_xticks(sorted({r["n"] for r in sub}))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
    fig.suptitle(
        f"rdfstream incremental engine (solid) vs from-scratch recomputation (dashed; filled square = all points, "
        f"hollow square = partial run within {meta['naive_budget']:g} s CPU, triangle = lower bound: not one "
        f"point finished)\n{meta['points']} time points per configuration"
        + (f" (multi: {meta['multi_points']})" if meta["multi_points"] != meta["points"] else "")
        + f", {meta['python']}, CPU time",
        fontsize=9,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------------------------------ main


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def configs(args) -> list[tuple]:
    """(experiment, n, k, R, points) in run order."""
    out = []
    for exp in args.experiments:
        if exp == "multi":
            for r in args.rules:
                for n in args.windows:
                    out.append((exp, n, args.multi_rate, r, args.multi_points))
        else:
            for k in args.rates:
                for n in args.windows:
                    out.append((exp, n, k, 1, args.points))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--experiments", default=",".join(EXPERIMENTS),
                    help="comma-separated subset of " + ",".join(EXPERIMENTS))
    ap.add_argument("--points", type=int, default=None, help="time points per configuration (2000)")
    ap.add_argument("--windows", default=None, help="window sizes n (1,20,40,80)")
    ap.add_argument("--rates", default=None, help="atoms per time point k (200,400,800)")
    ap.add_argument("--rules", default=None, help="rule counts R of the multi experiment (10,20,50,100)")
    ap.add_argument("--multi-rate", type=int, default=200, help="k of the multi experiment (200)")
    ap.add_argument("--multi-points", type=int, default=None, help="time points of multi (--points)")
    ap.add_argument("--join-data", choices=["pairs", "path"], default="pairs",
                    help="join/multi data: k/2 fresh 2-chains per point (pairs, default) or one k-path "
                         "per point as Laser's generator makes it (path)")
    ap.add_argument("--naive-budget", type=float, default=None, help="CPU seconds per configuration (10)")
    ap.add_argument("--check", type=int, default=None,
                    help="untimed: compare engine and reference at N early and N steady points per config")
    ap.add_argument("--check-budget", type=float, default=10.0,
                    help="CPU seconds of reference evaluation per configuration for --check (10)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"), help="output directory")
    ap.add_argument("--quick", action="store_true", help="smoke run: 200 points, fewer configurations")
    args = ap.parse_args(argv)

    q = args.quick
    args.experiments = [e.strip() for e in args.experiments.split(",") if e.strip()]
    bad = [e for e in args.experiments if e not in EXPERIMENTS]
    if bad:
        ap.error(f"unknown experiments: {', '.join(bad)}")
    args.points = args.points or (200 if q else 2000)
    args.windows = _ints(args.windows) if args.windows else ([1, 20] if q else list(DEFAULT_WINDOWS))
    args.rates = _ints(args.rates) if args.rates else ([200] if q else list(DEFAULT_RATES))
    args.rules = _ints(args.rules) if args.rules else ([10, 20] if q else list(DEFAULT_RULES))
    args.multi_points = args.multi_points or args.points
    args.naive_budget = args.naive_budget if args.naive_budget is not None else (2.0 if q else 10.0)
    args.check = args.check if args.check is not None else (10 if q else 0)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)

    plan = configs(args)
    meta = {
        "points": args.points, "multi_points": args.multi_points, "multi_rate": args.multi_rate,
        "windows": args.windows, "rates": args.rates, "rules": args.rules, "naive_budget": args.naive_budget,
        "join_data": args.join_data, "seed": SEED, "quick": q,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "machine": platform.machine(), "clock": "time.process_time (CPU)",
    }
    bar = tqdm(total=len(plan), file=sys.stderr, unit="config", dynamic_ncols=True) if tqdm else None
    rows: list[dict] = []
    data_key, data = None, None
    for exp, n, k, r, points in plan:
        label = f"{exp} n={n} " + (f"R={r}" if exp == "multi" else f"k={k}")
        if bar is not None:
            bar.set_postfix_str(label)
        else:
            print(f"[{len(rows) + 1}/{len(plan)}] {label}", file=sys.stderr, flush=True)
        gen_key = ("join" if exp == "multi" else exp, k, points)
        if gen_key != data_key:
            data = None
            gc.collect()
            data = generate(gen_key[0], k, points, args.join_data)
            data_key = gen_key
        program = parse_program(program_text(exp, n, r))
        checked = check(program, data, n, args.check, args.check_budget) if args.check else 0
        ours = run_ours(program, data)
        naive = run_naive(program, data, n, args.naive_budget) if args.naive_budget > 0 else None
        ours_us = ours["cpu"] / ours["atoms"] * 1e6
        naive_us = naive["cpu"] / naive["atoms"] * 1e6 if naive and naive["atoms"] else None
        rows.append({
            "experiment": exp, "n": n, "k": k, "R": r, "points": points, "input_atoms": ours["atoms"],
            "ours_cpu_s": round(ours["cpu"], 4), "ours_us_per_atom": round(ours_us, 3),
            "output_changes": ours["changes"],
            "naive_points": naive["points"] if naive else 0,
            "naive_cpu_s": round(naive["cpu"], 4) if naive else None,
            "naive_us_per_atom": round(naive_us, 3) if naive_us is not None else None,
            "ratio": round(naive_us / ours_us, 2) if naive_us is not None else None,
            "naive_lower_bound": bool(naive and naive["bound"]),
            "checked_points": checked,
        })
        if bar is not None:
            bar.update(1)
        # partial results survive an interrupted run
        _write(rows, meta, out_dir)
    if bar is not None:
        bar.close()

    _write(rows, meta, out_dir)
    plot(rows, out_dir / "laser_micro.png", meta)
    table = fmt_table(rows)
    notes = [f"{args.points} time points per configuration"]
    if "multi" in args.experiments and args.multi_points != args.points:
        notes.append(f"multi: {args.multi_points} time points")
    notes.append(f"naive budget {args.naive_budget:g} s CPU per configuration (steady-state points first)")
    notes.append(meta["python"])
    text = table + "\n" + "; ".join(notes) + "\n"
    (out_dir / "laser_micro.txt").write_text(text, encoding="utf-8")
    print(text, end="")
    print(f"wrote {out_dir / 'laser_micro.csv'}, .json, .png, .txt")
    return 0


def _write(rows: list[dict], meta: dict, out_dir: Path) -> None:
    with open(out_dir / "laser_micro.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({c: ("" if r[c] is None else r[c]) for c in COLUMNS})
    with open(out_dir / "laser_micro.json", "w", encoding="utf-8") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    sys.exit(main())
