"""The fast N-Triples term reader agrees exactly with rdflib's N-Triples parser."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import XSD, BNode, Graph, Literal, URIRef

from rdfstream.errors import ParseError
from rdfstream.formats.ntriples import parse_triple
from rdfstream.rdfterms import from_rdflib

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # ill-typed literals on purpose

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=10)
subjects = st.one_of(st.sampled_from(["http://ex.org/a", "http://ex.org/é#x", "urn:x"]).map(URIRef),
                     st.sampled_from(["b0", "n1"]).map(BNode))
datatypes = st.sampled_from([XSD.integer, XSD.decimal, XSD.string, XSD.double, XSD.boolean, XSD.int,
                             XSD.dateTime, URIRef("http://ex.org/dt")])
lexicals = st.one_of(texts, st.integers(-10**6, 10**6).map(str),
                     st.sampled_from(["05", "-0", "1.50", "1.0", "1e3", "true", "1", "2024-01-01T00:00:00Z"]))
objects = st.one_of(
    subjects, texts.map(Literal),
    st.tuples(texts, st.sampled_from(["en", "fr-BE", "EN-us", "de"])).map(lambda p: Literal(p[0], lang=p[1])),
    st.tuples(lexicals, datatypes).map(lambda p: Literal(p[0], datatype=p[1])),
)


@settings(max_examples=300)
@given(subjects, objects)
def test_agrees_with_rdflib(s, o):
    graph = Graph()
    graph.add((s, URIRef("http://ex.org/p"), o))
    line = graph.serialize(format="nt").strip()
    reparsed = Graph().parse(data=line, format="nt")
    (rs, rp, ro), = list(reparsed)
    ours = parse_triple(line)
    for mine, theirs in zip(ours, (rs, rp, ro), strict=True):
        if isinstance(theirs, BNode):  # rdflib gives blank nodes fresh labels when it parses
            assert type(mine) is str and mine.startswith("_:")
        else:
            assert mine == from_rdflib(theirs)


def test_escapes_and_numbers():
    s, p, o = parse_triple('<http://ex.org/a> <http://ex.org/p> "tab\\there \\"q\\" \\u00e9" .')
    assert o == '"tab\\there \\"q\\" é"'
    assert parse_triple('_:b <http://ex.org/p> "42"^^<http://www.w3.org/2001/XMLSchema#integer> .')[2] == 42


@pytest.mark.parametrize("text,col,what", [
    ("<http://ex.org/a> <http://ex.org/p> .", 37, "object"),
    ("<http://ex.org/a> oops <http://ex.org/o> .", 19, "predicate"),
    ("<http://ex.org/a> <http://ex.org/p> <http://ex.org/o>", 54, "'.'"),
    ('<http://ex.org/a> <http://ex.org/p> "x" . trailing', 43, "unexpected"),
])
def test_errors_name_the_column(text, col, what):
    with pytest.raises(ParseError) as err:
        parse_triple(text, line=7, source="s.nt")
    assert str(err.value).startswith(f"s.nt:7:{col}:") and what in str(err.value)
