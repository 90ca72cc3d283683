"""Hypothesis strategies: random stratified, safe LARS programs and random streams.

Programs use extensional predicates ``a/1, b/2, c/0`` (streamed), a background predicate ``g/1`` (some
facts), and intensional predicates ``i0 … i3``.  A rule for ``i_k`` may use ``i_j`` positively for
``j <= k`` (``j == k`` is recursion) and negatively only for ``j < k``, so every program is stratified.
Tuple windows are used over extensional predicates only.  Variables in heads, negations and comparisons
are drawn from those bound by positive literals, so every rule is safe.
"""

from __future__ import annotations

from decimal import Decimal

from hypothesis import strategies as st

from rdfstream.atoms import Atom
from rdfstream.ir.nodes import (
    BinOp,
    Comparison,
    ExtAtom,
    Head,
    Op,
    PartitionWindow,
    Program,
    Rule,
    TimeWindow,
    TupleWindow,
)
from rdfstream.terms import Var

EXT = {"a": 1, "b": 2, "c": 0}
BACKGROUND = {"g": 1}
INTENSIONAL = {"i0": 1, "i1": 2, "i2": 0, "i3": 1}
INT_ORDER = ["i0", "i1", "i2", "i3"]
CONSTANTS = ["x", "y", 1, 2]
RARE_CONSTANTS = [Decimal("1.5"), '"s"', "<http://ex.org/a>"]
SECOND_STREAM = "<http://ex.org/s2>"
VARS = [Var("X"), Var("Y")]
TIME_VARS = [Var("T"), Var("U")]


@st.composite
def windows(draw, allow_tuple: bool):
    kinds = ["none", "time", "step"] + (["tuple", "partition"] if allow_tuple else [])
    kind = draw(st.sampled_from(kinds))
    stream = draw(st.sampled_from(["", "", "", SECOND_STREAM]))
    if kind == "none":
        return None
    if kind == "partition":  # LARS's w_p: split by a key pattern over the data predicates
        k, k2, anon = Var("K"), Var("K2"), Var("_1")
        key = draw(st.sampled_from([Atom("a", (k,)), Atom("b", (k, anon)), Atom("b", (anon, k)), Atom("b", (k, k2)),
                                    Atom("b", (k, k)), Atom(Var("P"), (k,)), Atom("b", (k, "y"))]))
        return PartitionWindow(draw(st.integers(1, 3)), key, stream=stream)
    if kind == "time":
        return TimeWindow(draw(st.integers(0, 4)), stream=stream)
    if kind == "step":
        return TimeWindow(draw(st.integers(0, 4)), draw(st.integers(2, 3)), stream=stream)
    return TupleWindow(draw(st.integers(1, 4)), stream=stream)


@st.composite
def atom_over(draw, pred: str, arity: int, var_pool, const_p: float = 0.15):
    args = []
    for _ in range(arity):
        if draw(st.floats(0, 1)) < const_p:
            args.append(draw(st.sampled_from(CONSTANTS)))
        else:
            args.append(draw(st.sampled_from(var_pool)))
    return Atom(pred, tuple(args))


@st.composite
def ext_atom(draw, pred: str, arity: int, var_pool, time_var, negated=False, inner=False, extensional=True):
    atom = draw(atom_over(pred, arity, var_pool))
    window = draw(windows(allow_tuple=extensional))
    if type(window) is PartitionWindow and inner:  # 'not' inside a partition window is not defined
        window = TupleWindow(window.size, window.stream)
    # weighted towards operators that are often true, so that outputs are rarely empty
    op_choices = [Op.DIAMOND, Op.DIAMOND, Op.DIAMOND, Op.AT, Op.AT, Op.BOX]
    if type(window) is PartitionWindow:
        op_choices = [Op.DIAMOND, Op.DIAMOND, Op.AT]
    if window is None:
        op_choices += [None, None]
    op = draw(st.sampled_from(op_choices))
    if inner and op is None:
        op = Op.DIAMOND
    time = None
    if op is Op.AT:
        time = time_var if time_var is not None else draw(st.integers(0, 6))
    return ExtAtom(atom, op, time, window, inner_negated=inner, negated=negated)


@st.composite
def rules(draw, k: int, recursive: bool = True):
    head_pred = INT_ORDER[k]
    positive_preds = list(EXT) * 2 + list(BACKGROUND) + INT_ORDER[: k + 1 if recursive else k]
    body = []
    bound: list = []
    time_bound: list = []
    for _ in range(draw(st.sampled_from([1, 1, 2, 2, 3]))):
        pred = draw(st.sampled_from(positive_preds))
        arity = {**EXT, **BACKGROUND, **INTENSIONAL}[pred]
        tv = draw(st.sampled_from([None] + TIME_VARS))
        lit = draw(ext_atom(pred, arity, VARS, tv, extensional=pred in EXT))
        body.append(lit)
        for v in lit.variables():
            if v in TIME_VARS:
                if v not in time_bound:
                    time_bound.append(v)
            elif v not in bound:
                bound.append(v)
    pool = bound or None
    # negation over lower strata or extensional/background predicates
    if draw(st.integers(0, 2)) == 0:
        neg_preds = list(EXT) + list(BACKGROUND) + INT_ORDER[:k]
        pred = draw(st.sampled_from(neg_preds))
        arity = {**EXT, **BACKGROUND, **INTENSIONAL}[pred]
        if arity == 0 or pool:
            inner = draw(st.booleans())
            outer = not inner or draw(st.booleans())
            tv = draw(st.sampled_from(time_bound)) if time_bound and draw(st.booleans()) else None
            lit = draw(ext_atom(pred, arity, pool or VARS, tv, negated=outer, inner=inner,
                                extensional=pred in EXT))
            body.append(lit)
    # a comparison between bound values
    numeric = time_bound + bound
    if numeric and draw(st.booleans()):
        left = draw(st.sampled_from(numeric))
        others = [v for v in numeric if v != left]
        right = draw(st.one_of(st.sampled_from(others or [1]), st.integers(0, 6), st.sampled_from(CONSTANTS)))
        body.append(Comparison(draw(st.sampled_from(["=", "!=", "<", "<=", ">", ">="])), left, right))
    # head: plain, or placed at a bound time (possibly shifted by an assignment)
    head_time = None
    if time_bound and draw(st.booleans()):
        base = draw(st.sampled_from(time_bound))
        shift = draw(st.integers(-2, 2))
        if shift == 0:
            head_time = base
        else:
            target = Var("S")
            body.append(Comparison("=", target, BinOp("+", base, shift)))
            head_time = target
    arity = INTENSIONAL[head_pred]
    if arity and not bound:
        # nothing to put in the head: use constants
        head_atom = Atom(head_pred, tuple(draw(st.sampled_from(CONSTANTS)) for _ in range(arity)))
    else:
        head_atom = Atom(head_pred, tuple(draw(st.sampled_from(bound)) for _ in range(arity)))
    return Rule(Head(head_atom, head_time), tuple(body))


@st.composite
def programs(draw):
    out = []
    for k in range(len(INT_ORDER)):
        # the first rule of each intensional predicate is not recursive, so the predicate has support
        for j in range(draw(st.sampled_from([0, 1, 1, 2]))):
            out.append(draw(rules(k, recursive=j > 0)))
    if not out:
        out.append(draw(rules(0, recursive=False)))
    if draw(st.integers(0, 4)) == 0:  # a rule with an empty body, derived (or placed) at every tick
        pred = draw(st.sampled_from(INT_ORDER))
        args = tuple(draw(st.sampled_from(CONSTANTS)) for _ in range(INTENSIONAL[pred]))
        out.append(Rule(Head(Atom(pred, args), draw(st.sampled_from([None, 0, 2, 5, 9]))), ()))
    facts = tuple(Atom("g", (c,)) for c in draw(st.lists(st.sampled_from(CONSTANTS), max_size=2, unique=True)))
    return Program(tuple(out), facts)


@st.composite
def ext_atoms(draw):
    pred = draw(st.sampled_from(list(EXT)))
    pool = st.sampled_from(CONSTANTS * 4 + RARE_CONSTANTS)
    return Atom(pred, tuple(draw(pool) for _ in range(EXT[pred])))


@st.composite
def streams(draw, max_len: int = 12):
    """(stream, start, end): time -> atoms, with gaps; the timeline may extend past the last atom."""
    start = draw(st.integers(0, 3))
    length = draw(st.integers(1, max_len))
    stream = {}
    sparse = draw(st.integers(0, 2)) == 0  # few data ticks and a long tail: exercises skipped ticks
    density = 0.25 if sparse else 0.75
    for t in range(start, start + length):
        if draw(st.floats(0, 1)) < density:
            stream[t] = draw(st.lists(ext_atoms(), min_size=1, max_size=4))
    end = start + length - 1 + draw(st.integers(0, 8 if sparse else 3))
    if draw(st.integers(0, 3)) == 0:  # a second, named stream
        second = {}
        for t in range(start, start + length):
            if draw(st.floats(0, 1)) < 0.5:
                second[t] = draw(st.lists(ext_atoms(), min_size=1, max_size=3))
        return {"": stream, SECOND_STREAM: second}, start, end
    return stream, start, end
