"""The dependency direction of STYLE.md: the core imports none of ours beyond itself, front ends, engine and
formats depend on the core and not on each other, pyparsing lives only in the front ends."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "rdfstream"
CORE = {"errors", "terms", "atoms", "vocab", "ir", "rdfterms", "reasoning"}  # rdfterms imports rdflib lazily
ALLOWED = {
    "core": CORE,
    "frontends": CORE | {"frontends"},
    "engine": CORE | {"engine"},
    "formats": CORE | {"formats"},
    "background": CORE | {"background"},
    "backends": CORE | {"backends", "engine"},
}


def layer_of(path: Path) -> str:
    top = path.relative_to(PKG).parts[0].removesuffix(".py")
    return "core" if top in CORE else top


def top_level_imports(path: Path):
    """(our first-level module or None, external package) for imports at module level."""
    tree = ast.parse(path.read_text())
    rel = path.relative_to(PKG).parts
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield None, alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                mod = node.module or ""
                if mod.startswith("rdfstream."):
                    yield mod.split(".")[1], None
                else:
                    yield None, mod.split(".")[0]
            else:
                base = list(rel[:-1])[: len(rel) - node.level]
                parts = base + (node.module.split(".") if node.module else [])
                if parts:
                    yield parts[0].removesuffix(".py"), None
                else:  # "from .. import x" at the package root
                    for alias in node.names:
                        yield alias.name, None


def test_layers_depend_only_downwards():
    problems = []
    for path in PKG.rglob("*.py"):
        layer = layer_of(path)
        if layer not in ALLOWED:
            continue  # api, cli tie everything together
        for ours, external in top_level_imports(path):
            if ours is not None and ours != "__init__" and ours not in ALLOWED[layer]:
                problems.append(f"{path.relative_to(PKG)} ({layer}) imports rdfstream.{ours}")
            if external == "pyparsing" and layer != "frontends":
                problems.append(f"{path.relative_to(PKG)} imports pyparsing outside the front ends")
            if layer == "core" and external in {"networkx", "rdflib", "pyspark", "pyparsing", "tqdm"}:
                problems.append(f"{path.relative_to(PKG)} (core) imports {external} at module level")
    assert not problems, "\n".join(problems)


def test_the_spark_backend_reaches_only_core_and_engine_even_lazily():
    """Every import in rdfstream/backends, also inside functions: the backend runs the engine on the core IR;
    readers and reports come from the API side (rdfstream/spark.py)."""
    problems = []
    for path in (PKG / "backends").rglob("*.py"):
        rel = path.relative_to(PKG).parts
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = list(rel[:-1])[: len(rel) - node.level]
                parts = base + (node.module.split(".") if node.module else [])
                top = parts[0].removesuffix(".py") if parts else None
                if top not in CORE | {"backends", "engine"}:
                    problems.append(f"{path.relative_to(PKG)} imports rdfstream.{top}")
    assert problems == []


def test_pyspark_is_imported_only_when_the_spark_engine_runs():
    import subprocess
    import sys

    code = ("import sys, rdfstream.api, rdfstream.cli, rdfstream.spark, rdfstream.backends.spark.job;"
            " from rdfstream.api import Engine; Engine(backend='spark');"
            " print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j', 'pandas')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
