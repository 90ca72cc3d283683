"""The closure a query reads: its windows and static graphs under an entailment rule set, as LARS rules.

SEMANTICS.md §3: a query with rules answers over the closure of (background ∪ window contents).  A *scope* is
that closure for one set of sources (the query's FROM STREAM windows and FROM graphs) and one rule set.  Its
facts live in predicates of their own, fed from the windows, so nothing derived in one scope leaks into the
window contents of another, and every derived fact carries the horizon of its premises: it expires with them.

Storage, when the rules were specialised (:mod:`.specialise`):

* one binary predicate per RDF property ``p`` (``x1a2b3c4_ub_worksFor(S, O)``) and one unary predicate per
  class ``c`` (``x1a2b3c4_a_ub_Student(S)``): the vertical partitioning that makes the specialised rules plain
  joins;
* a triple table ``x1a2b3c4_t(S, P, O)``, only when something reads a triple whose predicate (or whose class)
  is a variable; it is bridged to and from the partitions;
* helper relations of the rule file under ``x1a2b3c4__name``.

Without specialisation every triple lives in the triple table.  Only what the query's patterns can reach is
generated, and scopes are named by a hash of their sources and rules, so queries over the same windows share
one closure on the shared engine.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace

from ..atoms import Atom
from ..ir.nodes import ExtAtom, Head, Op, Rule, Window
from ..terms import Var, is_var
from .specialise import RDF_TYPE, Specialised, is_triple_atom

_KNOWN_NS = {
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#": "rdf",
    "http://www.w3.org/2000/01/rdf-schema#": "rdfs",
    "http://www.w3.org/2002/07/owl#": "owl",
    "http://www.w3.org/2001/XMLSchema#": "xsd",
}


@dataclass(frozen=True)
class Closure:
    """A rule set with its static closure: what every scope over the same static graphs shares."""

    rules: tuple[Rule, ...]  # the rule file(s), as written
    static: frozenset[Atom]  # G*: the static graphs (triples p(s, o)) and helper facts, closed under the rules
    specialised: Specialised | None  # None: the generic rules run on a triple table
    key: str  # identifies (rules, static graphs, specialised?)
    prefixes: tuple[tuple[str, str], ...] = ()

    @property
    def guards(self) -> set[tuple]:
        return self.specialised.guards if self.specialised is not None else set()


def _hash(*parts) -> str:
    return hashlib.sha1(repr(parts).encode()).hexdigest()[:8]


class Namer:
    """Readable, valid and collision-free LARS names for IRIs (a pure function of the IRI and prefixes)."""

    def __init__(self, prefixes=()) -> None:
        self.prefixes = {ns: p for p, ns in prefixes if re.fullmatch(r"[A-Za-z][A-Za-z0-9]*|", p)}
        self.prefixes.update(_KNOWN_NS)

    def __call__(self, const) -> str:
        text = str(const)
        if text.startswith("<") and text.endswith(">"):
            iri = text[1:-1]
            cut = max(iri.rfind("#"), iri.rfind("/"))
            ns, local = iri[:cut + 1], iri[cut + 1:]
            prefix = self.prefixes.get(ns)
            if prefix is None:
                prefix = "n" + _hash(ns)[:6]
        elif text.startswith("_:"):
            prefix, local = "b", text[2:]
        else:
            prefix, local = "v", text
        clean = re.sub(r"\W", "_", local).encode("ascii", "replace").decode().replace("?", "_")
        if clean != local or not clean or not prefix and "_" in clean:
            clean = f"{clean}_{_hash(text)[:6]}"  # keeps names of different IRIs apart
        return f"{prefix}_{clean}" if prefix else clean


@dataclass
class Scope:
    """The closure of the contents of ``windows`` (the query's FROM STREAM windows) and the closure's static
    graphs; ``reads`` collects the storage the query's patterns read (see :meth:`read`)."""

    closure: Closure
    windows: tuple[Window, ...]
    reads: set = field(default_factory=set)
    name: str = field(init=False)
    namer: Namer = field(init=False)

    def __post_init__(self) -> None:
        self.name = "x" + _hash(self.closure.key, tuple(map(str, self.windows)))
        self.namer = Namer(self.closure.prefixes)

    @property
    def partitioned(self) -> bool:
        return self.closure.specialised is not None

    # ---------------------------------------------------------------- storage

    def key_of(self, atom: Atom):
        """Where facts matching a triple atom live: ("p", pred), ("a", class), ("t",) or ("h", helper)."""
        if not is_triple_atom(atom):
            return ("h", atom.pred)
        pred = atom.pred
        if not self.partitioned or is_var(pred):
            return ("t",)
        if pred == RDF_TYPE:
            return ("t",) if is_var(atom.args[1]) else ("a", atom.args[1])
        return ("p", pred)

    def pred_of(self, key) -> str:
        kind = key[0]
        if kind == "t":
            return f"{self.name}_t"
        if kind == "h":
            return f"{self.name}__{key[1]}"
        if kind == "a":
            return f"{self.name}_a_{self.namer(key[1])}"
        return f"{self.name}_{self.namer(key[1])}"

    def stored(self, atom: Atom) -> Atom:
        """The atom over the scope's storage that holds exactly the facts matching ``atom``."""
        key = self.key_of(atom)
        s, o = atom.args[0], atom.args[-1]
        if key[0] == "t":
            return Atom(self.pred_of(key), (s, atom.pred, o), atom.span)
        if key[0] == "a":
            return Atom(self.pred_of(key), (s,), atom.span)
        if key[0] == "p":
            return Atom(self.pred_of(key), (s, o), atom.span)
        return Atom(self.pred_of(key), atom.args, atom.span)

    def read(self, pred, s, o) -> ExtAtom:
        """The body atom with which a query pattern ``s pred o`` reads the closure."""
        atom = Atom(pred, (s, o))
        self.reads.add(self.key_of(atom))
        return ExtAtom(self.stored(atom))

    # ---------------------------------------------------------------- the program

    def program(self) -> tuple[list[Rule], list[Atom]]:
        """Rules and background facts of the scope, restricted to what the reads can reach."""
        closure = self.closure
        instances = list(closure.specialised.rules) if closure.specialised is not None else list(closure.rules)
        heads = [self.key_of(r.head.atom) for r in instances]
        needed: set = set(self.reads)
        relevant: set[int] = set()
        added = True
        while added:
            added = False
            table = ("t",) in needed
            for i, rule in enumerate(instances):
                head = heads[i]
                if i in relevant:
                    continue
                if head[0] == "h" or not table and head != ("t",):
                    hit = head in needed
                elif table:
                    hit = True  # the triple table holds every triple
                else:  # a head with a variable predicate (or class) can write any partition
                    hit = any(k[0] in "pa" for k in needed)
                if not hit:
                    continue
                relevant.add(i)
                added = True
                needed.add(head)
                for lit in rule.body:
                    if type(lit) is ExtAtom:
                        needed.add(self.key_of(lit.atom))
        rules = [self._store_rule(instances[i]) for i in sorted(relevant)]
        v_s, v_p, v_o = Var("S"), Var("P"), Var("O")
        table = ("t",) in needed
        writes_table = any(heads[i] == ("t",) for i in relevant)
        partitions = sorted((k for k in needed if k[0] in "pa"), key=repr)
        t_pred = self.pred_of(("t",))

        def triple_of(key) -> Atom:
            return Atom(RDF_TYPE, (v_s, key[1])) if key[0] == "a" else Atom(key[1], (v_s, v_o))

        # data: the window contents
        for window in self.windows:
            if table:
                rules.append(Rule(Head(Atom(t_pred, (v_s, v_p, v_o))),
                                  (ExtAtom(Atom(v_p, (v_s, v_o)), Op.DIAMOND, None, window),)))
            for key in partitions:
                triple = triple_of(key)
                rules.append(Rule(Head(self.stored(triple)), (ExtAtom(triple, Op.DIAMOND, None, window),)))
        # bridges between the partitions and the triple table
        if table:
            for key in partitions:
                triple = triple_of(key)
                row = Atom(t_pred, (v_s, triple.pred, triple.args[1]))
                rules.append(Rule(Head(row), (ExtAtom(self.stored(triple)),)))
                if writes_table:
                    rules.append(Rule(Head(self.stored(triple)), (ExtAtom(row),)))
        # the static closure, into the storage that is read
        facts: list[Atom] = []
        for atom in sorted(closure.static, key=str):
            if is_triple_atom(atom):
                if table:
                    facts.append(Atom(t_pred, (atom.args[0], atom.pred, atom.args[1])))
                key = self.key_of(atom)
                if key in needed and key[0] != "t":
                    facts.append(self.stored(atom))
            elif ("h", atom.pred) in needed:
                facts.append(self.stored(atom))
        return _unique(rules), _unique(facts)

    def _store_rule(self, rule: Rule) -> Rule:
        body = tuple(replace(lit, atom=self.stored(lit.atom)) if type(lit) is ExtAtom else lit for lit in rule.body)
        return replace(rule, head=Head(self.stored(rule.head.atom)), body=body)


def _unique(items: list) -> list:
    return list(dict.fromkeys(items))
