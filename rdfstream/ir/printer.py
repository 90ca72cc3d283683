"""Canonical native LARS text for IR nodes.  ``parse(format_program(p)) == p`` for every program ``p``."""

from __future__ import annotations

import re

from ..atoms import Atom
from ..terms import Term, format_term
from .nodes import (
    DEFAULT_STREAM,
    BinOp,
    BodyLiteral,
    Comparison,
    Expr,
    ExtAtom,
    Head,
    Op,
    PartitionWindow,
    Program,
    Rule,
    TimeWindow,
    TupleWindow,
    Window,
)

_LOCAL_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*\Z")

Prefixes = tuple[tuple[str, str], ...]


def compact(const: str, prefixes: Prefixes) -> str:
    """``<http://ex.org/a>`` -> ``ex:a`` when a declared prefix fits; otherwise unchanged."""
    if not prefixes or not const.startswith("<"):
        return const
    value = const[1:-1]
    for pfx, ns in prefixes:
        if value.startswith(ns) and _LOCAL_RE.match(value[len(ns) :]):
            return f"{pfx}:{value[len(ns):]}"
    return const


def format_term_in(term: Term, prefixes: Prefixes = ()) -> str:
    if type(term) is str:
        return compact(term, prefixes)
    return format_term(term)


def format_atom_in(atom: Atom, prefixes: Prefixes = ()) -> str:
    pred = compact(atom.pred, prefixes) if type(atom.pred) is str else str(atom.pred)
    if not atom.args:
        return pred
    return f"{pred}({','.join(format_term_in(a, prefixes) for a in atom.args)})"


def format_window(window: Window, prefixes: Prefixes = ()) -> str:
    source = "" if window.stream == DEFAULT_STREAM else f" from {compact(window.stream, prefixes)}"
    if type(window) is TupleWindow:
        return f"[#{window.size}{source}]"
    if type(window) is PartitionWindow:
        return f"[#{window.size} by {format_atom_in(window.key, prefixes)}{source}]"
    assert type(window) is TimeWindow
    step = "" if window.step == 1 and window.offset is None else f" step {window.step}"
    if window.offset is not None:
        step += f" start {window.offset}"
    return f"[{window.size}{step}{source}]"


def format_expr(expr: Expr, prefixes: Prefixes = (), nested: bool = False) -> str:
    if type(expr) is BinOp:
        text = f"{format_expr(expr.left, prefixes, True)} {expr.op} {format_expr(expr.right, prefixes, True)}"
        return f"({text})" if nested else text
    return format_term_in(expr, prefixes)  # type: ignore[arg-type]


def format_literal(lit: BodyLiteral, prefixes: Prefixes = ()) -> str:
    if type(lit) is Comparison:
        return f"{format_expr(lit.left, prefixes)} {lit.op} {format_expr(lit.right, prefixes)}"
    assert type(lit) is ExtAtom
    parts = []
    if lit.negated:
        parts.append("not")
    if lit.window is not None:
        parts.append(format_window(lit.window, prefixes))
    if lit.op is Op.AT:
        parts.append(f"@{format_term(lit.time)}")  # type: ignore[arg-type]
    elif lit.op is not None:
        parts.append(lit.op.value)
    if lit.inner_negated:
        parts.append("not")
    parts.append(format_atom_in(lit.atom, prefixes))
    return " ".join(parts)


def format_head(head: Head, prefixes: Prefixes = ()) -> str:
    atom = format_atom_in(head.atom, prefixes)
    return atom if head.time is None else f"@{format_term(head.time)} {atom}"


def format_rule(rule: Rule, prefixes: Prefixes = ()) -> str:
    head = format_head(rule.head, prefixes)
    if not rule.body:
        return f"{head}."
    return f"{head} :- {', '.join(format_literal(b, prefixes) for b in rule.body)}."


def format_program(program: Program) -> str:
    pfx = program.prefixes
    lines = [f"@prefix {p}: <{ns}> ." for p, ns in pfx]
    lines += [f"{format_atom_in(f, pfx)}." for f in program.facts]
    lines += [format_rule(r, pfx) for r in program.rules]
    return "\n".join(lines) + ("\n" if lines else "")
