"""Entailment rule files in use: load them, close the static graphs under them, specialise, or add to programs.

This module wires the pure pieces together (it is at the level of :mod:`rdfstream.api`): the native front end
reads the rule files, the engine computes the static closure G*, :mod:`rdfstream.reasoning.specialise` turns
the rules into instances, and :mod:`rdfstream.reasoning.scope` lays a query's closure out as LARS rules.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from .atoms import Atom
from .errors import CompileError
from .ir.nodes import ExtAtom, Head, Program, Rule
from .ir.rewrite import substitute
from .reasoning.scope import Closure, _hash
from .reasoning.specialise import check_rule_file, is_triple_atom, specialise
from .terms import is_var

TABLE = "rdfstream_triple"  # the triple table in which the static closure is computed

#: where the bundled rule files live in a source checkout (``rules/`` next to the package)
BUNDLED = Path(__file__).resolve().parent.parent / "rules"


def resolve_rules_path(path: str | os.PathLike) -> Path:
    """A rule file by path, or by the name of a bundled one (``rdfs``, ``rules/owl2rl.lars``)."""
    p = Path(path)
    if p.exists():
        return p
    for folder in (BUNDLED, Path.cwd() / "rules"):
        for candidate in (folder / p.name, folder / f"{p.name}.lars"):
            if candidate.exists():
                return candidate
    raise FileNotFoundError(f"no such rule file: {path}")


def load_rules(paths: Iterable) -> tuple[list[Rule], tuple[tuple[str, str], ...]]:
    """The rules (and prefixes) of native LARS rule files; Program objects are taken as they are."""
    from .frontends.registry import parse_program

    rules: list[Rule] = []
    prefixes: dict[str, str] = {}
    for item in paths:
        if isinstance(item, Program):
            program = item
        else:
            path = resolve_rules_path(item)
            program = parse_program(path.read_text(encoding="utf-8"), source=str(path))
        if program.facts:
            raise CompileError(f"a rule file holds rules only; {program.facts[0]} is a fact (put facts in a graph)",
                               program.facts[0].span)
        check_rule_file(program.rules)
        rules.extend(program.rules)
        for p, ns in program.prefixes:
            prefixes.setdefault(p, ns)
    return rules, tuple(prefixes.items())


# ---------------------------------------------------------------- the static closure


def _tabled(atom: Atom) -> Atom:
    if is_triple_atom(atom):
        return Atom(TABLE, (atom.args[0], atom.pred, atom.args[1]), atom.span)
    return Atom(f"h_{atom.pred}", atom.args, atom.span)


def _untabled(pred: str, args: tuple) -> Atom:
    if pred == TABLE:
        return Atom(args[1], (args[0], args[2]))
    return Atom(pred[2:], args)


def to_table(rules: Iterable[Rule]) -> list[Rule]:
    """The rules over one triple table (so variable predicates become plain arguments)."""
    out = []
    for rule in rules:
        body = tuple(replace(lit, atom=_tabled(lit.atom)) if type(lit) is ExtAtom else lit for lit in rule.body)
        out.append(replace(rule, head=Head(_tabled(rule.head.atom), rule.head.time), body=body))
    return out


def saturate(rules: list[Rule], facts: Iterable[Atom]) -> set[Atom]:
    """The closure of ``facts`` under ``rules`` (window-free), computed by the engine at one tick."""
    from .engine.session import Engine

    program = Program(tuple(to_table(rules)), tuple(_tabled(f) for f in facts))
    engine = Engine(program, start=0)
    engine.advance_to(0)
    out = {_untabled(f.pred, f.args) for f in program.facts}
    for pred in program.intensional():
        out.update(_untabled(pred, args) for args in engine.facts(pred))
    return out


def build_closure(rules: list[Rule], static: Iterable[Atom], *, specialised: bool = True, key: str = "",
                  prefixes=(), dynamic_heads: Iterable[Atom] = (), keep_helpers: bool = False) -> Closure:
    """A rule set with the static closure of ``static`` (triples ``p(s, o)``), specialised unless told not to."""
    static = list(static)
    closed = frozenset(saturate(rules, static))
    spec = specialise(rules, closed, dynamic_heads=dynamic_heads, keep_helpers=keep_helpers) if specialised else None
    ident = _hash(tuple(str(r) for r in rules), key or tuple(sorted(map(str, static))), specialised)
    return Closure(tuple(rules), closed, spec, ident, tuple(prefixes))


# ---------------------------------------------------------------- rules inside LARS programs


def is_entailment_rule(rule: Rule) -> bool:
    """Holds at every time point: no window, operator, negation or @-head (what a rule file may hold)."""
    return rule.head.time is None and all(
        type(lit) is not ExtAtom or (lit.window is None and lit.op is None and lit.positive) for lit in rule.body)


def prepare_program(program: Program, background: Iterable[Atom] = (), *, specialised: bool = True):
    """A program whose rules have predicate-variable heads (an ``@include``d rule file): its window-free rules are
    treated as entailment rules (:func:`add_rules_to_program`).  Other programs are returned as they are."""
    if not any(is_var(r.head.atom.pred) for r in program.rules):
        return program, set()
    entail = [r for r in program.rules if is_entailment_rule(r)]
    rest = Program(tuple(r for r in program.rules if not is_entailment_rule(r)), program.facts, program.prefixes)
    return add_rules_to_program(rest, entail, background, specialised=specialised)


def add_rules_to_program(program: Program, rules: list[Rule], background: Iterable[Atom] = (), *,
                         specialised: bool = True) -> tuple[Program, set]:
    """``program`` with the entailment ``rules`` added (they hold at every time point).

    The rules are specialised against the program's facts and ``background``; the static closure becomes
    background facts.  A predicate variable left in a body (``P(X, Y)``) ranges over the data atoms and, by
    expansion, over every IRI predicate the program derives; one left in a head is an error (it would need a
    triple table, which queries have and programs do not).  Returns the program and the guard patterns."""
    check_rule_file(rules)
    closure = build_closure(rules, list(program.facts) + list(background), specialised=specialised,
                            dynamic_heads=[r.head.atom for r in program.rules], keep_helpers=True)
    instances = list(closure.specialised.rules) if closure.specialised is not None else list(rules)
    for rule in instances:
        if is_var(rule.head.atom.pred):
            name = f" {rule.name}" if rule.name else ""
            raise CompileError(
                f"entailment rule{name} derives triples whose predicate {rule.head.atom.pred} is bound by stream data:"
                " it cannot run inside a LARS program (use it in a query, or give the schema it needs as background)",
                rule.span)
    derived = {r.head.atom.pred for r in list(program.rules) + instances}
    derived_iris = sorted(p for p in derived if type(p) is str and p.startswith("<"))
    out: list[Rule] = list(program.rules)
    for rule in instances:
        out.extend(_expand_predicate_variables(rule, derived_iris))
    facts = dict.fromkeys([*program.facts, *sorted(closure.static, key=str)])
    return Program(tuple(dict.fromkeys(out)), tuple(facts), program.prefixes), closure.guards


def _expand_predicate_variables(rule: Rule, preds: list[str]) -> list[Rule]:
    """Copies of ``rule`` with each predicate variable either kept (it then matches data atoms only, which is
    all there is of a predicate nothing derives) or bound to one of the derived predicates ``preds``."""
    variables = list(dict.fromkeys(
        lit.atom.pred for lit in rule.body if type(lit) is ExtAtom and is_var(lit.atom.pred)))
    out = [rule]
    for var in variables:
        out = [r2 for r in out for r2 in [r] + [substitute(r, {var: p}) for p in preds]]
    return out
