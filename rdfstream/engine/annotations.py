"""Annotated maps and the expiry calendar.

An :class:`AnnotatedMap` holds groundings ``vals -> horizon``: a grounding is guaranteed to hold at
every evaluation time up to its horizon (Laser's [consideration, horizon]; the consideration time is
implicit in *when* the grounding enters the map, and new or extended groundings are listed in
``delta`` for semi-naive firing).  When the same grounding is derived again, the larger horizon wins:
every grounding present at ``t`` is valid at ``t``, so the union of two annotations is again an interval.

The :class:`Calendar` files groundings under their horizon, in batches, so that advancing time costs in
proportion to what expires; it also keeps the times at which something happens (events).
"""

from __future__ import annotations

import heapq
from operator import itemgetter

from ..ir.windows import INF


class AnnotatedMap:
    __slots__ = ("born", "calendar", "delta", "died", "entries", "keyed", "kind", "name")

    def __init__(self, calendar: Calendar, name: str = "", kind: str = "literal"):
        self.kind = kind
        self.entries: dict[tuple, int] = {}
        # secondary hash indexes: column positions -> key -> {vals: None}
        self.keyed: dict[tuple[int, ...], dict[tuple, dict[tuple, None]]] = {}
        self.delta: list[tuple] = []
        self.calendar = calendar
        self.name = name
        # keys that appeared / expired during the current tick (output tracking of fact stores)
        self.born: list[tuple] = []
        self.died: list[tuple] = []

    def index_on(self, cols: tuple[int, ...]) -> dict[tuple, dict[tuple, None]]:
        idx = self.keyed.get(cols)
        if idx is None:
            idx = {}
            for vals in self.entries:
                idx.setdefault(tuple(vals[c] for c in cols), {})[vals] = None
            self.keyed[cols] = idx
        return idx

    def _index(self, vals: tuple) -> None:
        self._index_many((vals,))

    def _index_many(self, batch) -> None:
        """Add new groundings to every secondary index (one pass per index, no per-fact generator)."""
        for cols, idx in self.keyed.items():
            get = idx.get
            if len(cols) == 1:
                c = cols[0]
                for vals in batch:
                    key = (vals[c],)
                    bucket = get(key)
                    if bucket is None:
                        idx[key] = {vals: None}
                    else:
                        bucket[vals] = None
            else:
                pick = itemgetter(*cols)
                for vals in batch:
                    key = pick(vals)
                    bucket = get(key)
                    if bucket is None:
                        idx[key] = {vals: None}
                    else:
                        bucket[vals] = None

    def put(self, vals: tuple, h: int, now: int) -> bool:
        """Add or extend a grounding valid now until ``h``; True when it is new or extended."""
        entries = self.entries
        old = entries.get(vals)
        if old is not None and old >= h:
            return False
        entries[vals] = h
        if old is None:
            self.born.append(vals)
            if self.keyed:
                self._index(vals)
        self.delta.append(vals)
        self.calendar.file(self, (vals,), h, now)
        return True

    def put_many(self, batch: list, h: int, now: int) -> list:
        """``put`` for many groundings with one horizon; returns those that are new or extended."""
        entries = self.entries
        get = entries.get
        fresh = [v for v in batch if get(v, -INF) < h]
        if not fresh:
            return fresh
        born = [v for v in fresh if v not in entries]
        entries.update(dict.fromkeys(fresh, h))
        if born:
            self.born.extend(born)
            if self.keyed:
                self._index_many(born)
        self.delta.extend(fresh)
        self.calendar.file(self, fresh, h, now)
        return fresh

    def discard(self, vals: tuple) -> None:
        del self.entries[vals]
        self._unindex_many((vals,))

    def _unindex_many(self, batch) -> None:
        for cols, idx in self.keyed.items():
            pick = (lambda v, c=cols[0]: (v[c],)) if len(cols) == 1 else itemgetter(*cols)
            for vals in batch:
                key = pick(vals)
                bucket = idx[key]
                del bucket[vals]
                if not bucket:
                    del idx[key]

    def expire_many(self, batch, h: int) -> None:
        """Drop the groundings of ``batch`` whose horizon is still ``h`` (not extended since filed)."""
        entries = self.entries
        get = entries.get
        gone = [v for v in batch if get(v) == h]
        if not gone:
            return
        # a batch may name a key twice (it was derived twice in one call)
        if self.keyed:
            gone = list(dict.fromkeys(gone))  # a batch may name a key twice
            for vals in gone:
                del entries[vals]
            self._unindex_many(gone)
        else:
            pop = entries.pop
            for vals in gone:
                pop(vals, None)
        self.died.extend(gone)

    def end_tick(self) -> None:
        self.delta.clear()
        self.born.clear()
        self.died.clear()

    def __len__(self) -> int:
        return len(self.entries)

    def __getstate__(self):
        # the delta matters between ticks too: groundings fed before the first tick wait in it
        return {"entries": self.entries, "keys": list(self.keyed), "calendar": self.calendar, "name": self.name,
                "kind": self.kind, "delta": self.delta, "born": self.born, "died": self.died}

    def __setstate__(self, state):
        self.entries = state["entries"]
        self.calendar = state["calendar"]
        self.name = state["name"]
        self.kind = state["kind"]
        self.delta, self.born, self.died = state["delta"], state["born"], state["died"]
        self.keyed = {}
        for cols in state["keys"]:
            self.index_on(tuple(cols))


class Calendar:
    """Expiry buckets keyed by horizon, plus the event times (ticks where something changes)."""

    def __init__(self) -> None:
        self.buckets: dict[int, list] = {}
        self.heap: list[int] = []
        self.events: list[int] = []  # heap of future event times
        self.event_set: set[int] = set()

    def file(self, owner: AnnotatedMap, batch, h: int, now: int) -> None:
        if h >= INF:
            return
        bucket = self.buckets.get(h)
        if bucket is None:
            self.buckets[h] = [(owner, batch)]
            heapq.heappush(self.heap, h)
        else:
            bucket.append((owner, batch))
        if h > now and h + 1 not in self.event_set:
            # expiry at h+1 changes the answer; an annotation ending now (volatile) is recomputed at
            # every evaluated tick and needs no event of its own.
            self.add_event(h + 1)

    def add_event(self, t: int) -> None:
        if t not in self.event_set:
            self.event_set.add(t)
            heapq.heappush(self.events, t)

    def next_event(self) -> int | None:
        return self.events[0] if self.events else None

    def pop_events_through(self, t: int) -> None:
        events = self.events
        while events and events[0] <= t:
            self.event_set.discard(heapq.heappop(events))

    def expire_before(self, t: int) -> None:
        """Expire every grounding whose horizon is < t and was not extended."""
        heap = self.heap
        while heap and heap[0] < t:
            h = heapq.heappop(heap)
            for owner, batch in self.buckets.pop(h):
                owner.expire_many(batch, h)
