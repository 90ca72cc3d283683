"""Atoms: a predicate applied to terms.  ``p(s, o)`` is also how a triple ⟨s, p, o⟩ is represented.

In a rule body the predicate may be a variable (``P(S, O)``): it then ranges over the predicates of the
data atoms of that arity (see docs/semantics-notes.md, "Predicate variables").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import Span
from .terms import Term, Var, format_term, is_var


@dataclass(frozen=True, slots=True)
class Atom:
    pred: str | Var
    args: tuple[Term, ...] = ()
    span: Span | None = field(default=None, compare=False, hash=False, repr=False)

    def __str__(self) -> str:
        if not self.args:
            return self.pred
        return f"{self.pred}({','.join(format_term(a) for a in self.args)})"

    @property
    def arity(self) -> int:
        return len(self.args)

    @property
    def signature(self) -> tuple[str, int]:
        return (self.pred, len(self.args))

    def variables(self) -> list:
        out = [a for a in self.args if is_var(a)]
        return [self.pred, *out] if type(self.pred) is Var else out

    def is_ground(self) -> bool:
        return type(self.pred) is not Var and not any(is_var(a) for a in self.args)

