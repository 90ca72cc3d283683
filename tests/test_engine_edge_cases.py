"""Hand-picked programs outside the random generator's reach, each compared with the reference evaluator."""

from __future__ import annotations

import pytest
from test_engine_vs_reference import check

from rdfstream.atoms import Atom
from rdfstream.errors import EvaluationError
from rdfstream.frontends.registry import parse_atoms, parse_program
from rdfstream.ir.nodes import Head, Program, Rule

try:
    from reference import evaluate
except ImportError:  # pragma: no cover
    from tests.reference import evaluate

from rdfstream.engine.session import Engine

CASES = {
    "empty body placing at a fixed time": ("@5 p.\nq :- [3] <> p.\nr(T) :- @T p.\n", {0: "a(x)"}, 0, 10),
    "fact of a derived predicate": ("q(b).\nq(X) :- a(X).\n", {1: "a(x)", 3: "a(y)"}, 0, 4),
    "data of a derived predicate": ("q(X) :- a(X).\nr(X) :- [2] <> q(X).\n", {1: "q(z), a(x)", 2: ""}, 0, 5),
    "placing before the start": ("@S p(X) :- a(X), S = T - 3, @T a(X).\nq(X) :- <> p(X).\n", {2: "a(x)"}, 1, 6),
    "placing into the future": ("@S p(X) :- [0] @T a(X), S = T + 2.\nq(X) :- [1] <> p(X).\n", {1: "a(x)", 2: "a(y)"},
                                0, 8),
    "stepped window over derived": ("q(X) :- a(X).\nr(X) :- [3 step 2] <> q(X).\ns(X) :- [4 step 3] @T q(X).\n",
                                    {0: "a(x)", 2: "a(y)", 3: "a(z)"}, 0, 9),
    "only facts": ("g(a).\n", {0: ""}, 0, 2),
    "deep recursion within a tick": ("r(X,Y) :- [1] <> e(X,Y).\nr(X,Z) :- r(X,Y), r(Y,Z).\n",
                                     {0: ", ".join(f"e(n{i},n{i + 1})" for i in range(12)), 1: "e(n12,n0)"}, 0, 3),
    "box over background and data": ("g(a).\nq(X) :- [2] [] g(X), [2] [] b(X, X).\n",
                                     {0: "b(a,a)", 1: "b(a,a)", 2: "b(a,a)", 3: ""}, 0, 4),
    "copy rules, read again by other rules": ("q(A,B) :- [2] <> b(A,B).\nr(A) :- [1] <> q(A,B).\n"
                                              "s(A) :- [3] @T q(A,A), not [1] <> a(A).\n",
                                              {0: "b(x,x), b(x,y)", 1: "a(x)", 4: "b(y,y)"}, 0, 9),
    "rules sharing a body share one plan": ("q1(X,Z) :- [2] <> b(X,Y), [2] <> b(Y,Z).\n"
                                            "q2(A,C) :- [2] <> b(A,B), [2] <> b(B,C).\n"
                                            "@T q3(Z) :- [2] @T b(X,Y), [2] <> b(Y,Z).\n"
                                            "q4(Z) :- [2] @T b(X,Y), [2] <> b(Y,Z).\n"
                                            "n1(X) :- [1] <> a(X), not q1(X,X).\nn2(Y) :- [1] <> a(Y), not q1(Y,Y).\n"
                                            "r(X) :- [3] <> q2(X,X), not n2(X).\n",
                                            {0: "b(x,y), b(y,x), a(x)", 1: "a(y)", 2: "b(y,y)", 5: "a(x)"}, 0, 8),
    "at over background binds every point": ("g(a).\nq(T) :- [2] @T g(a).\n", {0: ""}, 0, 4),
}


@pytest.mark.parametrize("name", list(CASES))
def test_edge_case_matches_reference(name):
    text, stream, start, end = CASES[name]
    program = parse_program(text)
    atoms = {t: parse_atoms(line) for t, line in stream.items()}
    check(program, (atoms, start, end))


def test_at_head_with_a_non_time_is_an_error_in_both():
    program = parse_program("@X p :- a(X).\n")
    stream = {0: parse_atoms("a(x)")}
    with pytest.raises(EvaluationError, match="not a time point"):
        list(Engine(program, start=0).run(stream, 0, 0))
    with pytest.raises(EvaluationError):
        evaluate(program, stream, 0, 0)


def test_stepped_window_over_an_atom_derived_at_every_tick():
    # found by the soak run: a bodiless rule derives i1(y,x) at every t (at point t only), so
    # [0 step 2] <> i1(y,x) holds at even t only, also at ticks that bring no data
    rules = parse_program("i2 :- [0 step 2] <> i1(y,x).\n").rules
    bodiless = Rule(Head(Atom("i1", ("y", "x"))), ())
    program = Program(rules + (bodiless,))
    check(program, ({0: parse_atoms("c"), 1: parse_atoms("a(x)"), 5: parse_atoms("a(x)")}, 0, 9))
