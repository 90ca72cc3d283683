"""Evaluating the SPARQL algebra of a continuous query over the relations the rules maintain.

Solutions are dicts from variable name to engine constant (unbound variables are absent); a result is a
list of them (a multiset, in SPARQL's order where ORDER BY gives one).  Leaves (:class:`Relation`) read the
facts of a rule head at the report's tick; everything above follows SPARQL 1.1 §18.5.  Joins hash on the
variables that every solution of both sides binds, then check compatibility on the rest.

Term equality here is exact: the integer 1 and the decimal 1.0 are different RDF terms, as in SPARQL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cmp_to_key

from ..ir import algebra as A
from .expr_eval import ExprError, aggregate, evaluate, filter_holds, order_key

Solution = dict
Relations = Callable[[str], Iterable[tuple]]


def run(node: A.Node, relations: Relations, ctx=None) -> list[Solution]:
    """The solutions of ``node``; ``relations(pred)`` gives the facts of a rule head."""
    return _EVAL[type(node)](node, relations, ctx)


def _same(a, b) -> bool:
    return a == b and type(a) is type(b)


def _compatible(mu1: Solution, mu2: Solution) -> bool:
    for var, value in mu1.items():
        other = mu2.get(var, _ABSENT)
        if other is not _ABSENT and not _same(value, other):
            return False
    return True


_ABSENT = object()


def _always_bound(rows: list[Solution]) -> set[str]:
    if not rows:
        return set()
    common = set(rows[0])
    for row in rows[1:]:
        common.intersection_update(row)
        if not common:
            break
    return common


def _index(rows: list[Solution], keys: tuple[str, ...]) -> dict[tuple, list[Solution]]:
    out: dict[tuple, list[Solution]] = {}
    for row in rows:
        out.setdefault(tuple(row[k] for k in keys), []).append(row)
    return out


def _pairs(left: list[Solution], right: list[Solution]):
    """For each left solution, the right solutions compatible with it."""
    keys = tuple(sorted(_always_bound(left) & _always_bound(right)))
    index = _index(right, keys)
    for mu1 in left:
        candidates = index.get(tuple(mu1[k] for k in keys), ())
        yield mu1, [mu2 for mu2 in candidates if _compatible(mu1, mu2)]


def _relation(node: A.Relation, relations: Relations, ctx) -> list[Solution]:
    cols = node.columns
    return [dict(zip(cols, row, strict=False)) for row in relations(node.pred)]


def _unit(node: A.Unit, relations: Relations, ctx) -> list[Solution]:
    return [{}]


def _join(node: A.Join, relations: Relations, ctx) -> list[Solution]:
    left = run(node.left, relations, ctx)
    if not left:
        return []
    right = run(node.right, relations, ctx)
    return [{**mu1, **mu2} for mu1, matches in _pairs(left, right) for mu2 in matches]


def _left_join(node: A.LeftJoin, relations: Relations, ctx) -> list[Solution]:
    left = run(node.left, relations, ctx)
    if not left:
        return []
    right = run(node.right, relations, ctx)
    out = []
    for mu1, matches in _pairs(left, right):
        merged = [{**mu1, **mu2} for mu2 in matches]
        if node.expr is not None:
            merged = [mu for mu in merged if filter_holds(node.expr, mu, ctx)]
        out.extend(merged if merged else [mu1])
    return out


def _union(node: A.Union, relations: Relations, ctx) -> list[Solution]:
    return run(node.left, relations, ctx) + run(node.right, relations, ctx)


def _minus(node: A.Minus, relations: Relations, ctx) -> list[Solution]:
    left = run(node.left, relations, ctx)
    right = run(node.right, relations, ctx)
    return [mu1 for mu1 in left
            if not any(_compatible(mu1, mu2) and mu1.keys() & mu2.keys() for mu2 in right)]


def _filter(node: A.Filter, relations: Relations, ctx) -> list[Solution]:
    return [mu for mu in run(node.inner, relations, ctx) if filter_holds(node.expr, mu, ctx)]


def _extend(node: A.Extend, relations: Relations, ctx) -> list[Solution]:
    out = []
    for mu in run(node.inner, relations, ctx):
        try:
            value = evaluate(node.expr, mu, ctx)
        except ExprError:
            out.append(mu)
            continue
        out.append({**mu, node.var: value})
    return out


def _values(node: A.Values, relations: Relations, ctx) -> list[Solution]:
    return [{v: c for v, c in zip(node.variables, row, strict=True) if c is not None} for row in node.rows]


def _group(node: A.Group, relations: Relations, ctx) -> list[Solution]:
    rows = run(node.inner, relations, ctx)
    groups: dict[tuple, list[Solution]] = {}
    if node.keys is None:
        groups[()] = rows  # one group, even when there is no solution (COUNT(*) is then 0)
    else:
        for mu in rows:
            key = []
            for expr in node.keys:
                try:
                    value = evaluate(expr, mu, ctx)
                    key.append((type(value).__name__, value))
                except ExprError:
                    key.append(None)
            groups.setdefault(tuple(key), []).append(mu)
    out = []
    for members in groups.values():
        mu = {}
        for var, agg in node.aggregates:
            value = aggregate(agg, members, ctx)
            if value is not None:
                mu[var] = value
        out.append(mu)
    return out


def _project(node: A.Project, relations: Relations, ctx) -> list[Solution]:
    keep = node.variables
    inner = node.inner
    if type(inner) is A.Relation:  # the common case: build each solution once, with the kept columns only
        cols = inner.columns
        names = tuple(v for v in keep if v in cols)
        if names == cols:
            return [dict(zip(names, row, strict=False)) for row in relations(inner.pred)]
        picks = tuple(cols.index(v) for v in names)
        return [dict(zip(names, [row[i] for i in picks], strict=False)) for row in relations(inner.pred)]
    return [{v: mu[v] for v in keep if v in mu} for mu in run(inner, relations, ctx)]


def _distinct(node: A.Distinct, relations: Relations, ctx) -> list[Solution]:
    seen: set = set()
    out = []
    for mu in run(node.inner, relations, ctx):
        key = frozenset((k, type(v).__name__, v) for k, v in mu.items())
        if key not in seen:
            seen.add(key)
            out.append(mu)
    return out


def _order_by(node: A.OrderBy, relations: Relations, ctx) -> list[Solution]:
    rows = run(node.inner, relations, ctx)

    def value(expr, mu):
        try:
            return evaluate(expr, mu, ctx)
        except ExprError:
            return None

    for expr, descending in reversed(node.conditions):  # stable sorts, least significant key first
        rows.sort(key=cmp_to_key(lambda a, b, e=expr: _cmp(order_key(value(e, a)), order_key(value(e, b)))),
                  reverse=descending)
    return rows


def _cmp(a, b) -> int:
    return (a > b) - (a < b)


def _slice(node: A.Slice, relations: Relations, ctx) -> list[Solution]:
    rows = run(node.inner, relations, ctx)
    end = None if node.limit is None else node.offset + node.limit
    return rows[node.offset:end]


_EVAL: dict[type, Callable] = {
    A.Relation: _relation, A.Unit: _unit, A.Join: _join, A.LeftJoin: _left_join, A.Union: _union,
    A.Minus: _minus, A.Filter: _filter, A.Extend: _extend, A.Values: _values, A.Group: _group,
    A.Project: _project, A.Distinct: _distinct, A.OrderBy: _order_by, A.Slice: _slice,
}


def construct(template: A.Template, solutions: list[Solution], tag: str) -> list[tuple]:
    """The triples of a CONSTRUCT template over ``solutions``; blank nodes are fresh per solution (``tag``
    makes them unique per report).  Triples with an unbound variable or an ill-formed position are left out."""
    out: dict[tuple, tuple] = {}
    for i, mu in enumerate(solutions):
        for pattern in template.triples:
            triple = []
            for kind, value in pattern:
                if kind == "var":
                    value = mu.get(value)
                elif kind == "bnode":
                    value = f"_:{tag}s{i}{value}"
                triple.append(value)
            s, p, o = triple
            if s is None or p is None or o is None:
                continue
            if not (type(s) is str and s[:1] in "<_") or not (type(p) is str and p.startswith("<")):
                continue
            out.setdefault((s, p, type(o), o), (s, p, o))  # the integer 0 and the decimal 0.0 differ
    return list(out.values())
