"""The C-SPARQL front end and `rdfstream query`: golden errors, explain → run, reports by hand, the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rdfstream.api import Engine
from rdfstream.cli import main

GOLDEN = Path(__file__).parent / "golden" / "csparql_errors"
ERROR_CASES = sorted(GOLDEN.glob("*.rq"))
EX = "http://ex.org/"


@pytest.mark.parametrize("path", ERROR_CASES, ids=lambda p: p.stem)
def test_golden_errors(path: Path, capsys, monkeypatch) -> None:
    """Each .err holds the exit code and the exact one-line message, written by hand."""
    code_line, message = path.with_suffix(".err").read_text().splitlines()
    monkeypatch.chdir(GOLDEN)
    assert main(["explain", path.name]) == int(code_line.split()[1])
    assert capsys.readouterr().err.strip() == message


def test_golden_cases_exist() -> None:
    assert len(ERROR_CASES) >= 12


# ------------------------------------------------------------------------------------------ reports by hand


def test_sliding_window_reports_by_hand(tmp_path: Path, capsys) -> None:
    """RANGE 3s STEP 1s from t0 = 0: closes at 3000, 4000, …; [c−3000, c); empty windows report nothing."""
    query = tmp_path / "q.rq"
    query.write_text(f"REGISTER QUERY q AS SELECT ?s ?o FROM STREAM <{EX}s> [RANGE 3s STEP 1s]"
                     f" WHERE {{ ?s <{EX}p> ?o }}")
    stream = tmp_path / "s.nt"
    stream.write_text(f"500 <{EX}a> <{EX}p> <{EX}b> .\n2999 <{EX}c> <{EX}p> <{EX}d> .\n"
                      f"3000 <{EX}e> <{EX}p> <{EX}f> .\n")
    assert main(["query", str(query), "--stream", f"{EX}s={stream}", "--t0", "0"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]

    def rows(*pairs):
        return [{"s": {"type": "uri", "value": EX + s}, "o": {"type": "uri", "value": EX + o}} for s, o in pairs]

    got = [(x["query"], x["t"], sorted(x["results"]["results"]["bindings"], key=json.dumps)) for x in lines]
    want = [
        ("q", 3000, rows(("a", "b"), ("c", "d"))),  # [0, 3000)
        ("q", 4000, rows(("c", "d"), ("e", "f"))),  # [1000, 4000): a(500) left, e(3000) entered
        ("q", 5000, rows(("c", "d"), ("e", "f"))),
        ("q", 6000, rows(("e", "f"))),  # [3000, 6000)
    ]
    assert got == [(q, t, sorted(r, key=json.dumps)) for q, t, r in want]


def test_tumbling_rows_and_triples_windows_by_hand() -> None:
    s, p = f"<{EX}s>", f"<{EX}p>"
    engine = Engine(t0=0)
    tumbling = engine.register_query(f"REGISTER QUERY tum AS SELECT ?o FROM STREAM {s} [RANGE 2s TUMBLING]"
                                     f" WHERE {{ ?x {p} ?o }}")
    rows = engine.register_query(f"REGISTER QUERY rows AS SELECT ?o FROM STREAM {s} [ROWS 2] WHERE {{ ?x {p} ?o }}")
    batch = engine.register_query(f"REGISTER QUERY tri AS SELECT ?o FROM STREAM {s} [RANGE TRIPLES 3]"
                                  f" WHERE {{ ?x {p} ?o }}")
    got: dict[str, list] = {"tum": [], "rows": [], "tri": []}
    for h in (tumbling, rows, batch):
        h.add_consumer(lambda r: got[r.query].append((r.t, sorted(row["o"] for row in r.raw_rows))))
    data = {100: [1, 2], 1500: [3], 2500: [4, 5], 5000: [6]}
    for t, values in data.items():
        engine.push_rows(f"{EX}s", [(p, (f"<{EX}x>", v)) for v in values], t)
        engine.advance_to(t + 1)
    engine.close()
    assert got["tum"] == [(2000, [1, 2, 3]), (4000, [4, 5]), (6000, [6])]  # [0,2000) [2000,4000) [4000,6000)
    assert got["rows"] == [(100, [1, 2]), (1500, [2, 3]), (2500, [4, 5]), (5000, [5, 6])]
    assert got["tri"] == [(1500, [1, 2, 3]), (5000, [4, 5, 6])]  # batches end with their 3rd triple


def test_construct_stream_feeds_another_query() -> None:
    """REGISTER STREAM output enters the stream named after the query, stamped with its report time."""
    p, q = f"<{EX}p>", f"<{EX}q>"
    engine = Engine(t0=0)
    engine.register_query(f"REGISTER STREAM derived AS CONSTRUCT {{ ?o {q} ?s }} FROM STREAM <{EX}s>"
                          f" [RANGE 1s TUMBLING] WHERE {{ ?s {p} ?o }}")
    reader = engine.register_query(f"REGISTER QUERY reader AS SELECT ?a ?b FROM STREAM <derived> [ROWS 10]"
                                   f" WHERE {{ ?a {q} ?b }}")
    seen = []
    reader.add_consumer(lambda r: seen.append((r.t, sorted((row["a"], row["b"]) for row in r.raw_rows))))
    engine.push_rows(f"{EX}s", [(p, (f"<{EX}a>", f"<{EX}b>"))], 200)
    engine.push_rows(f"{EX}s", [(p, (f"<{EX}c>", f"<{EX}d>"))], 1200)
    engine.close()
    assert seen == [(1000, [(f"<{EX}b>", f"<{EX}a>")]),
                    (2000, [(f"<{EX}b>", f"<{EX}a>"), (f"<{EX}d>", f"<{EX}c>")])]


def test_istream_and_dstream() -> None:
    p = f"<{EX}p>"
    text = f"SELECT ?o FROM STREAM <{EX}s> [RANGE 2s STEP 1s] WHERE {{ ?x {p} ?o }}"
    out = {}
    for policy in ("rstream", "istream", "dstream"):
        engine = Engine(t0=0)
        h = engine.register_query(text, report=policy)
        out[policy] = []
        h.add_consumer(lambda r, k=policy: out[k].append((r.t, sorted(row["o"] for row in r.raw_rows))))
        for t, v in ((0, 1), (1000, 2), (2000, 3)):
            engine.push_rows(f"{EX}s", [(p, (f"<{EX}x>", v))], t)
        engine.close()
    assert out["rstream"] == [(2000, [1, 2]), (3000, [2, 3]), (4000, [3])]
    assert out["istream"] == [(2000, [1, 2]), (3000, [3]), (4000, [])]
    assert out["dstream"] == [(2000, []), (3000, [1]), (4000, [2])]


def test_static_graph_only_where_named() -> None:
    from rdflib import Graph, URIRef

    g = Graph()
    g.add((URIRef(EX + "a"), URIRef(EX + "label"), URIRef(EX + "A")))
    engine = Engine(t0=0)
    engine.register_graph(EX + "g", g)
    with_g = engine.register_query(f"REGISTER QUERY with_g AS SELECT ?l FROM <{EX}g> FROM STREAM <{EX}s>"
                                   f" [RANGE 1s TUMBLING] WHERE {{ ?x <{EX}p> ?y . ?x <{EX}label> ?l }}")
    without = engine.register_query(f"REGISTER QUERY without AS SELECT ?l FROM STREAM <{EX}s> [RANGE 1s TUMBLING]"
                                    f" WHERE {{ ?x <{EX}p> ?y . ?x <{EX}label> ?l }}")
    got = {}
    for h in (with_g, without):
        h.add_consumer(lambda r: got.setdefault(r.query, []).append([row.get("l") for row in r.raw_rows]))
    engine.push_rows(f"{EX}s", [(f"<{EX}p>", (f"<{EX}a>", 1))], 10)
    engine.close()
    assert got == {"with_g": [[f"<{EX}A>"]], "without": [[]]}


def test_named_streams_and_graphs() -> None:
    """FROM NAMED STREAM / FROM NAMED: GRAPH <iri> reads one of them, GRAPH ?g each, binding ?g; the default
    graph holds only the unnamed windows."""
    from rdflib import Graph, URIRef

    g = Graph()
    g.add((URIRef(EX + "a"), URIRef(EX + "in"), URIRef(EX + "G")))
    engine = Engine(t0=0)
    engine.register_graph(EX + "g", g)
    h = engine.register_query(
        f"REGISTER QUERY q AS SELECT ?g ?s ?o FROM STREAM <{EX}s1> [RANGE 1s TUMBLING]"
        f" FROM NAMED STREAM <{EX}s2> [RANGE 1s TUMBLING] FROM NAMED <{EX}g>"
        f" WHERE {{ {{ ?s ?x ?o }} UNION {{ GRAPH ?g {{ ?s ?x ?o }} }} UNION {{ GRAPH <{EX}s1> {{ ?s ?x ?o }} }} }}")
    got = []
    h.add_consumer(lambda r: got.append((r.t, sorted(((row.get("g"), row["s"], row["o"]) for row in r.raw_rows),
                                                     key=str))))
    engine.push_rows(f"{EX}s1", [(f"<{EX}p>", (f"<{EX}a>", 1))], 0)
    engine.push_rows(f"{EX}s2", [(f"<{EX}p>", (f"<{EX}b>", 2))], 10)
    engine.close()
    # s1 is not a named graph, so GRAPH <s1> matches nothing
    assert got == [(1000, sorted([(None, f"<{EX}a>", 1), (f"<{EX}g>", f"<{EX}a>", f"<{EX}G>"),
                                  (f"<{EX}s2>", f"<{EX}b>", 2)], key=str))]


def test_unregistered_graph_is_refused() -> None:
    from rdfstream.errors import UsageError

    with pytest.raises(UsageError, match="not registered"):
        Engine().register_query(f"SELECT * FROM <file:///etc/passwd> FROM STREAM <{EX}s> [RANGE 1s TUMBLING]"
                                " WHERE { ?s ?p ?o }")


# ------------------------------------------------------------------------------------------ explain -> run

_QUERIES = [
    f"REGISTER QUERY q AS SELECT ?x ?z FROM STREAM <{EX}s> [RANGE {{w}}ms STEP {{d}}ms]"
    f" WHERE {{{{ ?x <{EX}p> ?y . ?y <{EX}p> ?z }}}}",
    f"REGISTER QUERY q AS SELECT DISTINCT ?x ?q FROM STREAM <{EX}s> [RANGE {{w}}ms STEP {{d}}ms]"
    f" WHERE {{{{ ?x ?q <{EX}b> }}}}",
]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    which=st.sampled_from(range(len(_QUERIES))),
    w=st.integers(1, 6), d=st.integers(1, 4), t0=st.integers(0, 3),
    data=st.lists(st.tuples(st.integers(0, 20), st.sampled_from("abc"), st.sampled_from("pq"),
                            st.sampled_from("abc")), max_size=12),
)
def test_explained_rules_give_the_same_answers(tmp_path_factory, which, w, d, t0, data) -> None:
    """`rdfstream explain` prints LARS rules; `rdfstream run` of them has, at tick c−1, the answers of the
    report at c (as a set), and nothing where no report is made."""
    tmp = tmp_path_factory.mktemp("x")
    text = _QUERIES[which].format(w=w, d=d)
    data = [(t + t0, s, p, o) for t, s, p, o in data]
    engine = Engine(t0=t0)
    handle = engine.register_query(text)
    reports = {}
    handle.add_consumer(lambda r: reports.__setitem__(r.t, {tuple(row.values()) for row in r.raw_rows}))
    by_t: dict[int, list] = {}
    for t, s, p, o in sorted(data):
        by_t.setdefault(t, []).append((f"<{EX}{p}>", (f"<{EX}{s}>", f"<{EX}{o}>")))
    for t, rows in by_t.items():
        engine.push_rows(f"{EX}s", rows, t)
    engine.close()

    (tmp / "q.rq").write_text(text)
    program = tmp / "q.lars"
    with open(program, "w") as out:
        import contextlib

        with contextlib.redirect_stdout(out):
            assert main(["explain", str(tmp / "q.rq"), "--t0", str(t0)]) == 0
    stream = tmp / "s.jsonl"
    stream.write_text("".join(
        json.dumps({"t": t, "stream": f"<{EX}s>", "atoms": [f"{p}({a},{b})" for p, (a, b) in rows]}) + "\n"
        for t, rows in by_t.items()))
    end = max(list(reports) + [t0 + w]) + d
    result = tmp / "out.jsonl"
    assert main(["run", str(program), "--stream", str(stream), "--start", str(t0), "--end", str(end),
                 "-o", str(result)]) == 0
    answers = {}
    for line in result.read_text().splitlines():
        rec = json.loads(line)
        answers[rec["t"]] = {tuple(_args(a)) for a in rec["holds"] if re.match(r"q\(", a)}
    closes = range(t0 + w, end + 1, d)
    for c in closes:
        assert answers.get(c - 1, set()) == reports.get(c, set()), f"close {c}"
    assert set(reports) <= set(closes)


def _args(atom: str) -> list:
    return re.findall(r"<[^>]*>", atom)


# ------------------------------------------------------------------------------------------ CLI


def test_cli_formats_and_directory_output(tmp_path: Path, capsys) -> None:
    query = tmp_path / "q.rq"
    query.write_text(f"REGISTER QUERY q AS SELECT ?s FROM STREAM <{EX}s> [RANGE 1s TUMBLING] WHERE {{ ?s ?p ?o }}")
    stream = tmp_path / "s.csv"
    stream.write_text(f"t,s,p,o\n0,{EX}a,{EX}p,1\n1000,{EX}b,{EX}p,2\n")
    assert main(["query", str(query), "--stream", str(stream), "-f", "csv"]) == 0
    assert capsys.readouterr().out == f"#report query=q t=1000\ns\r\n{EX}a\r\n#report query=q t=2000\ns\r\n{EX}b\r\n"
    outdir = tmp_path / "out"
    outdir.mkdir()
    assert main(["query", str(query), "--stream", str(stream), "-f", "json", "-o", str(outdir)]) == 0
    files = sorted(p.name for p in outdir.iterdir())
    assert files == ["q-1000.srj", "q-2000.srj"]
    doc = json.loads((outdir / "q-2000.srj").read_text())
    assert doc["results"]["bindings"] == [{"s": {"type": "uri", "value": f"{EX}b"}}]


def test_cli_bad_stream_line_names_file_and_line(tmp_path: Path, capsys) -> None:
    query = tmp_path / "q.rq"
    query.write_text(f"SELECT ?s FROM STREAM <{EX}s> [RANGE 1s TUMBLING] WHERE {{ ?s ?p ?o }}")
    stream = tmp_path / "s.nt"
    stream.write_text(f"0 <{EX}a> <{EX}p> <{EX}b> .\n5 <{EX}a> <{EX}p> .\n")
    assert main(["query", str(query), "--stream", f"{EX}s={stream}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{stream}:2:")


def test_cli_unregistered_graph(tmp_path: Path, capsys) -> None:
    query = tmp_path / "q.rq"
    query.write_text(f"SELECT ?s FROM <{EX}g> FROM STREAM <{EX}s> [RANGE 1s TUMBLING] WHERE {{ ?s ?p ?o }}")
    assert main(["query", str(query), "--stream", f"{EX}s={tmp_path / 'none.nt'}"]) == 2
    assert "graph <http://ex.org/g>, which is not registered" in capsys.readouterr().err


def test_bundled_example_runs(capsys) -> None:
    """The README's first command: the rooms query over the bundled sensor stream."""
    root = Path(__file__).resolve().parent.parent / "queries" / "csparql"
    assert main(["query", str(root / "rooms.rq"), "--stream", f"http://example.org/sensors={root / 'sensors.nt'}",
                 "--graph", f"http://example.org/rooms={root / 'rooms.ttl'}"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    # 30 s of readings, RANGE 10s STEP 5s from t0 = 0: closes at 10 s, 15 s, …, 35 s (the last one that sees data)
    assert [x["t"] for x in lines] == [10000, 15000, 20000, 25000, 30000, 35000]
    assert all(len(x["results"]["results"]["bindings"]) == 3 for x in lines)  # three rooms


# ------------------------------------------------------------------------------------------ one engine


def test_queries_and_programs_share_one_engine() -> None:
    """Two queries with the same pattern and window share the literal index and the join plan; a LARS program
    registered beside them reads the same stream."""
    p = f"<{EX}p>"
    text = "REGISTER QUERY {name} AS SELECT ?x ?z FROM STREAM <" + EX + "s> [RANGE 2s STEP 1s]" \
           " WHERE {{ ?x " + p + " ?y . ?y " + p + " ?z }}"
    engine = Engine(t0=0)
    a = engine.register_query(text.format(name="a"))
    b = engine.register_query(text.format(name="b"))
    prog = engine.register_program(f"chain(X, Z) :- [1000] <> {p}(X, Y), [1000] <> {p}(Y, Z).", name="lars")
    got: dict[str, list] = {}
    for h in (a, b, prog):
        h.add_consumer(lambda r: got.setdefault(r.query, []).append(r))
    engine.push_rows(f"{EX}s", [(p, (f"<{EX}1>", f"<{EX}2>")), (p, (f"<{EX}2>", f"<{EX}3>"))], 500)
    engine.close()
    inner = engine.runtime.engine
    assert engine.runtime.queries[0].engine is inner and engine.runtime.queries[1].engine is inner
    plans = [cr for cr in inner.compiled.values() if any(r.head.atom.pred in ("a__b0", "b__b0") for r in cr.rules)]
    assert len(plans) == 1 and len(plans[0].rules) == 2  # one join plan serves both queries
    windows = {spec for spec in inner.literals if spec.pred == p}
    assert len(windows) == 2  # the queries' window (one index) and the program's [1000] window
    rows = [{"x": f"<{EX}1>", "z": f"<{EX}3>"}]
    assert [(r.t, r.raw_rows) for r in got["a"]] == [(2000, rows)]  # the close at 3000 sees [1000, 3000): empty
    assert [(r.t, r.raw_rows) for r in got["b"]] == [(2000, rows)]
    assert got["lars"][0].t == 500 and {str(x) for x in got["lars"][0].added} == {f"chain(<{EX}1>,<{EX}3>)"}


def test_cli_reads_stdin_and_reports_as_data_comes(tmp_path: Path, capsys, monkeypatch) -> None:
    import io

    query = tmp_path / "q.rq"
    query.write_text(f"SELECT ?s FROM STREAM <{EX}s> [RANGE 1s TUMBLING] WHERE {{ ?s ?p ?o }}")
    monkeypatch.setattr("sys.stdin", io.StringIO(f"0 <{EX}a> <{EX}p> <{EX}b> .\n1500 <{EX}c> <{EX}p> <{EX}d> .\n"))
    assert main(["query", str(query), "--stream", "-"]) == 0
    out = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(x["t"], x["results"]["results"]["bindings"][0]["s"]["value"]) for x in out] == [
        (1000, f"{EX}a"), (2000, f"{EX}c")]


def test_api_push_takes_rdflib_terms_and_one_triple() -> None:
    from rdflib import Literal, URIRef

    engine = Engine(t0=0)
    h = engine.register_query(f"SELECT ?o FROM STREAM <{EX}s> [RANGE 1s TUMBLING] WHERE {{ ?s ?p ?o }}")
    engine.push(f"{EX}s", (URIRef(EX + "a"), URIRef(EX + "p"), Literal(7)), 10)
    engine.push(f"{EX}s", [(URIRef(EX + "a"), URIRef(EX + "p"), Literal("x", lang="en"))], 20)
    reports = engine.advance_to(1000)
    assert [r.t for r in reports] == [1000]
    assert sorted(row["o"] for row in reports[0].rows) == sorted([Literal(7), Literal("x", lang="en")])
    assert h.name == "q1"


def test_state_stays_bounded_on_a_long_stream() -> None:
    """Triples older than every window are dropped: the state after 3,000 s equals the state after 300 s."""
    p = f"<{EX}p>"
    engine = Engine(t0=0)
    engine.register_query(f"SELECT ?x ?z FROM STREAM <{EX}s> [RANGE 5s STEP 1s] WHERE {{ ?x {p} ?y . ?y {p} ?z }}")
    engine.register_query(f"SELECT ?x FROM STREAM <{EX}s> [ROWS 20] WHERE {{ ?x {p} ?y }}")
    sizes = {}
    for sec in range(3000):
        rows = [(p, (f"<{EX}n{sec}_{i}>", f"<{EX}n{sec}_{i + 1}>")) for i in range(10)]
        engine.push_rows(f"{EX}s", rows, sec * 1000 + 17)
        engine.advance_to(sec * 1000 + 1000)
        if sec in (299, 2999):
            inner = engine.runtime.engine
            sizes[sec] = (sum(inner.state_size().values()), len(inner.pending), len(engine.runtime.seen))
    assert sizes[2999] == sizes[299]


@pytest.mark.parametrize("text", [
    f"REGISTER QUERY q AS PREFIX ex: <{EX}> SELECT ?s ?o FROM STREAM <{EX}s> [RANGE 10s STEP 1s]"
    f" WHERE {{ ?s ex:p ?o }}",
    f"SELECT * FROM <{EX}g> FROM STREAM <{EX}s> [ROWS 5] FROM STREAM <{EX}t> [ROWS 2]"
    f" WHERE {{ ?s ?p ?o . OPTIONAL {{ ?o <{EX}q> ?z }} }}",
    f"SELECT ?x FROM STREAM <{EX}s> [RANGE TRIPLES 7] WHERE {{ ?x a <{EX}C> ; <{EX}v> 3.5 . _:b <{EX}r> ?x }}",
    f"PREFIX f: <http://larkc.eu/csparql/sparql/jena/ext#> SELECT ?s (MAX(f:timestamp(?s, <{EX}p>, ?o)) AS ?t)"
    f" FROM STREAM <{EX}s> [RANGE 5m TUMBLING] FROM NAMED STREAM <{EX}n> [RANGE 1h STEP 30m]"
    f" WHERE {{ {{ ?s <{EX}p> ?o }} UNION {{ GRAPH ?g {{ ?s ?p ?o }} }} }} GROUP BY ?s",
])
def test_compiled_rules_print_as_native_lars(text: str) -> None:
    """The rules a query compiles to print as native LARS that parses back to the same IR (what explain shows
    is what runs)."""
    from rdfstream.frontends.csparql.compile import compile_query
    from rdfstream.frontends.registry import parse_program

    program = compile_query(text, t0=1234).program
    assert parse_program(str(program)) == program


def test_istream_tells_integer_zero_from_decimal_zero() -> None:
    """AVG of 1 and -1 is the decimal 0; AVG of nothing is the integer 0: different terms, so DStream reports
    the first when the second replaces it (found by the rdflib oracle on a fresh hypothesis database)."""
    v = f"<{EX}v>"
    engine = Engine(t0=0)
    h = engine.register_query(f"SELECT (AVG(?x) AS ?a) FROM STREAM <{EX}s> [RANGE 1s TUMBLING] WHERE {{ ?s {v} ?x }}",
                              report="dstream")
    got = []
    h.add_consumer(lambda r: got.append((r.t, [(type(row["a"]).__name__, row["a"]) for row in r.raw_rows])))
    engine.push_rows(f"{EX}s", [(v, (f"<{EX}a>", 1)), (v, (f"<{EX}b>", -1))], 0)
    engine.push_rows(f"{EX}s", [(f"<{EX}other>", (f"<{EX}a>", 1))], 1000)
    engine.close()
    assert got == [(1000, []), (2000, [("Decimal", 0)])]
