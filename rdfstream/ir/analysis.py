"""Static analysis of a program: safety of each rule and stratification of negation.

Both are pure functions of the IR.  networkx is imported lazily so that importing the IR stays light.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import CompileError, StratificationError, UnsafeRuleError
from ..terms import Var, is_var
from .nodes import BodyLiteral, Comparison, ExtAtom, Op, PartitionWindow, Program, Rule, TupleWindow, expr_variables
from .printer import format_rule


def assignment_target(lit: BodyLiteral, bound: set[Var]) -> Var | None:
    """The variable a comparison ``X = expr`` assigns, if it is an assignment given ``bound``."""
    if type(lit) is not Comparison or lit.op != "=":
        return None
    if is_var(lit.left) and lit.left not in bound and all(v in bound for v in expr_variables(lit.right)):
        return lit.left  # type: ignore[return-value]
    return None


def positively_bound(rule: Rule) -> set[Var]:
    out: set[Var] = set()
    for lit in rule.body:
        if type(lit) is ExtAtom and lit.positive:
            out.update(lit.variables())
    return out


def bound_variables(rule: Rule) -> tuple[set[Var], list[Comparison]]:
    """Variables bound by positive atoms and assignments, and the comparisons that act as assignments."""
    bound = positively_bound(rule)
    assignments: list[Comparison] = []
    changed = True
    while changed:
        changed = False
        for lit in rule.body:
            target = assignment_target(lit, bound)
            if target is not None:
                bound.add(target)
                assignments.append(lit)  # type: ignore[arg-type]
                changed = True
    return bound, assignments


def check_safety(rule: Rule) -> None:
    bound, assignments = bound_variables(rule)
    text = format_rule(rule)

    def fail(var: Var, where: str) -> None:
        raise UnsafeRuleError(
            f"unsafe rule: variable {var} {where} is not bound by a positive body atom or an assignment"
            f" in rule: {text}",
            rule.span,
        )

    for var in rule.head.variables():
        if var not in bound:
            fail(var, "in the head")
    for lit in rule.body:
        if type(lit) is ExtAtom and not lit.positive:
            for var in lit.variables():
                if var not in bound:
                    fail(var, "in a negated literal")
        elif type(lit) is Comparison and not any(lit is a for a in assignments):
            for var in lit.variables():
                if var not in bound:
                    fail(var, "in a comparison")


def check_windows(program: Program) -> None:
    intensional = program.intensional()
    for rule in program.rules:
        if is_var(rule.head.atom.pred):
            raise CompileError(
                f"a head needs a predicate name, not the variable {rule.head.atom.pred}, in rule:"
                f" {format_rule(rule)} (entailment rules with such heads run in queries, or are specialised"
                " against the background schema: see docs/entailment.md)",
                rule.head.atom.span or rule.span,
            )
        for lit in rule.body:
            if type(lit) is ExtAtom and is_var(lit.atom.pred) and lit.op is Op.BOX:
                raise CompileError(
                    f"[] over an atom with a predicate variable is not supported, in rule: {format_rule(rule)}",
                    lit.span or rule.span,
                )
            if type(lit) is ExtAtom and type(lit.window) is PartitionWindow:
                if lit.op is Op.BOX or lit.inner_negated:
                    raise CompileError(
                        "a partition window takes <> or @ (its parts' ranges differ, so [] and 'not' inside it"
                        f" are not defined), in rule: {format_rule(rule)}", lit.span or rule.span)
                if lit.atom.pred in intensional or lit.window.key.pred in intensional:
                    raise CompileError(
                        f"partition window over derived predicate {lit.atom.pred}: partition windows split data"
                        f" atoms only, in rule: {format_rule(rule)}", lit.span or rule.span)
            if type(lit) is ExtAtom and type(lit.window) is TupleWindow and lit.atom.pred in intensional:
                raise CompileError(
                    f"tuple window over derived predicate {lit.atom.pred}: tuple windows count and show"
                    f" data atoms only, in rule: {format_rule(rule)}",
                    lit.span or rule.span,
                )


@dataclass(frozen=True)
class Stratum:
    """A strongly connected set of intensional predicates and the rules that derive them."""

    preds: frozenset[str]
    rules: tuple[int, ...]  # indexes into Program.rules
    recursive: bool


def dependency_graph(program: Program):
    import networkx as nx

    graph = nx.DiGraph()
    for i, rule in enumerate(program.rules):
        head = rule.head.atom.pred
        graph.add_node(head)
        for lit in rule.body:
            if type(lit) is not ExtAtom:
                continue
            body = lit.atom.pred
            if is_var(body):  # a predicate variable reads data atoms only: no dependency on derived ones
                continue
            negative = not lit.positive
            if graph.has_edge(body, head):
                data = graph.edges[body, head]
                data["negative"] = data["negative"] or negative
                if negative and data.get("neg_rule") is None:
                    data["neg_rule"] = i
            else:
                graph.add_edge(body, head, negative=negative, neg_rule=i if negative else None)
    return graph


def stratify(program: Program) -> list[Stratum]:
    """Strata in evaluation order; raises StratificationError naming a cycle through negation."""
    import networkx as nx

    graph = dependency_graph(program)
    intensional = program.intensional()
    for u, v, data in graph.edges(data=True):
        if not data["negative"]:
            continue
        if u == v or nx.has_path(graph, v, u):
            nodes = [u] + ([v] if u == v else nx.shortest_path(graph, v, u))
            cycle = nodes[0]
            for a, b in zip(nodes, nodes[1:], strict=False):
                cycle += f" -not-> {b}" if graph.edges[a, b]["negative"] else f" -> {b}"
            rule = program.rules[data["neg_rule"]]
            raise StratificationError(
                f"program is not stratifiable: the dependency cycle {cycle} goes through negation,"
                f" in rule: {format_rule(rule)}",
                rule.span,
            )
    condensed = nx.condensation(graph)
    by_pred: dict[str, list[int]] = {}
    for i, rule in enumerate(program.rules):
        by_pred.setdefault(rule.head.atom.pred, []).append(i)
    strata = []
    for node in nx.topological_sort(condensed):
        preds = frozenset(p for p in condensed.nodes[node]["members"] if p in intensional)
        if not preds:
            continue
        rules = tuple(sorted(i for p in preds for i in by_pred.get(p, ())))
        recursive = len(preds) > 1 or any(graph.has_edge(p, p) for p in preds)
        strata.append(Stratum(preds, rules, recursive))
    return strata


def analyse(program: Program) -> list[Stratum]:
    """All compile-time checks; returns the strata."""
    for rule in program.rules:
        check_safety(rule)
    check_windows(program)
    return stratify(program)
