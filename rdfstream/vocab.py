"""IRIs rdfstream itself gives meaning to."""

#: The predicate of static-graph triples in the engine: ``quad(g, s, p, o)`` holds for triple (s, p, o) of
#: graph g, so that a query sees only the graphs its FROM clauses name.
QUAD = "<urn:rdfstream:quad>"

#: C-SPARQL's ``f:timestamp(?s, ?p, ?o)``.
CSPARQL_FUNCTIONS = "http://larkc.eu/csparql/sparql/jena/ext#"
