"""N-Triples stream ingest: rdfstream's term reader against rdflib's parser (+ conversion to constants).

    python benchmarks/ingest_ntriples.py [--lines 100000]

Both sides produce the same engine constants (tests/test_ntriples.py checks that they agree). Prints µs per
triple for each and the ratio; CPU time.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # measure the working tree
from rdfstream.formats.ntriples import parse_triple  # noqa: E402
from rdfstream.rdfterms import from_rdflib  # noqa: E402


def make_lines(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    xsd = "http://www.w3.org/2001/XMLSchema#"
    out = []
    for i in range(n):
        s = f"<http://ex.org/sensor/{rng.randrange(1000)}>"
        kind = rng.randrange(4)
        if kind == 0:
            p, o = "<http://ex.org/observes>", f"<http://ex.org/prop/{rng.randrange(50)}>"
        elif kind == 1:
            p, o = "<http://ex.org/value>", f'"{rng.randrange(-500, 500)}"^^<{xsd}integer>'
        elif kind == 2:
            p, o = "<http://ex.org/label>", f'"reading {i}"@en'
        else:
            p, o = "<http://ex.org/level>", f'"{rng.randrange(1000) / 10}"^^<{xsd}decimal>'
        out.append(f"{s} {p} {o} .")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=100_000)
    args = ap.parse_args()
    lines = make_lines(args.lines)

    t0 = time.process_time()
    ours = [parse_triple(line) for line in lines]
    t_ours = time.process_time() - t0

    from rdflib.plugins.parsers.ntriples import W3CNTriplesParser

    class Sink:
        def __init__(self):
            self.rows = []

        def triple(self, s, p, o):
            self.rows.append((from_rdflib(s), from_rdflib(p), from_rdflib(o)))

    sink = Sink()
    t0 = time.process_time()
    parser = W3CNTriplesParser(sink=sink)
    for line in lines:
        parser.parsestring(line)
    t_rdflib = time.process_time() - t0
    assert ours == sink.rows, "the two readers disagree"
    n = len(lines)
    print(f"{'reader':<28}{'us/triple':>10}")
    print(f"{'rdfstream term reader':<28}{t_ours / n * 1e6:>10.2f}")
    print(f"{'rdflib N-Triples parser':<28}{t_rdflib / n * 1e6:>10.2f}")
    print(f"ratio rdflib/ours: {t_rdflib / t_ours:.1f}x over {n} triples (same constants)")


if __name__ == "__main__":
    main()
