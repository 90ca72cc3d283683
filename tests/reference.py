"""A deliberately naive reference evaluator for LARS programs (shared/SEMANTICS.md §1).

Every time point ``t`` of ``[start, end]`` is answered from scratch:

1. the timeline is ``[start, t]``; the interpretation maps each point ``u`` to the atoms that hold there:
   the data that arrived at ``u`` (for ``start <= u <= t``), the background (everywhere) and whatever the
   rules derive during the evaluation at ``t``;
2. rules are only ever evaluated *at* ``t``: a plain head derives its atom at ``t``, an ``@T`` head places
   its atom at the integer bound to ``T``;
3. the least model is computed stratum by stratum; inside a stratum all its rules are re-run naively
   (nested loops over candidate atoms and points) until nothing new is derived.

There are no annotations, no incrementality and no code shared with ``rdfstream.engine``; the module only
uses the IR and the standard library.  The open points of SEMANTICS.md are settled as in
docs/semantics-notes.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal

from rdfstream.atoms import Atom
from rdfstream.errors import CompileError, EvaluationError, StratificationError, UnsafeRuleError
from rdfstream.ir.nodes import (
    DEFAULT_STREAM,
    BinOp,
    BodyLiteral,
    Comparison,
    Expr,
    ExtAtom,
    Op,
    PartitionWindow,
    Program,
    Rule,
    TimeWindow,
    TupleWindow,
)
from rdfstream.terms import Var, is_number, is_var

__all__ = ["Result", "evaluate", "evaluate_at"]

#: Safety net against programs whose least model is infinite (e.g. ``p(Y) :- p(X), Y = X + 1``).
MAX_ROUNDS = 10_000

Binding = dict  # Var -> constant

# A stream as given by the caller: point -> atoms (default stream), or stream name -> point -> atoms.
StreamInput = Mapping[int, Sequence[Atom]] | Mapping[str, Mapping[int, Sequence[Atom]]]


@dataclass
class Result:
    """The answer at time ``t``.

    ``holds``: the atoms of intensional predicates holding at ``t``.
    ``placed``: the atoms the evaluation at ``t`` places through ``@``-heads at points other than ``t``.
    """

    t: int
    holds: frozenset[Atom]
    placed: dict[int, frozenset[Atom]] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------------


def evaluate(
    program: Program,
    stream: StreamInput,
    start: int,
    end: int,
    background: Iterable[Atom] = (),
) -> list[Result]:
    """The output of ``program`` at every time point of ``[start, end]``."""
    prepared = _prepare(program, stream, background)
    return [_answer_at(prepared, start, t) for t in range(start, end + 1)]


def evaluate_at(
    program: Program,
    stream: StreamInput,
    start: int,
    t: int,
    background: Iterable[Atom] = (),
) -> Result:
    """The output of ``program`` at the single time point ``t`` of the timeline ``[start, ...]``.

    The same answer as ``evaluate(program, stream, start, t, background)[-1]`` (for ``t >= start``), without
    computing the points before ``t``.
    """
    return _answer_at(_prepare(program, stream, background), start, t)


@dataclass
class _Prepared:
    """What does not depend on the evaluation time: the normalized input, the plans and the strata."""

    streams: dict[str, dict[int, list[Atom]]]
    background: frozenset[Atom]
    intensional: set[str]
    plans: dict[int, list]
    strata: list[list[Rule]]


def _prepare(program: Program, stream: StreamInput, background: Iterable[Atom]) -> _Prepared:
    streams = _normalize_streams(stream)
    bg = frozenset(_ground_input(a) for a in (*program.facts, *background))
    intensional = {rule.head.atom.pred for rule in program.rules}

    for rule in program.rules:
        _check_tuple_windows(rule, intensional)
    plans = {id(rule): _plan(rule) for rule in program.rules}
    level = _stratify(program.rules, intensional)
    strata = []
    for lvl in sorted(set(level.values())):
        strata.append([r for r in program.rules if level[r.head.atom.pred] == lvl])
    return _Prepared(streams, bg, intensional, plans, strata)


def _answer_at(prepared: _Prepared, start: int, t: int) -> Result:
    """The answer at ``t``, from scratch."""
    model = _Model(prepared.streams, prepared.background, start, t)
    for rules in prepared.strata:
        _fixpoint(rules, prepared.plans, model)
    intensional = prepared.intensional
    holds = frozenset(a for a in model.atoms_at(t) if a.pred in intensional)
    placed = {}
    for u in sorted(model.derived):
        if u != t and model.derived_at(u):
            placed[u] = frozenset(model.derived_at(u))
    return Result(t, holds, placed)


# --------------------------------------------------------------------------------------------------
# Input
# --------------------------------------------------------------------------------------------------


def _ground_input(atom: Atom) -> Atom:
    """The atom without its source span; it must be ground."""
    if not atom.is_ground():
        raise ValueError(f"input atom {atom} is not ground")
    return Atom(atom.pred, tuple(atom.args))


def _normalize_streams(stream: StreamInput) -> dict[str, dict[int, list[Atom]]]:
    """name -> point -> atoms in first-arrival order, each atom once per point."""
    keys = list(stream.keys())
    if keys and all(isinstance(k, str) for k in keys):
        named = stream
    elif all(type(k) is int for k in keys):
        named = {DEFAULT_STREAM: stream}
    else:
        raise TypeError("stream keys must be all time points (int) or all stream names (str)")
    out: dict[str, dict[int, list[Atom]]] = {}
    for name, points in named.items():  # type: ignore[union-attr]
        per_point: dict[int, list[Atom]] = {}
        for u, atoms in points.items():
            if type(u) is not int:
                raise TypeError(f"time point {u!r} of stream {name!r} is not an int")
            unique: list[Atom] = []
            for atom in atoms:
                g = _ground_input(atom)
                if g not in unique:
                    unique.append(g)
            per_point[u] = unique
        out[name] = per_point
    return out


# --------------------------------------------------------------------------------------------------
# Static checks: tuple windows, safety / literal order, strata
# --------------------------------------------------------------------------------------------------


def _check_tuple_windows(rule: Rule, intensional: set[str]) -> None:
    for lit in rule.body:
        if type(lit) is ExtAtom and type(lit.window) is TupleWindow and lit.atom.pred in intensional:
            raise CompileError(
                f"tuple window over intensional predicate {lit.atom.pred} in rule: {rule}",
                lit.span or rule.span,
            )


def _expr_vars(expr: Expr) -> set[Var]:
    if type(expr) is BinOp:
        return _expr_vars(expr.left) | _expr_vars(expr.right)
    return {expr} if is_var(expr) else set()  # type: ignore[arg-type]


def _plan(rule: Rule) -> list[tuple[str, BodyLiteral]]:
    """The order in which the body is evaluated: left to right, each time the first literal that can be
    evaluated with the variables bound so far.  Steps are (kind, literal), kind one of:

    * ``"match"``  - a positive extended atom: binds all its variables;
    * ``"assign"`` - ``X = expr``, X not bound by any positive extended atom and not yet bound, expr bound;
    * ``"test"``   - everything else; all its variables must be bound.
    """
    positive_vars: set[Var] = set()
    for lit in rule.body:
        if type(lit) is ExtAtom and lit.positive:
            positive_vars |= set(lit.variables())

    bound: set[Var] = set()
    remaining = list(rule.body)
    steps: list[tuple[str, BodyLiteral]] = []
    while remaining:
        for i, lit in enumerate(remaining):  # noqa: B007 - i is used after the loop
            kind = _kind(lit, bound, positive_vars)
            if kind is not None:
                break
        else:
            missing = set()
            for lit in remaining:
                missing |= set(lit.variables()) - bound
            names = ", ".join(sorted(v.name for v in missing))
            raise UnsafeRuleError(f"unsafe rule (variables {names} are never bound): {rule}", rule.span)
        steps.append((kind, lit))
        if kind == "match":
            bound |= set(lit.variables())
        elif kind == "assign":
            bound.add(lit.left)  # type: ignore[union-attr, arg-type]
        del remaining[i]

    unbound_head = set(rule.head.variables()) - bound
    if unbound_head:
        names = ", ".join(sorted(v.name for v in unbound_head))
        raise UnsafeRuleError(
            f"unsafe rule (head variables {names} are not bound by the body): {rule}", rule.span
        )
    return steps


def _kind(lit: BodyLiteral, bound: set[Var], positive_vars: set[Var]) -> str | None:
    if type(lit) is ExtAtom:
        if lit.positive:
            return "match"
        return "test" if set(lit.variables()) <= bound else None
    assert type(lit) is Comparison
    if (
        lit.op == "="
        and is_var(lit.left)
        and lit.left not in bound
        and lit.left not in positive_vars
        and _expr_vars(lit.right) <= bound
    ):
        return "assign"
    return "test" if set(lit.variables()) <= bound else None


def _stratify(rules: Sequence[Rule], intensional: set[str]) -> dict[str, int]:
    """A stratum per intensional predicate: >= the strata of its positive body predicates and > the strata
    of its negated ones (outer or inner ``not``)."""
    level = {p: 0 for p in intensional}
    for _ in range(len(intensional) + 1):
        changed = False
        for rule in rules:
            head = rule.head.atom.pred
            for lit in rule.body:
                if type(lit) is not ExtAtom or lit.atom.pred not in intensional:
                    continue
                need = level[lit.atom.pred] + (0 if lit.positive else 1)
                if level[head] < need:
                    level[head] = need
                    changed = True
        if not changed:
            return level
    cyclic = sorted(p for p, lvl in level.items() if lvl >= len(intensional))
    raise StratificationError(
        f"program is not stratified: cycle through negation involving {', '.join(cyclic)}"
    )


# --------------------------------------------------------------------------------------------------
# The interpretation at evaluation time t
# --------------------------------------------------------------------------------------------------

ALL_STREAMS = None  # "see the data of every stream"


@dataclass
class _Scope:
    """Where an extended atom is evaluated: its range, the atoms of a predicate holding at a point of it
    (``candidates(u, pred)``, possibly with repetitions) and whether a ground atom holds at a point."""

    points: range
    candidates: Callable[[int, str], Iterable[Atom]]
    holds: Callable[[Atom, int], bool]


def _by_pred(atoms: Iterable[Atom]) -> dict[str, set[Atom]]:
    out: dict[str, set[Atom]] = {}
    for atom in atoms:
        out.setdefault(atom.pred, set()).add(atom)
    return out


class _Model:
    """The interpretation built while answering at time ``t``.

    Atoms are indexed by predicate only to keep the nested loops short; nothing else is precomputed.
    """

    def __init__(
        self, streams: dict[str, dict[int, list[Atom]]], background: frozenset[Atom], start: int, t: int
    ):
        self.start = start
        self.t = t
        self.background = background
        self.background_by_pred = _by_pred(background)
        # the timeline [start, t] of each stream, in arrival order (for tuple windows) ...
        self.streams = {
            name: {u: atoms for u, atoms in points.items() if start <= u <= t}
            for name, points in streams.items()
        }
        # ... and indexed: stream -> point -> predicate -> atoms
        self.data = {
            name: {u: _by_pred(atoms) for u, atoms in points.items()} for name, points in self.streams.items()
        }
        # what the rules derive: point -> predicate -> atoms (the point may lie outside [start, t])
        self.derived: dict[int, dict[str, set[Atom]]] = {}

    def derived_at(self, u: int) -> set[Atom]:
        out: set[Atom] = set()
        for atoms in self.derived.get(u, {}).values():
            out |= atoms
        return out

    def add(self, u: int, atom: Atom) -> None:
        self.derived.setdefault(u, {}).setdefault(atom.pred, set()).add(atom)

    def is_derived(self, u: int, atom: Atom) -> bool:
        return atom in self.derived.get(u, {}).get(atom.pred, ())

    def candidates(self, u: int, pred: str, stream: str | None = ALL_STREAMS) -> Iterator[Atom]:
        """The atoms of ``pred`` holding at ``u``: background, data (of ``stream`` or of every stream), derived."""
        yield from self.background_by_pred.get(pred, ())
        for name, points in self.data.items():
            if stream is ALL_STREAMS or name == stream:
                yield from points.get(u, {}).get(pred, ())
        yield from self.derived.get(u, {}).get(pred, ())

    def holds(self, atom: Atom, u: int, stream: str | None = ALL_STREAMS) -> bool:
        if atom in self.background or self.is_derived(u, atom):
            return True
        return any(
            atom in points.get(u, {}).get(atom.pred, ())
            for name, points in self.data.items()
            if stream is ALL_STREAMS or name == stream
        )

    def atoms_at(self, u: int) -> set[Atom]:
        """Everything that holds at ``u``: background, data of every stream, derived."""
        out = set(self.background) | self.derived_at(u)
        for points in self.data.values():
            for atoms in points.get(u, {}).values():
                out |= atoms
        return out

    # -- ranges ------------------------------------------------------------------------------------

    def scope(self, lit: ExtAtom) -> _Scope:
        t, start = self.t, self.start
        if lit.op is None:  # plain atom: the point t, data of every stream
            return _Scope(range(t, t + 1), self.candidates, self.holds)
        window = lit.window
        if window is None:  # un-windowed operator: the whole timeline, data of every stream
            return _Scope(range(start, t + 1), self.candidates, self.holds)
        if type(window) is TimeWindow:
            pivot = (t // window.step) * window.step
            lo = max(start, pivot - window.size)
            name = window.stream
            return _Scope(
                range(lo, pivot + 1),
                lambda u, pred: self.candidates(u, pred, name),
                lambda atom, u: self.holds(atom, u, name),
            )
        if type(window) is PartitionWindow:
            return self._partition_scope(window)
        assert type(window) is TupleWindow
        return self._tuple_scope(window)

    def _partition_scope(self, window: PartitionWindow) -> _Scope:
        """LARS's w_p: the stream's atoms matching the key pattern, split by the values of its named variables
        (written out here, independently of the engine); each part keeps its last ``n`` atoms."""
        named = []
        for term in (window.key.pred, *window.key.args):
            if is_var(term) and not term.name.startswith("_") and term not in named:
                named.append(term)
        parts: dict[tuple, list] = {}
        points = self.streams.get(window.stream, {})
        for u in sorted(points):
            for atom in points[u]:
                if len(atom.args) != len(window.key.args):
                    continue
                binding: dict = {}
                ok = True
                for pat, value in zip((window.key.pred, *window.key.args), (atom.pred, *atom.args), strict=True):
                    if not is_var(pat):
                        ok = pat == value
                    elif not pat.name.startswith("_"):
                        ok = binding.setdefault(pat, value) == value
                    if not ok:
                        break
                if ok:
                    parts.setdefault(tuple(binding[v] for v in named), []).append((u, atom))
        kept_at: dict[int, set[Atom]] = {}
        lo = self.t
        for arrivals in parts.values():
            kept = arrivals[-window.size:]
            lo = min(lo, kept[0][0] if len(arrivals) >= window.size else self.start)
            for u, atom in kept:
                kept_at.setdefault(u, set()).add(atom)
        if not parts:
            lo = self.start
        return self._kept_scope(kept_at, lo)

    def _kept_scope(self, kept_at: dict[int, set[Atom]], lo: int) -> _Scope:
        """A count window's scope: the background at every point of ``[lo, t]`` and only the kept data atoms."""
        bg, bg_by_pred = self.background, self.background_by_pred

        def candidates(u: int, pred: str) -> list[Atom]:
            return [*bg_by_pred.get(pred, ()), *(a for a in kept_at.get(u, ()) if a.pred == pred)]

        def holds(atom: Atom, u: int) -> bool:
            return atom in bg or atom in kept_at.get(u, ())

        return _Scope(range(lo, self.t + 1), candidates, holds)

    def _tuple_scope(self, window: TupleWindow) -> _Scope:
        """The last ``n`` data atoms of the window's stream (each atom once per point, see input)."""
        arrivals = []  # (point, atom) in arrival order
        points = self.streams.get(window.stream, {})
        for u in sorted(points):
            for atom in points[u]:
                arrivals.append((u, atom))
        kept = arrivals[-window.size :]
        lo = kept[0][0] if len(arrivals) >= window.size else self.start
        kept_at: dict[int, set[Atom]] = {}
        for u, atom in kept:
            kept_at.setdefault(u, set()).add(atom)
        return self._kept_scope(kept_at, lo)


# --------------------------------------------------------------------------------------------------
# Rule evaluation
# --------------------------------------------------------------------------------------------------


def _fixpoint(rules: list[Rule], plans: dict[int, list], model: _Model) -> None:
    """Re-run all rules of one stratum until no rule derives anything new."""
    for _ in range(MAX_ROUNDS):
        new = []
        for rule in rules:
            for point, atom in _fire(rule, plans[id(rule)], model):
                if not model.is_derived(point, atom):
                    new.append((point, atom))
        if not new:
            return
        for point, atom in new:
            model.add(point, atom)
    raise EvaluationError(f"no fixpoint after {MAX_ROUNDS} rounds at t={model.t} (infinite model?)")


def _fire(rule: Rule, steps: list, model: _Model) -> list[tuple[int, Atom]]:
    """Every (point, atom) the rule derives in the current interpretation."""
    out = []
    for binding in _solve(steps, 0, {}, model):
        atom = _substitute(rule.head.atom, binding)
        time = rule.head.time
        if time is None:
            point = model.t
        else:
            point = binding[time] if is_var(time) else time
            if type(point) is not int:
                raise EvaluationError(
                    f"@{time} in the head is bound to {point!r}, which is not an integer time point, in rule: {rule}",
                    rule.span,
                )
        out.append((point, atom))
    return out


def _solve(steps: list, i: int, binding: Binding, model: _Model) -> Iterator[Binding]:
    """All extensions of ``binding`` that satisfy steps[i:] (nested loops, one level per literal)."""
    if i == len(steps):
        yield binding
        return
    kind, lit = steps[i]
    if kind == "assign":
        candidates = _assign(lit, binding)
    elif type(lit) is Comparison:
        candidates = iter([binding]) if _test_comparison(lit, binding) else iter([])
    else:
        candidates = _extended(lit, binding, model)
    for extended in candidates:
        yield from _solve(steps, i + 1, extended, model)


def _substitute(atom: Atom, binding: Binding) -> Atom:
    return Atom(atom.pred, tuple(binding[a] if is_var(a) else a for a in atom.args))


def _match(pattern: Atom, ground: Atom, binding: Binding) -> Binding | None:
    """``binding`` extended so that ``pattern`` becomes ``ground``, or None."""
    if pattern.pred != ground.pred or len(pattern.args) != len(ground.args):
        return None
    out = binding  # copied before the first new variable is bound; bindings are never mutated
    for p, g in zip(pattern.args, ground.args, strict=True):
        if type(p) is Var:
            if p in out:
                if out[p] != g:
                    return None
            else:
                if out is binding:
                    out = dict(binding)
                out[p] = g
        elif p != g:
            return None
    return out


def _extended(lit: ExtAtom, binding: Binding, model: _Model) -> Iterator[Binding]:
    """The bindings under which the extended atom holds at the evaluation time (deduplicated)."""
    seen = set()
    for b in _extended_raw(lit, binding, model):
        key = frozenset(b.items())
        if key not in seen:
            seen.add(key)
            yield b


def _extended_raw(lit: ExtAtom, binding: Binding, model: _Model) -> Iterator[Binding]:
    if lit.negated:  # outer not: all variables are bound (see _plan)
        inner = replace(lit, negated=False)
        if next(_extended_raw(inner, binding, model), None) is None:
            yield binding
        return

    scope = model.scope(lit)
    atom = lit.atom

    if lit.op is None:  # plain atom at t
        for candidate in scope.candidates(model.t, atom.pred):
            m = _match(atom, candidate, binding)
            if m is not None:
                yield m
        return

    if lit.op is Op.DIAMOND:
        if lit.inner_negated:  # some point of the range where the (ground) atom does not hold
            g = _substitute(atom, binding)
            if any(not scope.holds(g, u) for u in scope.points):
                yield binding
            return
        for u in scope.points:
            for candidate in scope.candidates(u, atom.pred):
                m = _match(atom, candidate, binding)
                if m is not None:
                    yield m
        return

    if lit.op is Op.BOX:
        if len(scope.points) == 0:
            return
        if lit.inner_negated:  # no point of the range where the (ground) atom holds
            g = _substitute(atom, binding)
            if not any(scope.holds(g, u) for u in scope.points):
                yield binding
            return
        for candidate in scope.candidates(scope.points[0], atom.pred):
            m = _match(atom, candidate, binding)
            if m is not None and all(scope.holds(candidate, u) for u in scope.points):
                yield m
        return

    assert lit.op is Op.AT
    time = lit.time
    if is_var(time) and time not in binding:  # unbound U: every point of the range where the atom holds
        assert not lit.inner_negated, "planning guarantees a bound time under 'not'"
        for u in scope.points:
            with_u = {**binding, time: u}
            for candidate in scope.candidates(u, atom.pred):
                m = _match(atom, candidate, with_u)
                if m is not None:
                    yield m
        return
    u = binding[time] if is_var(time) else time
    if type(u) is not int or u not in scope.points:
        return
    if lit.inner_negated:
        if not scope.holds(_substitute(atom, binding), u):
            yield binding
        return
    for candidate in scope.candidates(u, atom.pred):
        m = _match(atom, candidate, binding)
        if m is not None:
            yield m


# --------------------------------------------------------------------------------------------------
# Values: arithmetic and comparisons (docs/semantics-notes.md "Values")
# --------------------------------------------------------------------------------------------------


class _Fail:
    """The value of an expression that has none (division by zero, symbolic operand)."""


FAIL = _Fail()


def _value(expr: Expr, binding: Binding):
    if type(expr) is BinOp:
        left = _value(expr.left, binding)
        right = _value(expr.right, binding)
        if left is FAIL or right is FAIL:
            return FAIL
        return _arith(expr.op, left, right)
    if is_var(expr):
        return binding[expr]
    return expr


def _arith(op: str, x, y):
    if not (is_number(x) and is_number(y)):
        return FAIL
    try:
        if op == "+":
            return x + y
        if op == "-":
            return x - y
        if op == "*":
            return x * y
        assert op == "/"
        if type(x) is int and type(y) is int:
            if y == 0:
                return FAIL
            return x // y  # floor division on two integers
        if y == 0:
            return FAIL
        return Decimal(x) / Decimal(y)
    except ArithmeticError:  # decimal signals (overflow, invalid operation, ...)
        return FAIL


def _compare(op: str, x, y) -> bool:
    both_numbers = is_number(x) and is_number(y)
    both_symbols = type(x) is str and type(y) is str
    if op in ("=", "!="):
        equal = (both_numbers or both_symbols) and x == y
        return equal if op == "=" else not equal
    if not (both_numbers or both_symbols):
        return False  # a number against a symbol
    if op == "<":
        return x < y
    if op == "<=":
        return x <= y
    if op == ">":
        return x > y
    assert op == ">="
    return x >= y


def _test_comparison(lit: Comparison, binding: Binding) -> bool:
    left = _value(lit.left, binding)
    right = _value(lit.right, binding)
    if left is FAIL or right is FAIL:
        return False
    return _compare(lit.op, left, right)


def _assign(lit: Comparison, binding: Binding) -> Iterator[Binding]:
    value = _value(lit.right, binding)
    if value is not FAIL:
        yield {**binding, lit.left: value}
