"""Front ends ("dialects") by name, imported on first use (so pyparsing loads only when something is parsed).

::

    parse_program("p(X) :- [3] <> q(X).")                                   # the native LARS syntax
    parse_program("p(X) :- time_win(3,0,1, diamond(q(X)))", dialect="laser")
    parse_atoms("a(x1,y), b(y,z)", prefixes=program.prefixes, source="s.stream", line=12)
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterable, Mapping
from types import ModuleType

from ..atoms import Atom
from ..errors import ParseError, Span
from ..ir.nodes import Program

#: dialect name -> module implementing ``parse_program(text, source)`` and
#: ``parse_atoms(text, prefixes, source, line)``
DIALECTS: dict[str, str] = {
    "native": "rdfstream.frontends.lars.native",
    "laser": "rdfstream.frontends.lars.laser",
}

#: declared prefixes: a mapping or (prefix, namespace) pairs, e.g. ``Program.prefixes``
Prefixes = Mapping[str, str] | Iterable[tuple[str, str]]

_loaded: dict[str, ModuleType] = {}


def dialect_names() -> list[str]:
    return sorted(DIALECTS)


def get_dialect(name: str) -> ModuleType:
    module = _loaded.get(name)
    if module is not None:
        return module
    path = DIALECTS.get(name)
    if path is None:
        close = difflib.get_close_matches(name, DIALECTS, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else f" (known: {', '.join(dialect_names())})"
        raise ParseError(f"unknown dialect '{name}'{hint}")
    module = _loaded[name] = importlib.import_module(path)
    return module


def parse_program(text: str, dialect: str = "native", source: str | None = None) -> Program:
    """Parse a whole rule file."""
    return get_dialect(dialect).parse_program(text, source)


def parse_atoms(text: str, dialect: str = "native", prefixes: Prefixes = (), source: str | None = None,
                line: int = 1) -> list[Atom]:
    """Parse a comma-separated list of ground atoms (one line of a stream file).

    ``prefixes`` is a mapping or (prefix, namespace) pairs; ``line`` is the line number errors report.
    """
    return get_dialect(dialect).parse_atoms(text, prefixes, source, line)


def parse_atom(text: str, dialect: str = "native", prefixes: Prefixes = (), source: str | None = None,
               line: int = 1) -> Atom:
    """Parse exactly one ground atom."""
    atoms = parse_atoms(text, dialect, prefixes, source, line)
    if len(atoms) != 1:
        col = len(text) - len(text.lstrip()) + 1
        raise ParseError(f"expected one atom, found {len(atoms)}", Span(line, col, source), text)
    return atoms[0]
