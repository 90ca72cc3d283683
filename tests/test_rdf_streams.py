"""Timestamped RDF stream readers: formats, errors with line and column, skipping, lateness."""

from __future__ import annotations

from decimal import Decimal

import pytest

from rdfstream.errors import StreamFormatError
from rdfstream.formats.rdf_streams import read_stream

EX = "http://ex.org/"
INT = "http://www.w3.org/2001/XMLSchema#integer"
DEC = "http://www.w3.org/2001/XMLSchema#decimal"


def triples(text: str, fmt: str, **kw):
    return [(t.t, t.s, t.p, t.o) for t in read_stream(text.splitlines(keepends=True), fmt, "s.x", **kw)]


def test_the_three_formats_read_the_same_triples():
    nt = (f"# comment\n1000 <{EX}a> <{EX}temp> \"21\"^^<{INT}> .\n\n"
          f"2000 <{EX}a> <{EX}label> \"hot\"@en .\n3000 _:b <{EX}level> \"1.5\"^^<{DEC}> .\n")
    csv = (f"t,s,p,o\n1000,{EX}a,{EX}temp,21\n2000,<{EX}a>,<{EX}label>,\"\"\"hot\"\"@en\"\n"
           f"3000,_:b,{EX}level,1.5\n")
    jsonl = (f'{{"t": 1000, "s": "{EX}a", "p": "{EX}temp", "o": 21}}\n'
             f'{{"t": 2000, "s": "<{EX}a>", "p": "{EX}label", "o": "\\"hot\\"@en"}}\n'
             f'{{"t": 3000, "s": "_:b", "p": "{EX}level", "o": 1.5}}\n')
    expected = [(1000, f"<{EX}a>", f"<{EX}temp>", 21), (2000, f"<{EX}a>", f"<{EX}label>", '"hot"@en'),
                (3000, "_:b", f"<{EX}level>", Decimal("1.5"))]
    assert triples(nt, "nt") == expected
    assert triples(csv, "csv") == expected
    assert triples(jsonl, "jsonl") == expected


def test_bare_text_in_csv_is_a_plain_literal():
    assert triples(f"5,{EX}a,{EX}name,Ann Lee\n", "csv") == [(5, f"<{EX}a>", f"<{EX}name>", '"Ann Lee"')]


@pytest.mark.parametrize("fmt,text,where", [
    ("nt", f"1 <{EX}a> <{EX}p> <{EX}o> .\nabc <{EX}a> <{EX}p> <{EX}o> .\n", "s.x:2:1:"),
    ("nt", f"1 <{EX}a> <{EX}p> <{EX}o> .\n2 <{EX}a> <{EX}p> .\n", "s.x:2:"),
    ("csv", f"1,{EX}a,{EX}p\n", "s.x:1:1: expected 4 fields"),
    ("csv", f"1,{EX}a,{EX}p,\"<broken\"\n", "s.x:1:"),
    ("jsonl", '{"t": 1, "s": "a"}\n', "s.x:1:1:"),
    ("jsonl", '{"t": "x", "s": "a", "p": "b", "o": "c"}\n', "s.x:1:2:"),
])
def test_malformed_lines_name_the_line(fmt, text, where):
    with pytest.raises(StreamFormatError) as err:
        triples(text, fmt)
    assert str(err.value).startswith(where), str(err.value)


def test_skip_collects_errors_and_keeps_valid_lines():
    errors: list = []
    text = f"1 <{EX}a> <{EX}p> <{EX}o> .\n2 broken\n3 <{EX}a> <{EX}p> <{EX}o> .\n"
    got = triples(text, "nt", on_error="skip", errors=errors)
    assert [t for t, *_ in got] == [1, 3]
    assert len(errors) == 1 and str(errors[0]).startswith("s.x:2:")


def test_out_of_order_is_an_error_without_lateness_and_reordered_within_it():
    text = "".join(f"{t} <{EX}a> <{EX}p> <{EX}o> .\n" for t in (10, 30, 20, 5))
    with pytest.raises(StreamFormatError, match="s.x:3:1: timestamp 20 is earlier than 30"):
        triples(text, "nt")
    errors: list = []
    got = triples(text, "nt", lateness=15, on_error="skip", errors=errors)
    assert [t for t, *_ in got] == [10, 20, 30]  # 20 is 10 late (allowed), 5 is 25 late (rejected)
    assert len(errors) == 1 and "timestamp 5" in str(errors[0])
