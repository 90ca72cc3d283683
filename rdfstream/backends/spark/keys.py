"""Keys of a keyed run: which bucket a stream atom goes to, and which bucket owns a solution.

A *key* is a value of the stream (the argument at ``position`` of every data atom, or the event's timestamp);
keys are hashed into ``buckets`` buckets, and each bucket runs one embedded engine over the atoms of its keys.
The hash is CRC-32 of the constant's text, so it is the same in every process (Python's ``hash`` is not).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Keying:
    """``kind``: ``single`` (one bucket gets everything), ``argument`` (key = argument ``position`` of each data
    atom), or ``time`` (key = the pane of a tumbling window a timestamp falls in, e.g. a LUBM department).
    ``owner`` names the query variable whose value decides which bucket reports a solution (keyed queries)."""

    kind: str = "single"
    position: int = 0
    buckets: int = 1
    owner: str | None = None
    note: str = "single key: everything runs in one part"
    origin: int = 0  # time keying: panes [origin + k*pane, origin + (k+1)*pane) are the keys
    pane: int = 1

    @property
    def keyed(self) -> bool:
        return self.kind != "single" and self.buckets > 1

    def bucket_of(self, value) -> int:
        if self.buckets == 1:
            return 0
        return zlib.crc32(str(value).encode("utf-8", "surrogatepass")) % self.buckets

    def route(self, args: tuple, t: int) -> int:
        """The bucket of a data atom with arguments ``args`` at time ``t``."""
        if self.kind == "argument":
            return self.bucket_of(args[self.position]) if self.position < len(args) else 0
        if self.kind == "time":  # consecutive panes go round the buckets: even load, unlike a hash
            return ((t - self.origin) // self.pane) % self.buckets
        return 0

    def report_owner(self, t: int) -> int:
        """Time keying: the bucket whose pane a report at ``t`` (a tumbling window's close) covers."""
        return ((t - self.pane - self.origin) // self.pane) % self.buckets


SINGLE = Keying()


def spark_hash_long(value: int, seed: int = 42) -> int:
    """Spark's ``hash()`` of a LongType value (Murmur3 x86 32-bit, seed 42): the hash that decides which shuffle
    partition a grouping key lands in (``tests/test_spark.py`` checks it against Spark's own)."""

    def mix_k1(k1: int) -> int:
        k1 = (k1 * 0xCC9E2D51) & 0xFFFFFFFF
        k1 = ((k1 << 15) | (k1 >> 17)) & 0xFFFFFFFF
        return (k1 * 0x1B873593) & 0xFFFFFFFF

    def mix_h1(h1: int, k1: int) -> int:
        h1 ^= k1
        h1 = ((h1 << 13) | (h1 >> 19)) & 0xFFFFFFFF
        return (h1 * 5 + 0xE6546B64) & 0xFFFFFFFF

    value &= 0xFFFFFFFFFFFFFFFF
    h1 = mix_h1(mix_h1(seed, mix_k1(value & 0xFFFFFFFF)), mix_k1(value >> 32))
    h1 ^= 8  # the length in bytes
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & 0xFFFFFFFF
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & 0xFFFFFFFF
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 >= 1 << 31 else h1


def balanced_labels(buckets: int, partitions: int) -> tuple[int, ...]:
    """Grouping keys for ``buckets`` buckets such that Spark's hash partitioning puts bucket ``i`` in shuffle
    partition ``i % partitions`` (small integers hash unevenly: 4 keys can land in one of 2 partitions)."""
    if buckets == 1:
        return (0,)
    labels, candidate = [], 0
    for i in range(buckets):
        while spark_hash_long(candidate) % partitions != i % partitions:  # Spark's pmod: Python's % is one
            candidate += 1
        labels.append(candidate)
        candidate += 1
    return tuple(labels)
