"""The ``rdfstream`` command line: timeline fixtures, dialect equivalence, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rdfstream.cli import main
from rdfstream.frontends.registry import parse_atoms, parse_program

try:
    from reference import evaluate
except ImportError:  # pragma: no cover
    from tests.reference import evaluate

HERE = Path(__file__).parent
ROOT = HERE.parent
TIMELINES = HERE / "timelines"


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def reference_lines(program_path: Path, stream_path: Path, dialect: str = "native") -> list[dict]:
    """The expected JSON lines computed by the naive reference evaluator."""
    program = parse_program(program_path.read_text(), dialect)
    stream: dict[int, list] = {}
    for line in stream_path.read_text().splitlines():
        obj = json.loads(line)
        stream.setdefault(obj["t"], []).extend(a for text in obj["atoms"] for a in parse_atoms(text, dialect))
    start, end = min(stream), max(stream)
    out = []
    for res in evaluate(program, stream, start, end):
        rec: dict = {"t": res.t, "holds": sorted(map(str, res.holds))}
        if res.placed:
            rec["placed"] = {str(p): sorted(map(str, a)) for p, a in sorted(res.placed.items())}
        out.append(rec)
    return out


@pytest.mark.parametrize("name", sorted(p.stem for p in TIMELINES.glob("*.lars")))
def test_timeline_fixtures(name, capsys):
    timeline = json.loads((TIMELINES / f"{name}.timeline.json").read_text())
    code, out, err = run_cli(["run", str(TIMELINES / f"{name}.lars"), "--stream", str(TIMELINES / f"{name}.jsonl"),
                              "--start", str(timeline["start"]), "--end", str(timeline["end"])], capsys)
    assert code == 0, err
    expected = [json.loads(line) for line in (TIMELINES / f"{name}.expected.jsonl").read_text().splitlines()]
    assert [json.loads(line) for line in out.splitlines()] == expected


def test_cooling_example_matches_reference(capsys):
    program, stream = ROOT / "queries/lars/cooling.lars", ROOT / "queries/lars/cooling.jsonl"
    code, out, err = run_cli(["run", str(program), "--stream", str(stream)], capsys)
    assert code == 0, err
    assert [json.loads(line) for line in out.splitlines()] == reference_lines(program, stream)


def test_laser_dialect_and_native_translation_give_identical_output(capsys):
    stream = str(ROOT / "queries/lars/cooling.jsonl")
    _, native, _ = run_cli(["run", str(ROOT / "queries/lars/cooling.lars"), "--stream", stream], capsys)
    code, laser, err = run_cli(["run", str(ROOT / "queries/lars/cooling.laser"), "--dialect", "laser",
                                "--stream", stream], capsys)
    assert code == 0, err
    assert laser == native and native


def test_recursive_program_under_windows_matches_reference(tmp_path, capsys):
    program = tmp_path / "reach.lars"
    program.write_text("reach(X,Y) :- [5] <> edge(X,Y).\nreach(X,Z) :- reach(X,Y), [5] <> edge(Y,Z).\n")
    stream = tmp_path / "edges.jsonl"
    edges = {0: ["edge(a,b)"], 2: ["edge(b,c)"], 3: ["edge(c,a)", "edge(c,d)"], 7: ["edge(d,e)"], 9: [],
             12: ["edge(e,f)"], 14: []}
    stream.write_text("".join(json.dumps({"t": t, "atoms": a}) + "\n" for t, a in edges.items()))
    code, out, err = run_cli(["run", str(program), "--stream", str(stream)], capsys)
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines == reference_lines(program, stream)
    assert "reach(a,d)" in lines[3]["holds"] and "reach(a,a)" in lines[3]["holds"]


def test_text_format_and_output_file(tmp_path, capsys):
    out_file = tmp_path / "out.txt"
    code, out, err = run_cli(["run", str(TIMELINES / "steam-box.lars"), "--stream",
                              str(TIMELINES / "steam-box.jsonl"), "-f", "text", "-o", str(out_file)], capsys)
    assert code == 0 and out == "", err
    text = out_file.read_text().splitlines()
    assert text[0] == "0: alarm isSteam steam(100)"
    assert "  @0: isSteam steam(100)" in text


# ---------------------------------------------------------------- errors: one line, location, exit code 2


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


GOOD_STREAM = '{"t": 0, "atoms": ["a(x)"]}\n'

ERROR_CASES = [
    # (program, stream, expected stderr prefix after the file name, what)
    ("q(X) :- a(X)\nr :- b.\n", GOOD_STREAM, "prog.lars:1:", "syntax error"),
    ("q(X, Y) :- a(X).\n", GOOD_STREAM, "prog.lars:1:1: unsafe rule: variable Y", "unsafe rule"),
    ("p :- not q.\nq :- not p.\n", GOOD_STREAM, "prog.lars:", "unstratifiable"),
    ("q(X) :- a(X).\n", '{"t": 0, "atoms": ["a(x)"]}\n{"t": 1, "atoms": ["a(x"]}\n', "edges.jsonl:2:", "bad atom"),
    ("q(X) :- a(X).\n", '{"t": 0, "atoms": ["a(x)"]}\n{"t": 1 "atoms": []}\n', "edges.jsonl:2:9:", "bad JSON"),
    ("q(X) :- a(X).\n", '{"t": 5, "atoms": []}\n{"t": 1, "atoms": []}\n', "edges.jsonl:2:1:", "out of order"),
    ("q(X) :- a(X).\n", '{"t": "x", "atoms": []}\n', "edges.jsonl:1:2:", "time not an integer"),
    ("q(X) :- a(X).\n", '{"t": 1, "atoms": ["a(X)"]}\n', "edges.jsonl:1:", "non-ground atom"),
]


@pytest.mark.parametrize("program,stream,prefix,what", ERROR_CASES, ids=[c[3] for c in ERROR_CASES])
def test_bad_input_is_one_line_with_location_and_exit_2(tmp_path, capsys, program, stream, prefix, what):
    prog = write(tmp_path, "prog.lars", program)
    data = write(tmp_path, "edges.jsonl", stream)
    code, out, err = run_cli(["run", prog, "--stream", data], capsys)
    assert code == 2, err
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(str(tmp_path / prefix)), lines[0]


def test_unstratifiable_names_the_cycle(tmp_path, capsys):
    prog = write(tmp_path, "prog.lars", "p :- not q.\nq :- not p.\n")
    _, _, err = run_cli(["run", prog, "--stream", write(tmp_path, "s.jsonl", GOOD_STREAM)], capsys)
    assert "not stratifiable" in err and "p" in err and "q" in err and "->" in err


def test_skip_mode_reports_and_goes_on(tmp_path, capsys):
    prog = write(tmp_path, "prog.lars", "q(X) :- [1] <> a(X).\n")
    data = write(tmp_path, "s.jsonl", '{"t": 0, "atoms": ["a(x)"]}\n{"t": 1, "atoms": ["a(("]}\n'
                                       '{"t": 2, "atoms": ["a(y)"]}\n')
    code, out, err = run_cli(["run", prog, "--stream", data, "--on-error", "skip"], capsys)
    assert code == 0
    assert "s.jsonl:2:" in err
    assert [json.loads(line)["holds"] for line in out.splitlines()] == [["q(x)"], ["q(x)"], ["q(y)"]]


def test_usage_errors(tmp_path, capsys):
    code, _, err = run_cli(["run", "missing.lars", "--stream", "missing.jsonl"], capsys)
    assert code == 2 and "cannot read missing.lars" in err
    prog = write(tmp_path, "p.lars", "q :- a.\n")
    code, _, err = run_cli(["run", prog, "--stream", prog, "--dialect", "nativ"], capsys)
    assert code == 2 and "did you mean 'native'" in err
    code, _, err = run_cli(["frobnicate"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_console_script_runs_the_bundled_example():
    proc = subprocess.run([sys.executable, "-m", "rdfstream.cli", "run", "queries/lars/cooling.lars", "--stream",
                           "queries/lars/cooling.jsonl"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[0]) == {"t": 0, "holds": ["isLiquid", "liquid(20)", "normal"]}


def test_background_file_holds_at_every_point(tmp_path, capsys):
    prog = write(tmp_path, "p.lars", "q(X, L) :- [2] <> tram(X), line(X, L).\n")
    bg = write(tmp_path, "bg.lars", "% the lines of each tram\nline(a1, l1).\nline(a2, l2).\n")
    data = write(tmp_path, "s.jsonl", '{"t": 0, "atoms": ["tram(a1)"]}\n{"t": 3, "atoms": ["tram(a2)"]}\n')
    code, out, err = run_cli(["run", prog, "--stream", data, "--background", bg], capsys)
    assert code == 0, err
    holds = [json.loads(line)["holds"] for line in out.splitlines()]
    # [2] <> tram(a1) holds at 0, 1, 2; tram(a2) from 3
    assert holds == [["q(a1,l1)"], ["q(a1,l1)"], ["q(a1,l1)"], ["q(a2,l2)"]]
    rules = write(tmp_path, "bad.lars", "line(X, l) :- tram(X).\n")
    code, _, err = run_cli(["run", prog, "--stream", data, "--background", rules], capsys)
    assert code == 2 and "facts only" in err and "bad.lars:1:1" in err


def test_explain_prints_strata_and_plans(capsys):
    code, out, err = run_cli(["explain", str(ROOT / "queries/lars/cooling.lars"), "--plans"], capsys)
    assert code == 0, err
    assert parse_program(out) == parse_program((ROOT / "queries/lars/cooling.lars").read_text())
    assert "re-evaluated every tick (negation)" in out and "def fire(" in out
