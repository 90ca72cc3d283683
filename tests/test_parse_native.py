"""The native LARS front end: examples to hand-written IR, round trips, lexical details, spans, errors."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rdfstream.atoms import Atom
from rdfstream.errors import ParseError, Span
from rdfstream.frontends.lars import native
from rdfstream.frontends.registry import get_dialect, parse_atom, parse_atoms, parse_program
from rdfstream.ir.nodes import (
    COMPARISON_OPS,
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
from rdfstream.ir.printer import format_atom_in
from rdfstream.terms import Var, string

GOLDEN = Path(__file__).parent / "golden" / "parse_errors"
X, Y, Z, V, T, T1, Id = (Var(n) for n in ("X", "Y", "Z", "V", "T", "T1", "Id"))
EX = "http://example.org/"


def a(pred: str, *args) -> Atom:
    return Atom(pred, tuple(args))


def rule(head, *body, time=None) -> Rule:
    return Rule(Head(head, time), tuple(body))


def one_rule(text: str, prefixes: str = "") -> Rule:
    program = parse_program(prefixes + text)
    assert program.facts == ()
    (r,) = program.rules
    return r


# ---------------------------------------------------------------------------------------------------------------
# the examples of the brief, each to hand-written IR

EXAMPLES = [
    (
        "q(X, Y, Z) :- [3] <> a(X, Y), [#3] <> b(Y, Z).",
        rule(
            a("q", X, Y, Z),
            ExtAtom(a("a", X, Y), Op.DIAMOND, window=TimeWindow(3)),
            ExtAtom(a("b", Y, Z), Op.DIAMOND, window=TupleWindow(3)),
        ),
    ),
    (
        "@T steam(V) :- [10] @T temp(V), V >= 100.",
        rule(
            a("steam", V),
            ExtAtom(a("temp", V), Op.AT, T, TimeWindow(10)),
            Comparison(">=", V, 100),
            time=T,
        ),
    ),
    (
        "alarm :- [10] [] isSteam.",
        rule(a("alarm"), ExtAtom(a("isSteam"), Op.BOX, window=TimeWindow(10))),
    ),
    (
        "freeze :- not alarm, not normal.",
        rule(a("freeze"), ExtAtom(a("alarm"), negated=True), ExtAtom(a("normal"), negated=True)),
    ),
    (
        "hot(X) :- [60 step 10] <> ex:temp(X, V), V > 30.",
        rule(
            a("hot", X),
            ExtAtom(a(f"<{EX}temp>", X, V), Op.DIAMOND, window=TimeWindow(60, 10)),
            Comparison(">", V, 30),
        ),
    ),
    (
        "exp(Id, Y) :- [5] @T1 tram(Id, X), plan(X, Y, Z), T = T1 + Z.",
        rule(
            a("exp", Id, Y),
            ExtAtom(a("tram", Id, X), Op.AT, T1, TimeWindow(5)),
            ExtAtom(a("plan", X, Y, Z)),
            Comparison("=", T, BinOp("+", T1, Z)),
        ),
    ),
]

EXAMPLE_PROGRAM = """% comment (also # comment, but NOT the '#' in "[#3]" nor inside IRIs/strings)
@prefix ex: <http://example.org/> .
q(X, Y, Z) :- [3] <> a(X, Y), [#3] <> b(Y, Z).
@T steam(V) :- [10] @T temp(V), V >= 100.
alarm :- [10] [] isSteam.
freeze :- not alarm, not normal.
hot(X) :- [60 step 10] <> ex:temp(X, V), V > 30.
exp(Id, Y) :- [5] @T1 tram(Id, X), plan(X, Y, Z), T = T1 + Z.
line(a1, l1).                                   % a fact: background
"""


@pytest.mark.parametrize(("text", "expected"), EXAMPLES, ids=[t for t, _ in EXAMPLES])
def test_example_parses_to_expected_ir(text: str, expected: Rule) -> None:
    assert one_rule(text, f"@prefix ex: <{EX}> .\n") == expected


def test_example_program() -> None:
    program = parse_program(EXAMPLE_PROGRAM, source="prog.lars")
    assert program == Program(
        tuple(r for _, r in EXAMPLES), (a("line", "a1", "l1"),), (("ex", EX),)
    )


def test_example_program_round_trips() -> None:
    program = parse_program(EXAMPLE_PROGRAM)
    text = str(program)
    again = parse_program(text)
    assert again == program
    assert str(again) == text


@pytest.mark.parametrize(("text", "expected"), EXAMPLES, ids=[t for t, _ in EXAMPLES])
def test_each_example_round_trips(text: str, expected: Rule) -> None:
    program = Program((expected,), (), (("ex", EX),))
    assert parse_program(str(program)) == program


# ---------------------------------------------------------------------------------------------------------------
# the rest of the syntax


def test_facts_and_bodiless_rules() -> None:
    program = parse_program("line(a1, l1).\n@5 p(a).\n@T p(b).\nq.\n")
    assert program.facts == (a("line", "a1", "l1"), a("q"))
    assert program.rules == (rule(a("p", "a"), time=5), rule(a("p", "b"), time=T))


def test_windows_with_streams_and_operators() -> None:
    r = one_rule(
        "p(X) :- [3 from s1] <> a(X), [4 step 2 from ex:s] [] b(X), [#5 from <http://x.org/s>] @-2 c(X), "
        "[#1] @T d(X, T), [0] <> e.",
        f"@prefix ex: <{EX}> .\n",
    )
    assert [lit.window for lit in r.body] == [
        TimeWindow(3, 1, "s1"),
        TimeWindow(4, 2, f"<{EX}s>"),
        TupleWindow(5, "<http://x.org/s>"),
        TupleWindow(1),
        TimeWindow(0),
    ]
    assert [lit.op for lit in r.body] == [Op.DIAMOND, Op.BOX, Op.AT, Op.AT, Op.DIAMOND]
    assert r.body[2].time == -2 and r.body[3].time == T


def test_negation_inside_and_outside() -> None:
    r = one_rule("p(X) :- q(X), [3] <> not a(X), not [3] <> a(X), not [3] [] not a(X), @T not b(X), not c(X).")
    assert [(lit.negated, lit.inner_negated) for lit in r.body[1:]] == [
        (False, True), (True, False), (True, True), (False, True), (True, False)
    ]


def test_unicode_forms() -> None:
    text = "u(X) ← ⊞^3 ◇ a(X), ⊞^{4} □ b(X), ⊞^#2 ◇ c(X), ⊞^{#6} □ ¬ d(X), ¬ e(X)."
    assert one_rule(text) == one_rule(
        "u(X) :- [3] <> a(X), [4] [] b(X), [#2] <> c(X), [#6] [] not d(X), not e(X)."
    )


def test_terms() -> None:
    r = one_rule(
        'p(X) :- q(X, _y, abc, -7, +3, 2.50, -0.5, "a\\"b\\\\c\\nd\\te", <http://x.org/a#b>, ex:c, :d, '
        '_:b1, "chat"@fr, "1"^^<http://www.w3.org/2001/XMLSchema#int>, "2"^^ex:dt).',
        f"@prefix ex: <{EX}> .\nPREFIX : <http://empty.org/>\n",
    )
    assert r.body[0].atom.args == (
        X, Var("_y"), "abc", -7, 3, Decimal("2.5"), Decimal("-0.5"), string('a"b\\c\nd\te'),
        "<http://x.org/a#b>", f"<{EX}c>", "<http://empty.org/d>", "_:b1", '"chat"@fr',
        '"1"^^<http://www.w3.org/2001/XMLSchema#int>', f'"2"^^<{EX}dt>',
    )
    assert type(r.body[0].atom.args[3]) is int and type(r.body[0].atom.args[5]) is Decimal


def test_predicates_may_be_iris_and_prefixed_names() -> None:
    r = one_rule("<http://x.org/h>(X) :- ex:p(X), [1] <> <http://x.org/q>.", f"@prefix ex: <{EX}> .\n")
    assert r.head.atom.pred == "<http://x.org/h>"
    assert [lit.atom.pred for lit in r.body] == [f"<{EX}p>", "<http://x.org/q>"]


def test_anonymous_variables_are_fresh_and_do_not_clash() -> None:
    r = one_rule("p(X) :- a(X, _, _), b(_1, _), c(_3).")
    args = [lit.atom.args for lit in r.body]
    assert args == [(X, Var("_2"), Var("_4")), (Var("_1"), Var("_5")), (Var("_3"),)]
    # numbering restarts in every rule
    program = parse_program("p :- a(_).\nq :- b(_).")
    assert [r.body[0].atom.args for r in program.rules] == [(Var("_1"),), (Var("_1"),)]


def test_arithmetic_precedence_and_parentheses() -> None:
    r = one_rule("p(X) :- a(X), X + 2 * 3 - 4 / 2 = (X + 1) * -2, X - -1 != 1 - (2 - 3).")
    c1, c2 = r.body[1], r.body[2]
    assert c1 == Comparison(
        "=",
        BinOp("-", BinOp("+", X, BinOp("*", 2, 3)), BinOp("/", 4, 2)),
        BinOp("*", BinOp("+", X, 1), -2),
    )
    assert c2 == Comparison("!=", BinOp("-", X, -1), BinOp("-", 1, BinOp("-", 2, 3)))


@pytest.mark.parametrize("op", COMPARISON_OPS)
def test_comparison_operators(op: str) -> None:
    assert one_rule(f"p(X) :- a(X), X {op} 3.").body[1] == Comparison(op, X, 3)


def test_less_than_is_not_an_iri_or_a_diamond() -> None:
    r = one_rule("p(X) :- a(X, Y), X<Y, Y<=X, X < <http://x.org/a>, [2]<>b(X).")
    assert r.body[1:4] == (
        Comparison("<", X, Y), Comparison("<=", Y, X), Comparison("<", X, "<http://x.org/a>")
    )
    assert r.body[4] == ExtAtom(a("b", X), Op.DIAMOND, window=TimeWindow(2))


def test_comments() -> None:
    text = """# hash comment
    % percent comment
    @prefix ex: <http://x.org/ns#> .   # the '#' inside the IRI is not a comment
    p(X) :- [#3] <> a(X, "50% # not a comment"), [ #2 ] [] ex:b. % trailing
    """
    r = one_rule(text)
    assert r.body[0].atom.args == (X, string("50% # not a comment"))
    assert r.body[1] == ExtAtom(a("<http://x.org/ns#b>"), Op.BOX, window=TupleWindow(2))


def test_sparql_prefix_and_redeclaration() -> None:
    program = parse_program("PREFIX ex: <http://a.org/>\nprefix ex2: <http://b.org/>\n@prefix ex: <http://c.org/> .\n"
                            "p(ex:x, ex2:y).")
    assert program.facts == (a("p", "<http://c.org/x>", "<http://b.org/y>"),)
    assert program.prefixes == (("ex", "http://c.org/"), ("ex2", "http://b.org/"))


def test_a_predicate_named_prefix_is_not_a_declaration() -> None:
    assert parse_program("prefix(a).").facts == (a("prefix", "a"),)


def test_not_as_a_constant() -> None:
    r = one_rule("p(X) :- a(not, X), X = not, not <http://x.org/q>(X).")
    assert r.body == (
        ExtAtom(a("a", "not", X)),
        Comparison("=", X, "not"),
        ExtAtom(a("<http://x.org/q>", X), negated=True),
    )


def test_spans() -> None:
    program = parse_program("\n  p(X) :-\n    [3] <> a(X),  X > 1.", source="f.lars")
    (r,) = program.rules
    assert r.span == Span(2, 3, "f.lars")
    assert r.head.atom.span == Span(2, 3, "f.lars")
    assert r.body[0].span == Span(3, 5, "f.lars")
    assert r.body[0].atom.span == Span(3, 12, "f.lars")
    assert r.body[1].span == Span(3, 19, "f.lars")


def test_tabs_do_not_shift_columns() -> None:
    with pytest.raises(ParseError) as info:
        parse_program("p(X) :-\t\ta(X) b.")
    assert info.value.span == Span(1, 15)


def test_empty_program() -> None:
    assert parse_program("") == Program()
    assert parse_program("% nothing\n\n") == Program()


# ---------------------------------------------------------------------------------------------------------------
# errors: golden files hold the exact message; the input is the file next to it

ERROR_CASES = sorted(GOLDEN.glob("*.lars"))


def check_golden_error(path: Path, dialect: str) -> None:
    """``path`` must fail to parse with exactly the message in the ``.err`` file next to it."""
    text = path.read_text(encoding="utf-8")
    expected = path.with_suffix(".err").read_text(encoding="utf-8").rstrip("\n")
    with pytest.raises(ParseError) as info:
        parse_program(text, dialect=dialect, source=path.name)
    err = info.value
    assert str(err) == expected
    assert err.text == text.split("\n")[err.span.line - 1]  # the offending line, as written


@pytest.mark.parametrize("path", ERROR_CASES, ids=[p.name for p in ERROR_CASES])
def test_golden_parse_errors(path: Path) -> None:
    check_golden_error(path, "native")


def test_golden_cases_exist() -> None:
    assert len(ERROR_CASES) >= 8


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("p(X).", "1:1: fact p(X) is not ground"),
        ("p(_, a).", "1:1: fact p(_,a) is not ground"),
        ('p("a\\qb").', "1:5: unknown escape '\\q' in string"),
        ("p(X) :- [#0] <> a(X).", "1:9: tuple window size must be >= 1, got 0"),
        ("p(X) :- [3 step 0] <> a(X).", "1:9: window step must be >= 1, got 0"),
        ("p(X) :- not not a(X).", "1:9: 'not' inside an operator needs the operator"),
        ("p(X) :- a(X), X <> 3.", "1:17: expected comparison operator, found '<>'"),
        ("p(X) :- @ a(X).", "1:11: expected time (a variable or an integer), found 'a'"),
        ("p(X) :- a(X), .", "1:15: expected body literal, found '.'"),
        ("p() .", "1:3: expected term, found ')'"),
        ("p(a) q(b).", "1:6: expected ':-' or '.', found 'q'"),
        ('p(X) :- a("abc).', "1:11: expected term, found an unterminated string"),
        ("@prefix ex <http://a/> .", "1:9: expected prefix name (like ex:), found 'ex'"),
        ("p(X) :- a(" + "9" * 5000 + ").", "1:11: expected a number of at most 4300 digits, found '"
         + "9" * 27 + "...'"),
    ],
)
def test_error_messages(text: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_program(text)
    assert str(info.value) == message


def test_deep_nesting_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        parse_program("p(X) :- a(X), X = " + "(" * 3000 + "1" + ")" * 3000 + ".")


# ---------------------------------------------------------------------------------------------------------------
# registry and stream atoms


def test_unknown_dialect_suggests() -> None:
    with pytest.raises(ParseError, match=r"^unknown dialect 'nativ'; did you mean 'native'\?$"):
        get_dialect("nativ")
    with pytest.raises(ParseError, match="unknown dialect 'xyz'"):
        parse_program("p.", dialect="xyz")


def test_parse_atoms() -> None:
    pfx = {"ex": EX}
    assert parse_atoms("a(x1,y), b(y,z)") == [a("a", "x1", "y"), a("b", "y", "z")]
    assert parse_atoms("  ex:p(ex:a, 3, -2.5, \"s, t\", <http://x/a,b>) ,q ", prefixes=pfx) == [
        a(f"<{EX}p>", f"<{EX}a>", 3, Decimal("-2.5"), string("s, t"), "<http://x/a,b>"),
        a("q"),
    ]
    assert parse_atoms("p(a)", prefixes=[("ex", EX)]) == [a("p", "a")]
    assert parse_atoms("") == [] and parse_atoms("   \n") == []
    assert parse_atom("temp(42)") == a("temp", 42)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a(X)", "s.txt:7:3: stream atoms must be ground, found variable X"),
        ("a(_)", "s.txt:7:3: stream atoms must be ground, found variable _"),
        ("a(x,", "s.txt:7:5: expected term, found end of input"),
        ("a(b) b(c)", "s.txt:7:6: expected ',' or end of line, found 'b'"),
        ("foo:a(b)", "s.txt:7:1: undeclared prefix 'foo:' in foo:a"),
        ("3(a)", "s.txt:7:1: expected atom, found '3'"),
    ],
)
def test_parse_atoms_errors(text: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_atoms(text, source="s.txt", line=7)
    assert str(info.value) == message
    assert info.value.text == text


def test_parse_atom_needs_exactly_one() -> None:
    with pytest.raises(ParseError, match="expected one atom, found 2"):
        parse_atom("a, b")


# ---------------------------------------------------------------------------------------------------------------
# property tests: random IR -> print -> parse is the identity

PREFIXES = (("ex", EX), ("foaf", "http://xmlns.com/foaf/0.1/"), ("", "http://empty.org/ns#"))

# 'not' is a keyword: it works as a constant except at the start of a comparison (tested separately)
LOWER = "abcdefghijklmnopqrstuvwxyz"
UPPER = LOWER.upper()
WORD = LOWER + UPPER + "0123456789_"


def words(first: str, rest: str, max_rest: int) -> st.SearchStrategy[str]:
    return st.builds(lambda f, r: f + r, st.sampled_from(first), st.text(rest, max_size=max_rest))


names = words(LOWER, WORD, 5).filter(lambda n: n != "not")
pred_names = names
variables = st.one_of(words(UPPER, WORD, 3), words("_", WORD, 3).filter(lambda n: n != "_")).map(Var)
iri_bases = st.sampled_from([EX, "http://xmlns.com/foaf/0.1/", "http://empty.org/ns#", "urn:x:", "http://o.org/"])
iris = st.builds(lambda b, l: f"<{b}{l}>", iri_bases, st.text(WORD + "-/#.~", max_size=6))
ints = st.integers(-(10**6), 10**6)
decimals = st.decimals(min_value=-(10**6), max_value=10**6, places=3, allow_nan=False, allow_infinity=False)
strings = st.text(st.characters(exclude_categories=("Cs",)), max_size=8).map(string)
literals = st.one_of(
    st.builds(lambda s, l: f"{s}@{l}", strings, st.sampled_from(["en", "fr", "en-GB"])),
    st.builds(lambda s, d: f"{s}^^{d}", strings, iris),
    words(LOWER, LOWER + "0123456789", 3).map(lambda n: "_:" + n),
)
constants = st.one_of(names, ints, decimals, strings, iris, literals)
terms = st.one_of(variables, constants)
times = st.one_of(variables, ints)
stream_names = st.one_of(st.just(""), names, iris)


def atoms(args=terms) -> st.SearchStrategy[Atom]:
    return st.builds(lambda p, xs: Atom(p, tuple(xs)), st.one_of(pred_names, iris), st.lists(args, max_size=3))


windows = st.one_of(
    st.builds(TimeWindow, st.integers(0, 100), st.integers(1, 10), stream_names),
    st.builds(TupleWindow, st.integers(1, 100), stream_names),
)


@st.composite
def ext_atoms(draw) -> ExtAtom:
    window = draw(st.none() | windows)
    op = draw(st.sampled_from([Op.DIAMOND, Op.BOX, Op.AT]) if window else st.sampled_from([None, *Op]))
    time = draw(times) if op is Op.AT else None
    inner = draw(st.booleans()) if op is not None else False
    return ExtAtom(draw(atoms()), op, time, window, inner, draw(st.booleans()))


exprs = st.recursive(
    terms, lambda inner: st.builds(BinOp, st.sampled_from(["+", "-", "*", "/"]), inner, inner), max_leaves=6
)
comparisons = st.builds(Comparison, st.sampled_from(COMPARISON_OPS), exprs, exprs)


@st.composite
def rules(draw) -> Rule:
    body = tuple(draw(st.lists(st.one_of(ext_atoms(), comparisons), max_size=4)))
    time = draw(times) if not body else draw(st.none() | times)
    return Rule(Head(draw(atoms()), time), body)


programs = st.builds(
    lambda rs, fs, n: Program(tuple(rs), tuple(fs), PREFIXES[:n]),
    st.lists(rules(), max_size=4),
    st.lists(atoms(constants), max_size=3),
    st.integers(0, len(PREFIXES)),
)


def assert_round_trip(program: Program) -> None:
    text = str(program)
    again = parse_program(text)
    assert again == program, text
    assert str(again) == text  # also catches 3 vs 3.0, which == does not


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs)
def test_round_trip_random_programs(program: Program) -> None:
    assert_round_trip(program)


@pytest.mark.soak
@settings(max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs)
def test_round_trip_random_programs_soak(program: Program) -> None:
    assert_round_trip(program)


fast_constants = st.one_of(names, ints, decimals, strings, iris)


@settings(max_examples=300, deadline=None)
@given(st.lists(atoms(fast_constants), max_size=4), st.integers(0, len(PREFIXES)), st.sampled_from([",", ", ", " , "]))
def test_fast_and_slow_atom_paths_agree(atom_list: list[Atom], n: int, sep: str) -> None:
    prefixes = PREFIXES[:n]
    text = sep.join(format_atom_in(x, prefixes) for x in atom_list)
    fast = native.parse_atoms(text, prefixes)
    slow = native.parse_atoms(text, prefixes, fast=False)
    assert fast == slow == atom_list
    assert [str(x) for x in fast] == [str(x) for x in atom_list]
    assert native._fast_atoms(text, dict(prefixes)) is not None  # these all take the fast path


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("pqX_(),.:-<>[]#@%\"'\\ \n3=+*/!abnot") + ["not ", " step ", "⊞^", "◇"]),
                max_size=40).map("".join))
def test_garbage_gives_parse_errors_only(text: str) -> None:
    try:
        parse_program(text)
    except ParseError as err:
        assert err.span is not None and err.text is not None
    try:
        parse_atoms(text)
    except ParseError as err:
        assert err.span is not None
