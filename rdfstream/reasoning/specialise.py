"""Specialising entailment rules against a static schema (the WebPIE / SANSA idea, done at compile time).

An entailment rule file (``rules/rdfs.lars``) is a set of window-free rules over triples ``p(s, o)``, where the
predicate may be a variable, plus helper relations with plain names (``owlrl_member``).  Most of its body atoms
read the *schema*: ``rdfs:subClassOf(C, D)``, ``owl:onProperty(X, P)``, ``rdf:type(P, owl:TransitiveProperty)``,
the cells of RDF lists.  When the schema is background data it is known before the first triple arrives, so:

1. the static closure G* (the background under the rules) is computed once, by the caller;
2. every body atom that can only ever match facts of G* is **static**: it is matched against G* now and
   disappears from the rule, leaving one instance per match (``ub:worksFor(X, Y) :- ub:headOf(X, Y).``);
   chains of ``rdfs:subClassOf`` / ``rdfs:subPropertyOf`` are closed in G*, so each instance jumps straight to
   every super-class;
3. helper atoms left over (the walk along an ``owl:intersectionOf`` list) are unfolded into the rules that use
   them, which unrolls the list: ``rdf:type(Y, ub:Chair) :- rdf:type(Y, ub:Person), rdf:type(Y, _:b3)``.

Which atoms are static is decided by a fixpoint.  Stream data is assumed to bring no schema triples (a triple
whose predicate is in :data:`SCHEMA_PREDICATES`, or ``rdf:type`` with a class of :data:`META_CLASSES`); every
other triple atom may match stream data.  Starting from "every schema and helper atom is static", an atom
stops being static when the head of an instance that still reads stream data could match it, until nothing
changes.  What is left is exact: the closure of the specialised rules over G* and any stream without schema
triples equals the closure of the original rules.  :attr:`Specialised.guards` lists the triple patterns the
streams must not bring (the runtime checks them).

Everything here is a pure function of the IR; the static closure is computed by whoever calls (the engine).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from decimal import Decimal

from ..atoms import Atom
from ..errors import CompileError
from ..ir.nodes import Comparison, ExtAtom, Rule
from ..ir.printer import format_rule
from ..ir.rewrite import substitute
from ..terms import Var, is_var

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
RDF_TYPE = f"<{RDF}type>"

#: predicates whose triples are schema: assumed to come from the background only
SCHEMA_PREDICATES = frozenset(
    f"<{ns}{local}>"
    for ns, names in (
        (RDFS, "subClassOf subPropertyOf domain range"),
        (RDF, "first rest"),
        (OWL, "equivalentClass equivalentProperty inverseOf intersectionOf unionOf complementOf oneOf "
              "someValuesFrom allValuesFrom hasValue onProperty onClass maxCardinality maxQualifiedCardinality "
              "cardinality minCardinality qualifiedCardinality propertyChainAxiom disjointWith "
              "propertyDisjointWith hasKey members distinctMembers disjointUnionOf"),
    )
    for local in names.split()
)

#: classes whose instances are schema (``p rdf:type owl:TransitiveProperty``)
META_CLASSES = frozenset(
    f"<{ns}{local}>"
    for ns, names in (
        (RDFS, "Class Datatype ContainerMembershipProperty"),
        (RDF, "Property List"),
        (OWL, "Class Restriction ObjectProperty DatatypeProperty AnnotationProperty OntologyProperty Ontology "
              "TransitiveProperty SymmetricProperty AsymmetricProperty FunctionalProperty "
              "InverseFunctionalProperty ReflexiveProperty IrreflexiveProperty AllDisjointClasses "
              "AllDisjointProperties AllDifferent"),
    )
    for local in names.split()
)


def is_triple_atom(atom: Atom) -> bool:
    """A triple ``p(s, o)``: the predicate is an IRI or a variable (helpers have plain names)."""
    pred = atom.pred
    return len(atom.args) == 2 and (type(pred) is Var or (type(pred) is str and pred.startswith("<")))


def is_schema_atom(atom: Atom) -> bool:
    if not is_triple_atom(atom) or is_var(atom.pred):
        return False
    if atom.pred in SCHEMA_PREDICATES:
        return True
    return atom.pred == RDF_TYPE and not is_var(atom.args[1]) and atom.args[1] in META_CLASSES


class SchemaGuard:
    """The schema triples a stream must not bring because rules were specialised on them
    (:attr:`Specialised.guards`: ``(pred, None)`` for a predicate, ``(rdf:type, class)`` for a class)."""

    __slots__ = ("classes", "preds")

    def __init__(self, patterns) -> None:
        self.preds = {p for p, o in patterns if o is None}
        self.classes = {o for p, o in patterns if o is not None}

    def __bool__(self) -> bool:
        return bool(self.preds or self.classes)

    def violates(self, pred, args: tuple) -> bool:
        return pred in self.preds or (pred == RDF_TYPE and len(args) == 2 and args[1] in self.classes)

    @staticmethod
    def atom_error(atom: str, span=None):
        """The error for a schema atom in a LARS program's stream (``rdfstream run``, embedded or Spark)."""
        from ..errors import EvaluationError

        return EvaluationError(
            f"schema atom {atom} in the stream: the entailment rules were specialised against the background"
            " schema, so schema atoms must be background facts (--background); or use --no-specialise", span)


def check_rule_file(rules: Iterable[Rule]) -> None:
    """Entailment rules hold at every time point: no windows, operators or @-heads."""
    for rule in rules:
        if rule.head.time is not None:
            raise CompileError(f"an entailment rule cannot place its head with @, in rule: {format_rule(rule)}",
                               rule.span)
        for lit in rule.body:
            if type(lit) is ExtAtom and (lit.window is not None or lit.op is not None):
                raise CompileError("entailment rules take no windows or operators (they hold at every time"
                                   f" point), in rule: {format_rule(rule)}", lit.span or rule.span)


# ---------------------------------------------------------------- unification


def _walk(term, subst: dict):
    while is_var(term) and term in subst:
        term = subst[term]
    return term


def unify_atoms(a: Atom, b: Atom, subst: dict | None = None) -> dict | None:
    """A most general unifier of two atoms (function-free terms), extending ``subst``; None if none."""
    if len(a.args) != len(b.args):
        return None
    out = dict(subst or {})
    for x, y in zip((a.pred, *a.args), (b.pred, *b.args), strict=True):
        x, y = _walk(x, out), _walk(y, out)
        if is_var(x):
            if x != y:
                out[x] = y
        elif is_var(y):
            out[y] = x
        elif type(x) is not type(y) or x != y:
            return None
    return out


def substitute_term(term, subst: dict):
    return _walk(term, subst) if is_var(term) else term


def substitute_rule(rule: Rule, subst: dict) -> Rule:
    """``rule`` under a unifier (whose bindings may chain: ``X -> Y -> c``)."""
    return substitute(rule, {v: _walk(v, subst) for v in subst})


def rename_apart(rule: Rule, suffix: str) -> Rule:
    names: dict = {}

    def fresh(v):
        if v not in names:
            names[v] = Var(f"{v.name}_{suffix}")
        return names[v]

    variables = set(rule.head.variables())
    for lit in rule.body:
        variables.update(lit.variables())
    return substitute_rule(rule, {v: fresh(v) for v in variables})


# ---------------------------------------------------------------- the static facts


class FactIndex:
    """Ground atoms by predicate, with the lookups that matching a pattern needs."""

    def __init__(self, atoms: Iterable[Atom]) -> None:
        self.by_pred: dict[object, set[tuple]] = {}
        for atom in atoms:
            self.by_pred.setdefault(atom.pred, set()).add(atom.args)
        self._pos: dict[tuple, dict] = {}

    def match(self, atom: Atom, subst: dict):
        """Extensions of ``subst`` under which ``atom`` is one of the facts."""
        pred = _walk(atom.pred, subst)
        preds = [pred] if not is_var(pred) else [p for p in self.by_pred if type(p) is str and p.startswith("<")]
        for p in preds:
            rows = self.by_pred.get(p)
            if not rows:
                continue
            args = [substitute_term(a, subst) for a in atom.args]
            bound = tuple(i for i, a in enumerate(args) if not is_var(a))
            if bound:
                key = (p, bound)
                index = self._pos.get(key)
                if index is None:
                    index = self._pos[key] = {}
                    for row in rows:
                        if len(row) == len(args):
                            index.setdefault(tuple(row[i] for i in bound), []).append(row)
                candidates = index.get(tuple(args[i] for i in bound), ())
            else:
                candidates = [r for r in rows if len(r) == len(args)]
            for row in candidates:
                out = unify_atoms(Atom(pred, tuple(args)), Atom(p, row), subst)
                if out is not None:
                    yield out


# ---------------------------------------------------------------- specialisation


@dataclass
class Specialised:
    rules: list[Rule]  # instances; a rule's ``name`` says which rule of the file it comes from
    guards: set[tuple]  # (pred, object or None): schema triples the streams must not bring


def _instances(rule: Rule, static: list[int], facts: FactIndex) -> list[Rule]:
    atoms = [rule.body[i].atom for i in static]  # type: ignore[union-attr]
    substs = [{}]
    # most bound first: atoms with constants narrow the search
    order = sorted(range(len(atoms)), key=lambda k: -sum(not is_var(a) for a in (atoms[k].pred, *atoms[k].args)))
    for k in order:
        substs = [s2 for s in substs for s2 in facts.match(atoms[k], s)]
        if not substs:
            return []
    keep = tuple(lit for i, lit in enumerate(rule.body) if i not in static)
    return [substitute_rule(replace(rule, body=keep), s) for s in substs]


def _trivial(rule: Rule) -> bool:
    return any(type(lit) is ExtAtom and lit.positive and lit.atom == rule.head.atom for lit in rule.body)


def _constant(term) -> bool:
    return not is_var(term) and type(term) in (str, int, Decimal)


def _ground_comparisons(rule: Rule) -> Rule | None:
    """Drop comparisons that are decided at compile time (``!=`` / ``=`` of two constants); None if false."""
    body = []
    for lit in rule.body:
        if type(lit) is Comparison and lit.op in ("=", "!=") and _constant(lit.left) and _constant(lit.right):
            equal = type(lit.left) is type(lit.right) and lit.left == lit.right
            if equal != (lit.op == "="):
                return None
            continue
        body.append(lit)
    return replace(rule, body=tuple(body))


def specialise(rules: list[Rule], static_facts: Iterable[Atom], *, dynamic_heads: Iterable[Atom] = (),
               keep_helpers: bool = False, rounds: int = 50) -> Specialised:
    """Specialise ``rules`` against the static closure ``static_facts`` (see the module docstring).

    ``dynamic_heads``: heads of other rules that derive facts from stream data (a program's own rules);
    ``keep_helpers``: keep rules for plain-name predicates even when no triple rule reads them (in a program,
    every predicate is output)."""
    facts = FactIndex(static_facts)
    others = list(dynamic_heads)
    # candidate static occurrences: (rule index, body index)
    static: set[tuple[int, int]] = set()
    for r, rule in enumerate(rules):
        for b, lit in enumerate(rule.body):
            if type(lit) is ExtAtom and lit.positive and (is_schema_atom(lit.atom) or not is_triple_atom(lit.atom)):
                static.add((r, b))
    for _ in range(rounds):
        instances: list[tuple[int, Rule]] = []
        for r, rule in enumerate(rules):
            mine = sorted(b for (rr, b) in static if rr == r)
            for inst in _instances(rule, mine, facts) if mine else [rule]:
                instances.append((r, inst))
        dynamic = others + [inst.head.atom for _, inst in instances if any(type(lit) is ExtAtom for lit in inst.body)]
        conflicts = set()
        for r, b in static:
            atom = rules[r].body[b].atom  # type: ignore[union-attr]
            if any(unify_atoms(atom, h) is not None for h in dynamic):
                conflicts.add((r, b))
        if not conflicts:
            break
        static -= conflicts
    else:  # pragma: no cover - the static set only shrinks, so this needs more rounds than body atoms
        raise CompileError("specialising the entailment rules did not settle")
    out: list[Rule] = []
    seen: set = set()
    for _, inst in instances:
        if not any(type(lit) is ExtAtom for lit in inst.body):
            continue  # everything it derives is in the static closure already
        inst = _ground_comparisons(inst)
        if inst is None or _trivial(inst):
            continue
        key = (inst.head, inst.body)
        if key not in seen:
            seen.add(key)
            out.append(inst)
    guards = set()
    for r, b in static:
        atom = rules[r].body[b].atom  # type: ignore[union-attr]
        if is_schema_atom(atom):
            guards.add((atom.pred, atom.args[1] if atom.pred == RDF_TYPE else None))
    return Specialised(unfold(out, facts, keep_helpers=keep_helpers), guards)


# ---------------------------------------------------------------- unfolding helpers


def _helper(lit) -> bool:
    return type(lit) is ExtAtom and lit.positive and not is_triple_atom(lit.atom) and not is_var(lit.atom.pred)


def unfold(rules: list[Rule], facts: FactIndex | None = None, *, max_defs: int = 4, max_depth: int = 64,
           keep_helpers: bool = False) -> list[Rule]:
    """Inline helper atoms (plain-name predicates) into the rules that use them.

    A helper atom with constants (``owlrl_all_types(Y, _:l1)``, one cell of a known list) is replaced by the
    bodies of the rules defining exactly that cell (their heads carry the same constants), when there are at
    most ``max_defs`` of them.  Repeating this walks the list to its end, which unrolls it.  Helper definitions
    that nothing reads any more are dropped, and so are rules reading a cell nothing defines (the end of a
    list, ``rdf:nil``) and that is not among the static ``facts``."""
    by_pred: dict[object, list[Rule]] = {}
    for rule in rules:
        by_pred.setdefault(rule.head.atom.pred, []).append(rule)
    counter = [0]

    def definitions(atom: Atom):
        """The rules defining exactly this cell; [] when nothing can derive it; None: leave the atom."""
        fixed = [i for i, a in enumerate(atom.args) if not is_var(a)]
        if not fixed:
            return None
        out = []
        for d in by_pred.get(atom.pred, ()):
            if any(is_var(d.head.atom.args[i]) for i in fixed):
                return None  # a general definition: not a walk along a known list
            counter[0] += 1
            d = rename_apart(d, f"u{counter[0]}")
            s = unify_atoms(d.head.atom, atom)
            if s is not None:
                out.append((d, s))
        if not out:
            return None if facts is not None and next(facts.match(atom, {}), None) is not None else []
        return out if len(out) <= max_defs else None

    def expand(rule: Rule, depth: int) -> list[Rule]:
        if depth > max_depth:
            return [rule]
        for i, lit in enumerate(rule.body):
            if not _helper(lit):
                continue
            defs = definitions(lit.atom)
            if defs is None:
                continue
            out = []
            for d, s in defs:
                new = substitute_rule(replace(rule, body=rule.body[:i] + d.body + rule.body[i + 1:]), s)
                out.extend(expand(new, depth + 1))
            return out
        return [rule]

    result = [r for rule in rules for r in expand(rule, 0) if not _trivial(r)]
    # keep the helper definitions something still reads
    needed: set = set()
    todo = [r for r in result if keep_helpers or is_triple_atom(r.head.atom)]
    live_ids: set[int] = set()
    while todo:
        r = todo.pop()
        if id(r) in live_ids:
            continue
        live_ids.add(id(r))
        for lit in r.body:
            if type(lit) is ExtAtom and not is_triple_atom(lit.atom) and lit.atom.pred not in needed:
                needed.add(lit.atom.pred)
                todo.extend(x for x in result if x.head.atom.pred == lit.atom.pred)
    seen: set = set()
    final = []
    for r in result:
        if id(r) in live_ids and (r.head, r.body) not in seen:
            seen.add((r.head, r.body))
            final.append(r)
    return final
