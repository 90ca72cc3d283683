"""The reference evaluator (tests/reference.py) against SEMANTICS.md §1 and hand-worked examples.

Programs are built with the IR constructors directly (no parser).  Every expected answer below is
derived by hand from SEMANTICS.md §1 and docs/semantics-notes.md; the reasoning is in the comments.
"""

from __future__ import annotations

import time
from dataclasses import replace
from decimal import Decimal

import pytest

from rdfstream.atoms import Atom
from rdfstream.errors import CompileError, EvaluationError, StratificationError, UnsafeRuleError
from rdfstream.ir.nodes import (
    DEFAULT_STREAM,
    BinOp,
    Comparison,
    ExtAtom,
    Head,
    Op,
    Program,
    Rule,
    TimeWindow,
    TupleWindow,
)
from rdfstream.terms import Var

try:
    from reference import Result, evaluate
except ImportError:  # tests/ imported as a package
    from tests.reference import Result, evaluate


# --------------------------------------------------------------------------------------------------
# Small builders
# --------------------------------------------------------------------------------------------------


def _term(x):
    return Var(x) if isinstance(x, str) and x[:1].isupper() else x


def A(pred, *args) -> Atom:
    """``A("q", "X", "y", 3)`` = q(X, y, 3): capitalised strings are variables."""
    return Atom(pred, tuple(_term(a) for a in args))


def W(size, step=1, stream=DEFAULT_STREAM) -> TimeWindow:
    return TimeWindow(size, step, stream)


def TW(size, stream=DEFAULT_STREAM) -> TupleWindow:
    return TupleWindow(size, stream)


def plain(atom) -> ExtAtom:
    return ExtAtom(atom)


def dia(atom, win=None, inner=False) -> ExtAtom:
    return ExtAtom(atom, Op.DIAMOND, window=win, inner_negated=inner)


def box(atom, win=None, inner=False) -> ExtAtom:
    return ExtAtom(atom, Op.BOX, window=win, inner_negated=inner)


def at(t, atom, win=None, inner=False) -> ExtAtom:
    return ExtAtom(atom, Op.AT, time=_term(t), window=win, inner_negated=inner)


def NOT(lit: ExtAtom) -> ExtAtom:
    return replace(lit, negated=True)


def C(left, op, right) -> Comparison:
    return Comparison(op, _term(left), _term(right))


def E(left, op, right) -> BinOp:
    return BinOp(op, _term(left), _term(right))


def R(head: Atom, *body, at_time=None) -> Rule:
    return Rule(Head(head, None if at_time is None else _term(at_time)), tuple(body))


def P(*rules, facts=()) -> Program:
    return Program(tuple(rules), tuple(facts))


def holds(results: list[Result]) -> dict[int, set[str]]:
    return {r.t: {str(a) for a in r.holds} for r in results}


def placed(results: list[Result]) -> dict[int, dict[int, set[str]]]:
    return {r.t: {u: {str(a) for a in atoms} for u, atoms in r.placed.items()} for r in results}


def table(**rows) -> dict[int, set[str]]:
    """``table(t0={...}, t1={...})`` -> {0: {...}, 1: {...}}."""
    return {int(k[1:]): set(v) for k, v in rows.items()}


# --------------------------------------------------------------------------------------------------
# SEMANTICS.md §1 worked examples
# --------------------------------------------------------------------------------------------------


def test_laser_examples_1_to_4_with_the_t42_correction():
    # q(X,Y,Z) :- [3] <> a(X,Y), [#3] <> b(Y,Z).
    prog = P(R(A("q", "X", "Y", "Z"), dia(A("a", "X", "Y"), W(3)), dia(A("b", "Y", "Z"), TW(3))))
    data = {36: [A("a", "x1", "y")], 38: [A("a", "x2", "y"), A("b", "y", "z")], 40: [A("a", "x3", "y")]}
    res = evaluate(prog, data, 35, 42)
    assert [r.t for r in res] == list(range(35, 43))
    both12 = {"q(x1,y,z)", "q(x2,y,z)"}
    both23 = {"q(x2,y,z)", "q(x3,y,z)"}
    assert holds(res) == {
        35: set(), 36: set(), 37: set(),
        38: both12, 39: both12,
        40: both23, 41: both23,
        # the paper lists q(x2,y,z) too, but the window [39,42] no longer holds a(x2,y)@38
        42: {"q(x3,y,z)"},
    }  # fmt: skip
    assert all(r.placed == {} for r in res)


def test_at_head_and_box_example():
    # @T steam(V) :- [2] @T temp(V), V >= 100.
    # @T isSteam  :- [2] @T steam(V).
    # alarm       :- [2] [] isSteam.
    prog = P(
        R(A("steam", "V"), at("T", A("temp", "V"), W(2)), C("V", ">=", 100), at_time="T"),
        R(A("isSteam"), at("T", A("steam", "V"), W(2)), at_time="T"),
        R(A("alarm"), box(A("isSteam"), W(2))),
    )
    data = {0: [A("temp", 100)], 1: [A("temp", 120)], 2: [A("temp", 101)], 3: [A("temp", 50)]}
    res = evaluate(prog, data, 0, 5)
    assert holds(res) == {
        0: {"alarm", "isSteam", "steam(100)"},
        1: {"alarm", "isSteam", "steam(120)"},
        2: {"alarm", "isSteam", "steam(101)"},
        3: set(), 4: set(), 5: set(),
    }  # fmt: skip
    # Placed (by hand): at t the range of [2] is [max(0,t-2), t]; every temp >= 100 in it is re-placed as
    # steam (and isSteam) at its own point; the ones at points != t are reported as placed.
    #   t=0: range [0,0]: only point 0 = t                      -> nothing placed elsewhere
    #   t=1: [0,1]: steam(100)@0                                  -> {0: steam(100), isSteam}
    #   t=2: [0,2]: steam(100)@0, steam(120)@1
    #   t=3: [1,3]: steam(120)@1, steam(101)@2 (temp(50)@3 < 100, so the box over [1,3] fails at 3)
    #   t=4: [2,4]: steam(101)@2
    #   t=5: [3,5]: only temp(50)                                 -> nothing
    assert placed(res) == {
        0: {},
        1: {0: {"steam(100)", "isSteam"}},
        2: {0: {"steam(100)", "isSteam"}, 1: {"steam(120)", "isSteam"}},
        3: {1: {"steam(120)", "isSteam"}, 2: {"steam(101)", "isSteam"}},
        4: {2: {"steam(101)", "isSteam"}},
        5: {},
    }


# --------------------------------------------------------------------------------------------------
# Hand-worked examples
# --------------------------------------------------------------------------------------------------


def test_step_window_pivot():
    # p(X) :- [1 step 3] <> a(X).   pivot t' = floor(t/3)*3, range [max(0, t'-1), t'].
    #   t=0..2: pivot 0, range [0,0]: no a (a(v1)@1 is never seen: at t=1,2 the pivot is still 0)
    #   t=3..5: pivot 3, range [2,3]: a(v2)@2        (a(v4)@4 lies after the pivot, never seen either)
    #   t=6..8: pivot 6, range [5,6]: a(v5)@5
    prog = P(R(A("p", "X"), dia(A("a", "X"), W(1, step=3))))
    data = {1: [A("a", "v1")], 2: [A("a", "v2")], 4: [A("a", "v4")], 5: [A("a", "v5")]}
    res = evaluate(prog, data, 0, 8)
    assert holds(res) == {
        0: set(), 1: set(), 2: set(),
        3: {"p(v2)"}, 4: {"p(v2)"}, 5: {"p(v2)"},
        6: {"p(v5)"}, 7: {"p(v5)"}, 8: {"p(v5)"},
    }  # fmt: skip


def test_step_window_with_empty_range():
    # Timeline starts at 5; [1 step 4] has pivot 4 for t=5..7, range [max(5,3), 4] = empty:
    #   p  :- [1 step 4] [] bg.        [] over an empty range is false
    #   q  :- [1 step 4] [] not c.     false too (empty range)
    #   r  :- [1 step 4] <> not c.     <> over an empty range is false
    #   s(T) :- [1 step 4] @T bg.      @ binds nothing
    #   n  :- not [1 step 4] <> bg.    <> bg false, so n holds
    # t=8,9: pivot 8, range [7,8]; c@8:  p (bg everywhere), not q (c at 8), r (no c at 7), s(7), s(8), not n.
    prog = P(
        R(A("p"), box(A("bg"), W(1, 4))),
        R(A("q"), box(A("c"), W(1, 4), inner=True)),
        R(A("r"), dia(A("c"), W(1, 4), inner=True)),
        R(A("s", "T"), at("T", A("bg"), W(1, 4))),
        R(A("n"), NOT(dia(A("bg"), W(1, 4)))),
        facts=(A("bg"),),
    )
    res = evaluate(prog, {8: [A("c")]}, 5, 9)
    after = {"p", "r", "s(7)", "s(8)"}
    assert holds(res) == {5: {"n"}, 6: {"n"}, 7: {"n"}, 8: after, 9: after}


def test_tuple_window_splits_a_time_point_and_dedups():
    # Arrivals (duplicates at one point count once, first arrival):
    #   a(1)@0 | a(2)@1, b(1)@1, a(3)@1 | a(5)@3, b(2)@3   (the second a(5)@3 is dropped)
    # p(X) :- [#2] <> a(X).   q(X) :- [#2] <> b(X).   at3(X,T) :- [#3] @T a(X).   boxa(X) :- [#2] [] a(X).
    # t=0: one arrival (< n): range [0,0], kept a(1)       -> p(1), at3(1,0), boxa(1)
    # t=1: [#2] keeps b(1)@1, a(3)@1 (a(2)@1 is cut off: the point is split); range [1,1]
    #      -> p(3), q(1), boxa(3);  [#3] keeps a(2),b(1),a(3)@1, range [1,1] -> at3(2,1), at3(3,1)
    # t=2: same kept atoms; [#2] range [1,2]: a(3) not at 2 -> no boxa
    # t=3: [#2] keeps a(5)@3, b(2)@3, range [3,3] -> p(5), q(2), boxa(5)
    #      [#3] keeps a(3)@1, a(5)@3, b(2)@3, range [1,3] -> at3(3,1), at3(5,3)
    #      (if the duplicate a(5) counted, [#3] would keep a(5),b(2),a(5) and lose at3(3,1))
    # t=4: as t=3, but the [#2] range is [3,4] -> no boxa
    prog = P(
        R(A("p", "X"), dia(A("a", "X"), TW(2))),
        R(A("q", "X"), dia(A("b", "X"), TW(2))),
        R(A("at3", "X", "T"), at("T", A("a", "X"), TW(3))),
        R(A("boxa", "X"), box(A("a", "X"), TW(2))),
    )
    data = {
        0: [A("a", 1)],
        1: [A("a", 2), A("b", 1), A("a", 3)],
        3: [A("a", 5), A("b", 2), A("a", 5)],
    }
    res = evaluate(prog, data, 0, 4)
    assert holds(res) == {
        0: {"p(1)", "at3(1,0)", "boxa(1)"},
        1: {"p(3)", "q(1)", "at3(2,1)", "at3(3,1)", "boxa(3)"},
        2: {"p(3)", "q(1)", "at3(2,1)", "at3(3,1)"},
        3: {"p(5)", "q(2)", "at3(3,1)", "at3(5,3)", "boxa(5)"},
        4: {"p(5)", "q(2)", "at3(3,1)", "at3(5,3)"},
    }


def test_tuple_window_range_while_fewer_than_n_atoms():
    # Timeline starts at 1; data a(0)@0 (before the start: not part of the stream), a(3)@3, a(4)@4.
    #   tb(T)  :- [#2] @T bg.     fact bg: every point of the tuple window's range
    #   p(X)   :- [#2] <> a(X).
    # t=1,2: no arrivals -> range [start, t] = [1,t]; t=3: one arrival (< 2) -> still [1,3], kept a(3)
    # t=4: a(3)@3, a(4)@4 -> range [3,4]
    prog = P(
        R(A("tb", "T"), at("T", A("bg"), TW(2))),
        R(A("p", "X"), dia(A("a", "X"), TW(2))),
        facts=(A("bg"),),
    )
    res = evaluate(prog, {0: [A("a", 0)], 3: [A("a", 3)], 4: [A("a", 4)]}, 1, 4)
    assert holds(res) == {
        1: {"tb(1)"},
        2: {"tb(1)", "tb(2)"},
        3: {"tb(1)", "tb(2)", "tb(3)", "p(3)"},
        4: {"tb(3)", "tb(4)", "p(3)", "p(4)"},
    }


def test_tuple_window_over_intensional_is_a_compile_error():
    prog = P(R(A("d", "X"), plain(A("a", "X"))), R(A("e", "X"), dia(A("d", "X"), TW(2))))
    with pytest.raises(CompileError):
        evaluate(prog, {}, 0, 0)


def test_negation_inside_and_outside_windows():
    # ev at 1, 2, 3; timeline [0, 6]; [2] covers [max(0,t-2), t].
    #   none  :- not [2] <> ev.        no ev in the range
    #   gap   :- [2] <> not ev.        some point of the range without ev
    #   allq  :- [2] [] not ev.        no point of the range with ev
    #   nonow :- [2] <> ev, not ev.    ev in the range but not at t
    # t=0 [0,0]: none gap allq | t=1 [0,1]: gap (0) | t=2 [0,2]: gap (0) | t=3 [1,3]: nothing
    # t=4 [2,4]: gap (4), nonow | t=5 [3,5]: gap, nonow | t=6 [4,6] (no data at 4..6): none gap allq
    prog = P(
        R(A("none"), NOT(dia(A("ev"), W(2)))),
        R(A("gap"), dia(A("ev"), W(2), inner=True)),
        R(A("allq"), box(A("ev"), W(2), inner=True)),
        R(A("nonow"), dia(A("ev"), W(2)), NOT(plain(A("ev")))),
    )
    res = evaluate(prog, {1: [A("ev")], 2: [A("ev")], 3: [A("ev")]}, 0, 6)
    assert holds(res) == {
        0: {"none", "gap", "allq"},
        1: {"gap"},
        2: {"gap"},
        3: set(),
        4: {"gap", "nonow"},
        5: {"gap", "nonow"},
        6: {"none", "gap", "allq"},
    }


def test_negated_window_over_derived_atoms_sees_only_this_evaluation():
    # facts item(x1), item(x2); a(x1) arrives at 0.
    #   seen(X) :- a(X).                              derived at t only
    #   missing(X) :- item(X), not [2] <> seen(X).    the window sees seen(.) only at t
    #   missingData(X) :- item(X), not [2] <> a(X).   the window sees the data a(x1)@0 while 0 is in range
    # t=0: seen(x1); missing(x2); missingData(x2)
    # t=1,2: seen(x1)@0 was derived by the evaluation at 0 and does not carry over -> missing(x1), missing(x2);
    #        a(x1)@0 is still in [0,t] -> missingData(x2)
    # t=3: range [1,3] -> missingData(x1), missingData(x2) too
    prog = P(
        R(A("seen", "X"), plain(A("a", "X"))),
        R(A("missing", "X"), plain(A("item", "X")), NOT(dia(A("seen", "X"), W(2)))),
        R(A("missingData", "X"), plain(A("item", "X")), NOT(dia(A("a", "X"), W(2)))),
        facts=(A("item", "x1"), A("item", "x2")),
    )
    res = evaluate(prog, {0: [A("a", "x1")]}, 0, 3)
    both = {"missing(x1)", "missing(x2)"}
    assert holds(res) == {
        0: {"seen(x1)", "missing(x2)", "missingData(x2)"},
        1: both | {"missingData(x2)"},
        2: both | {"missingData(x2)"},
        3: both | {"missingData(x1)", "missingData(x2)"},
    }


def test_negated_literal_is_postponed_until_bound():
    # r(X) :- not b(X), a(X), X > 1.   written with the negation first; evaluated once X is bound.
    # At 0: a(1), a(2), a(3), b(3) -> a(2) only (a(1) fails X > 1, a(3) has b(3)).
    prog = P(R(A("r", "X"), NOT(plain(A("b", "X"))), C("X", ">", 1), plain(A("a", "X"))))
    res = evaluate(prog, {0: [A("a", 1), A("a", 2), A("a", 3), A("b", 3)]}, 0, 0)
    assert holds(res) == {0: {"r(2)"}}


def test_at_with_bound_and_unbound_time():
    # data: a(p)@1, a(q)@2, a(p)@4;  b(p,1)@3;  b(p,2), b(p,1) @4;  b(p,1)@5.   [3] covers [max(0,t-3), t].
    #   when(X,T)   :- [3] @T a(X).               T unbound: every point of the range where a(X) holds
    #   pair(X,T)   :- b(X,T), [3] @T a(X).       T bound: T in range and a(X) at T
    #   absent(X,T) :- b(X,T), [3] @T not a(X).   T in range and a(X) not at T
    #   notat(X,T)  :- b(X,T), not [3] @T a(X).
    #   ever(X,T)   :- @T a(X).                   no window: the whole timeline [0,t]
    #   fixed(X)    :- [3] @2 a(X).               constant time 2: needs 2 in range
    # t=3 [0,3]: b(p,1): a(p)@1 -> pair(p,1)
    # t=4 [1,4]: b(p,2): a(p) not at 2 -> absent(p,2), notat(p,2); b(p,1) -> pair(p,1)
    # t=5 [2,5]: b(p,1): 1 is out of range -> pair and absent both false, notat(p,1) true
    prog = P(
        R(A("when", "X", "T"), at("T", A("a", "X"), W(3))),
        R(A("pair", "X", "T"), plain(A("b", "X", "T")), at("T", A("a", "X"), W(3))),
        R(A("absent", "X", "T"), plain(A("b", "X", "T")), at("T", A("a", "X"), W(3), inner=True)),
        R(A("notat", "X", "T"), plain(A("b", "X", "T")), NOT(at("T", A("a", "X"), W(3)))),
        R(A("ever", "X", "T"), at("T", A("a", "X"))),
        R(A("fixed", "X"), at(2, A("a", "X"), W(3))),
    )
    data = {
        1: [A("a", "p")],
        2: [A("a", "q")],
        3: [A("b", "p", 1)],
        4: [A("a", "p"), A("b", "p", 2), A("b", "p", 1)],
        5: [A("b", "p", 1)],
    }
    res = evaluate(prog, data, 0, 5)
    assert holds(res) == {
        0: set(),
        1: {"when(p,1)", "ever(p,1)"},
        2: {"when(p,1)", "when(q,2)", "ever(p,1)", "ever(q,2)", "fixed(q)"},
        3: {"when(p,1)", "when(q,2)", "pair(p,1)", "ever(p,1)", "ever(q,2)", "fixed(q)"},
        4: {"when(p,1)", "when(q,2)", "when(p,4)", "pair(p,1)", "absent(p,2)", "notat(p,2)",
            "ever(p,1)", "ever(q,2)", "ever(p,4)", "fixed(q)"},
        5: {"when(q,2)", "when(p,4)", "notat(p,1)", "ever(p,1)", "ever(q,2)", "ever(p,4)", "fixed(q)"},
    }  # fmt: skip


def test_at_head_places_atoms_in_the_future_and_before_start():
    # job(a)@1, job(b)@2; timeline [0,5].
    #   @T due(X)  :- [5] @U job(X), T = U + 2.   each job in [t-5,t] placed as due two ticks later
    #   @T echo(X) :- [0] @U job(X), T = U - 3.   a job at t placed at t-3 (before start for t=1,2)
    #   overdue(X) :- [1] <> due(X).               sees due only where this evaluation places it, in [t-1,t]
    # t=1: due(a)@3 (future, not in [0,1]), echo(a)@-2
    # t=2: due(a)@3, due(b)@4, echo(b)@-1; [1] range [1,2] holds no due
    # t=3: due(a)@3 = t -> holds; due(b)@4 placed; overdue(a)
    # t=4: due(a)@3 placed, due(b)@4 holds; range [3,4] -> overdue(a), overdue(b)
    # t=5: both placed; range [4,5] -> overdue(b)
    prog = P(
        R(A("due", "X"), at("U", A("job", "X"), W(5)), C("T", "=", E("U", "+", 2)), at_time="T"),
        R(A("echo", "X"), at("U", A("job", "X"), W(0)), C("T", "=", E("U", "-", 3)), at_time="T"),
        R(A("overdue", "X"), dia(A("due", "X"), W(1))),
    )
    res = evaluate(prog, {1: [A("job", "a")], 2: [A("job", "b")]}, 0, 5)
    assert holds(res) == {
        0: set(),
        1: set(),
        2: set(),
        3: {"due(a)", "overdue(a)"},
        4: {"due(b)", "overdue(a)", "overdue(b)"},
        5: {"overdue(b)"},
    }
    assert placed(res) == {
        0: {},
        1: {3: {"due(a)"}, -2: {"echo(a)"}},
        2: {3: {"due(a)"}, 4: {"due(b)"}, -1: {"echo(b)"}},
        3: {4: {"due(b)"}},
        4: {3: {"due(a)"}},
        5: {3: {"due(a)"}, 4: {"due(b)"}},
    }


@pytest.mark.parametrize("value", ["x", Decimal(2), Decimal("2.5")])
def test_at_head_with_non_integer_time_is_an_evaluation_error(value):
    prog = P(R(A("bad"), plain(A("val", "T")), at_time="T"))
    with pytest.raises(EvaluationError, match="bad"):
        evaluate(prog, {0: [A("val", value)]}, 0, 0)


def test_at_head_with_constant_time():
    # @7 mark :- a.   at t=0 (a there) mark is placed at 7; at t=1 nothing.
    prog = P(R(A("mark"), plain(A("a")), at_time=7))
    res = evaluate(prog, {0: [A("a")]}, 0, 1)
    assert holds(res) == {0: set(), 1: set()}
    assert placed(res) == {0: {7: {"mark"}}, 1: {}}


def test_recursion_reach():
    # reach(X,Y) :- [5] <> edge(X,Y).   reach(X,Z) :- reach(X,Y), [5] <> edge(Y,Z).
    # edges: a->b @0, b->c @2, c->d @4, d->a @7. [5] covers [max(0,t-5), t]; reach = transitive closure
    # of the edges in that range (reach itself only at t).
    #   t=0,1: {ab}   t=2,3: {ab,bc,ac}   t=4,5: {ab,bc,cd,ac,bd,ad}
    #   t=6 [1,6]: bc, cd -> {bc,cd,bd}
    #   t=7 [2,7]: bc, cd, da -> {bc,cd,da,bd,ba,ca}   (a has no outgoing edge in range)
    #   t=8 [3,8]: cd, da -> {cd,da,ca}
    prog = P(
        R(A("reach", "X", "Y"), dia(A("edge", "X", "Y"), W(5))),
        R(A("reach", "X", "Z"), plain(A("reach", "X", "Y")), dia(A("edge", "Y", "Z"), W(5))),
    )
    data = {
        0: [A("edge", "a", "b")],
        2: [A("edge", "b", "c")],
        4: [A("edge", "c", "d")],
        7: [A("edge", "d", "a")],
    }
    res = evaluate(prog, data, 0, 8)

    def r(*pairs):
        return {f"reach({p[0]},{p[1]})" for p in pairs}

    assert holds(res) == {
        0: r("ab"), 1: r("ab"),
        2: r("ab", "bc", "ac"), 3: r("ab", "bc", "ac"),
        4: r("ab", "bc", "cd", "ac", "bd", "ad"), 5: r("ab", "bc", "cd", "ac", "bd", "ad"),
        6: r("bc", "cd", "bd"),
        7: r("bc", "cd", "da", "bd", "ba", "ca"),
        8: r("cd", "da", "ca"),
    }  # fmt: skip


def test_recursion_over_a_cycle_terminates():
    prog = P(
        R(A("reach", "X", "Y"), dia(A("edge", "X", "Y"), W(5))),
        R(A("reach", "X", "Z"), plain(A("reach", "X", "Y")), dia(A("edge", "Y", "Z"), W(5))),
    )
    res = evaluate(prog, {0: [A("edge", "a", "b"), A("edge", "b", "a")]}, 0, 0)
    assert holds(res) == {0: {"reach(a,b)", "reach(b,a)", "reach(a,a)", "reach(b,b)"}}


def test_arithmetic_assignment_and_division_by_zero():
    # At 0: n(7,2) n(-7,2) n(7,0) n(1.5,2) n(x,1) n(3,0.0); m(1) m(2) m(k).
    # q(X,Y,Q) :- n(X,Y), Q = X / Y.   7/2 = 3 and -7/2 = -4 (floor division on ints), 1.5/2 = 0.75;
    #                                  7/0 and 3/0.0 (division by zero) and x/1 (symbol) make it false
    # s(X,Y,S) :- n(X,Y), S = X * Y - 1.  13, -15, -1, 2.0, -1.0; x fails
    # big(X)  :- n(X,Y), X > Y.        7 (7>2, 7>0), 3 (3>0.0); x > 1 is false (symbol vs number)
    # ne(X)   :- n(X,Y), X != 7.       -7, 1.5, x, 3
    # sym(X)  :- n(X,Y), X >= "a".     only x ("x" >= "a" by text; numbers vs symbol false)
    # eqv(X)  :- n(X,Y), Y = 2.0.      Y is bound by n, so this is a comparison by value: 2 = 2.0 -> 7, -7, 1.5
    # inc(X,Z) :- Z = X + 1, m(X).     assignment postponed until X is bound: (1,2), (2,3); k+1 fails
    # chk(X,Y) :- Y = X + 1, m(X), m(Y).  Y bound by m(Y): a comparison, only (1,2)
    # c(Z)    :- m(X), Y = X * 2, Z = Y + 1.   chained assignments: 3, 5
    # dz(X)   :- m(X), Z = X / 0.      always false, no error
    # neq1(X) :- m(X), X != 1.         2, k
    # lt(X)   :- m(X), X < 2.          1 (k < 2 is false)
    prog = P(
        R(A("q", "X", "Y", "Q"), plain(A("n", "X", "Y")), C("Q", "=", E("X", "/", "Y"))),
        R(A("s", "X", "Y", "S"), plain(A("n", "X", "Y")), C("S", "=", BinOp("-", E("X", "*", "Y"), 1))),
        R(A("big", "X"), plain(A("n", "X", "Y")), C("X", ">", "Y")),
        R(A("ne", "X"), plain(A("n", "X", "Y")), C("X", "!=", 7)),
        R(A("sym", "X"), plain(A("n", "X", "Y")), C("X", ">=", "a")),
        R(A("eqv", "X"), plain(A("n", "X", "Y")), C("Y", "=", Decimal("2.0"))),
        R(A("inc", "X", "Z"), C("Z", "=", E("X", "+", 1)), plain(A("m", "X"))),
        R(A("chk", "X", "Y"), C("Y", "=", E("X", "+", 1)), plain(A("m", "X")), plain(A("m", "Y"))),
        R(A("c", "Z"), plain(A("m", "X")), C("Y", "=", E("X", "*", 2)), C("Z", "=", E("Y", "+", 1))),
        R(A("dz", "X"), plain(A("m", "X")), C("Z", "=", E("X", "/", 0))),
        R(A("neq1", "X"), plain(A("m", "X")), C("X", "!=", 1)),
        R(A("lt", "X"), plain(A("m", "X")), C("X", "<", 2)),
    )
    d = Decimal
    data = {
        0: [
            A("n", 7, 2), A("n", -7, 2), A("n", 7, 0), A("n", d("1.5"), 2), A("n", "x", 1), A("n", 3, d("0")),
            A("m", 1), A("m", 2), A("m", "k"),
        ]
    }  # fmt: skip
    (res,) = evaluate(prog, data, 0, 0)
    expected = {
        A("q", 7, 2, 3), A("q", -7, 2, -4), A("q", d("1.5"), 2, d("0.75")),
        A("s", 7, 2, 13), A("s", -7, 2, -15), A("s", 7, 0, -1), A("s", d("1.5"), 2, d("2.0")), A("s", 3, d(0), -1),
        A("big", 7), A("big", 3),
        A("ne", -7), A("ne", d("1.5")), A("ne", "x"), A("ne", 3),
        A("sym", "x"),
        A("eqv", 7), A("eqv", -7), A("eqv", d("1.5")),
        A("inc", 1, 2), A("inc", 2, 3),
        A("chk", 1, 2),
        A("c", 3), A("c", 5),
        A("neq1", 2), A("neq1", "k"),
        A("lt", 1),
    }  # fmt: skip
    assert res.holds == expected
    quotients = {a.args[:2]: a.args[2] for a in res.holds if a.pred == "q"}
    assert type(quotients[(7, 2)]) is int and type(quotients[(-7, 2)]) is int


def test_unwindowed_diamond_and_box_over_the_whole_timeline():
    # a(p)@0, a(q)@0, a(p)@1, a(p)@3.
    #   once(X)   :- <> a(X).      some point of [start, t]
    #   always(X) :- [] a(X).      every point of [start, t]
    #   @T mark   :- @T a(p).      mark placed at every point of [start,t] with a(p)
    #   allmarked :- [] mark.
    # start 0: t=0: once p,q; always p,q; mark@0; allmarked
    #          t=1: always p only; mark@0,1; allmarked
    #          t=2: nothing at 2 -> no always, no mark at t, no allmarked; t=3: mark@3; t=4: nothing at 4
    prog = P(
        R(A("once", "X"), dia(A("a", "X"))),
        R(A("always", "X"), box(A("a", "X"))),
        R(A("mark"), at("T", A("a", "p")), at_time="T"),
        R(A("allmarked"), box(A("mark"))),
    )
    data = {0: [A("a", "p"), A("a", "q")], 1: [A("a", "p")], 3: [A("a", "p")]}
    res = evaluate(prog, data, 0, 4)
    assert holds(res) == {
        0: {"once(p)", "once(q)", "always(p)", "always(q)", "mark", "allmarked"},
        1: {"once(p)", "once(q)", "always(p)", "mark", "allmarked"},
        2: {"once(p)", "once(q)"},
        3: {"once(p)", "once(q)", "mark"},
        4: {"once(p)", "once(q)"},
    }
    assert placed(res) == {
        0: {},
        1: {0: {"mark"}},
        2: {0: {"mark"}, 1: {"mark"}},
        3: {0: {"mark"}, 1: {"mark"}},
        4: {0: {"mark"}, 1: {"mark"}, 3: {"mark"}},
    }
    # With start 1 the timeline is [1, t]: the data at 0 is not part of it.
    res = evaluate(prog, data, 1, 3)
    assert holds(res) == {
        1: {"once(p)", "always(p)", "mark", "allmarked"},
        2: {"once(p)"},
        3: {"once(p)", "mark"},
    }
    assert placed(res) == {1: {}, 2: {1: {"mark"}}, 3: {1: {"mark"}}}


def test_background_under_box_and_at():
    # facts bg(k), q(z); extra background extra(m); data a@0, a@2, a@3 (only for the tuple window).
    #   boxbg(X) :- [3] [] bg(X).      background holds at every point -> always
    #   boxex(X) :- [] extra(X).       ditto for the evaluate(background=...) atoms
    #   atbg(T)  :- [2] @T bg(k).      T = every point of [max(0,t-2), t]
    #   tbat(T)  :- [#2] @T bg(k).     every point of the tuple window's range:
    #       t=0: 1 arrival -> [0,0]; t=1: still 1 -> [0,1]; t=2: a@0,a@2 -> [0,2]; t=3: a@2,a@3 -> [2,3]; t=4: [2,4]
    #   nobg     :- [3] <> not bg(k).  never (bg holds at points without data too)
    #   q(X)     :- b(X).              q is intensional, so the background fact q(z) is in every output
    prog = P(
        R(A("boxbg", "X"), box(A("bg", "X"), W(3))),
        R(A("boxex", "X"), box(A("extra", "X"))),
        R(A("atbg", "T"), at("T", A("bg", "k"), W(2))),
        R(A("tbat", "T"), at("T", A("bg", "k"), TW(2))),
        R(A("nobg"), dia(A("bg", "k"), W(3), inner=True)),
        R(A("q", "X"), plain(A("b", "X"))),
        facts=(A("bg", "k"), A("q", "z")),
    )
    res = evaluate(prog, {0: [A("a")], 2: [A("a")], 3: [A("a")]}, 0, 4, background=[A("extra", "m")])
    always = {"boxbg(k)", "boxex(m)", "q(z)"}

    def pts(pred, *ts):
        return {f"{pred}({t})" for t in ts}

    assert holds(res) == {
        0: always | pts("atbg", 0) | pts("tbat", 0),
        1: always | pts("atbg", 0, 1) | pts("tbat", 0, 1),
        2: always | pts("atbg", 0, 1, 2) | pts("tbat", 0, 1, 2),
        3: always | pts("atbg", 1, 2, 3) | pts("tbat", 2, 3),
        4: always | pts("atbg", 2, 3, 4) | pts("tbat", 2, 3, 4),
    }


def test_named_streams():
    # s1: a(1)@0, a(2)@2.   s2: a(3)@1, b(1)@2.   The default stream is empty.
    #   p1(X)   :- [2 from s1] <> a(X).    data of s1 only
    #   p2(X)   :- [2 from s2] <> a(X).    data of s2 only
    #   dflt(X) :- [2] <> a(X).            the default stream: never
    #   pall(X) :- <> a(X).                un-windowed: every stream
    #   now(X)  :- a(X).                   plain: every stream, at t
    #   last(X) :- [#1 from s2] <> a(X).   the last arrival of s2: a(3) at t=1; b(1) from t=2 on
    #   d(X)    :- a(X).
    #   seen(X) :- [0 from s2] <> d(X).    derived atoms are visible inside any time window
    # t=3: range [1,3]: a(1)@0 leaves p1; no data at 3
    prog = P(
        R(A("p1", "X"), dia(A("a", "X"), W(2, stream="s1"))),
        R(A("p2", "X"), dia(A("a", "X"), W(2, stream="s2"))),
        R(A("dflt", "X"), dia(A("a", "X"), W(2))),
        R(A("pall", "X"), dia(A("a", "X"))),
        R(A("now", "X"), plain(A("a", "X"))),
        R(A("last", "X"), dia(A("a", "X"), TW(1, stream="s2"))),
        R(A("d", "X"), plain(A("a", "X"))),
        R(A("seen", "X"), dia(A("d", "X"), W(0, stream="s2"))),
    )
    data = {"s1": {0: [A("a", 1)], 2: [A("a", 2)]}, "s2": {1: [A("a", 3)], 2: [A("b", 1)]}}
    res = evaluate(prog, data, 0, 3)
    assert holds(res) == {
        0: {"p1(1)", "pall(1)", "now(1)", "d(1)", "seen(1)"},
        1: {"p1(1)", "p2(3)", "pall(1)", "pall(3)", "now(3)", "last(3)", "d(3)", "seen(3)"},
        2: {"p1(1)", "p1(2)", "p2(3)", "pall(1)", "pall(2)", "pall(3)", "now(2)", "d(2)", "seen(2)"},
        3: {"p1(2)", "p2(3)", "pall(1)", "pall(2)", "pall(3)"},
    }


def test_default_stream_key_is_the_same_as_a_plain_mapping():
    prog = P(R(A("p", "X"), dia(A("a", "X"), W(1))))
    data = {0: [A("a", 1)], 1: [A("a", 2)]}
    assert evaluate(prog, data, 0, 2) == evaluate(prog, {DEFAULT_STREAM: data}, 0, 2)


def test_stratified_negation_over_derived_predicates():
    # r(X) :- b(X), not p(X).   p(X) :- a(X).   p is in a lower stratum than r, whatever the rule order.
    # t=0: a(1), b(1), b(2): p(1); r(2) (p(2) does not hold)
    prog = P(
        R(A("r", "X"), plain(A("b", "X")), NOT(plain(A("p", "X")))),  # written before p's rule on purpose
        R(A("p", "X"), plain(A("a", "X"))),
    )
    res = evaluate(prog, {0: [A("a", 1), A("b", 1), A("b", 2)]}, 0, 0)
    assert holds(res) == {0: {"p(1)", "r(2)"}}


# --------------------------------------------------------------------------------------------------
# Compile errors
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rule",
    [
        R(A("p", "X"), NOT(plain(A("a", "X")))),  # variable only under not
        R(A("p", "Y"), plain(A("a", "X"))),  # head variable unbound
        R(A("p"), plain(A("a", "X")), C("Y", ">", "X")),  # comparison variable unbound
        R(A("p", "X"), at("T", A("a", "X"), W(2), inner=True)),  # @T not a(X): T and X unbound
        R(A("p"), plain(A("a")), at_time="T"),  # head time unbound
    ],
)
def test_unsafe_rules_are_rejected(rule):
    with pytest.raises(UnsafeRuleError):
        evaluate(P(rule), {}, 0, 0)


def test_unstratified_programs_are_rejected():
    prog = P(R(A("p"), NOT(plain(A("q")))), R(A("q"), NOT(plain(A("p")))))
    with pytest.raises(StratificationError):
        evaluate(prog, {}, 0, 0)
    inner = P(R(A("p"), plain(A("a")), dia(A("p"), W(3), inner=True)))
    with pytest.raises(StratificationError):
        evaluate(inner, {}, 0, 0)


# --------------------------------------------------------------------------------------------------
# Speed: a few dozen points x a few dozen atoms x a few rules, well under a second
# --------------------------------------------------------------------------------------------------


def test_reference_is_fast_enough():
    nodes = ["n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"]
    data = {}
    for t in range(40):
        data[t] = [A("edge", nodes[(t + i) % 8], nodes[(t * 3 + i + 1) % 8]) for i in range(3)]
        data[t].append(A("temp", 90 + (t * 7) % 30))
    prog = P(
        R(A("reach", "X", "Y"), dia(A("edge", "X", "Y"), W(3))),
        R(A("reach", "X", "Z"), plain(A("reach", "X", "Y")), dia(A("edge", "Y", "Z"), W(3))),
        R(A("steam", "V"), at("T", A("temp", "V"), W(3)), C("V", ">=", 100), at_time="T"),
        R(A("hot"), box(A("steam", "V"), W(2))),
        R(A("isolated", "X"), dia(A("edge", "X", "Y"), W(3)), NOT(dia(A("edge", "Y", "X"), W(3)))),
    )
    # about 12 edges in each window and up to ~55 derived atoms per time point
    # (best of three runs, so that a busy machine does not make the test flaky)
    timings = []
    for _ in range(3):
        began = time.perf_counter()
        evaluate(prog, data, 0, 39)
        timings.append(time.perf_counter() - began)
    assert min(timings) < 1.0
