"""A faithful Python port of the LUBM data generator UBA 1.7.

Given the same ``(univ, index, seed)`` it produces the same triples as the Java generator, so the official LUBM
answers apply.  The draw order below follows the Java code step by step (see ``UBA-SPEC.md``): a single
``java.util.Random`` is re-seeded once per university and its stream runs on through all departments, so even
draws whose value is thrown away must stay.

Streaming: :func:`generate` yields one :class:`Department` at a time; only that department's triples (a few
thousand) are held, so memory does not grow with the number of universities.

Triples are tuples of strings in N-Triples term syntax (``<iri>``, ``"literal"``).  The Java generator writes
RDF/XML; a University-valued property is written as a nested ``<ub:University rdf:about=…/>`` node, which adds a
``rdf:type ub:University`` triple each time.  A department file is an RDF graph, so repeats collapse:
:meth:`Department.triples` yields each distinct triple once, at its first position.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Triple = tuple[str, str, str]

ONTOLOGY = "http://www.lehigh.edu/~zhp2/2004/0401/univ-bench.owl"
# Each Java file starts with <owl:Ontology rdf:about="">: the subject is the document base, which the reference
# conversion set to this IRI for every file (so the header is shared when files are merged).
DEFAULT_BASE = "http://example.org/lubm"

_RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
_OWL = "http://www.w3.org/2002/07/owl#"

_MASK48 = (1 << 48) - 1
_MULTIPLIER = 0x5DEECE66D
_ADDEND = 0xB

# UBA 1.7 constants
_DEPT_MIN, _DEPT_MAX = 15, 25
_UNIV_NUM = 1000  # universities a degree may come from
_RESEARCH_NUM = 30
_COURSE_NUM = 100  # size of each (undergraduate, graduate) course pool per department
_FACULTY_CLASSES: tuple[tuple[str, int, int], ...] = (
    # class, min and max publications
    ("FullProfessor", 15, 20),
    ("AssociateProfessor", 10, 18),
    ("AssistantProfessor", 5, 10),
    ("Lecturer", 0, 5),
)
_PROFESSOR_CLASSES = ("FullProfessor", "AssociateProfessor", "AssistantProfessor")


class JavaRandom:
    """``java.util.Random``: a 48-bit linear congruential generator, bit for bit."""

    __slots__ = ("_state",)

    def __init__(self, seed: int = 0) -> None:
        self._state = 0
        self.setSeed(seed)

    def setSeed(self, seed: int) -> None:  # noqa: N802 - Java's name, this is a port
        # Python's infinite two's complement gives the same low 48 bits as Java's 64-bit long for negative seeds.
        self._state = (seed ^ _MULTIPLIER) & _MASK48

    def next(self, bits: int) -> int:
        self._state = (self._state * _MULTIPLIER + _ADDEND) & _MASK48
        value = self._state >> (48 - bits)
        value &= 0xFFFFFFFF
        return value - (1 << 32) if value & 0x80000000 else value  # Java returns a signed int

    def nextInt(self, n: int) -> int:  # noqa: N802 - Java's name
        if n <= 0:
            raise ValueError("n must be positive")
        if n & -n == n:  # power of two: take the high bits, they are the more random ones
            return (n * self.next(31)) >> 31
        while True:
            bits = self.next(31)
            val = bits % n
            if bits - val + (n - 1) < (1 << 31):  # reject the last partial block so the result is uniform
                return val

    def range(self, lo: int, hi: int) -> int:
        """UBA's ``_getRandomFromRange(lo, hi)``: uniform in ``[lo, hi]``."""
        return lo + self.nextInt(hi - lo + 1)

    def sample(self, num: int, lo: int, hi: int) -> list[int]:
        """UBA's ``_getRandomList(num, lo, hi)``: ``num`` distinct values of ``[lo, hi]`` in draw order."""
        pool = list(range(lo, hi + 1))
        return [pool.pop(self.range(0, len(pool) - 1)) for _ in range(num)]


@dataclass
class Department:
    """One department of one university: the content of one UBA output file (without its ontology header)."""

    university: int
    number: int
    counts: dict[str, int]
    """Instances generated per class (FullProfessor …, Course, GraduateCourse, Publication, TeachingAssistant …)."""
    _triples: list[Triple] = field(repr=False)

    @property
    def name(self) -> str:
        return f"University{self.university}_{self.number}"

    def triples(self, distinct: bool = True) -> Iterator[Triple]:
        """The triples in the order the Java generator writes them; repeats dropped unless ``distinct=False``."""
        if not distinct:
            yield from self._triples
            return
        seen: set[Triple] = set()
        for t in self._triples:
            if t not in seen:
                seen.add(t)
                yield t

    def lines(self, distinct: bool = True) -> Iterator[str]:
        """The triples as N-Triples lines (without newline)."""
        for s, p, o in self.triples(distinct):
            yield f"{s} {p} {o} ."


def header(onto: str = ONTOLOGY, base: str = DEFAULT_BASE) -> list[Triple]:
    """The ontology header every file starts with: ``<base> a owl:Ontology; owl:imports <onto>``."""
    return [(f"<{base}>", _RDF_TYPE, f"<{_OWL}Ontology>"), (f"<{base}>", f"<{_OWL}imports>", f"<{onto}>")]


def generate(univ: int = 1, index: int = 0, seed: int = 0, onto: str = ONTOLOGY) -> Iterator[Department]:
    """The departments of universities ``index .. index+univ-1``, one at a time, in generation order."""
    rng = JavaRandom()
    for u in range(index, index + univ):
        # Java: seed = baseSeed * (Integer.MAX_VALUE + 1) + u, where MAX_VALUE + 1 overflows to -2^31 in int
        # arithmetic before the long multiply; the per-university seed keeps (index, seed) pairs apart.
        rng.setSeed(seed * -(1 << 31) + u)
        for d in range(rng.range(_DEPT_MIN, _DEPT_MAX)):
            yield _department(rng, u, d, onto + "#")


def _department(rng: JavaRandom, u: int, d: int, ns: str) -> Department:
    """Draw and build department ``d`` of university ``u``; the draw order is the Java one, step by step."""

    # predicate and class terms are built once per department and shared by all its triples
    def ub(local: str) -> str:
        return f"<{ns}{local}>"

    t_type = _RDF_TYPE
    p_name, p_email, p_phone = ub("name"), ub("emailAddress"), ub("telephone")
    p_member, p_takes, p_advisor = ub("memberOf"), ub("takesCourse"), ub("advisor")
    p_teacher, p_works, p_interest, p_head = ub("teacherOf"), ub("worksFor"), ub("researchInterest"), ub("headOf")
    p_suborg, p_author, p_ta = ub("subOrganizationOf"), ub("publicationAuthor"), ub("teachingAssistantOf")
    p_ugfrom, p_msfrom, p_phdfrom = ub("undergraduateDegreeFrom"), ub("mastersDegreeFrom"), ub("doctoralDegreeFrom")
    c_univ = ub("University")

    # 1. sizes (the order of UBA's _setInstanceInfo)
    n_full, n_assoc, n_asst, n_lect = rng.range(7, 10), rng.range(10, 14), rng.range(8, 11), rng.range(5, 7)
    n_fac = n_full + n_assoc + n_asst + n_lect
    n_ug = rng.range(8 * n_fac, 14 * n_fac)
    n_grad = rng.range(3 * n_fac, 4 * n_fac)
    n_ta = rng.range(n_grad // 5, n_grad // 4)
    n_ra = rng.range(n_grad // 4, n_grad // 3)
    n_rg = rng.range(10, 20)
    # 2. the chair
    chair = rng.nextInt(n_full)

    dept_local = f"Department{d}"
    univ_local = f"University{u}"
    dept_iri = f"http://www.{dept_local}.{univ_local}.edu"
    dept = f"<{dept_iri}>"
    mail_domain = f"@{dept_local}.{univ_local}.edu"
    out: list[Triple] = []
    add = out.append

    def university(n: int) -> str:
        iri = f"<http://www.University{n}.edu>"
        add((iri, t_type, c_univ))  # the nested typed node of the RDF/XML
        return iri

    # 3. university (first department only) and department sections
    if d == 0:
        this_univ = f"<http://www.{univ_local}.edu>"
        add((this_univ, t_type, c_univ))
        add((this_univ, p_name, f'"{univ_local}"'))
    add((dept, t_type, ub("Department")))
    add((dept, p_name, f'"{dept_local}"'))
    add((dept, p_suborg, university(u)))

    # 4. faculty
    under_courses: list[int] = []
    grad_courses: list[int] = []
    publications: list[tuple[str, str, list[str]]] = []  # (subject, name literal, authors)
    sizes = {"FullProfessor": n_full, "AssociateProfessor": n_assoc, "AssistantProfessor": n_asst, "Lecturer": n_lect}
    for cls, pub_min, pub_max in _FACULTY_CLASSES:
        c_cls = ub(cls)
        for j in range(sizes[cls]):
            local = f"{cls}{j}"
            iri = f"{dept_iri}/{local}"
            s = f"<{iri}>"
            add((s, t_type, c_cls))
            add((s, p_name, f'"{local}"'))
            for pool, cls_course in ((under_courses, "Course"), (grad_courses, "GraduateCourse")):
                for _ in range(rng.range(1, 2)):
                    # UBA draws a position in the remaining pool, then ignores it and takes the lowest unused
                    # course; the draw is kept "to guarantee identical random number generation".
                    rng.range(0, _COURSE_NUM - len(pool) - 1)
                    c = len(pool)
                    pool.append(c)
                    add((s, p_teacher, f"<{dept_iri}/{cls_course}{c}>"))
            for p_degree in (p_ugfrom, p_msfrom, p_phdfrom):
                o = university(rng.range(0, _UNIV_NUM - 1))
                add((s, p_degree, o))
            add((s, p_works, dept))
            add((s, p_email, f'"{local}{mail_domain}"'))
            add((s, p_phone, '"xxx-xxx-xxxx"'))
            if cls in _PROFESSOR_CLASSES:
                add((s, p_interest, f'"Research{rng.nextInt(_RESEARCH_NUM)}"'))
            if cls == "FullProfessor" and j == chair:
                add((s, p_head, dept))
            for i in range(rng.range(pub_min, pub_max)):
                publications.append((f"<{iri}/Publication{i}>", f'"Publication{i}"', [s]))

    def advisor() -> str:
        cls = _PROFESSOR_CLASSES[rng.range(0, 2)]
        return f"<{dept_iri}/{cls}{rng.nextInt(sizes[cls])}>"

    def student(cls: str, j: int) -> str:
        """A student's first five triples (the same for both kinds); its IRI."""
        local = f"{cls}{j}"
        s = f"<{dept_iri}/{local}>"
        add((s, t_type, ub(cls)))
        add((s, p_name, f'"{local}"'))
        add((s, p_member, dept))
        add((s, p_email, f'"{local}{mail_domain}"'))
        add((s, p_phone, '"xxx-xxx-xxxx"'))
        return s

    # 5. undergraduate students
    for j in range(n_ug):
        s = student("UndergraduateStudent", j)
        for k in rng.sample(rng.range(2, 4), 0, len(under_courses) - 1):
            add((s, p_takes, f"<{dept_iri}/Course{under_courses[k]}>"))
        if rng.nextInt(5) == 0:
            add((s, p_advisor, advisor()))

    # 6. graduate students
    for j in range(n_grad):
        s = student("GraduateStudent", j)
        for k in rng.sample(rng.range(1, 3), 0, len(grad_courses) - 1):
            add((s, p_takes, f"<{dept_iri}/GraduateCourse{grad_courses[k]}>"))
        o = university(rng.range(0, _UNIV_NUM - 1))
        add((s, p_ugfrom, o))
        if rng.nextInt(1) == 0:  # always true, but the draw is consumed
            add((s, p_advisor, advisor()))
        for k in rng.sample(rng.range(0, 5), 0, len(publications) - 1):
            publications[k][2].append(s)

    # 7. research groups (a plain resource for the department: no nested type)
    c_rg = ub("ResearchGroup")
    for j in range(n_rg):
        s = f"<{dept_iri}/ResearchGroup{j}>"
        add((s, t_type, c_rg))
        add((s, p_suborg, dept))

    # 8. publications, in creation order
    c_pub = ub("Publication")
    for s, name, authors in publications:
        add((s, t_type, c_pub))
        add((s, p_name, name))
        for a in authors:
            add((s, p_author, a))

    # 9. courses: undergraduate then graduate, in assignment order
    for pool, cls_course in ((under_courses, "Course"), (grad_courses, "GraduateCourse")):
        c_cls = ub(cls_course)
        for c in pool:
            s = f"<{dept_iri}/{cls_course}{c}>"
            add((s, t_type, c_cls))
            add((s, p_name, f'"{cls_course}{c}"'))

    # 10. teaching and research assistants: distinct graduate students, TAs first
    students = rng.sample(n_ta + n_ra, 0, n_grad - 1)
    ta_courses = rng.sample(n_ta, 0, len(under_courses) - 1)
    c_ta, c_ra = ub("TeachingAssistant"), ub("ResearchAssistant")
    for i, k in enumerate(ta_courses):
        s = f"<{dept_iri}/GraduateStudent{students[i]}>"
        add((s, t_type, c_ta))
        add((s, p_ta, f"<{dept_iri}/Course{under_courses[k]}>"))
    for g in students[n_ta:]:
        add((f"<{dept_iri}/GraduateStudent{g}>", t_type, c_ra))

    counts = {
        **sizes,
        "UndergraduateStudent": n_ug,
        "GraduateStudent": n_grad,
        "TeachingAssistant": n_ta,
        "ResearchAssistant": n_ra,
        "ResearchGroup": n_rg,
        "Course": len(under_courses),
        "GraduateCourse": len(grad_courses),
        "Publication": len(publications),
    }
    return Department(u, d, counts, out)


def write(
    univ: int = 1,
    index: int = 0,
    seed: int = 0,
    fmt: Literal["nt", "ttl"] = "nt",
    out_dir: str | os.PathLike[str] = ".",
    onto: str = ONTOLOGY,
    base: str = DEFAULT_BASE,
) -> list[Path]:
    """Write one file per department, ``University{u}_{d}.nt`` (or ``.ttl``), each with the ontology header."""
    if fmt not in ("nt", "ttl"):
        raise ValueError(f"unknown format {fmt!r}: expected 'nt' or 'ttl'")
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    head = [f"{s} {p} {o} ." for s, p, o in header(onto, base)]
    paths: list[Path] = []
    for dept in generate(univ, index, seed, onto):
        path = directory / f"{dept.name}.{fmt}"
        if fmt == "nt":
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write("\n".join(head))
                f.write("\n")
                for line in dept.lines():
                    f.write(line)
                    f.write("\n")
        else:
            _write_turtle(path, head, dept, onto)
        paths.append(path)
    return paths


def _write_turtle(path: Path, head: list[str], dept: Department, onto: str) -> None:
    from rdflib import Graph  # only the Turtle output needs rdflib

    graph = Graph()
    graph.bind("ub", onto + "#")
    graph.parse(data="\n".join([*head, *dept.lines()]), format="nt")
    # rdflib's Turtle serializer sorts subjects and predicates, so the file is deterministic
    graph.serialize(destination=str(path), format="turtle", encoding="utf-8")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``generate``, for wiring into another parser as a subcommand."""
    parser.add_argument("--univ", type=int, default=1, help="number of universities (default 1)")
    parser.add_argument("--index", type=int, default=0, help="index of the first university (default 0)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("-f", "--format", default="nt", choices=["nt", "ttl"], help="output format (default nt)")
    parser.add_argument("-o", "--output", required=True, metavar="DIR", help="output directory")
    parser.add_argument("--onto", default=ONTOLOGY, help=f"ontology IRI (default {ONTOLOGY})")
    parser.add_argument("--base", default=DEFAULT_BASE, help=f"subject of the ontology header (default {DEFAULT_BASE})")


def run(args: argparse.Namespace) -> int:
    """Execute parsed ``generate`` arguments."""
    if args.univ < 1 or args.index < 0:
        raise SystemExit("--univ must be >= 1 and --index >= 0")
    paths = write(args.univ, args.index, args.seed, args.format, args.output, args.onto, args.base)
    print(f"wrote {len(paths)} files to {args.output}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``generate --univ N [--index I] [--seed S] -f nt|ttl -o DIR``."""
    parser = argparse.ArgumentParser(prog="rdfstream lubm", description="LUBM data generator (UBA 1.7 port)")
    sub = parser.add_subparsers(dest="command", required=True)
    add_arguments(sub.add_parser("generate", help="generate LUBM data, one file per department"))
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
