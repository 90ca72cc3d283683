"""The native LARS syntax (what :mod:`rdfstream.ir.printer` prints).

::

    @prefix ex: <http://example.org/> .            % also: PREFIX ex: <http://example.org/>
    q(X, Y, Z) :- [3] <> a(X, Y), [#3] <> b(Y, Z).
    @T steam(V) :- [10] @T temp(V), V >= 100.
    hot(X) :- [60 step 10 from ex:s] <> ex:temp(X, V), not alarm, V + 1 > 30.
    line(a1, l1).                                  # a ground fact: background

The grammar (pyparsing) only builds a raw token tree; :class:`_Builder` turns it into IR nodes, resolving
prefixes, naming anonymous variables and attaching spans.  Anonymous variables (a lone ``_``) become
``_1``, ``_2``, ... numbered per rule, skipping any name the rule already uses.
"""

from __future__ import annotations

import functools
import re
from decimal import Decimal

import pyparsing as pp

from ...atoms import Atom
from ...errors import ParseError
from ...ir.nodes import (
    DEFAULT_STREAM,
    BinOp,
    BodyLiteral,
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
from ...terms import NAME_PATTERN, VAR_PATTERN, Const, Var
from .common import (
    FastAtoms,
    FreshVars,
    Prefixes,
    SourceText,
    TermBuilder,
    Tok,
    TokAnon,
    TokAtom,
    TokBinOp,
    TokComparison,
    TokConst,
    TokPName,
    TokString,
    TokVar,
    convert_exception,
    describe_found,
    expected_text,
    int_action,
    number_action,
    prefix_dict,
    walk_vars,
)

# --------------------------------------------------------------------------------------------------------------
# lexical forms

NAME_RE = NAME_PATTERN
VAR_RE = VAR_PATTERN
IRI_RE = r'<[^<>"{}|^`\\\x00-\x20]+>'
PN_PREFIX_RE = r"(?:[A-Za-z][A-Za-z0-9_\-]*)?"
PN_LOCAL_RE = r"[A-Za-z0-9_][A-Za-z0-9_\-]*"
PNAME_RE = rf"{PN_PREFIX_RE}:{PN_LOCAL_RE}"
NUMBER_RE = r"[+-]?\d+(?:\.\d+)?"
INT_RE = r"[+-]?\d+"
BLANK_RE = r"_:[A-Za-z0-9_][A-Za-z0-9_\-]*"
_STRING_PARTS = re.compile(
    rf'"((?:[^"\\\n]|\\.)*)"(?:@([A-Za-z]+(?:-[A-Za-z0-9]+)*)|\^\^(?:<([^>]*)>|({PNAME_RE})))?', re.DOTALL
)
STRING_RE = _STRING_PARTS.pattern
_UWINDOW_PARTS = re.compile(r"⊞[ \t]*\^[ \t]*(?:\{[ \t]*(#?)[ \t]*(\d+)[ \t]*\}|(#?)(\d+))")
# comments ('%' or '#' to the end of the line) outside strings, IRIs and the '#' of tuple windows
_COMMENT_OR_SKIP = re.compile(
    rf'("(?:[^"\\\n]|\\.)*"|{IRI_RE}|\[[ \t]*#|\^[ \t]*\{{?[ \t]*#)|[%#][^\n]*'
)


def blank_comments(text: str) -> str:
    """``text`` with every comment replaced by spaces, so offsets (and columns) stay the same."""
    if "%" not in text and "#" not in text:
        return text
    return _COMMENT_OR_SKIP.sub(lambda m: m.group(0) if m.group(1) else " " * len(m.group(0)), text)


class TokInclude(Tok):
    __slots__ = ("path",)

    def __init__(self, loc: int, quoted: str):
        super().__init__(loc)
        self.path = quoted[1:-1]


class TokPrefix(Tok):
    __slots__ = ("ns", "prefix")

    def __init__(self, loc: int, prefix: str, ns: str):
        super().__init__(loc)
        self.prefix = prefix
        self.ns = ns


class TokWindow(Tok):
    __slots__ = ("key", "offset", "size", "step", "stream", "tuple")

    def __init__(self, loc: int, is_tuple: bool, size: int, step: int, stream: Tok | None):
        super().__init__(loc)
        self.tuple = is_tuple
        self.size = size
        self.step = step
        self.stream = stream
        self.offset: int | None = None
        self.key: Tok | None = None  # [#n by key]: a partition window


class TokOp(Tok):
    __slots__ = ("op", "time")

    def __init__(self, loc: int, op: Op, time: Tok | None):
        super().__init__(loc)
        self.op = op
        self.time = time


class TokExt(Tok):
    __slots__ = ("atom", "inner", "negated", "op", "window")

    def __init__(self, loc: int, negated: bool, window: TokWindow | None, op: TokOp | None, inner: bool,
                 atom: TokAtom):
        super().__init__(loc)
        self.negated = negated
        self.window = window
        self.op = op
        self.inner = inner
        self.atom = atom


class TokHead(Tok):
    __slots__ = ("atom", "time")

    def __init__(self, loc: int, time: Tok | None, atom: TokAtom):
        super().__init__(loc)
        self.time = time
        self.atom = atom


class TokRule(Tok):
    __slots__ = ("body", "head")

    def __init__(self, loc: int, head: TokHead, body: list[Tok] | None):
        super().__init__(loc)
        self.head = head
        self.body = body


# --------------------------------------------------------------------------------------------------------------
# grammar


def _lit(text: str, name: str | None = None) -> pp.ParserElement:
    return pp.Literal(text).set_name(name or f"'{text}'")


def _sup(text: str, name: str | None = None) -> pp.ParserElement:
    return _lit(text, name).suppress()


def _fold(tokens: pp.ParseResults) -> Tok:
    """``t0 op t1 op t2`` -> left-associated TokBinOp tree."""
    items = list(tokens)
    result = items[0]
    for i in range(1, len(items), 2):
        result = TokBinOp(result.loc, items[i], result, items[i + 1])
    return result


def _string_tok(loc: int, text: str) -> TokString:
    m = _STRING_PARTS.fullmatch(text)
    assert m is not None
    body, lang, dt_iri, dt_pname = m.groups()
    pname = None
    if dt_pname is not None:
        prefix, local = dt_pname.split(":", 1)
        pname = TokPName(loc + m.start(4), prefix, local)
    return TokString(loc, body, lang, dt_iri, pname)


def _uwindow_tok(loc: int, text: str) -> TokWindow:
    m = _UWINDOW_PARTS.fullmatch(text)
    assert m is not None
    hash_, size = (m.group(1), m.group(2)) if m.group(2) is not None else (m.group(3), m.group(4))
    return TokWindow(loc, bool(hash_), int(size), 1, None)


def _window_tok(is_tuple: bool):
    def action(s: str, loc: int, toks: pp.ParseResults) -> TokWindow:
        size = toks[0]
        step = toks.get("step", 1)
        stream = toks.get("stream")
        tok = TokWindow(loc, is_tuple, size, step, stream)
        tok.offset = toks.get("offset")
        tok.key = toks.get("key")
        return tok

    return action


class Grammar:
    """The native grammar, built once.  ``program`` parses a file; ``atoms`` a list of ground atoms."""

    def __init__(self) -> None:
        LPAR, RPAR, COMMA = _sup("("), _sup(")"), _sup(",")

        iri = pp.Regex(IRI_RE).set_name("IRI")
        iri.set_parse_action(lambda s, l, t: TokConst(l, t[0]))
        pname = pp.Regex(PNAME_RE).set_name("prefixed name")
        pname.set_parse_action(lambda s, l, t: TokPName(l, *t[0].split(":", 1)))
        num = pp.Regex(NUMBER_RE).set_name("number")
        num.set_parse_action(number_action)
        integer = pp.Regex(INT_RE).set_name("integer")
        integer.set_parse_action(number_action)
        strlit = pp.Regex(STRING_RE, flags=re.DOTALL).set_name("string")
        strlit.set_parse_action(lambda s, l, t: _string_tok(l, t[0]))
        blank = pp.Regex(BLANK_RE).set_name("blank node")
        blank.set_parse_action(lambda s, l, t: TokConst(l, t[0]))
        var = pp.Regex(VAR_RE).set_name("variable")
        var.set_parse_action(lambda s, l, t: TokAnon(l) if t[0] == "_" else TokVar(l, t[0]))
        name = pp.Regex(NAME_RE).set_name("name")
        name.set_parse_action(lambda s, l, t: TokConst(l, t[0]))
        pred_name = pp.Regex(rf"(?!not\b){NAME_RE}").set_name("name")
        pred_name.set_parse_action(lambda s, l, t: TokConst(l, t[0]))

        term = (strlit | iri | num | blank | pname | var | name).set_name("term")
        pred_var = pp.Regex(VAR_RE + r"(?=[ \t]*\()").set_name("predicate variable")
        pred_var.set_parse_action(lambda s, l, t: TokVar(l, t[0]))
        pred = (iri | pname | pred_name | pred_var).set_name("predicate")
        args = LPAR - term + pp.ZeroOrMore(COMMA - term) - _sup(")", "',' or ')'")
        atom = (pred + pp.Optional(args)).set_name("atom")
        atom.set_parse_action(lambda s, l, t: TokAtom(l, t[0], list(t[1:])))

        # arithmetic and comparisons
        expr = pp.Forward().set_name("expression")
        primary = (term | (LPAR - expr - RPAR)).set_name("term")
        product = primary + pp.ZeroOrMore(pp.Regex(r"[*/]").set_name("'*' or '/'") - primary)
        product.set_parse_action(_fold)
        total = product + pp.ZeroOrMore(pp.Regex(r"[+\-]").set_name("'+' or '-'") - product)
        total.set_parse_action(_fold)
        expr <<= total
        compop = pp.Regex(r"<=|>=|!=|=|<(?!>)|>").set_name("comparison operator")
        # 'not' never starts a comparison: "not <http://x.org/p>(X)" must not read as "not < http"
        # (Empty first, so the comparison's location is after whitespace: a lookahead does not skip it)
        comparison = (pp.Empty() + ~pp.Keyword("not") + expr + compop - expr).set_name("comparison")
        comparison.set_parse_action(lambda s, l, t: TokComparison(l, t[1], t[0], t[2]))

        # windows
        uint = pp.Regex(r"\d+").set_name("window size (an integer)")
        uint.set_parse_action(int_action)
        step_size = pp.Regex(r"\d+").set_name("step size (an integer)")
        step_size.set_parse_action(int_action)
        stream = (iri | pname | name).set_name("stream name")
        offset = pp.Regex(r"-?\d+").set_name("first pivot (an integer)")
        offset.set_parse_action(int_action)
        step_clause = pp.Keyword("step").suppress() - step_size("step") + pp.Optional(
            pp.Keyword("start").suppress() - offset("offset")
        )
        from_clause = pp.Keyword("from").suppress() - stream("stream")
        rbrack = _sup("]", "']'")
        time_window = (
            pp.Regex(r"\[(?![ \t]*[\]#])").suppress()
            - uint
            + pp.Optional(step_clause)
            + pp.Optional(from_clause)
            - rbrack
        )
        time_window.set_parse_action(_window_tok(False))
        by_clause = pp.Keyword("by").suppress() - atom("key")
        tuple_window = (pp.Regex(r"\[[ \t]*#").suppress() - uint + pp.Optional(by_clause) + pp.Optional(from_clause)
                        - rbrack)
        tuple_window.set_parse_action(_window_tok(True))
        uwindow = pp.Regex(_UWINDOW_PARTS.pattern).set_name("window")
        uwindow.set_parse_action(lambda s, l, t: _uwindow_tok(l, t[0]))
        window = (tuple_window | time_window | uwindow).set_name("window")

        # operators and extended atoms
        time_term = (integer | var).set_name("time (a variable or an integer)")
        diamond = (_lit("<>") | _lit("◇")).set_name("'<>'")
        diamond.set_parse_action(lambda s, l, t: TokOp(l, Op.DIAMOND, None))
        box = (pp.Regex(r"\[[ \t]*\]") | _lit("□")).set_name("'[]'")
        box.set_parse_action(lambda s, l, t: TokOp(l, Op.BOX, None))
        at = _sup("@") - time_term
        at.set_parse_action(lambda s, l, t: TokOp(l, Op.AT, t[0]))
        op = (diamond | box | at).set_name("operator (<>, [] or @T)")
        neg = (pp.Keyword("not") | _lit("¬")).set_name("'not'")
        neg.set_parse_action(lambda: True)
        ext = (
            pp.Optional(neg, default=False)
            + pp.Optional(window, default=None)
            + pp.Optional(op, default=None)
            + pp.Optional(neg, default=False)
            + atom
        ).set_name("extended atom")
        ext.set_parse_action(lambda s, l, t: TokExt(l, t[0], t[1], t[2], t[3], t[4]))
        literal = (comparison | ext).set_name("body literal")

        # rules and declarations
        head = pp.Optional(at, default=None) + atom
        head.set_parse_action(lambda s, l, t: TokHead(l, t[0].time if t[0] is not None else None, t[1]))
        arrow = (_lit(":-") | _lit("←")).suppress()
        body = pp.Group(literal + pp.ZeroOrMore(COMMA - literal))
        rest = (arrow - body - _sup(".", "',' or '.'")) | _sup(".")
        rest.set_name("':-' or '.'")
        rule = head - rest
        rule.set_parse_action(lambda s, l, t: TokRule(l, t[0], list(t[1]) if len(t) > 1 else None))

        pname_ns = pp.Regex(rf"{PN_PREFIX_RE}:(?![A-Za-z0-9_\-])").set_name("prefix name (like ex:)")
        ns_iri = pp.Regex(IRI_RE).set_name("namespace IRI")
        at_prefix = pp.Keyword("@prefix").suppress() - pname_ns - ns_iri - _sup(".", "'.'")
        sparql_prefix = pp.CaselessKeyword("PREFIX").suppress() + pname_ns - ns_iri
        prefix_decl = at_prefix | sparql_prefix
        prefix_decl.set_parse_action(lambda s, l, t: TokPrefix(l, t[0][:-1], t[1][1:-1]))

        include = pp.Keyword("@include").suppress() - pp.Regex(STRING_RE).set_name("file name in quotes") - _sup(
            ".", "'.'")
        include.set_parse_action(lambda s, l, t: TokInclude(l, t[0]))

        statement = (prefix_decl | include | rule).set_name("rule, fact, @prefix or @include")
        # comments are blanked out before parsing (blank_comments): much faster than pyparsing's ignore()
        self.program = (
            pp.ZeroOrMore(statement) + pp.StringEnd().set_name("rule, fact or @prefix declaration")
        ).parse_with_tabs()

        end_of_atoms = pp.StringEnd().set_name("',' or end of line")
        self.atoms = (
            pp.StringEnd() | (atom - pp.ZeroOrMore(COMMA - atom) - end_of_atoms)
        ).set_name("atom").parse_with_tabs()


@functools.cache
def grammar() -> Grammar:
    return Grammar()


# --------------------------------------------------------------------------------------------------------------
# raw tree -> IR


_ANON = Var("_")


class _Builder(TermBuilder):
    including: tuple[str, ...] = ()

    def program(self, statements: list[Tok]) -> Program:
        rules: list[Rule] = []
        facts: list[Atom] = []
        for st in statements:
            if type(st) is TokPrefix:
                self.prefixes[st.prefix] = st.ns
            elif type(st) is TokInclude:
                included = self.include(st)
                rules.extend(included.rules)
                facts.extend(included.facts)
                for prefix, ns in included.prefixes:
                    self.prefixes.setdefault(prefix, ns)
            else:
                self.rule(st, rules, facts)  # type: ignore[arg-type]
        return Program(tuple(rules), tuple(facts), tuple(self.prefixes.items()))

    def include(self, st: TokInclude) -> Program:
        """``@include "file" .``: the rules and facts of another native file (relative to this one's folder)."""
        import os

        here = os.path.dirname(self.src.source) if self.src.source else ""
        path = os.path.join(here, st.path) if not os.path.isabs(st.path) else st.path
        if not os.path.exists(path) and os.path.exists(st.path):
            path = st.path
        key = os.path.realpath(path)
        if key in self.including:
            raise self.error(f"@include cycle: {st.path} includes itself", st.loc)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            raise self.error(f"cannot @include {st.path}: {exc.strerror or exc}", st.loc) from None
        return parse_program(text, path, self.including + (key,))

    def rule(self, st: TokRule, rules: list[Rule], facts: list[Atom]) -> None:
        taken: set[str] = set()
        walk_vars(st, taken)
        self.fresh = FreshVars(taken)
        time = self.term(st.head.time) if st.head.time is not None else None
        atom = self.atom(st.head.atom)
        if st.body is None and time is None:
            if not atom.is_ground():
                made = self.fresh.made  # show anonymous variables as written
                shown = Atom(atom.pred, tuple(_ANON if type(a) is Var and a.name in made else a for a in atom.args))
                raise self.error(f"fact {shown} is not ground", st.head.atom.loc)
            facts.append(atom)
            return
        body = tuple(self.literal(lit) for lit in st.body or ())
        head = self.build(lambda: Head(atom, time), st.loc)
        span = self.src.span(st.loc)
        rules.append(Rule(head, body, span, rule_name(self.src.text, span.line)))  # type: ignore[arg-type]

    def literal(self, tok: Tok) -> BodyLiteral:
        if type(tok) is TokComparison:
            left, right = self.expr(tok.left), self.expr(tok.right)
            span = self.src.span(tok.loc)
            return self.build(lambda: Comparison(tok.op, left, right, span), tok.loc)  # type: ignore[return-value]
        assert type(tok) is TokExt
        window = self.window(tok.window) if tok.window is not None else None
        op = tok.op.op if tok.op is not None else None
        time = self.term(tok.op.time) if tok.op is not None and tok.op.time is not None else None
        atom = self.atom(tok.atom)
        span = self.src.span(tok.loc)
        return self.build(  # type: ignore[return-value]
            lambda: ExtAtom(atom, op, time, window, tok.inner, tok.negated, span), tok.loc
        )

    def window(self, tok: TokWindow) -> TimeWindow | TupleWindow | PartitionWindow:
        stream = DEFAULT_STREAM if tok.stream is None else self.term(tok.stream)
        if tok.key is not None:
            key = self.atom(tok.key)
            return self.build(lambda: PartitionWindow(tok.size, key, stream), tok.loc)  # type: ignore[return-value]
        if tok.tuple:
            return self.build(lambda: TupleWindow(tok.size, stream), tok.loc)  # type: ignore[return-value]
        return self.build(  # type: ignore[return-value]
            lambda: TimeWindow(tok.size, tok.step, stream, tok.offset), tok.loc
        )

    def expr(self, tok: Tok):
        if type(tok) is TokBinOp:
            return BinOp(tok.op, self.expr(tok.left), self.expr(tok.right))
        return self.term(tok)


# --------------------------------------------------------------------------------------------------------------
# errors


def _syntax_error(exc: pp.ParseBaseException, src: SourceText, code: str) -> ParseError:
    """The ParseError for a pyparsing exception; ``code`` is the text with comments blanked out."""
    expected = expected_text(exc)
    loc = exc.loc
    if "'.'" in expected:
        # a missing period is best reported where the rule ends, not at the start of the next line
        end = len(code[:loc].rstrip())
        if end and "\n" in code[end:loc]:
            found = describe_found(src.text, loc)
            if loc < len(code):
                found += f" on line {src.span(loc).line}"
            return src.error(f"expected {expected}, found {found}", end)
    return convert_exception(exc, src)


# --------------------------------------------------------------------------------------------------------------
# public entry points


_NAME_COMMENT = re.compile(r"\s*[%#]\s*([a-z][a-z0-9]*(?:-[a-z0-9]+)*)(?::|\s*\(|\s*$)")


def rule_name(text: str, line: int) -> str | None:
    """A rule's name: ``% rdfs9: …`` (or ``% prp-dom``, ``% cls-maxc1 (…)``) on a comment line above it, in the
    same paragraph (other rules may come in between, a blank line may not)."""
    lines = text.split("\n", line)[: line - 1]
    for raw in reversed(lines):
        if not raw.strip():
            return None
        if raw.lstrip().startswith(("%", "#")):
            found = _NAME_COMMENT.match(raw)
            if found:
                return found.group(1)
    return None


def parse_program(text: str, source: str | None = None, including: tuple[str, ...] = ()) -> Program:
    if text.startswith("\ufeff"):
        text = " " + text[1:]
    src = SourceText(text, source)
    code = blank_comments(text)
    try:
        statements = grammar().program.parse_string(code, parse_all=True)
    except pp.ParseBaseException as exc:
        raise _syntax_error(exc, src, code) from None
    except RecursionError:
        raise src.error("expression nested too deeply", 0) from None
    builder = _Builder(src)
    if source is not None:
        import os

        including = including + (os.path.realpath(source),)
    builder.including = including
    return builder.program(list(statements))


# the fast path: ground atoms without variables, comments or anything unusual
# names first (the common case); the lookahead keeps a name from being the prefix of a prefixed name
_FAST_NAME_RE = rf"{NAME_RE}(?![A-Za-z0-9_:\-])"
_FAST_TERM_RE = rf'(?:{_FAST_NAME_RE}|{NUMBER_RE}|{PNAME_RE}|"(?:[^"\\\n\r\t]|\\["\\nrt])*"|{IRI_RE})'
_FAST_PRED_RE = rf"(?:(?!not\b){_FAST_NAME_RE}|{PNAME_RE}|{IRI_RE})"
_DIGIT_START = frozenset("0123456789+-")


def _fast_convert(text: str, prefixes: dict[str, str]) -> Const:
    ch = text[0]
    if ch == '"' or ch == "<":
        # the strings let through use exactly the canonical escapes, so their text is already canonical
        return text
    if ch in _DIGIT_START:
        return Decimal(text) if "." in text else int(text)
    if ":" in text:
        prefix, local = text.split(":", 1)
        return f"<{prefixes[prefix]}{local}>"  # KeyError -> the grammar reports the undeclared prefix
    return text


def _context_free(text: str) -> bool:
    return text[0] in '"<' or ":" not in text


_fast_atoms = FastAtoms(_FAST_PRED_RE, _FAST_TERM_RE, _fast_convert, _context_free, '"<')


def parse_atoms(text: str, prefixes: Prefixes = (), source: str | None = None, line: int = 1,
                fast: bool = True) -> list[Atom]:
    """Ground atoms separated by commas.  Atoms from the fast path carry no span."""
    pfx = prefix_dict(prefixes)
    if fast:
        atoms = _fast_atoms(text, pfx)
        if atoms is not None:
            return atoms
    return parse_atoms_slow(text, pfx, source, line)


def parse_atoms_slow(text: str, prefixes: dict[str, str], source: str | None, line: int) -> list[Atom]:
    src = SourceText(text, source, line)
    try:
        toks = grammar().atoms.parse_string(blank_comments(text), parse_all=True)
    except pp.ParseBaseException as exc:
        raise convert_exception(exc, src) from None
    builder = TermBuilder(src, prefixes)
    return [builder.ground_atom(tok) for tok in toks]
