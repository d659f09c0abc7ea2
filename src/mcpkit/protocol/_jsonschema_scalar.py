"""The JSON Schema validator's checks of single values: number bounds and multiples,
sizes (of strings, arrays and objects), patterns and formats. Re-exported by
:mod:`._jsonschema_checks`, where the structural keywords live; the same closure
contract holds (see there).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from ._jsonschema_regex import Matcher
from ._jsonschema_runtime import (
    Check,
    Ctx,
    Path,
    field,
    show,
)

__all__ = [
    "FORMATS",
    "bound_check",
    "format_check",
    "multiple_of_check",
    "pattern_check",
    "size_check",
]


# -- size and number checks -----------------------------------------------------------------

_COMPARE = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt}


def bound_check(limit: int | float, op: str, keyword: str) -> Check:
    """``minimum``, ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``."""
    compare = _COMPARE[op]

    def check(inst: Any, path: Path, ctx: Ctx) -> bool:
        if compare(inst, limit):
            return True
        if ctx.collect:
            ctx.add(path, keyword, f"{field(path)} must be {op} {limit!r}, got {inst!r}")
        return False

    return check


def _fraction(value: int | float) -> Fraction:
    # A float stands for the decimal it prints as, so 0.3 is a multiple of 0.1.
    return Fraction(value) if isinstance(value, int) else Fraction(repr(float(value)))


def multiple_of_check(divisor: int | float) -> Check:
    """``multipleOf``: exact for integers, decimal-exact for floats."""
    exact = _fraction(divisor)
    int_divisor = isinstance(divisor, int)

    def check(inst: Any, path: Path, ctx: Ctx) -> bool:
        if int_divisor and isinstance(inst, int):
            ok = inst % divisor == 0
        else:
            try:
                ok = (_fraction(inst) / exact).denominator == 1
            except (ValueError, OverflowError):  # inf or nan: not JSON numbers
                ok = False
        if not ok and ctx.collect:
            message = f"{field(path)} must be a multiple of {divisor!r}, got {inst!r}"
            ctx.add(path, "multipleOf", message)
        return ok

    return check


def size_check(limit: int, at_least: bool, keyword: str, nouns: tuple[str, str]) -> Check:
    """``min/maxLength`` (code points), ``min/maxItems``, ``min/maxProperties``."""
    words = f"at least {limit}" if at_least else f"at most {limit}"
    words += f" {nouns[0] if limit == 1 else nouns[1]}"

    def check(inst: Any, path: Path, ctx: Ctx) -> bool:
        size = len(inst)
        if (size >= limit) if at_least else (size <= limit):
            return True
        if ctx.collect:
            ctx.add(path, keyword, f"{field(path)} must have {words}, got {size}")
        return False

    return check


# -- strings --------------------------------------------------------------------------------


def pattern_check(regex: Matcher) -> Check:
    """``pattern``: unanchored like ECMA-262 ``RegExp.test``; text longer than
    ``regex.longest`` (a pattern only Python's backtracking engine can run: even one
    repetition searches in quadratic time there) fails unsearched."""
    shown, longest = show(regex.source), regex.longest

    def check(inst: Any, path: Path, ctx: Ctx) -> bool:
        if longest and len(inst) > longest:
            if ctx.collect:
                ctx.add(
                    path,
                    "pattern",
                    f"{field(path)} is too long ({len(inst)} characters) to be checked "
                    f"against the pattern {shown} (at most {longest})",
                )
            return False
        if regex.search(inst):
            return True
        if ctx.collect:
            ctx.add(path, "pattern", f"{field(path)} must match the pattern {shown}")
        return False

    return check


def _date(text: str) -> bool:
    year, month, day = int(text[0:4]), int(text[5:7]), int(text[8:10])
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    return 1 <= month <= 12 and 1 <= day <= days[month - 1]


_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATE_TIME = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt ]([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)"
    r"(\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"
)
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:\S*")

FORMATS: dict[str, Callable[[str], bool]] = {
    "date": lambda s: _DATE.fullmatch(s) is not None and _date(s),
    "date-time": lambda s: (m := _DATE_TIME.fullmatch(s)) is not None and _date(m[1]),
    "uuid": lambda s: _UUID.fullmatch(s) is not None,
    "email": lambda s: _EMAIL.fullmatch(s) is not None,
    "uri": lambda s: _URI.fullmatch(s) is not None,
}


def format_check(name: str) -> Check:
    """``format`` when asked to assert it (loose checks, see :data:`FORMATS`)."""
    valid = FORMATS[name]
    article = "an" if name[0] in "aeiou" else "a"

    def check(inst: Any, path: Path, ctx: Ctx) -> bool:
        if valid(inst):
            return True
        if ctx.collect:
            ctx.add(path, "format", f"{field(path)} must be {article} {name}, got {show(inst)}")
        return False

    return check
