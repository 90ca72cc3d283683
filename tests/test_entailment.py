"""Entailment rule sets in use: specialisation, the query closure, rules in programs, the CLI, LUBM end to end.

Expectations are derived by hand from the rules and the data (or taken from the official LUBM answers), not
from earlier output of rdfstream.  The per-rule behaviour of the shipped files is in test_rule_files.py and the
comparison with owlrl in test_entailment_vs_owlrl.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from rdflib import RDF, RDFS, Graph, Namespace
from rdflib.collection import Collection
from rdflib.term import BNode

from rdfstream.api import Engine
from rdfstream.atoms import Atom
from rdfstream.entailment import build_closure, load_rules
from rdfstream.errors import EvaluationError
from rdfstream.ir.nodes import ExtAtom
from rdfstream.reasoning.specialise import is_triple_atom

ROOT = Path(__file__).resolve().parent.parent
EX = Namespace("http://ex.org/")
OWL = Namespace("http://www.w3.org/2002/07/owl#")
TYPE = f"<{RDF.type}>"


def iri(term) -> str:
    return f"<{term}>"


def closure_of(rule_file: str, triples, **kw):
    rules, prefixes = load_rules([ROOT / "rules" / rule_file])
    static = [Atom(iri(p), (iri(s), iri(o))) for s, p, o in triples]
    return build_closure(rules, static, prefixes=prefixes, **kw)


def bodies(rule) -> list[Atom]:
    return [lit.atom for lit in rule.body if type(lit) is ExtAtom]


# ---------------------------------------------------------------- specialisation


def test_rdfs7_becomes_a_rule_per_sub_property():
    closure = closure_of("rdfs.lars", [(EX.headOf, RDFS.subPropertyOf, EX.worksFor)])
    found = [r for r in closure.specialised.rules if r.name == "rdfs7"]
    assert len(found) == 1, [str(r) for r in closure.specialised.rules]
    rule = found[0]
    assert rule.head.atom.pred == iri(EX.worksFor)
    assert [a.pred for a in bodies(rule)] == [iri(EX.headOf)]  # no schema atom, no predicate variable left
    assert rule.head.atom.args == bodies(rule)[0].args


def test_sub_class_chains_are_closed_once():
    chain = [(EX.A, RDFS.subClassOf, EX.B), (EX.B, RDFS.subClassOf, EX.C), (EX.C, RDFS.subClassOf, EX.D)]
    closure = closure_of("rdfs.lars", chain)
    typing = {(bodies(r)[0].args[1], r.head.atom.args[1]) for r in closure.specialised.rules if r.name == "rdfs9"}
    # every class jumps straight to each of its super-classes: no instance needs a chain of rules
    expected = {(iri(a), iri(b)) for a, b in [(EX.A, EX.B), (EX.A, EX.C), (EX.A, EX.D), (EX.B, EX.C), (EX.B, EX.D),
                                              (EX.C, EX.D)]}
    assert typing == expected
    assert all(not any(a.pred == f"<{RDFS.subClassOf}>" for a in bodies(r)) for r in closure.specialised.rules)
    # the closed chain itself is part of the static closure
    assert Atom(f"<{RDFS.subClassOf}>", (iri(EX.A), iri(EX.D))) in closure.static


def test_intersection_lists_are_unrolled():
    g = Graph()
    head = BNode()
    Collection(g, head, [EX.A, EX.B, EX.E])
    triples = [(EX.C, OWL.intersectionOf, head)] + list(g)
    closure = closure_of("owl2rl.lars", triples)
    int1 = [r for r in closure.specialised.rules if r.name == "cls-int1"]
    assert len(int1) == 1
    rule = int1[0]
    assert rule.head.atom == Atom(TYPE, (rule.head.atom.args[0], iri(EX.C)))
    assert sorted(a.args[1] for a in bodies(rule)) == sorted(iri(x) for x in (EX.A, EX.B, EX.E))
    assert all(is_triple_atom(a) for r in closure.specialised.rules for a in bodies(r)), \
        "a helper relation was left after unrolling"


def test_schema_derived_from_data_is_not_specialised_away():
    # a program rule derives subClassOf from stream data: rdfs9 must keep reading subClassOf at run time
    rules, _ = load_rules([ROOT / "rules" / "rdfs.lars"])
    dynamic = [Atom(f"<{RDFS.subClassOf}>", ("X", "Y"))]
    closure = build_closure(rules, [Atom(f"<{RDFS.subClassOf}>", (iri(EX.A), iri(EX.B)))], dynamic_heads=dynamic)
    rdfs9 = [r for r in closure.specialised.rules if r.name == "rdfs9"]
    assert any(any(a.pred == f"<{RDFS.subClassOf}>" for a in bodies(r)) for r in rdfs9)


# ---------------------------------------------------------------- queries with rules

QUERY = """REGISTER QUERY q AS
PREFIX ex: <http://ex.org/>
SELECT ?x FROM <http://ex.org/onto> FROM STREAM <http://ex.org/s> [RANGE 10ms STEP 10ms]
WHERE { ?x a ex:Person }
"""


def _run(query: str, onto: Graph, stream: list, **kw) -> list[tuple[int, set]]:
    engine = Engine(t0=0)
    engine.register_graph("http://ex.org/onto", onto)
    handle = engine.register_query(query, **kw)
    out: list[tuple[int, set]] = []
    handle.add_consumer(lambda r: out.append((r.t, {tuple(str(v) for v in row.values()) for row in r.rows})))
    for t, triples in stream:
        engine.push("http://ex.org/s", triples, t)
    engine.close()
    return out


def _onto() -> Graph:
    g = Graph()
    g.add((EX.Student, RDFS.subClassOf, EX.Person))
    g.add((EX.takes, RDFS.domain, EX.Student))
    g.add((EX.takesGrad, RDFS.subPropertyOf, EX.takes))
    return g


def test_query_answers_over_the_closure_and_derivations_expire_with_the_window():
    stream = [(0, [(EX.a, EX.takesGrad, EX.c1)]), (12, [(EX.b, RDF.type, EX.Student)])]
    reports = _run(QUERY, _onto(), stream, rules=["rdfs"])
    # a takesGrad → takes (rdfs7) → Student (rdfs2) → Person (rdfs9); its window [0, 10) closes at 10
    assert reports == [(10, {(str(EX.a),)}), (20, {(str(EX.b),)})]
    generic = _run(QUERY, _onto(), stream, rules=["rdfs"], specialise=False)
    assert generic == reports


def test_schema_triples_on_a_stream_stop_a_specialised_query_and_work_unspecialised():
    stream = [(0, [(EX.Student, RDFS.subClassOf, EX.Agent), (EX.a, RDF.type, EX.Student)])]
    with pytest.raises(EvaluationError, match="schema triple"):
        _run(QUERY, _onto(), stream, rules=["rdfs"])
    query = QUERY.replace("ex:Person", "ex:Agent")
    assert _run(query, _onto(), stream, rules=["rdfs"], specialise=False) == [(10, {(str(EX.a),)})]


def test_queries_over_the_same_window_share_one_closure():
    engine = Engine(t0=0)
    engine.register_graph("http://ex.org/onto", _onto())
    one = engine.register_query(QUERY, rules=["rdfs"])
    two = engine.register_query(QUERY.replace("QUERY q", "QUERY q2").replace("?x a ex:Person", "?x a ex:Student"),
                                rules=["rdfs"])
    engine.push("http://ex.org/s", [(EX.a, EX.takes, EX.c)], 0)
    closure_rules = {r for r in one.compiled.program.rules if not r.head.atom.pred.startswith("q")}
    assert closure_rules & set(two.compiled.program.rules)  # the same closure rules
    shared = engine.runtime.engine.program.rules
    assert len(shared) == len(set(one.compiled.program.rules) | set(two.compiled.program.rules))
    engine.close()


# ---------------------------------------------------------------- CLI

def cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "rdfstream.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd)


@pytest.fixture
def person_query(tmp_path):
    q = tmp_path / "q.rq"
    q.write_text(QUERY)
    onto = tmp_path / "onto.ttl"
    onto.write_text("@prefix ex: <http://ex.org/> . @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
                    "ex:Student rdfs:subClassOf ex:Person .\n")
    data = tmp_path / "s.nt"
    data.write_text("0 <http://ex.org/a> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://ex.org/Student> .\n"
                    "0 <http://ex.org/b> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://ex.org/Person> .\n")
    return q, onto, data


def _answers(stdout: str) -> set[str]:
    out = set()
    for line in stdout.splitlines():
        for binding in json.loads(line)["results"]["results"]["bindings"]:
            out.add(binding["x"]["value"])
    return out


def test_copy_of_rdfs_with_a_rule_deleted_changes_the_answers(person_query, tmp_path):
    q, onto, data = person_query
    text = (ROOT / "rules" / "rdfs.lars").read_text()
    start = text.index("% rdfs9:")
    end = text.index("\n\n", start)
    copy = tmp_path / "my-rdfs.lars"
    copy.write_text(text[:start] + text[end + 2:])  # rdfs9 (sub-class instances) deleted
    args = [q, "--stream", f"http://ex.org/s={data}", "--graph", f"http://ex.org/onto={onto}", "--t0", "0"]
    full = cli("query", *args, "--rules", ROOT / "rules" / "rdfs.lars")
    assert full.returncode == 0, full.stderr
    assert _answers(full.stdout) == {"http://ex.org/a", "http://ex.org/b"}
    cut = cli("query", *args, "--rules", copy)
    assert cut.returncode == 0, cut.stderr
    assert _answers(cut.stdout) == {"http://ex.org/b"}  # a is a Student; without rdfs9 not a Person


def test_explain_shows_the_specialised_program(person_query):
    q, onto, _ = person_query
    out = cli("explain", q, "--rules", "rules/rdfs.lars", "--graph", f"http://ex.org/onto={onto}")
    assert out.returncode == 0, out.stderr
    # rdfs9 against ex:Student ⊑ ex:Person: one rule from the Student partition to the Person partition
    lines = [ln for ln in out.stdout.splitlines() if ln.endswith("% rdfs9")]
    assert len(lines) == 1 and "a_ex_Person(X) :- " in lines[0] and "a_ex_Student(X)" in lines[0], out.stdout


def test_rules_in_a_lars_program_by_include_and_by_flag(tmp_path):
    prog = tmp_path / "p.lars"
    prog.write_text(f"""@prefix ex: <http://ex.org/> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@include "{ROOT / 'rules' / 'rdfs.lars'}" .
rdfs:subClassOf(ex:Student, ex:Person).
seen(X) :- rdf:type(X, ex:Person).
""")
    stream = tmp_path / "s.jsonl"
    stream.write_text('{"t": 0, "atoms": ["rdf:type(ex:a, ex:Student)"]}\n{"t": 1, "atoms": []}\n')
    out = cli("run", prog, "--stream", stream, "-f", "text")
    assert out.returncode == 0, out.stderr
    assert "seen(<http://ex.org/a>)" in out.stdout.splitlines()[0]
    assert "seen" not in out.stdout.splitlines()[1]
    # the same with --rules instead of @include
    plain = tmp_path / "plain.lars"
    plain.write_text("\n".join(ln for ln in prog.read_text().splitlines() if "@include" not in ln) + "\n")
    out2 = cli("run", plain, "--stream", stream, "-f", "text", "--rules", "rules/rdfs.lars")
    assert out2.returncode == 0, out2.stderr
    assert out2.stdout == out.stdout


def test_include_errors_name_the_place(tmp_path):
    prog = tmp_path / "p.lars"
    prog.write_text('a(x).\n@include "missing.lars" .\n')
    out = cli("explain", prog)
    assert out.returncode == 2 and "p.lars:2:1: cannot @include missing.lars" in out.stderr, out.stderr
    loop = tmp_path / "loop.lars"
    loop.write_text('@include "loop.lars" .\n')
    out = cli("explain", loop)
    assert out.returncode == 2 and "@include cycle" in out.stderr


def test_a_rule_with_a_data_bound_predicate_head_is_refused_in_programs(tmp_path):
    text = (ROOT / "rules" / "owl2rl.lars").read_text().replace("% off: P(S2, O) :- ", "P(S2, O) :- ")
    rules = tmp_path / "owl2rl-sameas.lars"
    rules.write_text(text)
    prog = tmp_path / "p.lars"
    prog.write_text("a(x).\n")
    stream = tmp_path / "s.jsonl"
    stream.write_text('{"t": 0, "atoms": []}\n')
    out = cli("run", prog, "--stream", stream, "--rules", rules)
    assert out.returncode == 2
    assert "eq-rep-s" in out.stderr and "bound by stream data" in out.stderr


# ---------------------------------------------------------------- LUBM


def test_lubm1_streamed_by_department_gives_the_official_answers():
    from rdfstream.lubm import run as lubm

    result = lubm.run(univ=1)
    checked = lubm.compare(result, ROOT / "tests" / "data" / "lubm-answers")
    counts = {1: 4, 2: 0, 3: 6, 4: 34, 5: 719, 6: 7790, 7: 67, 8: 7790, 9: 208, 10: 4, 11: 224, 12: 15, 13: 1,
              14: 5916}  # SEMANTICS.md §4
    assert {n: c[1] for n, c in checked.items()} == counts
    assert {n: c[2] for n, c in checked.items()} == dict.fromkeys(counts, 0), checked  # equal as sets
    assert result.departments == 15


def test_lubm_run_cli_checks_answers(tmp_path):
    out = cli("lubm", "run", "--queries", "Q12,Q13", "--check", "tests/data/lubm-answers", "-o", tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Q12       15       15  equal" in out.stdout
    assert (tmp_path / "Q12.csv").read_text().count("\n") == 16
    bad = cli("lubm", "run", "--queries", "Q15")
    assert bad.returncode == 2 and "Q15" in bad.stderr


def test_lubm_without_rules_misses_the_inferred_answers():
    # a sanity check that the answers above come from reasoning: with no rules, Q12 (Chair) has none
    from rdfstream.lubm import run as lubm

    empty = Path(__file__).parent / "data" / "no-rules.lars"
    result = lubm.run(univ=1, queries=(12,), rules=[empty])
    assert result.answers[12] == set()


def test_api_program_with_rules_and_its_schema_guard():
    program = """@prefix ex: <http://ex.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
rdfs:subClassOf(ex:Student, ex:Person).
person(X) :- rdf:type(X, ex:Person).
"""
    engine = Engine(t0=0)
    engine.register_stream("http://ex.org/s")
    handle = engine.register_program(program, rules=["rdfs"])
    changes = []
    handle.add_consumer(lambda r: changes.append((r.t, sorted(map(str, r.added)))))
    engine.push("http://ex.org/s", [(EX.a, RDF.type, EX.Student)], 0)
    engine.advance_to(2)
    assert (0, ["person(<http://ex.org/a>)"]) in [(t, [a for a in added if a.startswith("person")])
                                                  for t, added in changes]
    with pytest.raises(EvaluationError, match="schema triple"):
        engine.push("http://ex.org/s", [(EX.Student, RDFS.subClassOf, EX.Agent)], 3)
