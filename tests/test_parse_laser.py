"""The Laser dialect: examples to hand-written IR, "same IR" as their native translations, errors."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rdfstream.atoms import Atom
from rdfstream.errors import ParseError, Span
from rdfstream.frontends.lars import laser
from rdfstream.frontends.registry import parse_atom, parse_atoms, parse_program
from rdfstream.ir.nodes import (
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

GOLDEN = Path(__file__).parent / "golden" / "parse_errors"
X, Y, Z, V, T, T1, B, C = (Var(n) for n in ("X", "Y", "Z", "V", "T", "T1", "B", "C"))


def a(pred: str, *args) -> Atom:
    return Atom(pred, tuple(args))


def rule(head, *body, time=None) -> Rule:
    return Rule(Head(head, time), tuple(body))


def laser_rule(text: str) -> Rule:
    (r,) = parse_program(text, dialect="laser").rules
    return r


# (Laser text, hand-written IR, native translation)
EXAMPLES = [
    (
        "q(X,Z) :- time_win(3,0,1, diamond(p(X,Y))) and time_win(1,0,1, diamond(p(Y,Z)))",
        rule(
            a("q", X, Z),
            ExtAtom(a("p", X, Y), Op.DIAMOND, window=TimeWindow(3)),
            ExtAtom(a("p", Y, Z), Op.DIAMOND, window=TimeWindow(1)),
        ),
        "q(X, Z) :- [3] <> p(X, Y), [1] <> p(Y, Z).",
    ),
    (
        "@(T, high(V)) :- time_win(2,0,1, @(T, a(V))) and COMP(>=,V,18)",
        rule(a("high", V), ExtAtom(a("a", V), Op.AT, T, TimeWindow(2)), Comparison(">=", V, 18), time=T),
        "@T high(V) :- [2] @T a(V), V >= 18.",
    ),
    (
        "h1(T1,X) :- time_win(1,0,1, @(T, p(X,Y))) and MATH(+,T1,T,2)",
        rule(
            a("h1", T1, X),
            ExtAtom(a("p", X, Y), Op.AT, T, TimeWindow(1)),
            Comparison("=", T1, BinOp("+", T, 2)),
        ),
        "h1(T1, X) :- [1] @T p(X, Y), T1 = T + 2.",
    ),
    (
        "h(Y,X) :- tuple_win(4, box(p(X,Y)))",
        rule(a("h", Y, X), ExtAtom(a("p", X, Y), Op.BOX, window=TupleWindow(4))),
        "h(Y, X) :- [#4] [] p(X, Y).",
    ),
    (
        "p(B,C) :- time_win(1,0,1, diamond(not(s))) and time_win(2,0,1, diamond(r(B,C)))",
        rule(
            a("p", B, C),
            ExtAtom(a("s"), Op.DIAMOND, window=TimeWindow(1), inner_negated=True),
            ExtAtom(a("r", B, C), Op.DIAMOND, window=TimeWindow(2)),
        ),
        "p(B, C) :- [1] <> not s, [2] <> r(B, C).",
    ),
    (
        "h(Y,X) :- 'http://ex.org/p'(X,Y)",
        rule(a("h", Y, X), ExtAtom(a("<http://ex.org/p>", X, Y))),
        "h(Y, X) :- <http://ex.org/p>(X, Y).",
    ),
]
IDS = [laser_text for laser_text, _, _ in EXAMPLES]


@pytest.mark.parametrize(("laser_text", "expected", "native_text"), EXAMPLES, ids=IDS)
def test_example_parses_to_expected_ir(laser_text: str, expected: Rule, native_text: str) -> None:
    assert laser_rule(laser_text) == expected


@pytest.mark.parametrize(("laser_text", "expected", "native_text"), EXAMPLES, ids=IDS)
def test_same_ir_as_native_translation(laser_text: str, expected: Rule, native_text: str) -> None:
    assert parse_program(laser_text, dialect="laser") == parse_program(native_text, dialect="native")


def test_whole_program_same_ir_as_native() -> None:
    laser_text = "\n".join(t for t, _, _ in EXAMPLES)
    native_text = "\n".join(t for _, _, t in EXAMPLES)
    assert parse_program(laser_text, dialect="laser") == parse_program(native_text)


# the cooling-system program of the Laser paper (Fig. 4), as its evaluation driver writes it
COOLING_LASER = """\
@(T, steam(V)) :- time_win(10, 0, 1, @(T, (temp(V)))) and COMP(>=, V, 100)
@(T, liquid(V)) :- time_win(10, 0, 1, @(T, temp(V))) and COMP(<, V, 100) and COMP(>=, V, 1)
@(T, isSteam) :- time_win(10, 0, 1, @(T, steam(V)))
@(T, isLiquid)  :- time_win(10, 0, 1, @(T, liquid(V)))
alarm :- time_win(10, 0, 1, box(isSteam))
normal :- time_win(10, 0, 1, box(isLiquid))
veryHot(T) :- time_win(10,0,1, @(T, steam(V))) and COMP(>=, V, 150)
veryCold(T) :- time_win(10,0,1, @(T, liquid(V))) and COMP(=, V, 1)
freeze :- not(alarm) and not(normal)
"""
COOLING_NATIVE = """\
@T steam(V) :- [10] @T temp(V), V >= 100.
@T liquid(V) :- [10] @T temp(V), V < 100, V >= 1.
@T isSteam :- [10] @T steam(V).
@T isLiquid :- [10] @T liquid(V).
alarm :- [10] [] isSteam.
normal :- [10] [] isLiquid.
veryHot(T) :- [10] @T steam(V), V >= 150.
veryCold(T) :- [10] @T liquid(V), V = 1.
freeze :- not alarm, not normal.
"""


def test_cooling_program_same_ir_as_native() -> None:
    assert parse_program(COOLING_LASER, dialect="laser") == parse_program(COOLING_NATIVE)


# ---------------------------------------------------------------------------------------------------------------
# details


def test_tuple_win_with_four_arguments() -> None:
    assert laser_rule("h1(T,X) :- tuple_win(3,0,1, @(T, p(X,Y)))") == rule(
        a("h1", T, X), ExtAtom(a("p", X, Y), Op.AT, T, TupleWindow(3))
    )


def test_time_win_step() -> None:
    assert laser_rule("h(X) :- time_win(10,0,5, diamond(p(X)))").body[0].window == TimeWindow(10, 5)


def test_negation_forms() -> None:
    r = laser_rule(
        "h(X) :- p(X) and not(q(X)) and not(time_win(2,0,1, box(q(X)))) and time_win(2,0,1, not(diamond(q(X))))"
        " and @(T, not(q(X))) and not(diamond(not(q(X)))) and p(T)"
    )
    q = a("q", X)
    assert r.body[1:6] == (
        ExtAtom(q, negated=True),
        ExtAtom(q, Op.BOX, window=TimeWindow(2), negated=True),
        ExtAtom(q, Op.DIAMOND, window=TimeWindow(2), negated=True),
        ExtAtom(q, Op.AT, T, inner_negated=True),
        ExtAtom(q, Op.DIAMOND, inner_negated=True, negated=True),
    )


def test_comparisons_and_math() -> None:
    r = laser_rule(
        "h(X) :- p(X,Y) and COMP(==,X,Y) and COMP(!=,X,3) and COMP(<=,X,-2) and MATH(*,Z,X,2.5) and MATH(/,Z,X,Y)"
    )
    assert r.body[1:] == (
        Comparison("=", X, Y),
        Comparison("!=", X, 3),
        Comparison("<=", X, -2),
        Comparison("=", Z, BinOp("*", X, Decimal("2.5"))),
        Comparison("=", Z, BinOp("/", X, Y)),
    )


def test_quoted_names() -> None:
    r = laser_rule("'http://ex.org/h'(X) :- 'p'(X, 'urn:a:b', 'c')")
    assert r == rule(a("<http://ex.org/h>", X), ExtAtom(a("p", X, "<urn:a:b>", "c")))


def test_head_at_integer_time() -> None:
    assert laser_rule("@(5, h(X)) :- p(X)").head == Head(a("h", X), 5)


def test_blank_lines_comments_and_line_numbers() -> None:
    text = "% cooling\n\n# another comment\n// and another\n  h(X) :- p(X)\r\n\ng :- not(h(a))\n"
    program = parse_program(text, dialect="laser", source="r.laser")
    assert [r.span for r in program.rules] == [Span(5, 3, "r.laser"), Span(7, 1, "r.laser")]
    assert program.rules[0].body[0].span == Span(5, 11, "r.laser")
    assert program.facts == () and program.prefixes == ()


def test_empty_program() -> None:
    assert parse_program("", dialect="laser") == Program()
    assert parse_program("% only a comment\n\n", dialect="laser") == Program()


def test_laser_has_no_facts() -> None:
    with pytest.raises(ParseError, match="expected ':-', found end of input"):
        parse_program("p(a)", dialect="laser")


# ---------------------------------------------------------------------------------------------------------------
# errors

ERROR_CASES = sorted(GOLDEN.glob("*.laser"))


@pytest.mark.parametrize("path", ERROR_CASES, ids=[p.name for p in ERROR_CASES])
def test_golden_parse_errors(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    expected = path.with_suffix(".err").read_text(encoding="utf-8").rstrip("\n")
    with pytest.raises(ParseError) as info:
        parse_program(text, dialect="laser", source=path.name)
    assert str(info.value) == expected
    assert info.value.text == text.split("\n")[info.value.span.line - 1]


def test_golden_cases_exist() -> None:
    assert len(ERROR_CASES) >= 4


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("h(X) :- time_win(2,0,1, p(X))",
         "1:9: a window must contain an operator: diamond(...), box(...) or @(T, ...)"),
        ("h(X) :- diamond(time_win(2,0,1, box(p(X))))", "1:17: time_win(...) is not allowed here"),
        ("h(X) :- not(COMP(<,X,1))", "1:13: COMP(...) is not allowed here"),
        ("h(X) :- tuple_win(2,1,1, box(p(X)))", "1:21: tuple_win offset 1 is not supported (only 0)"),
        ("h(X) :- tuple_win(2,0,3, box(p(X)))", "1:23: tuple_win step 3 is not supported (only 1)"),
        ("h(X) :- not(time_win(2,0,1, not(box(p(X)))))", "1:29: double negation is not supported"),
        ("h(X) :- COMP(~, X, 1)", "1:14: expected comparison operator, found '~'"),
        ("h(X) :- p(X).", "1:13: expected 'and' or end of rule, found '.'"),
        ("h(X) :- p(X", "1:12: expected ',' or ')', found end of input"),
        ("h(X) :- time_win(x,0,1, diamond(p(X)))", "1:18: expected window size (an integer), found 'x'"),
    ],
)
def test_error_messages(text: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_program(text, dialect="laser")
    assert str(info.value) == message


# ---------------------------------------------------------------------------------------------------------------
# stream atoms


def test_stream_atoms() -> None:
    assert parse_atoms("p(a,b), 'http://ex.org/p'(a,1), q(-2.5), r", dialect="laser") == [
        a("p", "a", "b"), a("<http://ex.org/p>", "a", 1), a("q", Decimal("-2.5")), a("r")
    ]
    assert parse_atom("temp(42)", dialect="laser") == a("temp", 42)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("p(X)", "s:3:3: stream atoms must be ground, found variable X"),
        ("'p*2'(a)", "s:3:1: quoted name 'p*2' is neither an absolute IRI nor a plain name"),
        ("p(a) q", "s:3:6: expected ',' or end of line, found 'q'"),
    ],
)
def test_stream_atom_errors(text: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_atoms(text, dialect="laser", source="s", line=3)
    assert str(info.value) == message


LOWER = "abcdefghijklmnopqrstuvwxyz"
laser_names = st.builds(
    lambda f, r: f + r, st.sampled_from(LOWER), st.text(LOWER + LOWER.upper() + "0123456789_", max_size=5)
).filter(lambda n: n not in laser.RESERVED)
laser_iris = st.text(LOWER + "0123456789/#", max_size=5).map(lambda rest: "http://ex.org/" + rest)
laser_terms = st.one_of(
    laser_names.map(lambda n: (n, n)),
    st.integers(-1000, 1000).map(lambda i: (str(i), i)),
    laser_iris.map(lambda i: (f"'{i}'", f"<{i}>")),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(laser_names, st.lists(laser_terms, max_size=3)), max_size=4))
def test_fast_and_slow_stream_paths_agree(atoms: list) -> None:
    texts, expected = [], []
    for pred, args in atoms:
        texts.append(pred if not args else f"{pred}({','.join(t for t, _ in args)})")
        expected.append(Atom(pred, tuple(v for _, v in args)))
    text = ", ".join(texts)
    assert laser.parse_atoms(text) == laser.parse_atoms(text, fast=False) == expected
    assert laser._fast_atoms(text, {}) is not None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(list("pqX_(),.:-'@ 3=+*/!") + ["and ", "not(", "diamond(", "time_win(", "COMP("]),
                max_size=30).map("".join))
def test_garbage_gives_parse_errors_only(text: str) -> None:
    try:
        parse_program(text, dialect="laser")
    except ParseError as err:
        assert err.span is not None
