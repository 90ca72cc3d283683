"""Static RDF graphs (``FROM <g>``, ontologies) loaded with rdflib and turned into background atoms.

A query sees only the graphs it names, so graph triples are kept per graph: the background atom
``<urn:rdfstream:quad>(g, s, p, o)``.  Graphs are read only from sources the user registered; fetching a
graph from its IRI happens only when the user allows it (``allow_fetch``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from ..atoms import Atom
from ..errors import UsageError
from ..rdfterms import from_rdflib
from ..vocab import QUAD


def load_graph(source, fmt: str | None = None):
    """An rdflib Graph from a Graph (returned as is), a file path, or an iterable of rdflib triples."""
    from rdflib import Graph
    from rdflib.util import guess_format

    if isinstance(source, Graph):
        return source
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.exists(path):
            raise UsageError(f"cannot read graph {path}: no such file")
        graph = Graph()
        try:
            graph.parse(path, format=fmt or guess_format(path) or "turtle")
        except Exception as err:  # rdflib's parsers raise many kinds of errors; say which file and why
            raise UsageError(f"cannot parse graph {path}: {err}") from None
        return graph
    graph = Graph()
    for triple in source:
        graph.add(triple)
    return graph


def fetch_graph(iri: str):
    """Read a graph from its IRI (network or file); only called when the user allowed it."""
    from rdflib import Graph

    graph = Graph()
    try:
        graph.parse(iri)
    except Exception as err:
        raise UsageError(f"cannot load graph <{iri}>: {err}") from None
    return graph


def quad_atoms(iri: str, graph) -> Iterator[Atom]:
    """The background atoms of ``graph`` registered as ``iri``."""
    g = f"<{iri}>"
    for s, p, o in graph:
        yield Atom(QUAD, (g, from_rdflib(s), from_rdflib(p), from_rdflib(o)))


def triple_atoms(graph) -> Iterable[Atom]:
    """``p(s, o)`` for every triple of ``graph`` (ontologies as plain background for rules)."""
    for s, p, o in graph:
        yield Atom(from_rdflib(p), (from_rdflib(s), from_rdflib(o)))
