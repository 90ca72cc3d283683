"""Keyed scale-out on Spark: LUBM by department and a many-sensor stream keyed by sensor, on local[1] and
local[2], with the embedded engine side by side and the cost of one micro-batch.

    python benchmarks/spark_scaleout.py [--univ 5] [--sensors 2000] [--seconds 120] [--repeat 2]

Every configuration runs the same job (same shuffle partitions and buckets); only the cores differ, so the
ratio local[2] / local[1] is the scale-out.  Times are wall clock of the streaming job after the session and
its Python workers are warm (a small job runs first), data generation excluded.  The Spark answers are
checked against the embedded engine's in every run (LUBM also against the official answers at --univ 1).
Writes results/spark/{scaleout.csv, scaleout.json, scaleout.png}.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from rdfstream.api import Engine  # noqa: E402
from rdfstream.backends.spark.session import spark_session, stop_session  # noqa: E402
from rdfstream.lubm import run as lubm  # noqa: E402

CITY = "http://example.org/city/traffic"
GRAPH = "http://example.org/city/sensors"
XSD_INT = "http://www.w3.org/2001/XMLSchema#integer"
QUERY = """REGISTER QUERY busy AS
PREFIX ex: <http://example.org/city#>
SELECT ?s (AVG(?v) AS ?avg) (MAX(?v) AS ?max) (COUNT(?v) AS ?n)
FROM <http://example.org/city/sensors>
FROM STREAM <http://example.org/city/traffic> [RANGE 10s STEP 5s]
WHERE { ?s ex:vehicleCount ?v . ?s ex:limit ?limit FILTER(?v > ?limit) }
GROUP BY ?s
"""


# ---------------------------------------------------------------------------------------------- data


def city_data(directory: Path, sensors: int, seconds: int, per_file: int, seed: int = 7) -> int:
    """A reading per sensor per second (the CityBench traffic shape: many sensors, a few values each),
    ``per_file`` seconds per stream file, and a background graph of the sensors' limits."""
    rng = random.Random(seed)
    stream = directory / "traffic"
    stream.mkdir(parents=True)
    with open(directory / "sensors.ttl", "w") as f:
        f.write("@prefix ex: <http://example.org/city#> .\n")
        for i in range(sensors):
            f.write(f"ex:sensor{i} ex:limit {rng.randrange(20, 60)} ; ex:road ex:road{i % 97} .\n")
    now, triples = time.time(), 0
    for k in range(0, seconds, per_file):
        path = stream / f"part-{k:05d}.nt"
        lines = []
        for second in range(k, min(k + per_file, seconds)):
            for i in range(sensors):
                t = second * 1000 + (i * 997) % 1000  # spread over the second
                lines.append((t, f"{t} <http://example.org/city#sensor{i}> <http://example.org/city#vehicleCount>"
                                 f' "{rng.randrange(80)}"^^<{XSD_INT}> .\n'))
        lines.sort(key=lambda x: x[0])
        path.write_text("".join(line for _, line in lines))
        triples += len(lines)
        os.utime(path, (now + k, now + k))  # Spark takes new files oldest first
    return triples


# ---------------------------------------------------------------------------------------------- runs


def city_engine(directory: Path, **options) -> Engine:
    engine = Engine(t0=0, **options)
    engine.register_graph(GRAPH, str(directory / "sensors.ttl"))
    engine.register_query(QUERY)
    return engine


def canonical(reports) -> list:
    return [(r.query, r.t, Counter(tuple(sorted(row.items())) for row in r.raw_rows)) for r in reports]


def city_embedded(directory: Path) -> tuple[float, list]:
    from rdfstream.formats.rdf_streams import read_stream_file

    engine = city_engine(directory)
    reports = []
    start = time.perf_counter()
    for path in sorted((directory / "traffic").iterdir()):
        current, rows = None, []
        for tr in read_stream_file(str(path)):
            if tr.t != current:
                if rows:
                    engine.push_rows(CITY, rows, current)
                    reports += engine.advance_to(tr.t)
                current, rows = tr.t, []
            rows.append((tr.p, (tr.s, tr.o)))
        if rows:
            engine.push_rows(CITY, rows, current)
    reports += engine.close()
    return time.perf_counter() - start, reports


def city_spark(directory: Path, master: str, partitions: int, buckets: int, per_batch: int) -> tuple[float, list]:
    spark_session(master, partitions)
    with tempfile.TemporaryDirectory() as ck:
        engine = city_engine(directory, backend="spark", master=master, checkpoint=ck, partition_by="?s",
                             buckets=buckets, partitions=partitions, max_files_per_trigger=per_batch)
        start = time.perf_counter()
        reports = engine.run_files({CITY: str(directory / "traffic")})
        return time.perf_counter() - start, reports


def lubm_spark(univ: int, master: str, partitions: int, buckets: int, per_batch: int, queries) -> lubm.Result:
    spark_session(master, partitions)
    return lubm.run_spark(univ, 0, 0, queries, master=master, partitions=partitions, buckets=buckets,
                          files_per_batch=per_batch)


def overhead(directory: Path, master: str, partitions: int, batches: int) -> float:
    """Seconds per micro-batch of the keyed city job when each batch holds one reading."""
    stream = directory / "tiny"
    stream.mkdir(exist_ok=True)
    now = time.time()
    for k in range(batches):
        path = stream / f"t-{k:04d}.nt"
        path.write_text(f"{k * 1000} <http://example.org/city#sensor{k % 7}> <http://example.org/city#vehicleCount>"
                        f' "{50 + k % 30}"^^<{XSD_INT}> .\n')
        os.utime(path, (now + k, now + k))
    spark_session(master, partitions)
    with tempfile.TemporaryDirectory() as ck:
        engine = city_engine(directory, backend="spark", master=master, checkpoint=ck, partition_by="?s",
                             buckets=partitions, partitions=partitions, max_files_per_trigger=1)
        engine.run_files({CITY: str(stream)})  # warm-up: first batches pay for JIT and worker start
    with tempfile.TemporaryDirectory() as ck:
        engine = city_engine(directory, backend="spark", master=master, checkpoint=ck, partition_by="?s",
                             buckets=partitions, partitions=partitions, max_files_per_trigger=1)
        start = time.perf_counter()
        engine.run_files({CITY: str(stream)})
        return (time.perf_counter() - start) / (batches + 1)  # + the closing batch


# ---------------------------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--univ", type=int, default=5)
    parser.add_argument("--queries", default="all")
    parser.add_argument("--sensors", type=int, default=2000)
    parser.add_argument("--seconds", type=int, default=120)
    parser.add_argument("--repeat", type=int, default=2, help="runs per configuration (the best is kept)")
    parser.add_argument("--lubm-batch", type=int, nargs="+", default=[16, 48],
                        help="departments per micro-batch (several: a sweep)")
    parser.add_argument("--city-batch", type=int, nargs="+", default=[3, 6],
                        help="stream files (10 s of readings each) per micro-batch (several: a sweep)")
    parser.add_argument("--only", choices=["city", "lubm"], help="one workload only")
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--buckets", type=int, default=2)
    parser.add_argument("--out", default=str(HERE / "results" / "spark"))
    args = parser.parse_args()
    queries = lubm.parse_query_list(args.queries)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []

    with tempfile.TemporaryDirectory(prefix="rdfstream-bench-") as tmp:
        tmp = Path(tmp)
        city_triples = city_data(tmp / "city", args.sensors, args.seconds, per_file=10)
        print(f"city: {args.sensors} sensors x {args.seconds} s = {city_triples} readings", file=sys.stderr)
        embedded_s, expected = city_embedded(tmp / "city")
        rows.append({"workload": "city", "engine": "embedded", "batch": "-", "seconds": embedded_s,
                     "triples": city_triples, "batches": 1})
        departments = list(lubm.generate(args.univ, 0, 0))  # generated beforehand: not timed
        embedded_lubm = lubm.run(args.univ, 0, 0, queries, departments=departments)
        del departments
        rows.append({"workload": f"lubm{args.univ}", "engine": "embedded", "batch": "-",
                     "seconds": embedded_lubm.seconds, "triples": embedded_lubm.triples, "batches": 1})
        print(f"lubm({args.univ}): {embedded_lubm.departments} departments, {embedded_lubm.triples} triples;"
              f" embedded {embedded_lubm.seconds:.2f} s", file=sys.stderr)
        for master in ("local[1]", "local[2]"):
            stop_session()
            spark_session(master, args.partitions)
            per_batch = overhead(tmp / "city", master, args.partitions, 20)
            rows.append({"workload": "overhead", "engine": f"spark {master}", "batch": "1 reading",
                         "seconds": per_batch, "triples": 1, "batches": 1})
            for batch in args.city_batch if args.only != "lubm" else ():
                best = None
                for _ in range(args.repeat):
                    seconds, reports = city_spark(tmp / "city", master, args.partitions, args.buckets, batch)
                    assert canonical(reports) == canonical(expected), "Spark and embedded answers differ (city)"
                    best = seconds if best is None else min(best, seconds)
                rows.append({"workload": "city", "engine": f"spark {master}", "batch": f"{batch * 10} s",
                             "seconds": best, "triples": city_triples,
                             "batches": -(-args.seconds // (10 * batch))})
            for batch in args.lubm_batch if args.only != "city" else ():
                best = None
                for _ in range(args.repeat):
                    result = lubm_spark(args.univ, master, args.partitions, args.buckets, batch, queries)
                    assert result.answers == embedded_lubm.answers, "Spark and embedded answers differ (LUBM)"
                    best = result.seconds if best is None else min(best, result.seconds)
                rows.append({"workload": f"lubm{args.univ}", "engine": f"spark {master}", "batch": f"{batch} dept",
                             "seconds": best, "triples": embedded_lubm.triples,
                             "batches": -(-embedded_lubm.departments // batch)})
        stop_session()

    for row in rows:
        row["triples_per_s"] = row["triples"] / row["seconds"] if row["workload"] != "overhead" else None
    by = {(r["workload"], r["engine"], r["batch"]): r for r in rows}
    summary = {}
    print(f"{'workload':>10} {'engine':>16} {'batch':>10} {'batches':>7} {'seconds':>9} {'triples/s':>11}"
          f" {'vs local[1]':>11} {'vs embedded':>11}")
    for r in rows:
        base = by.get((r["workload"], "spark local[1]", r["batch"]))
        emb = by.get((r["workload"], "embedded", "-"))
        speed = base["seconds"] / r["seconds"] if base and r["engine"].startswith("spark") else None
        versus = emb["seconds"] / r["seconds"] if emb and r["workload"] != "overhead" else None
        r["speedup_vs_local1"], r["ratio_vs_embedded"] = speed, versus
        if speed and r["engine"] == "spark local[2]":
            summary[f"{r['workload']} ({r['batch']} per batch)"] = speed
        tps = f"{r['triples_per_s']:,.0f}" if r["triples_per_s"] else "-"
        print(f"{r['workload']:>10} {r['engine']:>16} {r['batch']:>10} {r['batches']:>7} {r['seconds']:>9.3f}"
              f" {tps:>11} {(f'{speed:.2f}x' if speed else '-'):>11} {(f'{versus:.2f}x' if versus else '-'):>11}")
    with open(out / "scaleout.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    with open(out / "scaleout.json", "w") as f:
        json.dump({"args": vars(args), "rows": rows, "speedup_local2_over_local1": summary,
                   "cpus": os.cpu_count()}, f, indent=2)
    plot(rows, out / "scaleout.png", args)


def plot(rows: list[dict], path: Path, args) -> None:
    """Throughput per configuration (bars, one panel per workload), local[2]/local[1] above each pair."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    workloads = [w for w in dict.fromkeys(r["workload"] for r in rows) if w != "overhead"]
    fig, axes = plt.subplots(1, len(workloads), figsize=(6 * len(workloads), 4.2))
    for ax, w in zip(axes, workloads, strict=True):
        mine = [r for r in rows if r["workload"] == w]
        labels = [r["engine"] if r["batch"] == "-" else f"{r['engine'].replace('spark ', '')}\n{r['batch']}"
                  for r in mine]
        colors = ["#888888" if r["engine"] == "embedded" else "#6baed6" if "[1]" in r["engine"] else "#2171b5"
                  for r in mine]
        bars = ax.bar(range(len(mine)), [r["triples_per_s"] / 1000 for r in mine], color=colors)
        ax.set_xticks(range(len(mine)), labels, fontsize=8)
        for bar, r in zip(bars, mine, strict=True):
            if r["engine"] == "spark local[2]":
                ax.annotate(f"{r['speedup_vs_local1']:.2f}x", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                            ha="center", va="bottom", fontsize=8)
        ax.set_title(w)
        ax.set_ylabel("thousand triples / s (wall)")
    fig.suptitle(f"rdfstream on Spark, keyed: local[1] vs local[2] ({args.partitions} partitions, {args.buckets}"
                 " buckets); embedded engine in grey")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
