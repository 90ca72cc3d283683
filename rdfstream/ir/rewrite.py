"""Substituting terms for variables in a rule: renaming (the engine's canonical forms) and instantiation
(the entailment specialiser).  A pure function of the IR."""

from __future__ import annotations

from dataclasses import replace

from ..atoms import Atom
from ..terms import is_var
from .nodes import BinOp, Comparison, Head, Rule


def substitute(rule: Rule, mapping: dict) -> Rule:
    """``rule`` with every variable in ``mapping`` replaced by its value (one step: the values are final), in
    predicates, arguments, @ times and comparisons.  Spans and the rule's name are kept."""

    def term(t):
        return mapping.get(t, t) if is_var(t) else t

    def expr(e):
        return BinOp(e.op, expr(e.left), expr(e.right)) if type(e) is BinOp else term(e)

    def atom(a: Atom) -> Atom:
        return Atom(term(a.pred), tuple(term(x) for x in a.args), a.span)

    body = []
    for lit in rule.body:
        if type(lit) is Comparison:
            body.append(Comparison(lit.op, expr(lit.left), expr(lit.right), lit.span))
        else:
            body.append(replace(lit, atom=atom(lit.atom), time=term(lit.time) if lit.time is not None else None))
    head = Head(atom(rule.head.atom), term(rule.head.time) if rule.head.time is not None else None)
    return replace(rule, head=head, body=tuple(body))
