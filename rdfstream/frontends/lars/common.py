"""Helpers shared by the LARS front ends: positions, error conversion, terms, the fast ground-atom path.

The grammars produce a small raw tree of the token classes below (``Tok*``), each carrying its offset in the
parsed text.  A builder then turns that tree into IR nodes; it owns everything that needs context (declared
prefixes, fresh names for anonymous variables, source spans), so grammar parse actions stay pure and
backtracking can never leave a trace in the result.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal

import pyparsing as pp

from ...atoms import Atom
from ...errors import CompileError, ParseError, Span
from ...terms import Const, Term, Var, string

Prefixes = Mapping[str, str] | Iterable[tuple[str, str]]


# --------------------------------------------------------------------------------------------------------------
# positions


class SourceText:
    """Maps offsets of ``text`` to 1-based (line, column); ``first_line`` is the line number of the text's start."""

    __slots__ = ("_starts", "first_line", "source", "text")

    def __init__(self, text: str, source: str | None = None, first_line: int = 1):
        self.text = text
        self.source = source
        self.first_line = first_line
        starts = [0]
        find = text.find
        pos = find("\n")
        while pos >= 0:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self._starts = starts

    def _index(self, loc: int) -> int:
        return bisect.bisect_right(self._starts, loc) - 1

    def span(self, loc: int) -> Span:
        i = self._index(loc)
        return Span(self.first_line + i, loc - self._starts[i] + 1, self.source)

    def line_text(self, loc: int) -> str:
        i = self._index(loc)
        start = self._starts[i]
        end = self.text.find("\n", start)
        line = self.text[start:] if end < 0 else self.text[start:end]
        return line.rstrip("\r")

    def error(self, message: str, loc: int) -> ParseError:
        loc = max(0, min(loc, len(self.text)))
        return ParseError(message, self.span(loc), self.line_text(loc))


# --------------------------------------------------------------------------------------------------------------
# pyparsing exceptions -> ParseError

_WORD_RE = re.compile(r"[A-Za-z0-9_]+|:-|<>|<=|>=|!=|==|\[\]")
_STRING_START_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"?')


def describe_found(text: str, loc: int) -> str:
    """What the parser found at ``loc``, for messages: a quoted token, or 'end of input'."""
    if loc >= len(text):
        return "end of input"
    ch = text[loc]
    if ch == "\n" or ch == "\r":
        return "end of line"
    if ch == '"':
        m = _STRING_START_RE.match(text, loc)
        token = m.group(0) if m else ch
        if not token.endswith('"') or len(token) == 1:
            return "an unterminated string"
        return token if len(token) <= 30 else token[:27] + '..."'
    m = _WORD_RE.match(text, loc)
    token = m.group(0) if m else ch
    if len(token) > 30:
        token = token[:27] + "..."
    return repr(token) if "'" not in token else f'"{token}"'


def expected_text(exc: pp.ParseBaseException) -> str:
    msg = exc.msg or ""
    msg = msg.removeprefix("Expected ")
    return msg or "something else"


def convert_exception(exc: pp.ParseBaseException, src: SourceText) -> ParseError:
    loc = exc.loc
    return src.error(f"expected {expected_text(exc)}, found {describe_found(src.text, loc)}", loc)


def compile_error(err: CompileError, src: SourceText, loc: int) -> ParseError:
    return src.error(err.message, loc)


# --------------------------------------------------------------------------------------------------------------
# raw tree


class Tok:
    __slots__ = ("loc",)

    def __init__(self, loc: int):
        self.loc = loc


class TokConst(Tok):
    """A constant that needs no context (name, number, IRI, blank node, checked string)."""

    __slots__ = ("value",)

    def __init__(self, loc: int, value: Const):
        super().__init__(loc)
        self.value = value


class TokString(Tok):
    """A string literal as written: body (escapes not yet checked), optional language or datatype."""

    __slots__ = ("body", "dt_iri", "dt_pname", "lang")

    def __init__(self, loc: int, body: str, lang: str | None, dt_iri: str | None, dt_pname: TokPName | None):
        super().__init__(loc)
        self.body = body
        self.lang = lang
        self.dt_iri = dt_iri
        self.dt_pname = dt_pname


class TokPName(Tok):
    __slots__ = ("local", "prefix")

    def __init__(self, loc: int, prefix: str, local: str):
        super().__init__(loc)
        self.prefix = prefix
        self.local = local


class TokVar(Tok):
    __slots__ = ("name",)

    def __init__(self, loc: int, name: str):
        super().__init__(loc)
        self.name = name


class TokAnon(Tok):
    """A lone ``_``: a fresh variable at each occurrence."""

    __slots__ = ()


class TokAtom(Tok):
    __slots__ = ("args", "pred")

    def __init__(self, loc: int, pred: Tok, args: list[Tok]):
        super().__init__(loc)
        self.pred = pred
        self.args = args


class TokBinOp(Tok):
    __slots__ = ("left", "op", "right")

    def __init__(self, loc: int, op: str, left: Tok, right: Tok):
        super().__init__(loc)
        self.op = op
        self.left = left
        self.right = right


class TokComparison(Tok):
    __slots__ = ("left", "op", "right")

    def __init__(self, loc: int, op: str, left: Tok, right: Tok):
        super().__init__(loc)
        self.op = op
        self.left = left
        self.right = right


def walk_vars(node: object, out: set[str]) -> None:
    """Collect the names of the named variables below ``node`` (any nesting of Tok, lists and tuples)."""
    if isinstance(node, TokVar):
        out.add(node.name)
    elif isinstance(node, (list, tuple)):
        for child in node:
            walk_vars(child, out)
    elif isinstance(node, Tok):
        for slot in _slots_of(type(node)):
            walk_vars(getattr(node, slot), out)


_SLOTS_CACHE: dict[type, tuple[str, ...]] = {}


def _slots_of(cls: type) -> tuple[str, ...]:
    slots = _SLOTS_CACHE.get(cls)
    if slots is None:
        names: list[str] = []
        for klass in cls.__mro__:
            names.extend(s for s in getattr(klass, "__slots__", ()) if s != "loc")
        slots = _SLOTS_CACHE[cls] = tuple(names)
    return slots


# --------------------------------------------------------------------------------------------------------------
# building IR terms from the raw tree

_UNESCAPE = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r"}
_ESCAPE_RE = re.compile(r"\\(.)", re.DOTALL)


def unescape_string(body: str, src: SourceText, loc: int) -> str:
    """The value of a string body with ``\\" \\\\ \\n \\t \\r`` escapes; any other escape is an error."""
    if "\\" not in body:
        return body

    def repl(m: re.Match[str]) -> str:
        ch = m.group(1)
        if ch not in _UNESCAPE:
            raise src.error(f"unknown escape '\\{ch}' in string", loc + 1 + m.start())
        return _UNESCAPE[ch]

    return _ESCAPE_RE.sub(repl, body)


class FreshVars:
    """Names for anonymous variables: ``_1``, ``_2``, ... skipping every name the rule already uses."""

    __slots__ = ("counter", "made", "taken")

    def __init__(self, taken: set[str]):
        self.taken = taken
        self.made: set[str] = set()
        self.counter = 0

    def __call__(self) -> Var:
        while True:
            self.counter += 1
            name = f"_{self.counter}"
            if name not in self.taken:
                self.taken.add(name)
                self.made.add(name)
                return Var(name)


class TermBuilder:
    """Turns raw tokens into terms and atoms, with the declared prefixes and source positions."""

    def __init__(self, src: SourceText, prefixes: dict[str, str] | None = None):
        self.src = src
        self.prefixes: dict[str, str] = prefixes if prefixes is not None else {}
        self.fresh: Callable[[], Var] | None = None

    def error(self, message: str, loc: int) -> ParseError:
        return self.src.error(message, loc)

    def expand(self, tok: TokPName) -> str:
        ns = self.prefixes.get(tok.prefix)
        if ns is None:
            raise self.error(f"undeclared prefix '{tok.prefix}:' in {tok.prefix}:{tok.local}", tok.loc)
        return f"<{ns}{tok.local}>"

    def term(self, tok: Tok) -> Term:
        kind = type(tok)
        if kind is TokConst:
            return tok.value  # type: ignore[attr-defined]
        if kind is TokVar:
            return Var(tok.name)  # type: ignore[attr-defined]
        if kind is TokPName:
            return self.expand(tok)  # type: ignore[arg-type]
        if kind is TokString:
            return self.string(tok)  # type: ignore[arg-type]
        if kind is TokAnon:
            if self.fresh is None:
                raise self.error("anonymous variable '_' is not allowed here", tok.loc)
            return self.fresh()
        raise TypeError(f"not a term token: {tok!r}")

    def string(self, tok: TokString) -> str:
        text = string(unescape_string(tok.body, self.src, tok.loc))
        if tok.lang is not None:
            return f"{text}@{tok.lang}"
        if tok.dt_iri is not None:
            return f"{text}^^<{tok.dt_iri}>"
        if tok.dt_pname is not None:
            return f"{text}^^{self.expand(tok.dt_pname)}"
        return text

    def pred(self, tok: Tok) -> str | Var:
        value = self.term(tok)
        if type(value) is Var:  # a predicate variable (rule bodies only: heads and facts check)
            return value
        if type(value) is not str:  # the grammars only let names, IRIs and prefixed names through
            raise self.error(f"a predicate must be a name or an IRI, not {value}", tok.loc)
        return value

    def atom(self, tok: TokAtom) -> Atom:
        args = tuple(self.term(a) for a in tok.args)
        return Atom(self.pred(tok.pred), args, self.src.span(tok.loc))

    def ground_atom(self, tok: TokAtom) -> Atom:
        for arg in (tok.pred, *tok.args):
            if type(arg) is TokVar or type(arg) is TokAnon:
                name = arg.name if type(arg) is TokVar else "_"  # type: ignore[attr-defined]
                raise self.error(f"stream atoms must be ground, found variable {name}", arg.loc)
        return self.atom(tok)

    def build(self, make: Callable[[], object], loc: int) -> object:
        """Call an IR constructor, turning its CompileError into a ParseError at ``loc``."""
        try:
            return make()
        except CompileError as err:
            raise compile_error(err, self.src, loc) from None


def number(text: str) -> int | Decimal:
    return Decimal(text) if "." in text else int(text)


def int_action(s: str, loc: int, toks: pp.ParseResults) -> int:
    """Parse action for integer tokens: ints longer than Python converts are a syntax error, not a crash."""
    try:
        return int(toks[0])
    except ValueError:
        raise pp.ParseFatalException(s, loc, "Expected a number of at most 4300 digits") from None


def number_action(s: str, loc: int, toks: pp.ParseResults) -> TokConst:
    try:
        return TokConst(loc, number(toks[0]))
    except ValueError:
        raise pp.ParseFatalException(s, loc, "Expected a number of at most 4300 digits") from None


def prefix_dict(prefixes: Prefixes | None) -> dict[str, str]:
    if not prefixes:
        return {}
    return dict(prefixes)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------------------------
# the fast path for lists of ground atoms (stream ingest)


class FastAtoms:
    """Parses ``p(a,b), q(c)`` lists of ground atoms with compiled regexes.

    One regex validates the whole line, a second splits it into (predicate, arguments) pairs; arguments are
    split on commas unless they hold strings or IRIs (which may contain commas), then tokenised with the term
    regex.  Converted constants are cached by their text (bounded), which also shares equal constants between
    atoms.  ``__call__`` returns None when the text is outside what the regexes cover (variables, comments,
    errors, ...): the caller then falls back to the full grammar, which reports errors with columns.

    ``convert(text, prefixes)`` turns a term or predicate into a constant and may raise LookupError (an
    undeclared prefix, a bad quoted name) to request the fallback; ``context_free(text)`` says whether the
    result does not depend on the prefixes, so it may be cached.
    """

    CACHE_LIMIT = 200_000

    def __init__(self, pred_re: str, term_re: str, convert: Callable[[str, dict], Const],
                 context_free: Callable[[str], bool], quote_chars: str):
        args = rf"{term_re}(?:[ \t]*,[ \t]*{term_re})*"
        atom = rf"(?:{pred_re})(?:[ \t]*\([ \t]*{args}[ \t]*\))?"
        self._line = re.compile(rf"\s*{atom}(?:[ \t]*,[ \t]*{atom})*\s*")
        self._atoms = re.compile(rf"({pred_re})(?:[ \t]*\([ \t]*({args})[ \t]*\))?")
        self._term = re.compile(term_re)
        self._quotes = quote_chars
        self._conv = convert
        self._context_free = context_free
        self._cache: dict[str, Const] = {}

    def _lookup(self, text: str, prefixes: dict[str, str]) -> Const:
        value = self._cache.get(text)
        if value is None:
            value = self._conv(text, prefixes)
            if self._context_free(text):
                if len(self._cache) >= self.CACHE_LIMIT:
                    self._cache.clear()
                self._cache[text] = value
        return value

    def __call__(self, text: str, prefixes: dict[str, str]) -> list[Atom] | None:
        if self._line.fullmatch(text) is None:
            return None if text.strip() else []
        get = self._cache.get
        lookup = self._lookup
        q1, q2 = self._quotes[0], self._quotes[-1]
        out: list[Atom] = []
        try:
            for pred, args in self._atoms.findall(text):
                p = get(pred)
                if p is None:
                    p = lookup(pred, prefixes)
                if not args:
                    out.append(Atom(p))  # type: ignore[arg-type]
                    continue
                if q1 in args or q2 in args:
                    toks = self._term.findall(args)
                elif " " in args or "\t" in args:
                    toks = [t.strip() for t in args.split(",")]
                else:
                    toks = args.split(",")
                values = []
                for tok in toks:
                    v = get(tok)
                    values.append(lookup(tok, prefixes) if v is None else v)
                out.append(Atom(p, tuple(values)))  # type: ignore[arg-type]
        except (LookupError, ValueError):
            return None
        return out
