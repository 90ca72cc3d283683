"""Comparison and arithmetic on constants, as docs/semantics-notes.md ("Values") defines them.

Arithmetic returns :data:`FAIL` for a symbolic operand or a division by zero; any comparison involving
FAIL is false, so the rule does not fire for that binding.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

FAIL = object()

_NUM = (int, Decimal)


def _num(a) -> bool:
    t = type(a)
    return t is int or t is Decimal


def add(a, b):
    return a + b if _num(a) and _num(b) else FAIL


def sub(a, b):
    return a - b if _num(a) and _num(b) else FAIL


def mul(a, b):
    return a * b if _num(a) and _num(b) else FAIL


def div(a, b):
    if not (_num(a) and _num(b)) or b == 0:
        return FAIL
    if type(a) is int and type(b) is int:
        return a // b
    try:
        return Decimal(a) / Decimal(b)
    except InvalidOperation:
        return FAIL


ARITH = {"+": add, "-": sub, "*": mul, "/": div}


def eq(a, b) -> bool:
    return a is not FAIL and b is not FAIL and a == b


def ne(a, b) -> bool:
    return a is not FAIL and b is not FAIL and a != b


def _ordered(a, b) -> bool:
    if a is FAIL or b is FAIL:
        return False
    if _num(a):
        return _num(b)
    return type(a) is str and type(b) is str


def lt(a, b) -> bool:
    return _ordered(a, b) and a < b


def le(a, b) -> bool:
    return _ordered(a, b) and a <= b


def gt(a, b) -> bool:
    return _ordered(a, b) and a > b


def ge(a, b) -> bool:
    return _ordered(a, b) and a >= b


COMPARE = {"=": eq, "!=": ne, "<": lt, "<=": le, ">": gt, ">=": ge}
