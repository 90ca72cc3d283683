"""rdfstream: a stream reasoner for LARS programs and C-SPARQL-like queries over RDF streams."""

__version__ = "0.1.0"
