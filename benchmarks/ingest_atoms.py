"""Time stream-atom parsing: the regex fast path against the full pyparsing grammar.

    python benchmarks/ingest_atoms.py [N]

Generates N (default 100,000) ground atoms, one to three per line like a stream file, and prints
µs per atom for each path, per dialect.  Not part of the tests.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

try:
    from rdfstream.frontends.lars import laser, native
except ImportError:  # run from a checkout that is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from rdfstream.frontends.lars import laser, native

PREFIXES = {"ex": "http://example.org/"}


def native_lines(n: int, rng: random.Random) -> list[str]:
    def term() -> str:
        r = rng.random()
        if r < 0.5:
            return f"x{rng.randrange(1000)}"
        if r < 0.7:
            return str(rng.randrange(-50, 500))
        if r < 0.8:
            return f"{rng.randrange(100)}.{rng.randrange(100)}"
        if r < 0.9:
            return f"ex:e{rng.randrange(1000)}"
        return f'"s {rng.randrange(100)}"'

    def atom() -> str:
        pred = rng.choice(["a", "b", "temp", "ex:p", "<http://example.org/q>"])
        return f"{pred}({','.join(term() for _ in range(rng.randint(1, 3)))})"

    return _group([atom() for _ in range(n)], rng)


def laser_lines(n: int, rng: random.Random) -> list[str]:
    def term() -> str:
        r = rng.random()
        if r < 0.6:
            return f"x{rng.randrange(1000)}"
        if r < 0.9:
            return str(rng.randrange(-50, 500))
        return f"'http://example.org/e{rng.randrange(1000)}'"

    def atom() -> str:
        pred = rng.choice(["a", "b", "temp", "'http://example.org/p'"])
        return f"{pred}({','.join(term() for _ in range(rng.randint(1, 3)))})"

    return _group([atom() for _ in range(n)], rng)


def _group(atoms: list[str], rng: random.Random) -> list[str]:
    lines, i = [], 0
    while i < len(atoms):
        k = rng.randint(1, 3)
        lines.append(", ".join(atoms[i : i + k]))
        i += k
    return lines


def bench(label: str, parse, lines: list[str], n: int) -> float:
    start = time.perf_counter()
    count = 0
    for number, line in enumerate(lines, start=1):
        count += len(parse(line, number))
    elapsed = time.perf_counter() - start
    assert count == n, (count, n)
    per_atom = elapsed / n * 1e6
    print(f"  {label:<12} {per_atom:8.2f} µs/atom  ({elapsed:.2f} s)")
    return per_atom


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rng = random.Random(42)
    print(f"{n} atoms")
    lines = native_lines(n, rng)
    print("native")
    fast = bench("fast path", lambda s, i: native.parse_atoms(s, PREFIXES, None, i), lines, n)
    slow = bench("grammar", lambda s, i: native.parse_atoms(s, PREFIXES, None, i, fast=False), lines, n)
    print(f"  speed-up     {slow / fast:8.1f}x")
    lines = laser_lines(n, rng)
    print("laser")
    fast = bench("fast path", lambda s, i: laser.parse_atoms(s, (), None, i), lines, n)
    slow = bench("grammar", lambda s, i: laser.parse_atoms(s, (), None, i, fast=False), lines, n)
    print(f"  speed-up     {slow / fast:8.1f}x")


if __name__ == "__main__":
    main()
