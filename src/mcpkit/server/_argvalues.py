"""Argument values as JSON Schema sees them, where msgspec's conversion differs: an
integral float is an integer ("integer" is any number with a zero fraction, JSON Schema
2020-12 validation section 6.1.1), and a set-typed argument, advertised with
``uniqueItems``, must not repeat an item (msgspec would merge the repeats)."""

from __future__ import annotations

import typing
from collections.abc import Container, Mapping
from typing import Any, Final

import msgspec

__all__ = ["has_integral_float", "integral", "integral_where_needed", "is_set", "unique"]


def is_set(tp: Any) -> bool:
    """Whether an annotation is a set (``set[int]``, ``frozenset``, annotated or not)."""
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    return tp in (set, frozenset) or typing.get_origin(tp) in (set, frozenset)


def _whole(text: str) -> int | float:
    number = float(text)
    return int(number) if number.is_integer() else number


# Re-decoding with a float hook: no Python recursion, whatever the depth the decoder's
# limits let through (a recursive walk reached RecursionError at about 335 levels).
_WHOLE: Final = msgspec.json.Decoder(float_hook=_whole)


def integral(value: Any) -> Any:
    """``value`` (decoded JSON) with every float that has no fraction made an int."""
    return _WHOLE.decode(msgspec.json.encode(value))


def has_integral_float(value: Any) -> bool:
    """Whether a decoded JSON value holds a float with no fraction anywhere."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is float:
            if item.is_integer():
                return True
        elif kind is dict:
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
    return False


def integral_where_needed(
    arguments: dict[str, Any], types: Mapping[str, Any], strict: bool, opaque: Container[str]
) -> dict[str, Any]:
    """``arguments`` with integral floats made ints only in the arguments whose type needs
    it (an ``int`` given as 3.0), not in the others (a float in a ``dict[str, Any]`` stays
    a float). An argument in ``opaque`` (a pydantic model) is converted whole."""
    adjusted = dict(arguments)
    for name, value in arguments.items():
        if name not in types or not has_integral_float(value):
            continue
        whole = integral(value)
        if name in opaque or (
            not _fits(value, types[name], strict) and _fits(whole, types[name], strict)
        ):
            adjusted[name] = whole
    return adjusted


def _fits(value: Any, tp: Any, strict: bool) -> bool:
    try:
        msgspec.convert(value, tp, strict=strict, str_keys=True)
    except msgspec.ValidationError:
        return False
    return True


def unique(items: list[Any]) -> list[Any]:
    """The distinct JSON values of ``items`` (by their encoding: dicts are not hashable)."""
    return list(dict.fromkeys(msgspec.json.encode(item) for item in items))
