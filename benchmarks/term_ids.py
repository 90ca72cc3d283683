"""Interned strings against integer ids as engine constants: the cost of the engine's hash joins in CPython.

The issue's sketch interns RDF terms to integers inside the engine. rdfstream's constants are canonical
strings instead (``"<http://…>"``), interned at the edges (one object per distinct IRI), so that comparisons,
arithmetic and FILTERs read them directly and nothing is decoded on the way out. This measures what integer
ids would buy where the engine spends its time: building a hash index on one column and probing it with
another (the shape of every join plan), plus a set of pairs (the shape of every fact store).

    python benchmarks/term_ids.py [--pairs 200000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import random
import sys
import time


def join_cost(keys: list, pairs_n: int, repeat: int, seed: int) -> float:
    """CPU µs per pair: index on the first column, probe with the second, and a set of the pairs."""
    rng = random.Random(seed)
    n = len(keys)
    pairs = [(keys[rng.randrange(n)], keys[rng.randrange(n)]) for _ in range(pairs_n)]
    start = time.process_time()
    for _ in range(repeat):
        index: dict = {}
        for a, b in pairs:
            index.setdefault(a, []).append((a, b))
        hits = 0
        for _a, b in pairs:
            hits += len(index.get(b, ()))
        facts = set(pairs)
        assert hits >= 0 and facts
    return (time.process_time() - start) / repeat / pairs_n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    names = [sys.intern(f"<http://example.org/resource/node{i}>") for i in range(args.pairs)]
    ids = list(range(args.pairs))
    table = {name: i for i, name in enumerate(names)}
    strings = join_cost(names, args.pairs, args.repeat, seed=1)
    integers = join_cost(ids, args.pairs, args.repeat, seed=1)
    start = time.process_time()
    for name in names:  # what interning to ids would add at ingest: one lookup per term
        table.get(name)
    lookup = (time.process_time() - start) / len(names) * 1e6
    print(f"{'constants':<22}{'µs per pair':>12}")
    print(f"{'interned strings':<22}{strings:>12.3f}")
    print(f"{'integer ids':<22}{integers:>12.3f}")
    print(f"ratio strings/ids: {strings / integers:.2f}; interning a term to an id costs {lookup:.3f} µs at ingest"
          " (three per triple), and every output value would need decoding")


if __name__ == "__main__":
    main()
