"""The rule format of Laser (karmaresearch/Laser): one rule per line, no final period, ``and`` between literals.

::

    q(X,Z) :- time_win(3,0,1, diamond(p(X,Y))) and time_win(1,0,1, diamond(p(Y,Z)))
    @(T, high(V)) :- time_win(2,0,1, @(T, a(V))) and COMP(>=,V,18)
    h1(T1,X) :- tuple_win(3,0,1, @(T, p(X,Y))) and MATH(+,T1,T,2)
    p(B,C) :- time_win(1,0,1, diamond(not(s))) and not(r(B,C))
    h(Y,X) :- 'http://ex.org/p'(X,Y)

Mapping to the IR: ``time_win(n, 0, d, F)`` is ``[n step d]``; ``tuple_win(n, F)`` and ``tuple_win(n, 0, 1, F)``
are ``[#n]``; ``diamond``/``box``/``@(T, ·)`` are the operators; ``not(·)`` around a windowed formula (or
between the window and the operator) negates the extended atom, inside an operator it negates the atom at
each point.  ``COMP(op, a, b)`` is ``a op b`` (``==`` is ``=``); ``MATH(op, r, a, b)`` is ``r = a op b``.
A quoted name ``'...'`` is an IRI when it is an absolute IRI, else it must be a plain name.

Laser keeps rules in Python lists and has no file format; here blank lines and whole-line comments starting
with ``%``, ``#`` or ``//`` are skipped.  Laser has no facts, prefixes or string literals.
"""

from __future__ import annotations

import functools
import re
from decimal import Decimal

import pyparsing as pp

from ...atoms import Atom
from ...errors import ParseError
from ...ir.nodes import (
    BinOp,
    BodyLiteral,
    Comparison,
    ExtAtom,
    Head,
    Op,
    Program,
    Rule,
    TimeWindow,
    TupleWindow,
)
from ...terms import ABSOLUTE_IRI_RE, NAME_PATTERN, VAR_PATTERN, Const
from ...terms import NAME_RE as _TERMS_NAME_RE
from .common import (
    FastAtoms,
    FreshVars,
    Prefixes,
    SourceText,
    TermBuilder,
    Tok,
    TokAnon,
    TokAtom,
    TokComparison,
    TokConst,
    TokVar,
    convert_exception,
    int_action,
    number_action,
    walk_vars,
)

NAME_RE = NAME_PATTERN
VAR_RE = VAR_PATTERN
NUMBER_RE = r"[+-]?\d+(?:\.\d+)?"
QUOTED_RE = r"'[^'\n]*'"
RESERVED = ("not", "and", "or", "diamond", "box", "time_win", "tuple_win", "predicate_win")
_PRED_NAME_RE = rf"(?!(?:{'|'.join(RESERVED)})\b){NAME_RE}"
_COMMENT_LINE = re.compile(r"\s*(?:%|#|//|\Z)")


class TokQuoted(Tok):
    """``'...'``: an IRI or a name, decided (and checked) by the builder."""

    __slots__ = ("text",)

    def __init__(self, loc: int, text: str):
        super().__init__(loc)
        self.text = text


class TokNot(Tok):
    __slots__ = ("inner",)

    def __init__(self, loc: int, inner: Tok):
        super().__init__(loc)
        self.inner = inner


class TokWin(Tok):
    """``time_win`` / ``tuple_win`` with its numeric parameters as (value, offset) pairs."""

    __slots__ = ("inner", "kind", "params")

    def __init__(self, loc: int, kind: str, params: list[tuple[int, int]], inner: Tok):
        super().__init__(loc)
        self.kind = kind
        self.params = params
        self.inner = inner


class TokOper(Tok):
    __slots__ = ("inner", "op", "time")

    def __init__(self, loc: int, op: Op, time: Tok | None, inner: Tok):
        super().__init__(loc)
        self.op = op
        self.time = time
        self.inner = inner


class TokMath(Tok):
    __slots__ = ("left", "op", "result", "right")

    def __init__(self, loc: int, op: str, result: Tok, left: Tok, right: Tok):
        super().__init__(loc)
        self.op = op
        self.result = result
        self.left = left
        self.right = right


class TokLaserRule(Tok):
    __slots__ = ("atom", "body", "time")

    def __init__(self, loc: int, head: Tok, body: list[Tok]):
        super().__init__(loc)
        if type(head) is TokOper:  # @(T, atom)
            self.time, self.atom = head.time, head.inner
        else:
            self.time, self.atom = None, head
        self.body = body


def _sup(text: str, name: str | None = None) -> pp.ParserElement:
    return pp.Literal(text).set_name(name or f"'{text}'").suppress()


class Grammar:
    def __init__(self) -> None:
        LPAR, COMMA = _sup("("), _sup(",")

        quoted = pp.Regex(QUOTED_RE).set_name("quoted name")
        quoted.set_parse_action(lambda s, l, t: TokQuoted(l, t[0][1:-1]))
        num = pp.Regex(NUMBER_RE).set_name("number")
        num.set_parse_action(number_action)
        var = pp.Regex(VAR_RE).set_name("variable")
        var.set_parse_action(lambda s, l, t: TokAnon(l) if t[0] == "_" else TokVar(l, t[0]))
        name = pp.Regex(NAME_RE).set_name("name")
        name.set_parse_action(lambda s, l, t: TokConst(l, t[0]))
        pred_name = pp.Regex(_PRED_NAME_RE).set_name("name")
        pred_name.set_parse_action(lambda s, l, t: TokConst(l, t[0]))
        term = (quoted | num | var | name).set_name("term")
        pred = (quoted | pred_name).set_name("predicate")
        args = LPAR - term + pp.ZeroOrMore(COMMA - term) - _sup(")", "',' or ')'")
        atom = (pred + pp.Optional(args)).set_name("atom")
        atom.set_parse_action(lambda s, l, t: TokAtom(l, t[0], list(t[1:])))

        def param(what: str) -> pp.ParserElement:
            p = pp.Regex(r"[+-]?\d+").set_name(what)
            p.set_parse_action(lambda s, l, t: (int_action(s, l, t), l))
            return p

        integer = pp.Regex(r"[+-]?\d+").set_name("integer")
        integer.set_parse_action(number_action)
        time = (integer | var).set_name("time (a variable or an integer)")

        formula = pp.Forward().set_name("formula")
        close = _sup(")")
        neg = pp.Keyword("not").suppress() - LPAR - formula - close
        neg.set_parse_action(lambda s, l, t: TokNot(l, t[0]))
        time_win = (
            pp.Keyword("time_win").suppress() - LPAR
            - param("window size (an integer)") - COMMA
            - param("window offset (an integer)") - COMMA
            - param("window step (an integer)") - COMMA
            - formula - close
        )
        time_win.set_parse_action(lambda s, l, t: TokWin(l, "time", list(t[:3]), t[3]))
        tuple_params = param("window offset (an integer)") + COMMA - param("window step (an integer)") - COMMA
        tuple_win = (
            pp.Keyword("tuple_win").suppress() - LPAR
            - param("window size (an integer)") - COMMA
            - pp.Optional(tuple_params) - formula - close
        )
        tuple_win.set_parse_action(lambda s, l, t: TokWin(l, "tuple", list(t[:-1]), t[-1]))
        diamond = pp.Keyword("diamond").suppress() - LPAR - formula - close
        diamond.set_parse_action(lambda s, l, t: TokOper(l, Op.DIAMOND, None, t[0]))
        box = pp.Keyword("box").suppress() - LPAR - formula - close
        box.set_parse_action(lambda s, l, t: TokOper(l, Op.BOX, None, t[0]))
        at = _sup("@") - LPAR - time - COMMA - formula - close
        at.set_parse_action(lambda s, l, t: TokOper(l, Op.AT, t[0], t[1]))
        cmpop = pp.Regex(r"<=|>=|!=|==|=|<|>").set_name("comparison operator")
        comp = pp.Keyword("COMP").suppress() - LPAR - cmpop - COMMA - term - COMMA - term - close
        comp.set_parse_action(lambda s, l, t: TokComparison(l, "=" if t[0] == "==" else t[0], t[1], t[2]))
        aop = pp.Regex(r"[+\-*/]").set_name("arithmetic operator")
        math = (
            pp.Keyword("MATH").suppress() - LPAR - aop - COMMA - term - COMMA - term - COMMA - term - close
        )
        math.set_parse_action(lambda s, l, t: TokMath(l, t[0], t[1], t[2], t[3]))
        paren = LPAR - formula - close
        formula <<= (neg | time_win | tuple_win | diamond | box | at | comp | math | paren | atom).set_name(
            "formula"
        )

        head_at = _sup("@") - LPAR - time - COMMA - atom - close
        head_at.set_parse_action(lambda s, l, t: TokOper(l, Op.AT, t[0], t[1]))
        head = (head_at | atom).set_name("rule head")
        body = pp.Group(formula + pp.ZeroOrMore(pp.Keyword("and").suppress() - formula))
        rule = head - _sup(":-") - body - pp.StringEnd().set_name("'and' or end of rule")
        rule.set_parse_action(lambda s, l, t: TokLaserRule(l, t[0], list(t[1])))
        self.rule = rule.parse_with_tabs()

        end_of_atoms = pp.StringEnd().set_name("',' or end of line")
        self.atoms = (
            pp.StringEnd() | (atom - pp.ZeroOrMore(COMMA - atom) - end_of_atoms)
        ).set_name("atom").parse_with_tabs()


@functools.cache
def grammar() -> Grammar:
    return Grammar()


class _Builder(TermBuilder):
    def term(self, tok: Tok):
        if type(tok) is TokQuoted:
            return self.quoted(tok)
        return super().term(tok)

    def quoted(self, tok: TokQuoted) -> str:
        text = tok.text
        if ABSOLUTE_IRI_RE.match(text):
            return f"<{text}>"
        if re.fullmatch(_TERMS_NAME_RE.pattern, text):
            return text
        raise self.error(f"quoted name '{text}' is neither an absolute IRI nor a plain name", tok.loc)

    def rule(self, tok: TokLaserRule) -> Rule:
        taken: set[str] = set()
        walk_vars(tok, taken)
        self.fresh = FreshVars(taken)
        time = self.term(tok.time) if tok.time is not None else None
        atom = self.atom(tok.atom)
        head = self.build(lambda: Head(atom, time), tok.loc)
        body = tuple(self.literal(f) for f in tok.body)
        return Rule(head, body, self.src.span(tok.loc))  # type: ignore[arg-type]

    def literal(self, f: Tok) -> BodyLiteral:
        kind = type(f)
        if kind is TokComparison:
            left, right = self.term(f.left), self.term(f.right)  # type: ignore[attr-defined]
            span = self.src.span(f.loc)
            return self.build(lambda: Comparison(f.op, left, right, span), f.loc)  # type: ignore
        if kind is TokMath:
            result = self.term(f.result)  # type: ignore[attr-defined]
            value = self.build(lambda: BinOp(f.op, self.term(f.left), self.term(f.right)), f.loc)  # type: ignore
            span = self.src.span(f.loc)
            return Comparison("=", result, value, span)  # type: ignore[arg-type]
        return self.ext_atom(f)

    def ext_atom(self, f: Tok) -> ExtAtom:
        start = f.loc
        negated = False
        if type(f) is TokNot:
            negated, f = True, f.inner
        window = None
        if type(f) is TokWin:
            window = self.window(f)
            f = f.inner
            if type(f) is TokNot:  # time_win(n,0,1, not(diamond(a))) == not(time_win(n,0,1, diamond(a)))
                if negated:
                    raise self.error("double negation is not supported", f.loc)
                negated, f = True, f.inner
        op = time = None
        if type(f) is TokOper:
            op = f.op
            time = self.term(f.time) if f.time is not None else None
            f = f.inner
        inner = False
        if type(f) is TokNot and op is not None:
            inner, f = True, f.inner
        if type(f) is not TokAtom:
            raise self.error(f"{_describe(f)} is not allowed here", f.loc)
        if window is not None and op is None:
            raise self.error("a window must contain an operator: diamond(...), box(...) or @(T, ...)", start)
        atom = self.atom(f)
        span = self.src.span(start)
        return self.build(lambda: ExtAtom(atom, op, time, window, inner, negated, span), start)  # type: ignore

    def window(self, f: TokWin) -> TimeWindow | TupleWindow:
        (size, _), *rest = f.params
        if f.kind == "time":
            (offset, offset_loc), (step, _) = rest
            if offset != 0:
                raise self.error(f"time_win offset {offset} is not supported (only 0)", offset_loc)
            return self.build(lambda: TimeWindow(size, step), f.loc)  # type: ignore[return-value]
        if rest:
            (offset, offset_loc), (step, step_loc) = rest
            if offset != 0:
                raise self.error(f"tuple_win offset {offset} is not supported (only 0)", offset_loc)
            if step != 1:
                raise self.error(f"tuple_win step {step} is not supported (only 1)", step_loc)
        return self.build(lambda: TupleWindow(size), f.loc)  # type: ignore[return-value]


def _describe(f: Tok) -> str:
    if type(f) is TokNot:
        return "not(...)"
    if type(f) is TokWin:
        return f"{f.kind}_win(...)"
    if type(f) is TokOper:
        return {Op.DIAMOND: "diamond(...)", Op.BOX: "box(...)", Op.AT: "@(...)"}[f.op]
    if type(f) is TokComparison:
        return "COMP(...)"
    if type(f) is TokMath:
        return "MATH(...)"
    return "this formula"


def parse_rule(line: str, source: str | None = None, line_no: int = 1) -> Rule:
    src = SourceText(line, source, line_no)
    try:
        tok = grammar().rule.parse_string(line, parse_all=True)[0]
    except pp.ParseBaseException as exc:
        raise convert_exception(exc, src) from None
    except RecursionError:
        raise src.error("formula nested too deeply", 0) from None
    return _Builder(src).rule(tok)


def parse_program(text: str, source: str | None = None) -> Program:
    if text.startswith("\ufeff"):
        text = " " + text[1:]
    rules = []
    for number_, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if _COMMENT_LINE.match(line):
            continue
        rules.append(parse_rule(line, source, number_))
    return Program(tuple(rules))


# the fast path for stream atoms: p(a,b), 'http://ex.org/p'(a,1)
_FAST_TERM_RE = rf"(?:{NAME_RE}|{NUMBER_RE}|{QUOTED_RE})"
_FAST_PRED_RE = rf"(?:{_PRED_NAME_RE}|{QUOTED_RE})"
_NAME_FULL = re.compile(NAME_RE + r"\Z")


def _fast_quoted(text: str) -> str:
    inner = text[1:-1]
    if ABSOLUTE_IRI_RE.match(inner):
        return f"<{inner}>"
    if _NAME_FULL.match(inner):
        return inner
    raise LookupError(text)  # let the grammar report it


def _fast_convert(text: str, prefixes: dict[str, str]) -> Const:
    ch = text[0]
    if ch == "'":
        return _fast_quoted(text)
    if ch.isdigit() or ch == "-" or ch == "+":
        return Decimal(text) if "." in text else int(text)
    return text


_fast_atoms = FastAtoms(_FAST_PRED_RE, _FAST_TERM_RE, _fast_convert, lambda text: True, "'")


def parse_atoms(text: str, prefixes: Prefixes = (), source: str | None = None, line: int = 1,
                fast: bool = True) -> list[Atom]:
    """Ground atoms separated by commas (Laser has no prefixes: ``prefixes`` is ignored)."""
    if fast:
        atoms = _fast_atoms(text, {})
        if atoms is not None:
            return atoms
    src = SourceText(text, source, line)
    try:
        toks = grammar().atoms.parse_string(text, parse_all=True)
    except pp.ParseBaseException as exc:
        raise convert_exception(exc, src) from None
    builder = _Builder(src)
    return [builder.ground_atom(tok) for tok in toks]


__all__ = ["ParseError", "parse_atoms", "parse_program", "parse_rule"]
