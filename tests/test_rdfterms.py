"""rdflib terms <-> engine constants: an exact round trip, and equality agrees with rdflib's."""


from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import XSD, BNode, Literal, URIRef

from rdfstream.rdfterms import from_rdflib, to_rdflib

# ill-typed literals are generated on purpose; rdflib warns about them
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
iris = st.sampled_from(["http://ex.org/a", "http://ex.org/b#x", "urn:x:y", "http://ex.org/\u00e9t\u00e9"])
datatypes = st.sampled_from([XSD.integer, XSD.decimal, XSD.string, XSD.double, XSD.boolean, XSD.dateTime,
                             XSD.int, URIRef("http://ex.org/dt")])
lexicals = st.one_of(texts, st.integers(-10**20, 10**20).map(str), st.sampled_from(
    ["05", "-0", "+3", "1.50", "1.0", "0.5", ".5", "1e3", "true", "NaN", "2024-01-01T00:00:00Z", ""]))

rdf_terms = st.one_of(
    iris.map(URIRef),
    st.sampled_from(["b0", "node1", "x"]).map(BNode),
    texts.map(Literal),
    st.tuples(texts, st.sampled_from(["en", "fr", "en-GB"])).map(lambda p: Literal(p[0], lang=p[1])),
    st.tuples(lexicals, datatypes).map(lambda p: Literal(p[0], datatype=p[1])),
)


@settings(max_examples=300)
@given(rdf_terms)
def test_round_trip(term):
    const = from_rdflib(term)
    back = to_rdflib(const)
    assert back == term and type(back) is type(term)
    assert from_rdflib(back) == const


@settings(max_examples=300)
@given(rdf_terms, rdf_terms)
def test_constants_are_equal_exactly_when_terms_are(a, b):
    assert (from_rdflib(a) == from_rdflib(b)) == (a == b)


def test_numbers_become_python_numbers():
    assert from_rdflib(Literal(5)) == 5 and type(from_rdflib(Literal(5))) is int
    assert from_rdflib(Literal("1.5", datatype=XSD.decimal)) == Decimal("1.5")
    double = Literal("1.0e3", datatype=XSD.double)  # rdflib normalises the lexical form itself
    assert from_rdflib(double) == f'"{double}"^^<http://www.w3.org/2001/XMLSchema#double>'
    assert from_rdflib(URIRef("http://ex.org/a")) == "<http://ex.org/a>"
    assert from_rdflib(Literal('say "hi"\n', lang="en")) == '"say \\"hi\\"\\n"@en'
    assert to_rdflib("x1") == Literal("x1")
