"""Event streams of timestamped named graphs (N-Quads, TriG) and the one-entry-point file reader."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import XSD, BNode, Dataset, Graph, Literal, URIRef

from rdfstream.errors import ParseError, StreamFormatError, UsageError
from rdfstream.formats.ntriples import parse_quad
from rdfstream.formats.rdf_events import read_nquads, read_trig, timestamp_millis
from rdfstream.formats.rdf_streams import STREAM_FORMATS, read_stream, read_stream_file
from rdfstream.rdfterms import from_rdflib

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # ill-typed literals on purpose

EX = "http://ex.org/"
AT = "<http://www.w3.org/ns/prov#generatedAtTime>"
DT = "<http://www.w3.org/2001/XMLSchema#dateTime>"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def quads(text: str, **kw) -> list[tuple]:
    return [(t.t, t.s, t.p, t.o, t.line) for t in read_nquads(text.splitlines(keepends=True), "s.nq", **kw)]


def stamp(graph: str, t: int) -> str:
    return f"<{EX}{graph}> {AT} \"{t}\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n"


def quad(graph: str, obj: str = "o") -> str:
    return f"<{EX}a> <{EX}p> <{EX}{obj}> <{EX}{graph}> .\n"


# -- agreement with rdflib --------------------------------------------------------------------------------------

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
subjects = st.one_of(st.sampled_from([f"{EX}a", f"{EX}é#x", "urn:x"]).map(URIRef),
                     st.sampled_from(["b0", "n1"]).map(BNode))
objects = st.one_of(
    subjects, texts.map(Literal),
    st.tuples(texts, st.sampled_from(["en", "fr-BE", "EN-us"])).map(lambda p: Literal(p[0], lang=p[1])),
    st.tuples(st.one_of(texts, st.integers(-999, 999).map(str), st.sampled_from(["05", "1.50", "1e3", "true"])),
              st.sampled_from([XSD.integer, XSD.decimal, XSD.string, XSD.double, XSD.boolean, XSD.dateTime]))
    .map(lambda p: Literal(p[0], datatype=p[1])),
)
offsets = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))
instants = st.one_of(
    st.integers(-10**13, 10**13).map(lambda ms: (ms, Literal(str(ms), datatype=XSD.integer))),
    st.integers(0, 10**6).map(lambda ms: (ms, Literal(str(ms), datatype=XSD.long))),
    st.datetimes(timezones=st.one_of(st.none(), offsets)).map(
        lambda d: ((d.replace(tzinfo=d.tzinfo or UTC) - EPOCH) // timedelta(milliseconds=1),
                   Literal(d.isoformat(), datatype=XSD.dateTime))),
)
events = st.lists(
    st.tuples(instants, st.lists(st.tuples(subjects, objects), min_size=1, max_size=4), st.booleans()),
    min_size=1, max_size=5)


def nt_line(s, o, graph: str | None) -> str:
    g = Graph()
    g.add((s, URIRef(f"{EX}p"), o))
    line = g.serialize(format="nt").strip()
    return line if graph is None else line[:-1].rstrip() + f" {graph} ."


@settings(max_examples=100, deadline=None)
@given(events, st.booleans(), st.randoms(use_true_random=False))
def test_agrees_with_rdflib(evs, shuffle, rnd):
    """Same quads, graphs and timestamps as rdflib's N-Quads parser; the timestamp line before or after."""
    labels = [f"<{EX}g{i}>" if i % 2 else f"_:g{i}" for i in range(len(evs))]
    order = list(range(len(evs)))
    if shuffle:
        rnd.shuffle(order)
    else:
        order.sort(key=lambda i: evs[i][0][0])
    lines, n_quads = [], 0
    for i in order:
        (_, literal), triples, stamp_first = evs[i]
        stamp_line = f"{labels[i]} {AT} {nt_line(URIRef(f'{EX}x'), literal, None).split(' ', 2)[2]}"
        body = [nt_line(s, o, labels[i]) for s, o in triples]
        n_quads += len(body)
        lines += [stamp_line, *body] if stamp_first else [*body, stamp_line]
    times = [ms for (ms, _), _, _ in evs]
    lateness = max(times) - min(times) if shuffle else 0
    ours = [(t.t, t.s, t.p, t.o) for t in read_nquads([line + "\n" for line in lines], lateness=lateness)]

    context: dict = {}
    dataset = Dataset().parse(data="\n".join(lines), format="nquads", bnode_context=context)
    label_of = {str(node): label for label, node in context.items()}

    def const(term):
        return f"_:{label_of[str(term)]}" if isinstance(term, BNode) else from_rdflib(term)

    expected = {(evs[labels.index(const(g))][0][0], const(s), const(p), const(o))
                for s, p, o, g in dataset.quads() if const(g) in labels}
    assert set(ours) == expected
    assert len(ours) == n_quads
    assert [t for t, *_ in ours] == sorted(t for t, *_ in ours)


@given(st.datetimes(timezones=st.one_of(st.none(), offsets)))
def test_date_times_agree_with_python(d):
    expected = (d.replace(tzinfo=d.tzinfo or UTC) - EPOCH) // timedelta(milliseconds=1)
    assert timestamp_millis(f'"{d.isoformat()}"^^{DT}') == expected


@pytest.mark.parametrize("lex,ms", [
    ("1970-01-01T00:00:00Z", 0), ("1970-01-01T01:00:00+01:00", 0), ("1970-01-01T00:00:00", 0),
    ("1970-01-01T00:00:00.9999Z", 999), ("1969-12-31T23:59:59.9995Z", -1), ("1970-01-01T24:00:00Z", 86_400_000),
    ("2000-02-29T00:00:00-14:00", 951_782_400_000 + 14 * 3_600_000), ("0000-03-01T00:00:00Z", -62_162_035_200_000),
    ("-0001-03-01T00:00:00Z", -62_193_657_600_000), ("12000-01-01T00:00:00Z", 316_516_204_800_000),
])
def test_date_time_edges(lex, ms):
    assert timestamp_millis(f'"{lex}"^^{DT}') == ms


@pytest.mark.parametrize("value", [
    f'"2023-02-29T00:00:00Z"^^{DT}', f'"1970-01-01T24:00:01Z"^^{DT}', f'"1970-01-01T00:00:00+14:30"^^{DT}',
    f'"01970-01-01T00:00:00Z"^^{DT}', f'"1970-01-01"^^{DT}', '"5"', '"5"^^<http://ex.org/dt>', "<http://ex.org/a>",
    '"1970-01-01T00:00:00"^^<http://www.w3.org/2001/XMLSchema#dateTimeStamp>',
])
def test_not_a_timestamp(value):
    with pytest.raises(ValueError, match="must be an xsd:dateTime or an integer literal"):
        timestamp_millis(value)


def test_integer_timestamps():
    assert timestamp_millis(5) == 5
    assert timestamp_millis('"-07"^^<http://www.w3.org/2001/XMLSchema#long>') == -7


# -- order, buffering, lateness ---------------------------------------------------------------------------------


def test_timestamp_may_come_before_or_after_the_quads():
    text = quad("g1", "o1") + quad("g1", "o2") + stamp("g1", 10) + stamp("g2", 20) + quad("g2", "o3")
    assert quads(text) == [(10, f"<{EX}a>", f"<{EX}p>", f"<{EX}o1>", 1), (10, f"<{EX}a>", f"<{EX}p>", f"<{EX}o2>", 2),
                           (20, f"<{EX}a>", f"<{EX}p>", f"<{EX}o3>", 5)]


def test_timestamps_first_do_not_make_later_graphs_late():
    """An event arrives with its first quad, so a header of timestamps is fine."""
    text = stamp("g1", 10) + stamp("g2", 20) + quad("g1") + quad("g2") + quad("g1", "o2")
    with pytest.raises(StreamFormatError, match="s.nq:5:1: timestamp 10 is earlier than 20"):
        quads(text)  # ... but a quad of g1 after g2's is out of order
    assert [t for t, *_ in quads(text, lateness=10)] == [10, 10, 20]


def test_out_of_order_events_and_lateness():
    text = "".join(quad(f"g{t}") + stamp(f"g{t}", t) for t in (10, 30, 20, 5))
    with pytest.raises(StreamFormatError, match=r"s.nq:6:1: timestamp 20 is earlier than 30.*graph <.*g20>"):
        quads(text)
    errors: list = []
    got = quads(text, lateness=15, on_error="skip", errors=errors)
    assert [(t, line) for t, *_, line in got] == [(10, 1), (20, 5), (30, 3)]  # 20 is 10 late, 5 is 25 late
    assert len(errors) == 1 and str(errors[0]).startswith("s.nq:8:1: timestamp 5 is earlier than 15")


def test_missing_timestamp_names_the_graph_and_its_first_line():
    text = stamp("g1", 1) + quad("g1") + f"<{EX}a> <{EX}p> <{EX}o>   <{EX}g2> .\n" + quad("g2")
    with pytest.raises(StreamFormatError) as err:
        quads(text)
    assert str(err.value).startswith(f"s.nq:3:57: named graph <{EX}g2> has no timestamp"), str(err.value)
    errors: list = []
    assert [t for t, *_ in quads(text, on_error="skip", errors=errors)] == [1]
    assert len(errors) == 1


def test_conflicting_and_malformed_timestamps():
    errors: list = []
    text = (quad("g1") + stamp("g1", 1) + stamp("g1", 1) + stamp("g1", 2) + quad("g2")
            + f'<{EX}g2> {AT} "yesterday" .\n')
    got = quads(text, on_error="skip", errors=errors)
    assert [t for t, *_ in got] == [1]
    assert [str(e).split(": ", 1)[0] for e in errors] == ["s.nq:4:1", "s.nq:6:64"]
    assert "already has the timestamp 1 (line 2)" in str(errors[0])
    assert "must be an xsd:dateTime" in str(errors[1])  # and no missing-timestamp error for g2 as well


def test_timestamp_lines_however_written():
    escaped = AT.replace("generatedAtTime", "generated\\u0041tTime")  # misses the fast path, same predicate
    text = (quad("g1") + f"<{EX}g1> {AT} \"1970-01-01T00:00:00.002Z\"^^{DT} . # two ms\n"
            + quad("g2") + f"_:x <{EX}p> <{EX}o> .\n"
            + f"<{EX}g2> {escaped} \"3\"^^<http://www.w3.org/2001/XMLSchema#int> .\n"
            + quad("g3") + f"<{EX}g3> {AT} <{EX}noon> .\n")
    errors: list = []
    assert [t for t, *_ in quads(text, on_error="skip", errors=errors)] == [2, 3]
    assert len(errors) == 1 and str(errors[0]).startswith("s.nq:7:64: the timestamp must be an xsd:dateTime")


def test_other_default_graph_triples_are_metadata():
    text = f"<{EX}g1> <{EX}source> <{EX}sensor1> .\n" + quad("g1") + stamp("g1", 3)
    assert [t for t, *_ in quads(text)] == [3]


@pytest.mark.parametrize("line,where", [
    (f'"lit" <{EX}p> <{EX}o> <{EX}g> .', "s.nq:2:1: the subject must be an IRI or a blank node"),
    (f"<{EX}a> _:p <{EX}o> <{EX}g> .", "s.nq:2:19: the predicate must be an IRI"),
    (f'<{EX}a> <{EX}p> <{EX}o> "g" .', "s.nq:2:55: the graph label must be an IRI or a blank node"),
    (f"<{EX}a> <{EX}p> <{EX}o> <{EX}g>", "s.nq:2:72: expected '.' after the graph label"),
    (f"<{EX}a> <{EX}p> <{EX}o> <{EX}g> . extra", "s.nq:2:75: unexpected text"),
    (f"<{EX}a> <{EX}p> .", "s.nq:2:37: expected an N-Triples term as object"),
])
def test_malformed_lines_name_line_and_column(line, where):
    text = stamp("g", 1) + line + "\n"
    with pytest.raises(StreamFormatError) as err:
        quads(text)
    assert str(err.value).startswith(where), str(err.value)
    errors: list = []
    assert quads(text, on_error="skip", errors=errors) == [] and len(errors) == 1


def test_parse_quad():
    assert parse_quad(f"_:s <{EX}p> \"x\"@en _:g . # note") == ("_:s", f"<{EX}p>", '"x"@en', "_:g")
    assert parse_quad(f"<{EX}s> <{EX}p> \"5\"^^<http://www.w3.org/2001/XMLSchema#integer> .")[2:] == (5, None)
    with pytest.raises(ParseError):
        parse_quad("")


# -- TriG -------------------------------------------------------------------------------------------------------

TRIG = f"""@prefix ex: <{EX}> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix prov: <http://www.w3.org/ns/prov#> .

ex:g1 {{ ex:a ex:temp 21 ; ex:label "warm"@en . }}
ex:g1 prov:generatedAtTime "2024-05-01T12:00:01Z"^^xsd:dateTime .

GRAPH <{EX}g2> {{
  ex:a ex:temp 19 .
}}
ex:g2 prov:generatedAtTime "2024-05-01T12:00:00Z"^^xsd:dateTime ; ex:by ex:sensor .
"""


def test_trig_two_graphs_in_timestamp_order():
    got = [(t.t, t.s, t.p, t.o, t.line) for t in read_trig(TRIG, "s.trig")]
    t0 = (datetime(2024, 5, 1, 12, tzinfo=UTC) - EPOCH) // timedelta(milliseconds=1)
    assert got[0] == (t0, f"<{EX}a>", f"<{EX}temp>", 19, 8)
    assert sorted(got[1:], key=str) == [(t0 + 1000, f"<{EX}a>", f"<{EX}label>", '"warm"@en', 5),
                                        (t0 + 1000, f"<{EX}a>", f"<{EX}temp>", 21, 5)]
    dataset = Dataset().parse(data=TRIG, format="trig")  # the same triples as rdflib's own reading
    named = {(from_rdflib(s), from_rdflib(p), from_rdflib(o)) for s, p, o, g in dataset.quads() if "ex.org/g" in g}
    assert {(s, p, o) for _, s, p, o, _ in got} == named


def test_trig_missing_timestamp_and_syntax_error():
    with pytest.raises(StreamFormatError, match=rf"s.trig:3:1: named graph <{EX}g3> has no timestamp"):
        list(read_trig(f"@prefix ex: <{EX}> .\n\nex:g3 {{ ex:a ex:p ex:b }}\n", "s.trig"))
    with pytest.raises(StreamFormatError, match=r"s.trig:3:\d+: TriG syntax error"):
        list(read_trig(f"@prefix ex: <{EX}> .\nex:g {{ ex:a ex:p ex:b . }}\nex:g2 {{ ex:a ex:p }}\n", "s.trig",
                       on_error="skip"))


# -- one entry point for every format ---------------------------------------------------------------------------


def test_read_stream_file_by_extension(tmp_path):
    nq = quad("g1") + stamp("g1", 7)
    files = {"s.nt": f"7 <{EX}a> <{EX}p> <{EX}o> .\n", "s.tnt": f"7 <{EX}a> <{EX}p> <{EX}o> .\n",
             "s.csv": f"7,{EX}a,{EX}p,{EX}o\n", "s.jsonl": f'{{"t": 7, "s": "{EX}a", "p": "{EX}p", "o": "{EX}o"}}\n',
             "s.ndjson": f'{{"t": 7, "s": "{EX}a", "p": "{EX}p", "o": "{EX}o"}}\n', "s.nq": nq, "s.NQUADS": nq,
             "s.trig": f"<{EX}g1> {{ <{EX}a> <{EX}p> <{EX}o> }}\n<{EX}g1> {AT} 7 .\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        got = [(t.t, t.s, t.p, t.o) for t in read_stream_file(str(tmp_path / name))]
        assert got == [(7, f"<{EX}a>", f"<{EX}p>", f"<{EX}o>")], name
    (tmp_path / "s.txt").write_text(nq)
    assert len(list(read_stream_file(str(tmp_path / "s.txt"), "nquads"))) == 1
    assert len(list(read_stream_file(str(tmp_path / "s.txt"), "nq"))) == 1  # an extension names its format too
    assert set(STREAM_FORMATS) == {"nt", "csv", "jsonl", "nquads", "trig"}
    assert len(list(read_stream(nq.splitlines(), "nquads"))) == 1


def test_read_stream_file_errors(tmp_path):
    (tmp_path / "s.txt").write_text("")
    with pytest.raises(StreamFormatError, match=r"known: \.nt \(nt\).*\.trig \(trig\)"):
        read_stream_file(str(tmp_path / "s.txt"))
    with pytest.raises(UsageError, match="cannot read stream file"):
        read_stream_file(str(tmp_path / "missing.nq"))
    with pytest.raises(UsageError, match="cannot read stream file"):
        read_stream_file(str(tmp_path), "nquads")
    with pytest.raises(UsageError, match="on_error"):
        read_stream_file(str(tmp_path / "s.txt"), "nt", on_error="ignore")
    (tmp_path / "bad.nq").write_bytes(b"\xef\xbb\xbf" + stamp("g1", 1).encode() + b"<http://ex.org/\xff> .\n")
    with pytest.raises(StreamFormatError, match=r"bad.nq:2:16: not UTF-8"):
        list(read_stream_file(str(tmp_path / "bad.nq")))
    (tmp_path / "late.nq").write_text(quad("g1") + stamp("g1", 9) + quad("g2") + stamp("g2", 1))
    errors: list = []
    assert len(list(read_stream_file(str(tmp_path / "late.nq"), on_error="skip", errors=errors))) == 1
    assert str(errors[0]).startswith(f"{tmp_path / 'late.nq'}:4:1: timestamp 1 is earlier than 9")
