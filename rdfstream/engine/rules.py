"""Planning and code generation for rules.

Each rule is compiled once into small Python functions, one per *driver* literal: the function joins the
driver's new groundings (its delta) with the full indexes of the other literals (semi-naive evaluation,
Laser's sSNE), checks comparisons and negations as soon as their variables are bound, and emits the head
with the smallest horizon of its premises.  Join order and index keys are decided here, at compile time.
Rules with negation are also compiled into a "full" function that is run once per evaluated tick,
because a negated literal can become true when something expires.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.analysis import bound_variables
from ..ir.nodes import BinOp, Comparison, Expr, ExtAtom, Op, Rule
from ..ir.rewrite import substitute
from ..ir.windows import INF
from ..terms import Var, is_var
from . import values
from .literals import Literal


@dataclass
class Positive:
    literal: Literal
    vars: tuple[Var, ...]


@dataclass
class Negative:
    """A filter over a positive literal: ``absent`` (not L), ``guard_absent`` (guard and not L) or
    ``unguard_present`` (not guard or L), where guard is ``nonempty`` or ``in_range`` of the @ time."""

    literal: Literal
    vars: tuple[Var, ...]
    mode: str
    guard: str | None = None
    time: object = None  # the @ time term for an in_range guard


@dataclass
class CompiledRule:
    """One plan for one or more rules with the same body; ``heads[k]`` is emitted through ``emits[k]``."""

    rule: Rule
    index: int
    positives: list[Positive]
    negatives: list[Negative]
    comparisons: list[Comparison]
    assignments: list[Comparison]
    volatile: bool
    drivers: dict[int, object] = field(default_factory=dict)
    full: object = None
    source: dict[str, str] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)  # every rule this plan serves, ``rule`` first


def normalise_negative(ext: ExtAtom):
    """Map a negated extended atom to (positive ExtAtom to index, mode, guard).

    ``<> not a`` ≡ range non-empty ∧ ¬[] a;  ``[] not a`` ≡ non-empty ∧ ¬<> a;  ``@U not a`` ≡ U ∈ range ∧ ¬@U a.
    An outer ``not`` flips the whole: ¬(g ∧ ¬L) ≡ ¬g ∨ L.
    """
    if not ext.inner_negated:
        return ExtAtom(ext.atom, ext.op, ext.time, ext.window), "absent", None
    dual = {Op.DIAMOND: Op.BOX, Op.BOX: Op.DIAMOND, Op.AT: Op.AT}[ext.op]  # type: ignore[index]
    positive = ExtAtom(ext.atom, dual, ext.time, ext.window)
    guard = "in_range" if ext.op is Op.AT else "nonempty"
    return positive, ("unguard_present" if ext.negated else "guard_absent"), guard


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 1
        self.namespace: dict = {
            "FAIL": values.FAIL,
            "INF": INF,
            "EMPTY": (),
        }
        for name, fn in values.COMPARE.items():
            self.namespace[f"CMP_{_opname(name)}"] = fn
        for name, fn in values.ARITH.items():
            self.namespace[f"AR_{_opname(name)}"] = fn
        self.consts: dict = {}

    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def const(self, value) -> str:
        key = (type(value), value)
        name = self.consts.get(key)
        if name is None:
            name = f"C{len(self.consts)}"
            self.consts[key] = name
            self.namespace[name] = value
        return name

    def bind(self, name: str, value) -> str:
        self.namespace[name] = value
        return name


def _opname(op: str) -> str:
    return {"=": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge", "+": "add", "-": "sub",
            "*": "mul", "/": "div"}[op]


class RuleCompiler:
    def __init__(self, crule: CompiledRule, emits: list, slots: dict[Var, str]):
        self.c = crule
        self.emits = emits
        self.slots = slots

    def term(self, w: _Writer, term) -> str:
        return self.slots[term] if is_var(term) else w.const(term)

    def expr(self, w: _Writer, expr: Expr) -> str:
        if type(expr) is BinOp:
            return f"AR_{_opname(expr.op)}({self.expr(w, expr.left)}, {self.expr(w, expr.right)})"
        return self.term(w, expr)

    def key(self, w: _Writer, terms) -> str:
        inner = ", ".join(self.term(w, t) for t in terms)
        return f"({inner},)" if len(terms) == 1 else f"({inner})"

    def build_projection(self, driver: int):
        """A rule with one literal and nothing else: the head is a projection of the driver's groundings."""
        c = self.c
        w = _Writer()
        pos = c.positives[driver]
        ent = w.bind(f"E{driver}", pos.literal.map.entries)
        head = c.rule.head
        where = {v: j for j, v in enumerate(pos.vars)}
        parts = [f"e_[{where[a]}]" if is_var(a) else w.const(a) for a in head.atom.args]
        if tuple(head.atom.args) == pos.vars:
            args = "e_"
        elif not parts:
            args = "()"
        else:
            args = f"({', '.join(parts)},)" if len(parts) == 1 else f"({', '.join(parts)})"
        emit = w.bind("EMIT", self.emits[0])
        src = (
            "def fire(t, cap, delta):\n"
            f"    if cap >= INF:\n        OUT = [({args}, {ent}[e_]) for e_ in delta]\n"
            f"    else:\n        OUT = [({args}, min({ent}[e_], cap)) for e_ in delta]\n"
            f"    if OUT:\n        {emit}(OUT)\n"
        )
        exec(src, w.namespace)  # noqa: S102 - generated from the compiled rule
        return w.namespace["fire"], src

    def build(self, driver: int | None):
        c = self.c
        if (driver is not None and len(c.positives) == 1 and not c.negatives and not c.comparisons
                and not c.assignments and c.rule.head.time is None and len(c.rules) == 1):
            return self.build_projection(driver)
        w = _Writer()
        bound: set[Var] = set()
        pending_pos = [i for i in range(len(c.positives)) if i != driver]
        pending_cmp = list(c.comparisons)
        pending_asg = list(c.assignments)
        pending_neg = list(range(len(c.negatives)))
        hvar = "h_"
        w.line(f"{hvar} = cap")
        for k in range(len(c.rules)):
            w.line(f"OUT{k} = []")
            w.line(f"OUT{k}_append = OUT{k}.append")
        for k, neg in enumerate(c.negatives):
            if neg.guard is not None:
                w.line(f"R{k} = {w.bind(f'RNG{k}', neg.literal.time_range)}(t)")

        def place_ready():
            progress = True
            while progress:
                progress = False
                for asg in list(pending_asg):
                    if all(v in bound for v in _vars(asg.right)):
                        target = self.slots[asg.left]  # type: ignore[index]
                        w.line(f"{target} = {self.expr(w, asg.right)}")
                        w.line(f"if {target} is not FAIL:")
                        w.depth += 1
                        bound.add(asg.left)  # type: ignore[arg-type]
                        pending_asg.remove(asg)
                        progress = True
                for cmp in list(pending_cmp):
                    if all(v in bound for v in cmp.variables()):
                        w.line(f"if CMP_{_opname(cmp.op)}({self.expr(w, cmp.left)}, {self.expr(w, cmp.right)}):")
                        w.depth += 1
                        pending_cmp.remove(cmp)
                        progress = True
                for k in list(pending_neg):
                    neg = c.negatives[k]
                    if all(v in bound for v in neg.vars):
                        self.negative(w, k, neg)
                        pending_neg.remove(k)
                        progress = True

        level = 0
        if driver is not None:
            pos = c.positives[driver]
            ent = w.bind(f"E{driver}", pos.literal.map.entries)
            w.line("for e_ in delta:")
            w.depth += 1
            w.line(f"h0 = {ent}[e_]")
            w.line(f"h0 = h0 if h0 < {hvar} else {hvar}")
            self.unpack(w, pos.vars, "e_")
            bound.update(pos.vars)
            hvar = "h0"
            level = 1
        place_ready()
        while pending_pos:
            # a literal whose variables are all bound is one lookup that can only filter: take it first; then
            # the one with the most bound variables
            best = max(pending_pos, key=lambda i: (all(v in bound for v in c.positives[i].vars),
                                                   sum(v in bound for v in c.positives[i].vars), -i))
            pending_pos.remove(best)
            pos = c.positives[best]
            ent = w.bind(f"E{best}", pos.literal.map.entries)
            cols = tuple(j for j, v in enumerate(pos.vars) if v in bound)
            hn = f"h{level}_"
            ev = f"e{level}_"
            if len(cols) == len(pos.vars):
                w.line(f"{hn} = {ent}.get({self.key(w, pos.vars)})")
                w.line(f"if {hn} is not None:")
                w.depth += 1
            elif cols:
                idx = w.bind(f"K{best}_{'_'.join(map(str, cols))}", pos.literal.map.index_on(cols))
                w.line(f"for {ev} in {idx}.get({self.key(w, [pos.vars[j] for j in cols])}, EMPTY):")
                w.depth += 1
                w.line(f"{hn} = {ent}[{ev}]")
                self.unpack(w, pos.vars, ev, skip=cols)
            else:
                w.line(f"for {ev}, {hn} in {ent}.items():")
                w.depth += 1
                self.unpack(w, pos.vars, ev)
            w.line(f"{hn} = {hn} if {hn} < {hvar} else {hvar}")
            hvar = hn
            bound.update(pos.vars)
            level += 1
            place_ready()
        assert not pending_cmp and not pending_neg and not pending_asg, "unsafe rule slipped through analysis"
        for k, rule in enumerate(c.rules):
            head = rule.head
            args = self.key(w, head.atom.args) if head.atom.args else "()"
            if driver is not None and head.atom.args and tuple(head.atom.args) == c.positives[driver].vars:
                args = "e_"  # the head is the driver's grounding itself: no new tuple
            if head.time is None:
                w.line(f"OUT{k}_append(({args}, {hvar}))")
            else:
                w.line(f"OUT{k}_append(({args}, {self.term(w, head.time)}, {hvar}))")
        w.depth = 1
        for k in range(len(c.rules)):
            emit = w.bind(f"EMIT{k}", self.emits[k])
            w.line(f"if OUT{k}:\n        {emit}(OUT{k})")
        params = "t, cap, delta" if driver is not None else "t, cap"
        src = f"def fire({params}):\n" + "\n".join(w.lines) + "\n"
        exec(src, w.namespace)  # noqa: S102 - generated from the compiled rule
        return w.namespace["fire"], src

    def unpack(self, w: _Writer, vars_: tuple[Var, ...], source: str, skip=()) -> None:
        if not vars_:
            return
        if not skip:
            names = ", ".join(self.slots[v] for v in vars_)
            w.line(f"{names}, = {source}" if len(vars_) == 1 else f"{names} = {source}")
            return
        for j, v in enumerate(vars_):
            if j not in skip:
                w.line(f"{self.slots[v]} = {source}[{j}]")

    def negative(self, w: _Writer, k: int, neg: Negative) -> None:
        ent = w.bind(f"N{k}", neg.literal.map.entries)
        present = f"{self.key(w, neg.vars) if neg.vars else '()'} in {ent}"
        if neg.guard == "nonempty":
            guard = f"R{k} is not None"
        elif neg.guard == "in_range":
            tv = self.term(w, neg.time)
            guard = f"(R{k} is not None and R{k}[0] <= {tv} <= R{k}[1])"
        else:
            guard = "True"
        if neg.mode == "absent":
            cond = f"not ({present})"
        elif neg.mode == "guard_absent":
            cond = f"{guard} and not ({present})"
        else:
            cond = f"not {guard} or ({present})"
        w.line(f"if {cond}:")
        w.depth += 1


def _vars(expr: Expr) -> list[Var]:
    if type(expr) is BinOp:
        return _vars(expr.left) + _vars(expr.right)
    return [expr] if is_var(expr) else []  # type: ignore[list-item]


def canonical(rule: Rule) -> Rule:
    """The rule with its variables renamed ``V0, V1, …`` in order of first use in the body, then the head."""
    names: dict[Var, Var] = {}
    for v in [v for lit in rule.body for v in lit.variables()] + rule.head.variables():
        names.setdefault(v, Var(f"V{len(names)}"))
    return substitute(rule, names)


def compile_rule(rules: list[Rule], index: int, literal_for, emits: list) -> CompiledRule:
    """One plan for rules that share a body (equal after :func:`canonical`); ``emits[k]`` takes the head
    groundings of ``rules[k]``.  ``literal_for(ext) -> (Literal, vars)`` returns the shared index of a
    positive extended atom."""
    forms = [canonical(r) for r in rules] if len(rules) > 1 else list(rules)
    rule = forms[0]
    positives: list[Positive] = []
    negatives: list[Negative] = []
    comparisons: list[Comparison] = []
    _, assignments = bound_variables(rule)
    for lit in rule.body:
        if type(lit) is Comparison:
            if not any(lit is a for a in assignments):
                comparisons.append(lit)
        elif lit.positive:
            literal, vars_ = literal_for(lit)
            positives.append(Positive(literal, vars_))
        else:
            positive, mode, guard = normalise_negative(lit)
            if lit.negated and not lit.inner_negated:
                mode = "absent"
            literal, vars_ = literal_for(positive)
            negatives.append(Negative(literal, vars_, mode, guard, lit.time))
    volatile = bool(negatives) or not positives
    crule = CompiledRule(rules[0], index, positives, negatives, comparisons, list(assignments), volatile,
                         rules=forms)
    all_vars: list[Var] = []
    for v in [v for r in forms for v in r.head.variables()] + [v for lit in rule.body for v in lit.variables()]:
        if v not in all_vars:
            all_vars.append(v)
    slots = {v: f"v{i}" for i, v in enumerate(all_vars)}
    compiler = RuleCompiler(crule, emits, slots)
    for i in range(len(positives)):
        crule.drivers[i], crule.source[f"driver {i}"] = compiler.build(i)
    if volatile:
        crule.full, crule.source["full"] = compiler.build(None)
    crule.rules = list(rules)
    return crule
