"""The Spark backend (marked ``spark``): the embedded engine's fixtures replayed through Spark Structured
Streaming on ``local[2]``, with one Spark session shared by the whole module.

Expected outputs are never produced by the Spark engine itself: they are the hand-written timeline fixtures,
the reference evaluator, the official LUBM answers, or the embedded engine (itself checked against those).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from rdfstream.cli import main

try:
    from test_cli import reference_lines
except ImportError:  # pragma: no cover - when tests/ is a package
    from tests.test_cli import reference_lines

pytestmark = pytest.mark.spark

HERE = Path(__file__).parent
ROOT = HERE.parent
TIMELINES = HERE / "timelines"
CSPARQL = ROOT / "queries" / "csparql"
SENSORS = "http://example.org/sensors"
ROOMS = f"http://example.org/rooms={CSPARQL / 'rooms.ttl'}"
CITY = "http://example.org/city/traffic"
CITY_GRAPH = "http://example.org/city/sensors"
XSD_INT = "http://www.w3.org/2001/XMLSchema#integer"


@pytest.fixture(scope="module", autouse=True)
def session():
    """One local[2] session for every test here (a session costs seconds to start)."""
    from rdfstream.backends.spark.session import spark_session

    yield spark_session("local[2]")


def cli(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def reports(text: str) -> list[tuple]:
    """JSON-line reports as (query, t, multiset of rows): the rows of a report that several buckets computed
    come in bucket order, so keyed runs are compared as multisets per report."""
    out = []
    for line in text.splitlines():
        r = json.loads(line)
        rows = r["results"]["results"]["bindings"] if "results" in r else r["triples"]
        out.append((r["query"], r["t"], Counter(json.dumps(x, sort_keys=True) for x in rows)))
    return out


# ------------------------------------------------------------------------------------------ LARS programs


@pytest.mark.parametrize("name", sorted(p.stem for p in TIMELINES.glob("*.lars")))
def test_timeline_fixtures_on_spark(name, tmp_path, capsys):
    timeline = json.loads((TIMELINES / f"{name}.timeline.json").read_text())
    out = tmp_path / "out.jsonl"
    code, _, err = cli(["run", str(TIMELINES / f"{name}.lars"), "--stream", str(TIMELINES / f"{name}.jsonl"),
                        "--start", str(timeline["start"]), "--end", str(timeline["end"]), "--engine", "spark",
                        "-o", str(out)], capsys)
    assert code == 0, err
    expected = (TIMELINES / f"{name}.expected.jsonl").read_text().splitlines()
    assert [json.loads(x) for x in out.read_text().splitlines()] == [json.loads(x) for x in expected]


PARTITION_PROGRAMS = {
    "trams": "last(Id, X) :- [#1 by tram(Id, _)] <> tram(Id, X).",
    "at-in-parts": "seen(Id, T) :- [#2 by tram(Id, _)] @T tram(Id, X).\n"
                   "busy(Id) :- [3] <> seen(Id, T), [3] <> tram(Id, Y), not quiet(Id).\n"
                   "quiet(Id) :- [#1 by tram(Id, _)] <> tram(Id, depot).",
    "with-background": "late(Id, X) :- [#2 by tram(Id, _)] <> tram(Id, X), terminus(X).\n"
                       "alarm :- [4] <> late(Id, X).\nterminus(depot). terminus(s3).",
    "two-streams-of-one-key": "moved(Id) :- [#1 by tram(Id, _)] <> tram(Id, X), [#2 by tram(Id, _)] <> tram(Id, Y),"
                              " X != Y.",
}


def tram_stream(path: Path, seed: int, ticks: int = 60, trams: int = 12) -> None:
    rng = random.Random(seed)
    stops = ["s1", "s2", "s3", "depot"]
    with open(path, "w") as f:
        for t in range(ticks):
            atoms = [f"tram(a{rng.randrange(trams)}, {rng.choice(stops)})" for _ in range(rng.randrange(4))]
            f.write(json.dumps({"t": t, "atoms": atoms}) + "\n")


@pytest.mark.parametrize("name", sorted(PARTITION_PROGRAMS))
def test_partition_windows_on_spark_match_the_reference(name, tmp_path, capsys):
    program, stream, out = tmp_path / "p.lars", tmp_path / "s.jsonl", tmp_path / "out.jsonl"
    program.write_text(PARTITION_PROGRAMS[name])
    tram_stream(stream, seed=sorted(PARTITION_PROGRAMS).index(name))
    code, _, err = cli(["run", str(program), "--stream", str(stream), "--engine", "spark", "-o", str(out)], capsys)
    assert code == 0, err
    assert "partitioning by argument 1 of the data atoms: possible" in err  # the run really was keyed
    assert [json.loads(x) for x in out.read_text().splitlines()] == reference_lines(program, stream)


def test_unpartitionable_program_runs_as_one_key_and_says_why(tmp_path, capsys):
    program, stream, out = tmp_path / "p.lars", tmp_path / "s.jsonl", tmp_path / "out.jsonl"
    program.write_text("pair(X, Y) :- [3] <> tram(X, S), [3] <> tram(Y, S), X != Y.")
    tram_stream(stream, seed=7, ticks=30)
    code, _, err = cli(["run", str(program), "--stream", str(stream), "--engine", "spark", "--partition-by", "1",
                        "-o", str(out)], capsys)
    assert code == 0, err
    assert "not possible (the rule joins atoms of different keys" in err
    assert [json.loads(x) for x in out.read_text().splitlines()] == reference_lines(program, stream)


def test_a_timeline_cut_short_by_start_and_end(tmp_path, capsys):
    program, stream = tmp_path / "p.lars", tmp_path / "s.jsonl"
    program.write_text(PARTITION_PROGRAMS["trams"])
    tram_stream(stream, seed=11, ticks=40)
    args = ["run", str(program), "--stream", str(stream), "--start", "5", "--end", "25"]
    code, expected, err = cli(args, capsys)
    assert code == 0, err
    code, _, err = cli([*args, "--engine", "spark", "-o", str(tmp_path / "out.jsonl")], capsys)
    assert code == 0, err
    assert (tmp_path / "out.jsonl").read_text() == expected
    assert "lie outside the timeline" in err  # the atoms after --end are reported, not silently dropped


# ------------------------------------------------------------------------------------------ C-SPARQL queries


def embedded_query(args: list[str], capsys) -> str:
    code, out, err = cli(["query", *args], capsys)
    assert code == 0, err
    return out


def spark_query(args: list[str], out: Path, capsys) -> str:
    code, _, err = cli(["query", *args, "--engine", "spark", "-o", str(out)], capsys)
    assert code == 0, err
    return out.read_text()


CSPARQL_CASES = {
    "rooms": ([str(CSPARQL / "rooms.rq")], []),
    "istream": ([str(CSPARQL / "rooms.rq")], ["--report", "istream"]),
    "composed": ([str(CSPARQL / "too-hot.rq"), str(CSPARQL / "alarms.rq")], []),
}
INLINE = {
    "rows": "REGISTER QUERY r AS PREFIX ex: <http://example.org/> SELECT ?o ?c FROM STREAM <http://example.org/sensors>"
            " [ROWS 4] WHERE { ?o ex:celsius ?c }",
    "triples": "REGISTER QUERY n AS PREFIX ex: <http://example.org/> SELECT (COUNT(*) AS ?k) (MAX(?c) AS ?m)"
               " FROM STREAM <http://example.org/sensors> [RANGE TRIPLES 5] WHERE { ?o ex:celsius ?c }",
    "tumbling-ask": "REGISTER QUERY a AS PREFIX ex: <http://example.org/> ASK FROM STREAM <http://example.org/sensors>"
                    " [RANGE 3s TUMBLING] WHERE { ?o ex:celsius ?c FILTER(?c > 22) }",
}


@pytest.mark.parametrize("case", sorted(CSPARQL_CASES) + sorted(INLINE))
def test_csparql_reports_identical_to_embedded(case, tmp_path, capsys):
    if case in INLINE:
        query = tmp_path / f"{case}.rq"
        query.write_text(INLINE[case])
        queries, extra = [str(query)], []
    else:
        queries, extra = CSPARQL_CASES[case]
    data = tmp_path / "stream"
    data.mkdir()
    shutil.copy(CSPARQL / "sensors.nt", data / "sensors.nt")
    common = [*queries, "--graph", ROOMS, *extra]
    expected = embedded_query([*common, "--stream", f"{SENSORS}={CSPARQL / 'sensors.nt'}"], capsys)
    got = spark_query([*common, "--stream", f"{SENSORS}={data}"], tmp_path / "out.jsonl", capsys)
    assert expected.strip()
    assert got == expected  # one key: byte for byte, rows in the embedded engine's order


CITY_QUERY = """REGISTER QUERY busy AS
PREFIX ex: <http://example.org/city#>
SELECT ?s (AVG(?v) AS ?avg) (COUNT(?v) AS ?n)
FROM <http://example.org/city/sensors>
FROM STREAM <http://example.org/city/traffic> [RANGE 10s STEP 5s]
WHERE { ?s ex:vehicleCount ?v . ?s ex:limit ?l FILTER(?v > ?l) }
GROUP BY ?s
"""


def city(tmp_path: Path, files: int = 4, sensors: int = 30, seed: int = 3) -> tuple[Path, Path, Path]:
    """A many-sensor stream (one file per 15 s) and its background graph of limits."""
    rng = random.Random(seed)
    graph, stream, query = tmp_path / "sensors.ttl", tmp_path / "traffic", tmp_path / "busy.rq"
    stream.mkdir()
    with open(graph, "w") as f:
        f.write("@prefix ex: <http://example.org/city#> .\n")
        for i in range(sensors):
            f.write(f"ex:sensor{i} ex:limit {rng.randrange(20, 60)} .\n")
    now = time.time()
    for k in range(files):
        path = stream / f"part-{k:03d}.nt"
        with open(path, "w") as f:
            for t in range(k * 15000, (k + 1) * 15000, 500):
                for i in rng.sample(range(sensors), 6):
                    f.write(f"{t} <http://example.org/city#sensor{i}> <http://example.org/city#vehicleCount>"
                            f' "{rng.randrange(80)}"^^<{XSD_INT}> .\n')
        os.utime(path, (now + k, now + k))  # Spark takes new files oldest first: the stream's order
    query.write_text(CITY_QUERY)
    return query, graph, stream


def test_keyed_query_by_sensor_equals_embedded(tmp_path, capsys):
    query, graph, stream = city(tmp_path)
    whole = tmp_path / "all.nt"
    whole.write_text("".join(p.read_text() for p in sorted(stream.iterdir())))
    common = [str(query), "--graph", f"{CITY_GRAPH}={graph}"]
    expected = embedded_query([*common, "--stream", f"{CITY}={whole}"], capsys)
    code, _, err = cli(["query", *common, "--stream", f"{CITY}={stream}", "--engine", "spark", "--partition-by", "?s",
                        "--buckets", "4", "--max-files-per-trigger", "2", "-o", str(tmp_path / "out.jsonl")], capsys)
    assert code == 0, err
    assert "partitioning by ?s: possible" in err
    got = (tmp_path / "out.jsonl").read_text()
    assert len(expected.splitlines()) > 5
    assert reports(got) == reports(expected)


def test_query_that_cannot_split_runs_as_one_key(tmp_path, capsys):
    data = tmp_path / "stream"
    data.mkdir()
    shutil.copy(CSPARQL / "sensors.nt", data / "sensors.nt")
    common = [str(CSPARQL / "rooms.rq"), "--graph", ROOMS]
    expected = embedded_query([*common, "--stream", f"{SENSORS}={CSPARQL / 'sensors.nt'}"], capsys)
    code, _, err = cli(["query", *common, "--stream", f"{SENSORS}={data}", "--engine", "spark", "--partition-by",
                        "?room", "-o", str(tmp_path / "out.jsonl")], capsys)
    assert code == 0, err
    assert "partitioning by ?room: not possible" in err
    assert (tmp_path / "out.jsonl").read_text() == expected


def test_api_push_advance_close_on_spark_equals_embedded():
    from rdfstream.api import Engine
    from rdfstream.formats.rdf_streams import read_stream_file

    def make(**options):
        engine = Engine(**options)
        engine.register_graph("http://example.org/rooms", str(CSPARQL / "rooms.ttl"))
        engine.register_query((CSPARQL / "rooms.rq").read_text())
        return engine

    triples = list(read_stream_file(str(CSPARQL / "sensors.nt")))
    outputs = []
    for engine in (make(), make(backend="spark")):
        seen: list[str] = []
        engine.queries[0].add_consumer(lambda r, seen=seen: seen.append(r.jsonl()))
        returned = []
        for tr in triples[: len(triples) // 2]:
            engine.push_rows(SENSORS, [(tr.p, (tr.s, tr.o))], tr.t)
        returned += engine.advance_to(triples[len(triples) // 2].t)
        for tr in triples[len(triples) // 2:]:
            engine.push_rows(SENSORS, [(tr.p, (tr.s, tr.o))], tr.t)
        returned += engine.close()
        assert [r.jsonl() for r in returned] == seen
        outputs.append(seen)
    assert outputs[0] and outputs[1] == outputs[0]


def test_lubm_by_department_on_spark_gives_the_official_answers(capsys):
    code, out, err = cli(["lubm", "run", "--engine", "spark", "--queries", "Q1,Q4,Q6,Q9,Q12,Q14",
                          "--check", str(HERE / "data" / "lubm-answers"), "--progress", "off"], capsys)
    assert code == 0, out + err
    assert "partitioning by @time: possible" in err
    assert out.count("equal") == 6 and "DIFFERENT" not in out


# ------------------------------------------------------------------------------------------ errors


def test_malformed_stream_line_names_file_and_line(tmp_path, capsys):
    data = tmp_path / "stream"
    data.mkdir()
    (data / "a.nt").write_text('0 <http://example.org/o1> <http://example.org/celsius> "20" .\n'
                               "1 <http://example.org/o2> <http://example.org/celsius>\n")
    code, _, err = cli(["query", str(CSPARQL / "rooms.rq"), "--graph", ROOMS, "--stream", f"{SENSORS}={data}",
                        "--engine", "spark"], capsys)
    assert code == 2
    assert f"{data / 'a.nt'}:2:" in err and "Traceback" not in err


def test_a_file_that_goes_back_in_time_is_late(tmp_path, capsys):
    data = tmp_path / "stream"
    data.mkdir()
    (data / "a.nt").write_text('5000 <http://example.org/o1> <http://example.org/celsius> "20" .\n')
    (data / "b.nt").write_text('1000 <http://example.org/o2> <http://example.org/celsius> "21" .\n')
    os.utime(data / "b.nt", (time.time() + 60, time.time() + 60))  # b arrives after a
    code, _, err = cli(["query", str(CSPARQL / "rooms.rq"), "--graph", ROOMS, "--stream", f"{SENSORS}={data}",
                        "--engine", "spark", "--max-files-per-trigger", "1"], capsys)
    assert code == 2
    assert f"{data / 'b.nt'}:1: timestamp 1000 is late" in err


def test_a_socket_stream_needs_follow(capsys):
    code, _, err = cli(["query", str(CSPARQL / "rooms.rq"), "--graph", ROOMS, "--stream",
                        f"{SENSORS}=socket://127.0.0.1:9", "--engine", "spark"], capsys)
    assert code == 2 and "add --follow" in err


def test_a_checkpoint_of_another_job_is_refused(tmp_path, capsys):
    data = tmp_path / "stream"
    data.mkdir()
    shutil.copy(CSPARQL / "sensors.nt", data / "sensors.nt")
    ck = tmp_path / "ck"
    args = ["query", "--graph", ROOMS, "--stream", f"{SENSORS}={data}", "--engine", "spark", "--checkpoint", str(ck)]
    assert cli([*args[:1], str(CSPARQL / "rooms.rq"), *args[1:]], capsys)[0] == 0
    code, _, err = cli([*args[:1], str(CSPARQL / "rooms.rq"), *args[1:], "--report", "istream"], capsys)
    assert code == 2 and "belongs to another job" in err


# ------------------------------------------------------------------------------------------ fault tolerance


def test_kill_and_restart_from_the_checkpoint_gives_identical_output(tmp_path, capsys):
    query, graph, stream = city(tmp_path, files=8)
    files = len(list(stream.iterdir()))
    args = ["query", str(query), "--graph", f"{CITY_GRAPH}={graph}", "--stream", f"{CITY}={stream}",
            "--engine", "spark", "--partition-by", "?s", "--max-files-per-trigger", "1"]
    # the uninterrupted run, in this process
    whole = tmp_path / "whole.jsonl"
    assert cli([*args, "-o", str(whole)], capsys)[0] == 0
    # a run killed (SIGKILL, driver and JVM) after a few micro-batches, then the same command again
    out, ck = tmp_path / "out.jsonl", tmp_path / "ck"
    command = [sys.executable, "-m", "rdfstream.cli", *args, "-o", str(out), "--checkpoint", str(ck)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=env)
    log = ck / "output-log.json"
    deadline = time.time() + 180
    written = 0
    while time.time() < deadline and proc.poll() is None:
        if log.exists():
            written = len(json.loads(log.read_text())["batches"])
            if written >= 3:
                break
        time.sleep(0.05)
    assert proc.poll() is None, proc.stderr.read().decode()
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 3 <= written < files  # killed in the middle of the stream
    assert len(out.read_text()) < len(whole.read_text())  # the killed run had not written everything
    rerun = subprocess.run(command, capture_output=True, env=env, timeout=300)
    assert rerun.returncode == 0, rerun.stderr.decode()
    assert "(resuming)" in rerun.stderr.decode()
    assert out.read_bytes() == whole.read_bytes()  # nothing lost, nothing duplicated


def test_exactly_once_file_replaces_a_replayed_batch(tmp_path):
    from rdfstream.backends.spark.sinks import ExactlyOnceFile

    sink = ExactlyOnceFile(str(tmp_path / "out"), str(tmp_path / "log.json"))
    sink.write(0, "a\n")
    sink.write(1, "b\n")
    with open(tmp_path / "out", "a") as f:  # a crash in the middle of batch 2 left half of its text
        f.write("c-partial")
    sink.write(2, "c\n")
    sink.write(2, "c\n")  # Spark runs batch 2 again after a restart
    sink.write(3, "d\n")
    assert (tmp_path / "out").read_text() == "a\nb\nc\nd\n"


def test_socket_source_for_live_demos():
    """Lines from a TCP socket (Spark's socket source), read until stopped: the reports up to the last
    timestamp equal the embedded engine's, which is advanced to that timestamp."""
    import socket
    import threading

    from rdfstream.api import Engine
    from rdfstream.formats.rdf_streams import read_stream_file

    lines = [x for x in (CSPARQL / "sensors.nt").read_text().splitlines() if x and not x.startswith("#")]
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]

    def serve():
        conn, _ = server.accept()
        conn.sendall(("\n".join(lines) + "\n").encode())
        time.sleep(120)  # keep the connection open: a live stream does not end
        conn.close()

    threading.Thread(target=serve, daemon=True).start()

    def make(**options):
        engine = Engine(t0=0, **options)
        engine.register_graph("http://example.org/rooms", str(CSPARQL / "rooms.ttl"))
        engine.register_query((CSPARQL / "rooms.rq").read_text())
        return engine

    last = int(lines[-1].split()[0])
    embedded = make()
    for tr in read_stream_file(str(CSPARQL / "sensors.nt")):
        embedded.push_rows(SENSORS, [(tr.p, (tr.s, tr.o))], tr.t)
    expected = [r.jsonl() for r in embedded.advance_to(last)]
    assert expected

    spark = make(backend="spark")
    got: list[str] = []
    spark.queries[0].add_consumer(lambda r: got.append(r.jsonl()))
    runner = threading.Thread(target=spark.run_files, args=({SENSORS: f"socket://127.0.0.1:{port}"},),
                              kwargs={"follow": True}, daemon=True)
    runner.start()
    deadline = time.time() + 120
    while len(got) < len(expected) and time.time() < deadline:
        time.sleep(0.2)
    spark.spark.stop()
    runner.join(30)
    server.close()
    assert got == expected


def test_bucket_labels_land_in_the_partitions_spark_puts_them_in(session):
    from pyspark.sql import functions as F

    from rdfstream.backends.spark.keys import balanced_labels, spark_hash_long

    rows = session.range(-500, 3000, 37).select("id", F.hash("id").alias("h")).collect()
    assert all(spark_hash_long(r["id"]) == r["h"] for r in rows)
    labels = balanced_labels(8, 3)
    placed = session.createDataFrame([(x,) for x in labels], "id long").select(F.pmod(F.hash("id"), F.lit(3)))
    assert [r[0] for r in placed.collect()] == [i % 3 for i in range(8)]
