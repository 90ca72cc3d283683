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
