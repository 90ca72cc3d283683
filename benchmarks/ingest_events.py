"""N-Quads event stream ingest: rdfstream's event reader against rdflib's N-Quads parser (+ conversion).

    python benchmarks/ingest_events.py [--events 10000] [--size 10]

The stream has ``--events`` named graphs of ``--size`` quads each, every graph stamped by a default-graph
``prov:generatedAtTime`` xsd:dateTime triple, half of them before their quads and half after. rdfstream reads it
line by line (rdflib not involved) and returns time-ordered triples with the events' timestamps in milliseconds.
rdflib's side is what the same job costs with its parser: parse into a Dataset (its N-Quads parser needs a
context-aware store), convert every term to an engine constant, look up each graph's timestamp and sort by
time; the parse alone is printed too. Both sides must produce the same triples. CPU time, µs per input quad
(timestamp lines included).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # measure the working tree
from rdfstream.formats.rdf_events import PROV_GENERATED_AT_TIME, read_nquads, timestamp_millis  # noqa: E402
from rdfstream.rdfterms import from_rdflib  # noqa: E402

XSD = "http://www.w3.org/2001/XMLSchema#"


def make_lines(events: int, size: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    start = datetime(2024, 5, 1, tzinfo=UTC)
    out = []
    for e in range(events):
        graph = f"<http://ex.org/event/{e}>"
        when = (start + timedelta(milliseconds=250 * e)).isoformat().replace("+00:00", "Z")
        stamp = f'{graph} <{PROV_GENERATED_AT_TIME}> "{when}"^^<{XSD}dateTime> .'
        body = []
        for i in range(size):
            s = f"<http://ex.org/sensor/{rng.randrange(1000)}>"
            kind = rng.randrange(4)
            if kind == 0:
                p, o = "<http://ex.org/observes>", f"<http://ex.org/prop/{rng.randrange(50)}>"
            elif kind == 1:
                p, o = "<http://ex.org/value>", f'"{rng.randrange(-500, 500)}"^^<{XSD}integer>'
            elif kind == 2:
                p, o = "<http://ex.org/label>", f'"reading {e}.{i}"@en'
            else:
                p, o = "<http://ex.org/level>", f'"{rng.randrange(1000) / 10}"^^<{XSD}decimal>'
            body.append(f"{s} {p} {o} {graph} .")
        out += [stamp, *body] if e % 2 else [*body, stamp]
    return out


def with_rdflib(text: str, convert: bool = True) -> list[tuple]:
    from rdflib import Dataset, URIRef
    from rdflib.graph import DATASET_DEFAULT_GRAPH_ID

    dataset = Dataset().parse(data=text, format="nquads")
    if not convert:
        return []
    default = dataset.graph(DATASET_DEFAULT_GRAPH_ID)
    stamps = {from_rdflib(g): timestamp_millis(from_rdflib(t))
              for g, t in default.subject_objects(URIRef(PROV_GENERATED_AT_TIME))}
    rows = []
    for s, p, o, g in dataset.quads():
        if g != DATASET_DEFAULT_GRAPH_ID:
            rows.append((stamps[from_rdflib(g)], from_rdflib(s), from_rdflib(p), from_rdflib(o)))
    rows.sort(key=lambda row: row[0])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--size", type=int, default=10, help="quads per event")
    args = ap.parse_args()
    lines = make_lines(args.events, args.size)
    text = "\n".join(lines) + "\n"

    import rdflib  # noqa: F401 - imported before the clocks start, like the lazy import in the reader

    t0 = time.process_time()
    ours = [(t.t, t.s, t.p, t.o) for t in read_nquads(lines)]
    t_ours = time.process_time() - t0

    t0 = time.process_time()
    with_rdflib(text, convert=False)
    t_parse = time.process_time() - t0

    t0 = time.process_time()
    theirs = with_rdflib(text)
    t_rdflib = time.process_time() - t0

    assert set(ours) == set(theirs), "the two readers disagree"  # sets: a Dataset drops repeated quads
    assert [row[0] for row in ours] == sorted(row[0] for row in ours)
    n = len(lines)
    print(f"{'reader':<40}{'us/quad':>10}{'ratio':>8}")
    for name, seconds in (("rdfstream event reader", t_ours), ("rdflib N-Quads parse only", t_parse),
                          ("rdflib N-Quads parse + conversion", t_rdflib)):
        print(f"{name:<40}{seconds / n * 1e6:>10.2f}{seconds / t_ours:>7.1f}x")
    print(f"{n} quads in {args.events} events of {args.size}; same {len(set(ours))} timed triples on both sides")


if __name__ == "__main__":
    main()
