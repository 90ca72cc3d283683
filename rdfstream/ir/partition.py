"""Can a program run as independent copies, one per key of its input stream?  (Keyed scale-out, issue 5.)

Split the data stream by a key, the value at argument ``position`` of every data atom (the subject of a triple
``p(s, o)`` for position 0, the sensor of ``temp(sensor, v)``), and run the program on each part with the whole
background.  The union of the parts' outputs equals the output over the whole stream when every derivation reads
data of one key only.  :func:`analyse_partition` checks a sufficient condition, rule by rule:

* the positive and negated body atoms over data or keyed predicates all carry one variable ``V`` at their key
  position (so a rule never joins atoms of two keys, and a negation looks at its own key only);
* the head carries ``V`` too, which makes the head predicate keyed, at ``V``'s position (the same for all of
  its rules); a rule whose body reads no keyed atom derives the same in every part, which is harmless;
* a head without ``V`` derives a *global* fact (``alarm :- [3] <> hot(S)``): fine as output, since the union
  over the parts is the whole answer, but no rule may read a global predicate (its truth in one part would
  differ from the whole);
* tuple windows ``[#n]`` count atoms across keys: not allowed; a partition window ``[#n by p(K, _)]`` is, when
  its key pattern includes the key position;
* data atoms need an argument at the key position.

Programs that fail run as a single key: correct, not parallel.  The reason names the rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..terms import is_var
from .nodes import ExtAtom, PartitionWindow, Program, Rule, TupleWindow
from .printer import format_rule


@dataclass
class PartitionPlan:
    position: int
    ok: bool
    keyed: dict[str, int] = field(default_factory=dict)  # predicate -> key position (data and derived)
    global_preds: set[str] = field(default_factory=set)  # derived from several keys: output only
    data: set[str] = field(default_factory=set)  # the data predicates the program reads
    reason: str | None = None

    def describe(self) -> str:
        where = f"argument {self.position + 1} of the data atoms"
        if not self.ok:
            return f"partitioning by {where}: not possible ({self.reason}); it runs as a single key"
        derived = sorted(p for p in self.keyed if p not in self.data)
        text = f"partitioning by {where}: possible; every part runs on its own"
        if derived:
            text += f"; keyed derived predicates: {', '.join(derived)}"
        if self.global_preds:
            text += f"; {', '.join(sorted(self.global_preds))} combine the parts (union)"
        return text


def analyse_partition(program: Program, position: int = 0,
                      background_preds: frozenset[str] = frozenset()) -> PartitionPlan:
    """Whether ``program`` may run as one copy per key (argument ``position`` of the data atoms)."""
    intensional = program.intensional()
    static = {f.pred for f in program.facts} | set(background_preds)
    plan = PartitionPlan(position, True)

    def fail(reason: str, rule: Rule | None = None) -> PartitionPlan:
        plan.ok = False
        plan.reason = reason + (f", in rule: {format_rule(rule)}" if rule is not None else "")
        return plan

    # data predicates: read in a body, derived by no rule, not background
    for rule in program.rules:
        for lit in rule.body:
            if type(lit) is not ExtAtom:
                continue
            pred = lit.atom.pred
            if is_var(pred) or (pred not in intensional and pred not in static):
                if type(lit.window) is TupleWindow:
                    return fail("a tuple window counts atoms across keys", rule)
                if len(lit.atom.args) <= position:
                    return fail(f"data atom {lit.atom} has no argument {position + 1} to key by", rule)
                if not is_var(pred):
                    plan.data.add(pred)
                    plan.keyed[pred] = position
    changed = True
    while changed:  # ends: a predicate gets a key position once, and may then only turn global
        changed = False
        for rule in program.rules:
            key_var = None
            reads_keyed = False
            # positive atoms first: a negated keyed atom needs the key bound by a keyed atom of the same rule
            for lit in sorted((x for x in rule.body if type(x) is ExtAtom), key=lambda x: not x.positive):
                pred = lit.atom.pred
                if is_var(pred):
                    at = position
                elif pred in plan.global_preds:
                    return fail(f"{pred} combines several keys and is read by a rule", rule)
                elif pred in plan.keyed:
                    at = plan.keyed[pred]
                else:
                    continue  # background, or derived from background only (the same in every part)
                reads_keyed = True
                if type(lit.window) is PartitionWindow and not _refines(lit.window, position):
                    return fail(f"the partition window {lit.window} does not split by the key", rule)
                arg = lit.atom.args[at] if at < len(lit.atom.args) else None
                if arg is None or not is_var(arg):
                    return fail(f"{lit.atom} has no variable at the key position", rule)
                if key_var is None and not lit.positive:
                    return fail(f"the negated {lit.atom} reads a key that no keyed atom of the rule binds", rule)
                if key_var is None:
                    key_var = arg
                elif arg != key_var:
                    return fail(f"the rule joins atoms of different keys ({key_var} and {arg})", rule)
            if not reads_keyed:
                continue
            head = rule.head.atom
            if is_var(head.pred):
                return fail("a head with a predicate variable", rule)
            if key_var in head.args:
                at = head.args.index(key_var)
                old = plan.keyed.get(head.pred)
                if old is None:
                    if head.pred in plan.global_preds:
                        continue
                    plan.keyed[head.pred] = at
                    changed = True
                elif old != at:
                    plan.global_preds.add(head.pred)
                    plan.keyed.pop(head.pred)
                    changed = True
            elif head.pred not in plan.global_preds:
                plan.global_preds.add(head.pred)
                plan.keyed.pop(head.pred, None)
                changed = True
    # a global predicate read anywhere breaks the split
    for rule in program.rules:
        for lit in rule.body:
            if type(lit) is ExtAtom and lit.atom.pred in plan.global_preds:
                return fail(f"{lit.atom.pred} combines several keys and is read by a rule", rule)
    return plan


def _refines(window: PartitionWindow, position: int) -> bool:
    """The window's parts lie within one key: its key pattern names a variable at the key position."""
    args = window.key.args
    return position < len(args) and is_var(args[position]) and not args[position].name.startswith("_")


@dataclass
class QueryPartitionPlan:
    """Whether a continuous query may run as one copy per value of ``var`` (``--partition-by ?var``)."""

    var: str
    ok: bool
    position: int | None = None  # the triple position (0 subject, 1 object) that keys the stream
    reason: str | None = None

    def describe(self) -> str:
        if not self.ok:
            return f"partitioning by ?{self.var}: not possible ({self.reason}); it runs as a single key"
        where = "subject" if self.position == 0 else "object"
        return (f"partitioning by ?{self.var}: possible; the stream is keyed by the {where} of its triples and"
                f" every part reports the solutions whose ?{self.var} it owns")


def analyse_query_partition(cq, var: str, background_preds: frozenset[str] = frozenset()) -> QueryPartitionPlan:
    """Whether the reports of ``cq`` (an :class:`~rdfstream.ir.algebra.ContinuousQuery`) are the union over the
    values of ``var`` of the reports of copies that each see the stream triples of some values only.

    A copy owns the solutions whose ``var`` hashes to it, and reports at every report time of the whole query
    (the report times are shared).  That is exact when: the query is a SELECT with RStream over time windows;
    ``var`` is projected; every basic graph pattern binds ``var`` at the position that keys the stream and its
    rules pass :func:`analyse_partition` at that position; and every operator above the patterns keeps each
    solution within one value of ``var`` (joins, unions, filters, BIND, DISTINCT, GROUP BY ``var``; not
    ORDER BY, LIMIT/OFFSET, MINUS or a grouping that mixes values)."""
    var = var.lstrip("?$")
    plan = QueryPartitionPlan(var, False)

    def no(reason: str) -> QueryPartitionPlan:
        plan.reason = reason
        return plan

    if cq.form != "select":
        return no(f"a {cq.form.upper()} query (only SELECT queries split their answers by key)")
    if cq.policy != "rstream":
        return no(f"{cq.policy.upper()} compares each report with the previous whole report")
    if cq.is_stream:
        return no("the query's reports feed a stream")
    if any(w.kind != "time" for w in cq.windows):
        return no("a count window ([ROWS n] or [RANGE TRIPLES n]) counts triples across keys")
    if var not in cq.variables:
        return no(f"?{var} is not a projected variable")
    rule_reasons, algebra_reasons = [], []
    for position in (0, 1):
        rule_plan = analyse_partition(cq.program, position, background_preds)
        if not rule_plan.ok:
            rule_reasons.append(rule_plan.reason)
            continue
        why = _algebra_keyed(cq.algebra, var, rule_plan)
        if why is None:
            plan.ok, plan.position = True, position
            return plan
        algebra_reasons.append(why)
    return no((algebra_reasons or rule_reasons)[0])  # the rules split at some position: say what above them fails


def _algebra_keyed(node, var: str, plan: PartitionPlan) -> str | None:
    """None when every solution of ``node`` comes from one value of ``var`` (bound under that name or an alias),
    else the reason."""
    from . import algebra as A
    from .expr import Aggregate, VarRef

    def walk(n) -> tuple[set[str] | None, str | None]:
        """(the variables equal to the key in every solution, or None when the node reads no stream data;
        the reason it fails)"""
        kind = type(n)
        if kind is A.Relation:
            key_at = plan.keyed.get(n.pred)
            if key_at is None:
                if n.pred in plan.global_preds:
                    return None, f"{n.pred} combines several keys"
                return None, None  # background only: the same in every part
            if key_at >= len(n.columns):
                return None, f"pattern {n} has no column at the key position"
            return {n.columns[key_at]}, None
        if kind in (A.Unit, A.Values):
            return None, None
        if kind is A.Join or kind is A.LeftJoin or kind is A.Union:
            left, why = walk(n.left)
            if why:
                return None, why
            right, why = walk(n.right)
            if why:
                return None, why
            if left is None or right is None:
                if kind is not A.Join and (left is None) != (right is None):
                    return None, f"one side of {kind.__name__} does not read the stream by the key"
                return left if right is None else right, None
            both = left & right
            if not both:
                return None, f"{kind.__name__} of patterns keyed by different variables"
            return both, None
        if kind is A.Filter or kind is A.Distinct:
            return walk(n.inner)
        if kind is A.Extend:
            inner, why = walk(n.inner)
            if why or inner is None:
                return inner, why
            inner = inner - {n.var}
            if type(n.expr) is VarRef and n.expr.name in inner:
                inner |= {n.var}
            return (inner or None), (None if inner else f"BIND rebinds ?{n.var}")
        if kind is A.Project:
            inner, why = walk(n.inner)
            if why or inner is None:
                return inner, why
            kept = inner & set(n.variables)
            return (kept, None) if kept else (None, f"the stream splits by {_names(inner)}, which is not projected")
        if kind is A.Group:
            inner, why = walk(n.inner)
            if why or inner is None:
                return inner, why
            keys = {k.name for k in (n.keys or ()) if type(k) is VarRef}
            if not keys & inner:
                return None, "GROUP BY does not group by the key, so a group mixes keys"
            aliases = {v for v, agg in n.aggregates if type(agg) is Aggregate and agg.name.upper() == "SAMPLE"
                       and type(agg.arg) is VarRef and agg.arg.name in inner}
            return (aliases or None), (None if aliases else "the grouped key is not read back")
        return None, f"{kind.__name__} looks at the whole answer"

    keyed, why = walk(node)
    if why:
        return why
    if keyed is None:
        return "no pattern reads the stream by the key"
    if var not in keyed:
        return f"the stream splits by {_names(keyed)}, not by ?{var}"
    return None


def _names(variables: set[str]) -> str:
    return " = ".join(f"?{v}" for v in sorted(variables))
