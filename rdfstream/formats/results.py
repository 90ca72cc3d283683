"""Writers for the reports of continuous queries: SELECT, ASK and CONSTRUCT results.

**Documents** (:data:`RESULT_FORMATS` gives each name's media type; every document ends with a newline):

* SELECT (:func:`select_document`): ``json`` (SPARQL 1.1 Query Results JSON), ``xml`` (SPARQL Query Results
  XML), ``csv`` and ``tsv`` (SPARQL 1.1 Query Results CSV and TSV; CSV keeps only the lexical form of literals,
  as the standard says);
* ASK (:func:`ask_document`): ``json``, ``xml``, and ``csv``/``tsv`` as one line ``true`` or ``false`` (the
  standard has no CSV/TSV form for ASK; this is what a one-cell table without header would be);
* CONSTRUCT (:func:`construct_document`): ``nt`` (N-Triples, in the order given) and ``ttl``/``turtle``.

**JSON lines**, one line per report, for streams of reports:

* SELECT and ASK (:func:`report_line`): ``{"query":"q","t":10000,"results":<SPARQL 1.1 JSON results object>}``;
* CONSTRUCT (:func:`report_line_construct`): ``{"query":"q","t":10000,"triples":[["<s>","<p>","\\"o\\""],…]}``,
  each term in N-Triples syntax (so a line can be turned into N-Triples without knowing JSON term objects).

Engine constants become RDF terms as :func:`rdfstream.rdfterms.to_rdflib` makes them: an ``int`` is an
``xsd:integer``, a ``Decimal`` an ``xsd:decimal``, a bare name a plain literal; every other constant keeps its
lexical form. The SPARQL JSON object is built here directly, because it is made once per report; it equals
what rdflib's JSON serializer writes for the same result (tests/test_results.py checks this). The CSV, Turtle
and ASK XML documents are rdflib's serializers' output. SELECT XML is written here (rdflib's leaves out
literals whose value is false, such as ``0``; see :func:`_select_xml`), and so are TSV (rdflib has no TSV
serializer) and N-Triples, from the constants' N-Triples form. A string that XML 1.0 cannot carry (most
control characters) is a ValueError in XML.

As in SPARQL's CONSTRUCT, a triple that is not RDF (a literal as subject, anything but an IRI as predicate) is
left out of CONSTRUCT output.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from xml.sax.saxutils import escape, quoteattr

from ..errors import UsageError
from ..rdfterms import XSD_DECIMAL, XSD_INTEGER, to_rdflib
from ..terms import Const, format_decimal, string, string_value

RESULT_FORMATS: dict[str, str] = {  # name -> media type, like rdflib's plugin registry
    "json": "application/sparql-results+json",
    "xml": "application/sparql-results+xml",
    "csv": "text/csv",
    "tsv": "text/tab-separated-values",
    "nt": "application/n-triples",
    "ttl": "text/turtle",
    "turtle": "text/turtle",
}
SELECT_FORMATS = ("json", "xml", "csv", "tsv")
ASK_FORMATS = ("json", "xml", "csv", "tsv")
CONSTRUCT_FORMATS = ("nt", "ttl", "turtle")

Triple = tuple[Const, Const, Const]

_LITERAL = re.compile(r'(".*")(?:@([A-Za-z0-9\-]+)|\^\^<([^>]*)>)?\Z', re.S)  # greedy: the last quote closes
_SPARQL_XML = "http://www.w3.org/2005/sparql-results#"
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")  # outside XML 1.0's Char
_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}  # json.dumps leaves them raw


# -- SPARQL JSON -------------------------------------------------------------------------------------------------


def sparql_json(variables: list[str], rows: list[dict[str, Const]]) -> dict:
    """The SPARQL 1.1 JSON results object of a SELECT result, as a dict (for embedding in a JSON line).

    ``rows`` map variable names (without ``?``) to constants; an unbound variable is absent from its row.
    """
    _check_rows(variables, rows)
    return _sparql_json(variables, rows)


def _sparql_json(variables: list[str], rows: list[dict[str, Const]]) -> dict:
    return {"head": {"vars": list(variables)},
            "results": {"bindings": [{name: term_json(value) for name, value in row.items()} for row in rows]}}


def sparql_json_ask(value: bool) -> dict:
    """The SPARQL 1.1 JSON results object of an ASK result."""
    return {"head": {}, "boolean": _check_bool(value)}


def term_json(const: Const) -> dict[str, str]:
    """The SPARQL JSON object of one constant: ``{"type": "uri"|"bnode"|"literal", "value": …, …}``."""
    if isinstance(const, str):
        if const.startswith("<"):
            return {"type": "uri", "value": const[1:-1]}
        if const.startswith("_:"):
            return {"type": "bnode", "value": const[2:]}
        if not const.startswith('"'):
            return {"type": "literal", "value": const}  # a bare name: a plain literal
        match = _LITERAL.match(const)
        if match is None:
            raise ValueError(f"malformed literal constant: {const}")
        quoted, lang, datatype = match.groups()
        term = {"type": "literal", "value": string_value(quoted)}
        if lang:
            term["xml:lang"] = lang
        elif datatype:
            term["datatype"] = datatype
        return term
    return {"type": "literal", "value": _number_text(const), "datatype": _number_type(const)}


def _number_text(const: Const) -> str:
    if isinstance(const, bool) or not isinstance(const, int | Decimal):
        raise TypeError(f"not a constant: {const!r}")
    return str(const) if isinstance(const, int) else format_decimal(const)


def _number_type(const: int | Decimal) -> str:
    return XSD_INTEGER if isinstance(const, int) else XSD_DECIMAL


# -- JSON lines ------------------------------------------------------------------------------------------------


def report_line(query: str, t: int, results: dict) -> str:
    """The JSON line of a SELECT or ASK report: ``results`` is :func:`sparql_json` or :func:`sparql_json_ask`."""
    return _json_line({"query": query, "t": t, "results": results})


def report_line_construct(query: str, t: int, triples: list[Triple]) -> str:
    """The JSON line of a CONSTRUCT report, its triples as lists of three N-Triples terms."""
    return _json_line({"query": query, "t": t, "triples": [[nt_term(c) for c in triple]
                                                           for triple in triples if _is_rdf(triple)]})


def _json_line(obj: dict) -> str:
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    if any(ch in text for ch in _LINE_BREAKS):
        # readers that split on every Unicode line break (str.splitlines) would cut the record there
        for ch, escaped in _LINE_BREAKS.items():
            text = text.replace(ch, escaped)
    return text


# -- documents -------------------------------------------------------------------------------------------------


def select_document(variables: list[str], rows: list[dict[str, Const]], fmt: str) -> str:
    """A SELECT result as a document in ``fmt`` (one of :data:`SELECT_FORMATS`); rows keep their order."""
    _check_format(fmt, SELECT_FORMATS, "SELECT")
    _check_rows(variables, rows)
    if fmt == "json":
        return json.dumps(_sparql_json(variables, rows), ensure_ascii=False) + "\n"
    if fmt == "tsv":
        lines = ["\t".join(f"?{name}" for name in variables)]
        lines += ["\t".join(nt_term(row[name]) if name in row else "" for name in variables) for row in rows]
        return "\n".join(lines) + "\n"
    if fmt == "xml":
        return _select_xml(variables, rows)
    from rdflib import Variable
    from rdflib.query import Result

    result = Result("SELECT")
    result.vars = [Variable(name) for name in variables]
    result.bindings = [{Variable(name): to_rdflib(value) for name, value in row.items()} for row in rows]
    return _text(result.serialize(format=fmt))


def _select_xml(variables: list[str], rows: list[dict[str, Const]]) -> str:
    """SPARQL XML results, one ``<result>`` per line.

    Written here rather than by rdflib: its XML serializer leaves out the value of every literal whose Python
    value is false (``0``, ``0.0``, ``false``; RDFLib/rdflib#3138), and writes a carriage return raw, which
    an XML parser reads back as a line feed.
    """
    out = ['<?xml version="1.0" encoding="utf-8"?>', f'<sparql xmlns="{_SPARQL_XML}"><head>'
           + "".join(f"<variable name={quoteattr(name)}/>" for name in variables) + "</head><results>"]
    for row in rows:
        cells = []
        for name, value in row.items():
            term = term_json(value)
            kind, text = term["type"], _xml_text(term["value"])
            if kind == "literal":
                if "xml:lang" in term:
                    kind = f'literal xml:lang={quoteattr(term["xml:lang"])}'
                elif "datatype" in term:
                    kind = f'literal datatype={quoteattr(term["datatype"])}'
            cells.append(f"<binding name={quoteattr(name)}><{kind}>{text}</{term['type']}></binding>")
        out.append("<result>" + "".join(cells) + "</result>")
    out.append("</results></sparql>")
    return "\n".join(out) + "\n"


def _xml_text(value: str) -> str:
    if _NOT_XML.search(value):
        raise ValueError(f"{value!r} has a character that XML 1.0 cannot carry")
    return escape(value, {"\r": "&#13;"})


def ask_document(value: bool, fmt: str) -> str:
    """An ASK result as a document in ``fmt`` (one of :data:`ASK_FORMATS`)."""
    _check_format(fmt, ASK_FORMATS, "ASK")
    answer = _check_bool(value)
    if fmt == "json":
        return json.dumps(sparql_json_ask(answer)) + "\n"
    if fmt in ("csv", "tsv"):
        return ("true" if answer else "false") + ("\r\n" if fmt == "csv" else "\n")  # each format's line end
    from rdflib.query import Result

    result = Result("ASK")
    result.askAnswer = answer
    return _text(result.serialize(format=fmt))


def construct_document(triples: list[Triple], fmt: str, prefixes: dict[str, str] | None = None) -> str:
    """A CONSTRUCT result as N-Triples (``nt``) or Turtle (``ttl``/``turtle``; ``prefixes`` maps prefix -> IRI)."""
    _check_format(fmt, CONSTRUCT_FORMATS, "CONSTRUCT")
    rdf = [triple for triple in triples if _is_rdf(triple)]
    if fmt == "nt":
        return "".join(f"{nt_term(s)} {nt_term(p)} {nt_term(o)} .\n" for s, p, o in rdf)
    from rdflib import Graph, URIRef

    graph = Graph()
    for prefix, namespace in (prefixes or {}).items():
        graph.bind(prefix, URIRef(namespace), override=True, replace=True)
    for s, p, o in rdf:
        graph.add((to_rdflib(s), to_rdflib(p), to_rdflib(o)))
    return _text(graph.serialize(format="turtle"))


def nt_term(const: Const) -> str:
    """The N-Triples syntax of a constant (numbers as typed literals, a bare name as a plain literal)."""
    if isinstance(const, str):
        if const.startswith(("<", '"', "_:")):
            return const  # constants hold their N-Triples form
        return string(const)
    return f'"{_number_text(const)}"^^<{_number_type(const)}>'


# -- checks ----------------------------------------------------------------------------------------------------


def _is_rdf(triple: Triple) -> bool:
    s, p, _ = triple
    return (type(s) is str and (s.startswith("<") or s.startswith("_:"))
            and type(p) is str and p.startswith("<"))


def _check_rows(variables: list[str], rows: list[dict[str, Const]]) -> None:
    known = set(variables)
    for row in rows:
        if not known.issuperset(row):
            raise ValueError(f"a row binds {', '.join(sorted(set(row) - known))}, not among the variables"
                             f" {', '.join(variables)}")


def _check_bool(value: bool) -> bool:
    if type(value) is not bool:
        raise TypeError(f"an ASK result is True or False, not {value!r}")
    return value


def _check_format(fmt: str, known: tuple[str, ...], kind: str) -> None:
    if fmt not in known:
        raise UsageError(f"unknown {kind} result format {fmt!r} (known: {', '.join(known)})")


def _text(document: str | bytes) -> str:
    text = document.decode("utf-8") if isinstance(document, bytes) else document
    return text if text.endswith("\n") else text + "\n"
