"""The C-SPARQL front end: queries over RDF streams, translated from rdflib's SPARQL algebra."""
