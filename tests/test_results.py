"""Result writers: documents read back by rdflib's parsers give the same results; SPARQL JSON equals rdflib's."""

from __future__ import annotations

import io
import json
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import XSD, BNode, Graph, Literal, URIRef, Variable, plugin
from rdflib.compare import isomorphic
from rdflib.query import Result, ResultParser, ResultSerializer
from rdflib.serializer import Serializer

from rdfstream.errors import UsageError
from rdfstream.formats.ntriples import parse_term
from rdfstream.formats.results import (
    ASK_FORMATS,
    CONSTRUCT_FORMATS,
    RESULT_FORMATS,
    SELECT_FORMATS,
    ask_document,
    construct_document,
    report_line,
    report_line_construct,
    select_document,
    sparql_json,
    sparql_json_ask,
)
from rdfstream.rdfterms import from_rdflib, to_rdflib
from rdfstream.terms import format_decimal

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # ill-typed literals on purpose

EX = "http://ex.org/"
texts = st.text(st.one_of(st.characters(blacklist_categories=("Cs", "Cc")), st.sampled_from('\n\t"\\\u2028')),
                max_size=6)
iris = st.one_of(st.sampled_from([f"<{EX}a>", f"<{EX}é#x>", "<urn:x>"]),
                 st.text(st.characters(whitelist_categories=("L", "N")), max_size=5).map(lambda s: f"<{EX}{s}>"))
bnodes = st.from_regex(r"[a-z][a-z0-9]{0,3}", fullmatch=True).map(lambda s: f"_:{s}")
literals = st.one_of(
    texts.map(Literal),
    st.tuples(texts, st.sampled_from(["en", "fr-be"])).map(lambda p: Literal(p[0], lang=p[1])),
    st.tuples(st.one_of(texts, st.sampled_from(["05", "1.50", "1e3", "true", "2024-01-01T00:00:00Z"])),
              st.sampled_from([XSD.string, XSD.double, XSD.boolean, XSD.dateTime, URIRef(f"{EX}dt")]))
    .map(lambda p: Literal(p[0], datatype=p[1])),
).map(from_rdflib)  # constants as the engine holds them: read from RDF
decimals = st.decimals(allow_nan=False, allow_infinity=False, places=3).map(lambda d: Decimal(format_decimal(d)))
consts = st.one_of(iris, bnodes, literals, st.integers(-10**20, 10**20), decimals,
                   st.sampled_from(["x1", "alarm"]))  # bare LARS names: plain literals


@st.composite
def selects(draw):
    variables = draw(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=4, unique=True))
    rows = draw(st.lists(st.fixed_dictionaries({}, optional={v: consts for v in variables}), max_size=5))
    return variables, rows


def as_rdflib(const):
    return from_rdflib(to_rdflib(const))  # what a constant reads back as: a bare name becomes a plain literal


def canonical(rows: list[dict]) -> list[dict]:
    """Rows with blank nodes relabelled in order of appearance: parsers may rename them."""
    labels: dict[str, str] = {}

    def relabel(c):
        return labels.setdefault(c, f"_:b{len(labels)}") if isinstance(c, str) and c.startswith("_:") else c

    return [{k: relabel(v) for k, v in sorted(row.items())} for row in rows]


def parsed_rows(document: str, fmt: str) -> tuple[list[str], list[dict]]:
    result = Result.parse(io.StringIO(document), format=fmt)
    return [str(v) for v in result.vars], [{str(k): from_rdflib(v) for k, v in row.items()} for row in result.bindings]


@settings(max_examples=100, deadline=None)
@given(selects())
def test_select_round_trip(select):
    variables, rows = select
    expected = canonical([{k: as_rdflib(v) for k, v in row.items()} for row in rows])
    for fmt in ("json", "xml", "tsv"):
        names, got = parsed_rows(select_document(variables, rows, fmt), fmt)
        assert names == variables, fmt
        if fmt == "tsv" and len(variables) == 1:  # an all-unbound row is then an empty line, which rdflib skips
            expected = [row for row in expected if row]
        assert canonical(got) == expected, fmt


def csv_cell(const) -> str:
    """SPARQL CSV: IRIs and literals by their text alone, blank nodes as _:label."""
    term = to_rdflib(const)
    return f"_:{term}" if isinstance(term, BNode) else str(term)


@settings(max_examples=40, deadline=None)
@given(selects())
def test_select_csv_round_trip(select):
    variables, rows = select
    result = Result.parse(io.StringIO(select_document(variables, rows, "csv")), format="csv")
    assert [str(v) for v in result.vars] == variables
    read_back = [{str(k): str(v) for k, v in row.items()} for row in result.bindings]  # a blank node keeps "_:"
    # an empty string reads back as unbound: the format cannot tell them apart
    assert read_back == [{k: csv_cell(v) for k, v in row.items() if csv_cell(v) != ""} for row in rows]


@settings(max_examples=100, deadline=None)
@given(selects())
def test_sparql_json_equals_rdflibs(select):
    variables, rows = select
    result = Result("SELECT")
    result.vars = [Variable(v) for v in variables]
    result.bindings = [{Variable(k): to_rdflib(v) for k, v in row.items()} for row in rows]
    assert sparql_json(variables, rows) == json.loads(result.serialize(format="json"))
    assert json.loads(select_document(variables, rows, "json")) == sparql_json(variables, rows)


@pytest.mark.parametrize("value", [True, False])
def test_ask(value):
    result = Result("ASK")
    result.askAnswer = value
    assert sparql_json_ask(value) == json.loads(result.serialize(format="json"))
    for fmt in ("json", "xml"):
        assert Result.parse(io.StringIO(ask_document(value, fmt)), format=fmt).askAnswer is value
    word = "true" if value else "false"
    assert ask_document(value, "csv") == word + "\r\n" and ask_document(value, "tsv") == word + "\n"


triples = st.lists(st.tuples(st.one_of(iris, bnodes), iris, consts), max_size=6)


@settings(max_examples=100, deadline=None)
@given(triples)
def test_construct_round_trip(triples):
    expected = Graph()
    for s, p, o in triples:
        expected.add((to_rdflib(s), to_rdflib(p), to_rdflib(o)))
    for fmt, parse_as in (("nt", "nt"), ("ttl", "turtle"), ("turtle", "turtle")):
        document = construct_document(triples, fmt, {"ex": EX})
        assert isomorphic(Graph().parse(data=document, format=parse_as), expected), fmt


def test_construct_keeps_order_and_prefixes_and_drops_non_rdf():
    triples = [(f"<{EX}b>", f"<{EX}p>", 2), ('"lit"', f"<{EX}p>", 1), (f"<{EX}a>", f"<{EX}p>", "x1"),
               (f"<{EX}a>", "_:p", 1)]
    assert construct_document(triples, "nt").splitlines() == [
        f'<{EX}b> <{EX}p> "2"^^<http://www.w3.org/2001/XMLSchema#integer> .', f'<{EX}a> <{EX}p> "x1" .']
    turtle = construct_document(triples, "ttl", {"ex": EX})
    assert f"@prefix ex: <{EX}> ." in turtle and "ex:b ex:p 2 ." in turtle


@settings(max_examples=100, deadline=None)
@given(selects(), triples, texts)
def test_report_lines(select, triples, query):
    variables, rows = select
    line = report_line(query, 10_000, sparql_json(variables, rows))
    assert len(line.splitlines()) == 1 and not line.endswith("\n")
    assert json.loads(line) == {"query": query, "t": 10_000, "results": sparql_json(variables, rows)}
    line = report_line_construct(query, 7, triples)
    assert len(line.splitlines()) == 1
    record = json.loads(line)
    assert (record["query"], record["t"], len(record["triples"])) == (query, 7, len(triples))
    for written, triple in zip(record["triples"], triples, strict=True):
        assert [parse_term(term) for term in written] == [(as_rdflib(c), len(term)) for c, term in
                                                           zip(triple, written, strict=True)]


def test_report_line_layout():
    line = report_line("q", 10000, sparql_json_ask(True))
    assert line == '{"query":"q","t":10000,"results":{"head":{},"boolean":true}}'
    assert report_line_construct("q", 1, [(f"<{EX}a>", f"<{EX}p>", '"x"@en')]) == (
        f'{{"query":"q","t":1,"triples":[["<{EX}a>","<{EX}p>","\\"x\\"@en"]]}}')


def test_formats_and_errors():
    assert set(RESULT_FORMATS) == {*SELECT_FORMATS, *ASK_FORMATS, *CONSTRUCT_FORMATS}
    rdflib_names = {p.name for kind in (ResultSerializer, ResultParser, Serializer) for p in plugin.plugins(kind=kind)}
    assert set(RESULT_FORMATS.values()) <= rdflib_names  # the media types rdflib registers its plugins under
    with pytest.raises(UsageError, match=r"unknown SELECT result format 'nt' \(known: json, xml, csv, tsv\)"):
        select_document(["a"], [], "nt")
    with pytest.raises(UsageError, match="unknown CONSTRUCT result format"):
        construct_document([], "json")
    with pytest.raises(ValueError, match="binds b, not among the variables a"):
        sparql_json(["a"], [{"b": 1}])
    with pytest.raises(TypeError):
        ask_document(1, "json")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        sparql_json(["a"], [{"a": True}])  # type: ignore[dict-item]
