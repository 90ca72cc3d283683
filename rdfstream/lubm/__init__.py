"""LUBM benchmark support: a faithful port of the UBA 1.7 data generator (:mod:`rdfstream.lubm.generator`)."""
