"""Every rule of the shipped entailment rule files (rules/rdfs.lars, rules/rhodf.lars, rules/owl2rl.lars).

Each rule gets one hand-written case: a schema (the FROM graph), stream triples, and the triples the rule must
derive, worked out from the specifications, not from rdfstream's output:

* RDFS: RDF 1.1 Semantics (W3C Recommendation 2014), section 9.2.1 (rdfs2-rdfs13) and 8.1.1 (rdf1, which
  RDF 1.1 lists as rdfD2: ``xxx aaa yyy`` gives ``aaa rdf:type rdf:Property``);
* ρdf: Muñoz, Pérez, Gutierrez, "Simple and Efficient Minimal RDFS" (J. Web Semantics 2009), rules (2)-(5);
* OWL 2 RL: OWL 2 Web Ontology Language Profiles (Second Edition), section 4.3, Tables 4-7 and 9.  Where a
  table says "false", the rule file derives ``X rdf:type owl:Nothing`` for the offending individual.

Each case runs three ways: with the whole shipped file (for a rule switched off with ``% off:``, a copy with that
one rule switched on), with only that rule (plus the RDF list helpers of owl2rl.lars), so that a derivation
another rule could also make does not hide a broken rule, and without a key premise (the triples must then be
absent).  Off rules are also checked to be off in the shipped file.  A meta-test collects the rule names of the
three files and checks that every one has a case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest
from rdflib import OWL, RDF, RDFS, XSD, BNode, Graph, Literal, Namespace
from rdflib.collection import Collection

from rdfstream.api import Engine
from rdfstream.errors import EvaluationError
from rdfstream.frontends.registry import parse_program

EX = Namespace("http://ex.org/")
ROOT = Path(__file__).resolve().parent.parent
RULE_FILES = {name: ROOT / "rules" / f"{name}.lars" for name in ("rdfs", "rhodf", "owl2rl")}
QUERY = """REGISTER QUERY q AS
SELECT ?s ?p ?o FROM <http://ex.org/onto> FROM STREAM <http://ex.org/s> [RANGE 10ms STEP 10ms]
WHERE { ?s ?p ?o }"""

TYPE = RDF.type
NOTHING = OWL.Nothing
ZERO = Literal(0, datatype=XSD.nonNegativeInteger)
ONE = Literal(1, datatype=XSD.nonNegativeInteger)
#: pushed with every stream: a query is reported only when its window holds something (docs/semantics-notes.md,
#: "C-SPARQL reports"), so without it a case with no stream data (or a negative run) would see no report at all
TICK = (EX.x, EX.y, EX.z)


# ---------------------------------------------------------------- the rule files


def rule_blocks(path: Path) -> dict[str, str]:
    """The named rules of a rule file: name -> the text of its paragraph (the name comment and its rules).

    A paragraph (lines between blank lines) names rules when it holds a rule line or a ``% off: <rule>`` line;
    its name is the first word of its first comment line (``% rdfs9: ...``, ``% prp-dom``, ``% eq-ref (off...``).
    """
    out: dict[str, str] = {}
    for para in re.split(r"\n[ \t]*\n", path.read_text(encoding="utf-8")):
        lines = [line for line in para.strip("\n").splitlines() if line.strip()]
        if not lines:
            continue
        rules = [line for line in lines if not line.startswith(("%", "@"))]
        off = [line for line in lines if line.startswith("% off: ")]
        if not rules and not off:
            continue
        m = re.match(r"^% ([a-z][a-z0-9-]*)", lines[0])
        assert m, f"{path.name}: rules without a name comment:\n{para}"
        assert m.group(1) not in out, f"{path.name}: two rules named {m.group(1)}"
        out[m.group(1)] = para.strip("\n")
    return out


BLOCKS = {name: rule_blocks(path) for name, path in RULE_FILES.items()}


def is_off(file: str, rule: str) -> bool:
    return any(line.startswith("% off: ") for line in BLOCKS[file][rule].splitlines())


def switched_on(block: str) -> str:
    return "\n".join(line[len("% off: "):] if line.startswith("% off: ") else line for line in block.splitlines())


@cache
def shipped(file: str):
    """The shipped rule file, parsed once (parsing is most of the cost of a run; ``rules=`` takes Programs too)."""
    return parse_program(RULE_FILES[file].read_text(encoding="utf-8"), source=str(RULE_FILES[file]))


def shipped_with_rule_on(file: str, rule: str, tmp_path: Path) -> Path:
    """A copy of the shipped file with the one off rule ``rule`` switched on."""
    block = BLOCKS[file][rule]
    text = RULE_FILES[file].read_text(encoding="utf-8")
    assert text.count(block) == 1
    path = tmp_path / f"{file}-{rule}-on.lars"
    path.write_text(text.replace(block, switched_on(block)), encoding="utf-8")
    return path


def only_rules(file: str, rules: list[str], tmp_path: Path) -> Path:
    """A rule file with the prefixes of ``file``, its RDF list helpers and only the rules ``rules`` (switched on)."""
    text = RULE_FILES[file].read_text(encoding="utf-8")
    prefixes = [line for line in text.splitlines() if line.startswith("@prefix")]
    helpers = [name for name in BLOCKS[file] if name.startswith("owlrl-")]
    names = list(dict.fromkeys(helpers + rules))
    path = tmp_path / f"{file}-{'-'.join(rules)}-only.lars"
    path.write_text("\n".join(prefixes) + "\n\n" + "\n\n".join(switched_on(BLOCKS[file][n]) for n in names) + "\n",
                    encoding="utf-8")
    return path


def closure(schema, stream, rules, *, specialise: bool = True) -> set[tuple]:
    """The answer of ``SELECT ?s ?p ?o`` over the schema graph and the stream (at t=0, with TICK) under ``rules``."""
    e = Engine(t0=0)
    g = Graph()
    for triple in schema:
        g.add(triple)
    e.register_graph("http://ex.org/onto", g)
    q = e.register_query(QUERY, rules=rules, specialise=specialise)
    rows: list[dict] = []
    q.add_consumer(lambda r: rows.extend(r.rows))
    e.push("http://ex.org/s", [*stream, TICK], 0)
    e.close()
    assert rows, "no report"
    return {(r["s"], r["p"], r["o"]) for r in rows}


def rdf_list(*items) -> tuple[BNode, list[tuple]]:
    """An RDF list of ``items``: its head and its rdf:first/rdf:rest triples."""
    g = Graph()
    head = BNode()
    Collection(g, head, list(items))
    return head, list(g)


# ---------------------------------------------------------------- the cases


@dataclass
class Case:
    file: str
    rule: str
    schema: list[tuple]
    stream: list[tuple]
    expected: list[tuple]
    absent: list[tuple] = field(default_factory=list)  # must not be derived, in the positive runs
    drop: list[tuple] | None = None  # the negative run leaves these out (default: the whole stream)
    neg_stream: list[tuple] | None = None  # or streams this instead
    with_rules: list[str] = field(default_factory=list)  # other rules the isolated run needs
    key: list[tuple] | None = None  # what only this rule makes, for the negative and off checks (default: expected)

    @property
    def key_triples(self) -> list[tuple]:
        return self.expected if self.key is None else self.key

    @property
    def id(self) -> str:
        return f"{self.file}:{self.rule}"

    def negative(self) -> tuple[list, list] | None:
        if self.neg_stream is not None:
            return self.schema, self.neg_stream
        if self.drop is not None:
            return [t for t in self.schema if t not in self.drop], [t for t in self.stream if t not in self.drop]
        if self.stream:
            return self.schema, []
        return None


a, b, c, d, v, w = EX.a, EX.b, EX.c, EX.d, EX.v, EX.w
a1, a2, b1, b2, b3 = EX.a1, EX.a2, EX.b1, EX.b2, EX.b3
p, q, r, p1, p2, p3 = EX.p, EX.q, EX.r, EX.p1, EX.p2, EX.p3
C, D, E, C1, C2, C3, D1, D2, R1, R2, R = EX.C, EX.D, EX.E, EX.C1, EX.C2, EX.C3, EX.D1, EX.D2, EX.R1, EX.R2, EX.R
SC, SPO, DOM, RNG = RDFS.subClassOf, RDFS.subPropertyOf, RDFS.domain, RDFS.range
SAME, EQC, EQP, ONP = OWL.sameAs, OWL.equivalentClass, OWL.equivalentProperty, OWL.onProperty

INT3, INT3_TRIPLES = rdf_list(C1, C2, C3)
INT2, INT2_TRIPLES = rdf_list(C1, C2)
UNI3, UNI3_TRIPLES = rdf_list(C1, C2, C3)
UNI2, UNI2_TRIPLES = rdf_list(C1, C2)
CHAIN3, CHAIN3_TRIPLES = rdf_list(p1, p2, p3)
CHAIN2, CHAIN2_TRIPLES = rdf_list(p1, p2)
ONE_OF, ONE_OF_TRIPLES = rdf_list(a1, a2)


def rdfs_like(file: str, names: dict[str, str]) -> list[Case]:
    """The cases RDFS and ρdf share (the same rule under two names)."""
    cases = {
        "sp-trans": Case(file, "", [(p, SPO, q), (q, SPO, r)], [], [(p, SPO, r)], absent=[(r, SPO, p)],
                         drop=[(q, SPO, r)]),
        "sp-inst": Case(file, "", [(p, SPO, q)], [(a, p, b)], [(a, q, b)], absent=[(b, q, a), (a, r, b)]),
        "sc-trans": Case(file, "", [(C, SC, D), (D, SC, E)], [], [(C, SC, E)], absent=[(E, SC, C)],
                         drop=[(D, SC, E)]),
        "sc-inst": Case(file, "", [(C, SC, D)], [(a, TYPE, C)], [(a, TYPE, D)], absent=[(D, TYPE, C)]),
        "dom": Case(file, "", [(p, DOM, C)], [(a, p, b)], [(a, TYPE, C)], absent=[(b, TYPE, C)]),
        "rng": Case(file, "", [(p, RNG, C)], [(a, p, b)], [(b, TYPE, C)], absent=[(a, TYPE, C)]),
    }
    out = []
    for key, rule in names.items():
        case = cases[key]
        case.rule = rule
        out.append(case)
    return out


CASES: list[Case] = [
    # ------------------------------------------------ RDFS (RDF 1.1 Semantics 8.1.1, 9.2.1)
    Case("rdfs", "rdf1", [], [(a, p, b)], [(p, TYPE, RDF.Property)], absent=[(a, TYPE, RDF.Property)]),
    # rdfs4a: xxx aaa yyy => xxx rdf:type rdfs:Resource
    Case("rdfs", "rdfs4a", [], [(a, p, b)], [(a, TYPE, RDFS.Resource)], absent=[(b, TYPE, RDFS.Resource)]),
    # rdfs4b: xxx aaa yyy => yyy rdf:type rdfs:Resource; again on that triple: rdfs:Resource rdf:type rdfs:Resource
    # (which TICK's object gives too, so the negative run checks b alone)
    Case("rdfs", "rdfs4b", [], [(a, p, b)], [(b, TYPE, RDFS.Resource), (RDFS.Resource, TYPE, RDFS.Resource)],
         absent=[(a, TYPE, RDFS.Resource)], key=[(b, TYPE, RDFS.Resource)]),
    Case("rdfs", "rdfs6", [(p, TYPE, RDF.Property)], [], [(p, SPO, p)], drop=[(p, TYPE, RDF.Property)]),
    Case("rdfs", "rdfs8", [(C, TYPE, RDFS.Class)], [], [(C, SC, RDFS.Resource)], drop=[(C, TYPE, RDFS.Class)]),
    Case("rdfs", "rdfs10", [(C, TYPE, RDFS.Class)], [], [(C, SC, C)], drop=[(C, TYPE, RDFS.Class)]),
    Case("rdfs", "rdfs12", [(RDF._1, TYPE, RDFS.ContainerMembershipProperty)], [], [(RDF._1, SPO, RDFS.member)],
         drop=[(RDF._1, TYPE, RDFS.ContainerMembershipProperty)]),
    Case("rdfs", "rdfs13", [(D, TYPE, RDFS.Datatype)], [], [(D, SC, RDFS.Literal)], drop=[(D, TYPE, RDFS.Datatype)]),
    *rdfs_like("rdfs", {"dom": "rdfs2", "rng": "rdfs3", "sp-trans": "rdfs5", "sp-inst": "rdfs7", "sc-inst": "rdfs9",
                        "sc-trans": "rdfs11"}),
    # ------------------------------------------------ ρdf (Muñoz, Pérez, Gutierrez)
    *rdfs_like("rhodf", {"sp-trans": "rhodf-2a", "sp-inst": "rhodf-2b", "sc-trans": "rhodf-3a",
                         "sc-inst": "rhodf-3b", "dom": "rhodf-4a", "rng": "rhodf-4b"}),
    # (5a) (A, dom, B), (C, sp, A), (X, C, Y) => (X, type, B);  (5b) the same with range, for Y
    Case("rhodf", "rhodf-5a", [(p, DOM, C), (q, SPO, p)], [(a, q, b)], [(a, TYPE, C)], absent=[(b, TYPE, C)]),
    Case("rhodf", "rhodf-5b", [(p, RNG, C), (q, SPO, p)], [(a, q, b)], [(b, TYPE, C)], absent=[(a, TYPE, C)]),
    # ------------------------------------------------ OWL 2 RL: the RDF list helpers (lists of three: recursion)
    Case("owl2rl", "owlrl-member", [(C, OWL.unionOf, UNI3), *UNI3_TRIPLES], [(a, TYPE, C3)], [(a, TYPE, C)],
         neg_stream=[(a, TYPE, D)], with_rules=["cls-uni"]),
    Case("owl2rl", "owlrl-all-types", [(C, OWL.intersectionOf, INT3), *INT3_TRIPLES],
         [(a, TYPE, C1), (a, TYPE, C2), (a, TYPE, C3)], [(a, TYPE, C)], drop=[(a, TYPE, C2)],
         with_rules=["cls-int1"]),
    Case("owl2rl", "owlrl-chain", [(p, OWL.propertyChainAxiom, CHAIN3), *CHAIN3_TRIPLES],
         [(a, p1, b), (b, p2, c), (c, p3, d)], [(a, p, d)], absent=[(a, p, c), (b, p, d), (d, p, a)],
         drop=[(b, p2, c)], with_rules=["prp-spo2"]),
    # ------------------------------------------------ OWL 2 RL Table 4: equality
    # eq-ref: T(?s, ?p, ?o) => T(?s, owl:sameAs, ?s), T(?p, owl:sameAs, ?p), T(?o, owl:sameAs, ?o)
    Case("owl2rl", "eq-ref", [], [(a, p, b)], [(a, SAME, a), (p, SAME, p), (b, SAME, b)]),
    Case("owl2rl", "eq-sym", [], [(a, SAME, b)], [(b, SAME, a)]),
    Case("owl2rl", "eq-trans", [], [(a, SAME, b), (b, SAME, c)], [(a, SAME, c)], drop=[(b, SAME, c)]),
    # eq-rep-s: T(?s, owl:sameAs, ?s'), T(?s, ?p, ?o) => T(?s', ?p, ?o); also on the sameAs triple itself, which
    # gives a2 sameAs a2 (as eq-sym and eq-trans do: only a2 p b is eq-rep-s's own)
    Case("owl2rl", "eq-rep-s", [], [(a, SAME, a2), (a, p, b)], [(a2, p, b), (a2, SAME, a2)],
         absent=[(a, p, a2)], drop=[(a, SAME, a2)], key=[(a2, p, b)]),
    # eq-rep-p: T(?p, owl:sameAs, ?p'), T(?s, ?p, ?o) => T(?s, ?p', ?o)
    Case("owl2rl", "eq-rep-p", [], [(p, SAME, p2), (a, p, b)], [(a, p2, b)], drop=[(p, SAME, p2)]),
    # eq-rep-o: T(?o, owl:sameAs, ?o'), T(?s, ?p, ?o) => T(?s, ?p, ?o')
    Case("owl2rl", "eq-rep-o", [], [(b, SAME, b2), (a, p, b)], [(a, p, b2)], absent=[(b2, p, b)],
         drop=[(b, SAME, b2)]),
    Case("owl2rl", "eq-diff1", [], [(a, SAME, b), (a, OWL.differentFrom, b)], [(a, TYPE, NOTHING)],
         drop=[(a, OWL.differentFrom, b)]),
    # ------------------------------------------------ OWL 2 RL Table 5: properties
    Case("owl2rl", "prp-dom", [(p, DOM, C)], [(a, p, b)], [(a, TYPE, C)], absent=[(b, TYPE, C)]),
    Case("owl2rl", "prp-rng", [(p, RNG, C)], [(a, p, b)], [(b, TYPE, C)], absent=[(a, TYPE, C)]),
    Case("owl2rl", "prp-fp", [(p, TYPE, OWL.FunctionalProperty)], [(a, p, b1), (a, p, b2)],
         [(b1, SAME, b2), (b2, SAME, b1)], drop=[(a, p, b2)]),
    Case("owl2rl", "prp-ifp", [(p, TYPE, OWL.InverseFunctionalProperty)], [(a1, p, b), (a2, p, b)],
         [(a1, SAME, a2), (a2, SAME, a1)], drop=[(a2, p, b)]),
    Case("owl2rl", "prp-irp", [(p, TYPE, OWL.IrreflexiveProperty)], [(a, p, a)], [(a, TYPE, NOTHING)],
         neg_stream=[(a, p, b)]),
    Case("owl2rl", "prp-symp", [(p, TYPE, OWL.SymmetricProperty)], [(a, p, b)], [(b, p, a)]),
    # prp-asyp: T(?x, ?p, ?y), T(?y, ?p, ?x) => false, matched both ways round: a and b are both offending
    Case("owl2rl", "prp-asyp", [(p, TYPE, OWL.AsymmetricProperty)], [(a, p, b), (b, p, a)],
         [(a, TYPE, NOTHING), (b, TYPE, NOTHING)], drop=[(b, p, a)]),
    Case("owl2rl", "prp-trp", [(p, TYPE, OWL.TransitiveProperty)], [(a, p, b), (b, p, c), (c, p, d)],
         [(a, p, c), (b, p, d), (a, p, d)], absent=[(d, p, a), (a, p, a)], drop=[(b, p, c)]),
    Case("owl2rl", "prp-spo1", [(p1, SPO, p2)], [(a, p1, b)], [(a, p2, b)], absent=[(b, p2, a)]),
    Case("owl2rl", "prp-spo2", [(p, OWL.propertyChainAxiom, CHAIN2), *CHAIN2_TRIPLES], [(a, p1, b), (b, p2, c)],
         [(a, p, c)], absent=[(c, p, a), (a, p, b)], drop=[(b, p2, c)]),
    Case("owl2rl", "prp-eqp1", [(p1, EQP, p2)], [(a, p1, b)], [(a, p2, b)]),
    Case("owl2rl", "prp-eqp2", [(p1, EQP, p2)], [(a, p2, b)], [(a, p1, b)]),
    Case("owl2rl", "prp-pdw", [(p1, OWL.propertyDisjointWith, p2)], [(a, p1, b), (a, p2, b)], [(a, TYPE, NOTHING)],
         neg_stream=[(a, p1, b), (a, p2, c)]),
    Case("owl2rl", "prp-inv1", [(p1, OWL.inverseOf, p2)], [(a, p1, b)], [(b, p2, a)], absent=[(b, p1, a)]),
    Case("owl2rl", "prp-inv2", [(p1, OWL.inverseOf, p2)], [(a, p2, b)], [(b, p1, a)], absent=[(b, p2, a)]),
    # ------------------------------------------------ OWL 2 RL Table 6: classes
    Case("owl2rl", "cls-int1", [(C, OWL.intersectionOf, INT2), *INT2_TRIPLES], [(a, TYPE, C1), (a, TYPE, C2)],
         [(a, TYPE, C)], drop=[(a, TYPE, C2)]),
    Case("owl2rl", "cls-int2", [(C, OWL.intersectionOf, INT2), *INT2_TRIPLES], [(a, TYPE, C)],
         [(a, TYPE, C1), (a, TYPE, C2)]),
    Case("owl2rl", "cls-uni", [(C, OWL.unionOf, UNI2), *UNI2_TRIPLES], [(a, TYPE, C2)], [(a, TYPE, C)],
         absent=[(a, TYPE, C1)], neg_stream=[(a, TYPE, D)]),
    Case("owl2rl", "cls-com", [(C1, OWL.complementOf, C2)], [(a, TYPE, C1), (a, TYPE, C2)], [(a, TYPE, NOTHING)],
         drop=[(a, TYPE, C2)]),
    Case("owl2rl", "cls-svf1", [(R, OWL.someValuesFrom, D), (R, ONP, p)], [(a, p, b), (b, TYPE, D)],
         [(a, TYPE, R)], absent=[(b, TYPE, R)], drop=[(b, TYPE, D)]),
    Case("owl2rl", "cls-svf2", [(R, OWL.someValuesFrom, OWL.Thing), (R, ONP, p)], [(a, p, b)], [(a, TYPE, R)],
         absent=[(b, TYPE, R)], neg_stream=[(a, q, b)]),
    Case("owl2rl", "cls-avf", [(R, OWL.allValuesFrom, D), (R, ONP, p)], [(a, TYPE, R), (a, p, b)], [(b, TYPE, D)],
         absent=[(a, TYPE, D)], drop=[(a, TYPE, R)]),
    Case("owl2rl", "cls-hv1", [(R, OWL.hasValue, v), (R, ONP, p)], [(a, TYPE, R)], [(a, p, v)]),
    Case("owl2rl", "cls-hv2", [(R, OWL.hasValue, v), (R, ONP, p)], [(a, p, v)], [(a, TYPE, R)],
         neg_stream=[(a, p, w)]),
    Case("owl2rl", "cls-maxc1", [(R, OWL.maxCardinality, ZERO), (R, ONP, p)], [(a, TYPE, R), (a, p, b)],
         [(a, TYPE, NOTHING)], drop=[(a, p, b)]),
    Case("owl2rl", "cls-maxc2", [(R, OWL.maxCardinality, ONE), (R, ONP, p)], [(a, TYPE, R), (a, p, b1), (a, p, b2)],
         [(b1, SAME, b2), (b2, SAME, b1)], drop=[(a, TYPE, R)]),
    Case("owl2rl", "cls-maxqc1", [(R, OWL.maxQualifiedCardinality, ZERO), (R, ONP, p), (R, OWL.onClass, D)],
         [(a, TYPE, R), (a, p, b), (b, TYPE, D)], [(a, TYPE, NOTHING)], drop=[(b, TYPE, D)]),
    Case("owl2rl", "cls-maxqc3", [(R, OWL.maxQualifiedCardinality, ONE), (R, ONP, p), (R, OWL.onClass, D)],
         [(a, TYPE, R), (a, p, b1), (b1, TYPE, D), (a, p, b2), (b2, TYPE, D), (a, p, b3)],
         [(b1, SAME, b2), (b2, SAME, b1)], absent=[(b1, SAME, b3), (b3, SAME, b1)], drop=[(b2, TYPE, D)]),
    Case("owl2rl", "cls-maxqc4", [(R, OWL.maxQualifiedCardinality, ONE), (R, ONP, p), (R, OWL.onClass, OWL.Thing)],
         [(a, TYPE, R), (a, p, b1), (a, p, b2)], [(b1, SAME, b2), (b2, SAME, b1)], drop=[(a, TYPE, R)]),
    # cls-oo: T(?c, owl:oneOf, ?x), LIST[?x, ?y1, ..., ?yn] => T(?yi, rdf:type, ?c); negative: the list alone
    Case("owl2rl", "cls-oo", [(C, OWL.oneOf, ONE_OF), *ONE_OF_TRIPLES], [], [(a1, TYPE, C), (a2, TYPE, C)],
         drop=[(C, OWL.oneOf, ONE_OF)]),
    # ------------------------------------------------ OWL 2 RL Table 7: class axioms
    Case("owl2rl", "cax-sco", [(C1, SC, C2)], [(a, TYPE, C1)], [(a, TYPE, C2)], absent=[(C2, TYPE, C1)]),
    Case("owl2rl", "cax-eqc1", [(C1, EQC, C2)], [(a, TYPE, C1)], [(a, TYPE, C2)]),
    Case("owl2rl", "cax-eqc2", [(C1, EQC, C2)], [(a, TYPE, C2)], [(a, TYPE, C1)]),
    Case("owl2rl", "cax-dw", [(C1, OWL.disjointWith, C2)], [(a, TYPE, C1), (a, TYPE, C2)], [(a, TYPE, NOTHING)],
         drop=[(a, TYPE, C2)]),
    # ------------------------------------------------ OWL 2 RL Table 9: the schema vocabulary (schema-only premises)
    Case("owl2rl", "scm-cls", [(C, TYPE, OWL.Class)], [],
         [(C, SC, C), (C, EQC, C), (C, SC, OWL.Thing), (NOTHING, SC, C)], drop=[(C, TYPE, OWL.Class)]),
    Case("owl2rl", "scm-sco", [(C1, SC, C2), (C2, SC, C3)], [], [(C1, SC, C3)], absent=[(C3, SC, C1)],
         drop=[(C2, SC, C3)]),
    Case("owl2rl", "scm-eqc1", [(C1, EQC, C2)], [], [(C1, SC, C2), (C2, SC, C1)], drop=[(C1, EQC, C2)]),
    # scm-eqc2 matches both ways round: C1 equivalentClass C2 and C2 equivalentClass C1
    Case("owl2rl", "scm-eqc2", [(C1, SC, C2), (C2, SC, C1)], [], [(C1, EQC, C2), (C2, EQC, C1)],
         drop=[(C2, SC, C1)]),
    Case("owl2rl", "scm-op", [(p, TYPE, OWL.ObjectProperty)], [], [(p, SPO, p), (p, EQP, p)],
         drop=[(p, TYPE, OWL.ObjectProperty)]),
    Case("owl2rl", "scm-dp", [(p, TYPE, OWL.DatatypeProperty)], [], [(p, SPO, p), (p, EQP, p)],
         drop=[(p, TYPE, OWL.DatatypeProperty)]),
    Case("owl2rl", "scm-spo", [(p1, SPO, p2), (p2, SPO, p3)], [], [(p1, SPO, p3)], absent=[(p3, SPO, p1)],
         drop=[(p2, SPO, p3)]),
    Case("owl2rl", "scm-eqp1", [(p1, EQP, p2)], [], [(p1, SPO, p2), (p2, SPO, p1)], drop=[(p1, EQP, p2)]),
    Case("owl2rl", "scm-eqp2", [(p1, SPO, p2), (p2, SPO, p1)], [], [(p1, EQP, p2), (p2, EQP, p1)],
         drop=[(p2, SPO, p1)]),
    Case("owl2rl", "scm-dom1", [(p, DOM, C1), (C1, SC, C2)], [], [(p, DOM, C2)], drop=[(C1, SC, C2)]),
    Case("owl2rl", "scm-dom2", [(p2, DOM, C), (p1, SPO, p2)], [], [(p1, DOM, C)], drop=[(p1, SPO, p2)]),
    Case("owl2rl", "scm-rng1", [(p, RNG, C1), (C1, SC, C2)], [], [(p, RNG, C2)], drop=[(C1, SC, C2)]),
    Case("owl2rl", "scm-rng2", [(p2, RNG, C), (p1, SPO, p2)], [], [(p1, RNG, C)], drop=[(p1, SPO, p2)]),
    Case("owl2rl", "scm-hv", [(R1, OWL.hasValue, v), (R1, ONP, p1), (R2, OWL.hasValue, v), (R2, ONP, p2),
                              (p1, SPO, p2)], [], [(R1, SC, R2)], absent=[(R2, SC, R1)], drop=[(p1, SPO, p2)]),
    Case("owl2rl", "scm-svf1", [(R1, OWL.someValuesFrom, D1), (R1, ONP, p), (R2, OWL.someValuesFrom, D2),
                                (R2, ONP, p), (D1, SC, D2)], [], [(R1, SC, R2)], absent=[(R2, SC, R1)],
         drop=[(D1, SC, D2)]),
    Case("owl2rl", "scm-svf2", [(R1, OWL.someValuesFrom, D), (R1, ONP, p1), (R2, OWL.someValuesFrom, D),
                                (R2, ONP, p2), (p1, SPO, p2)], [], [(R1, SC, R2)], absent=[(R2, SC, R1)],
         drop=[(p1, SPO, p2)]),
    Case("owl2rl", "scm-avf1", [(R1, OWL.allValuesFrom, D1), (R1, ONP, p), (R2, OWL.allValuesFrom, D2),
                                (R2, ONP, p), (D1, SC, D2)], [], [(R1, SC, R2)], absent=[(R2, SC, R1)],
         drop=[(D1, SC, D2)]),
    # scm-avf2: the sub-property's restriction is the super-class: T(?c2, rdfs:subClassOf, ?c1)
    Case("owl2rl", "scm-avf2", [(R1, OWL.allValuesFrom, D), (R1, ONP, p1), (R2, OWL.allValuesFrom, D),
                                (R2, ONP, p2), (p1, SPO, p2)], [], [(R2, SC, R1)], absent=[(R1, SC, R2)],
         drop=[(p1, SPO, p2)]),
    Case("owl2rl", "scm-int", [(C, OWL.intersectionOf, INT2), *INT2_TRIPLES], [], [(C, SC, C1), (C, SC, C2)],
         absent=[(C1, SC, C)], drop=[(C, OWL.intersectionOf, INT2)]),
    Case("owl2rl", "scm-uni", [(C, OWL.unionOf, UNI2), *UNI2_TRIPLES], [], [(C1, SC, C), (C2, SC, C)],
         absent=[(C, SC, C1)], drop=[(C, OWL.unionOf, UNI2)]),
]

CASE_IDS = [case.id for case in CASES]
OFF_CASES = [case for case in CASES if is_off(case.file, case.rule)]
NEGATIVE_CASES = [case for case in CASES if case.negative() is not None]


def shipped_or_on(case: Case, tmp_path: Path):
    """The shipped file (parsed), or for an off rule the path of a copy with it switched on."""
    if is_off(case.file, case.rule):
        return str(shipped_with_rule_on(case.file, case.rule, tmp_path))
    return shipped(case.file)


def assert_derives(case: Case, got: set[tuple], how: str) -> None:
    missing = [t for t in case.expected if t not in got]
    assert not missing, f"{case.id} ({how}): expected triples missing: {missing}"
    wrong = [t for t in case.absent if t in got]
    assert not wrong, f"{case.id} ({how}): triples derived that the rule does not entail: {wrong}"


# ---------------------------------------------------------------- the tests


def test_every_rule_has_a_case():
    names = {(file, rule) for file, blocks in BLOCKS.items() for rule in blocks}
    covered = {(case.file, case.rule) for case in CASES}
    assert len(CASE_IDS) == len(set(CASE_IDS)), "two cases for one rule"
    assert names - covered == set(), "rules without a test case"
    assert covered - names == set(), "cases for rules the files do not have"
    # the collection itself finds the rules (so a parsing slip cannot make the checks above vacuous)
    assert len(BLOCKS["rdfs"]) >= 14 and len(BLOCKS["rhodf"]) >= 8 and len(BLOCKS["owl2rl"]) >= 63
    assert {"rdf1", "rdfs4a", "rdfs9", "rdfs13"} <= set(BLOCKS["rdfs"])
    assert {"owlrl-member", "eq-ref", "eq-rep-p", "prp-dom", "cls-int1", "cls-maxqc4", "cax-dw", "scm-cls",
            "scm-uni"} <= set(BLOCKS["owl2rl"])
    assert "cls-nothing2" not in BLOCKS["owl2rl"]  # a comment without a rule
    assert all(any(is_off(file, rule) for rule in BLOCKS[file]) for file in ("rdfs", "owl2rl"))
    assert not is_off("rdfs", "rdfs9") and is_off("rdfs", "rdf1")


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_rule_derives(case: Case, tmp_path: Path):
    """With the shipped file (an off rule switched on in a copy), the expected triples are in the closure."""
    got = closure(case.schema, case.stream, [shipped_or_on(case, tmp_path)])
    assert_derives(case, got, "shipped file")


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_rule_alone_derives(case: Case, tmp_path: Path):
    """With only this rule (and the list helpers), the expected triples are in the closure."""
    got = closure(case.schema, case.stream, [str(only_rules(case.file, [case.rule, *case.with_rules], tmp_path))])
    assert_derives(case, got, "rule alone")


@pytest.mark.parametrize("case", NEGATIVE_CASES, ids=[case.id for case in NEGATIVE_CASES])
def test_rule_needs_its_premises(case: Case, tmp_path: Path):
    """Without a key premise, the whole file (rule switched on) derives none of the expected triples."""
    schema, stream = case.negative()
    got = closure(schema, stream, [shipped_or_on(case, tmp_path)])
    wrong = [t for t in case.key_triples if t in got]
    assert not wrong, f"{case.id}: derived without its premises: {wrong}"


@pytest.mark.parametrize("case", OFF_CASES, ids=[case.id for case in OFF_CASES])
def test_off_rule_is_off_in_shipped_file(case: Case):
    got = closure(case.schema, case.stream, [shipped(case.file)])
    wrong = [t for t in case.key_triples if t in got]
    assert not wrong, f"{case.id} is switched off, yet the shipped file derives {wrong}"


def test_bundled_name_is_the_shipped_file():
    """``rules=["rdfs"]`` is the shipped file: rdfs9 on, rdfs4a off."""
    got = closure([(C, SC, D)], [(a, TYPE, C)], ["rdfs"])
    assert (a, TYPE, D) in got
    assert (a, TYPE, RDFS.Resource) not in got


# ---------------------------------------------------------------- schema triples on the stream

UNSPECIALISED = ["rdfs2", "rdfs3", "rdfs5", "rdfs7", "rdfs9", "rdfs11", "rhodf-2b", "rhodf-5a", "owlrl-chain",
                 "prp-dom", "prp-trp", "prp-symp", "prp-spo2", "prp-inv1", "cls-int1", "cls-uni", "cls-svf1",
                 "cls-hv1", "cls-maxc2", "cls-maxqc3", "cls-oo", "cax-sco", "scm-sco", "scm-cls"]
UNSPECIALISED_CASES = [case for case in CASES if case.rule in UNSPECIALISED]


def test_unspecialised_subset_is_complete():
    assert {case.rule for case in UNSPECIALISED_CASES} == set(UNSPECIALISED)


@pytest.mark.parametrize("case", UNSPECIALISED_CASES, ids=[case.id for case in UNSPECIALISED_CASES])
def test_schema_on_stream_unspecialised(case: Case, tmp_path: Path):
    """With ``specialise=False`` the schema may come on the stream (here all of it does), with the same closure."""
    got = closure([], case.schema + case.stream, [shipped_or_on(case, tmp_path)], specialise=False)
    assert_derives(case, got, "schema on the stream, unspecialised")


@pytest.mark.parametrize(("rules", "schema_triple"), [
    ("rdfs", (C, SC, D)),
    ("rhodf", (p, SPO, q)),
    ("owl2rl", (p, TYPE, OWL.TransitiveProperty)),
    ("owl2rl", (C, OWL.intersectionOf, INT2)),
], ids=["rdfs-subClassOf", "rhodf-subPropertyOf", "owl2rl-TransitiveProperty", "owl2rl-intersectionOf"])
def test_schema_on_stream_is_an_error_when_specialised(rules, schema_triple):
    e = Engine(t0=0)
    g = Graph()
    g.add((p, DOM, C))
    g.add((C1, SC, C2))
    e.register_graph("http://ex.org/onto", g)
    e.register_query(QUERY, rules=[rules])
    with pytest.raises(EvaluationError, match="schema triple"):
        e.push("http://ex.org/s", [(a, TYPE, C), schema_triple], 0)
        e.close()
