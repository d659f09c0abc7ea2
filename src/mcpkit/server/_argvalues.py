"""Argument values as JSON Schema sees them, where msgspec's conversion differs: an
integral float is an integer ("integer" is any number with a zero fraction, JSON Schema
2020-12 validation section 6.1.1), and a set-typed argument, advertised with
``uniqueItems``, must not repeat an item (msgspec would merge the repeats)."""

from __future__ import annotations

import typing
from typing import Any

import msgspec

__all__ = ["has_integral_float", "integral", "is_set", "unique"]


def is_set(tp: Any) -> bool:
    """Whether an annotation is a set (``set[int]``, ``frozenset``, annotated or not)."""
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    return tp in (set, frozenset) or typing.get_origin(tp) in (set, frozenset)


def integral(value: Any) -> Any:
    """``value`` with every float that has no fraction made an int."""
    kind = type(value)
    if kind is float:
        return int(value) if value.is_integer() else value
    if kind is dict:
        return {key: integral(item) for key, item in value.items()}
    if kind is list:
        return [integral(item) for item in value]
    return value


def has_integral_float(value: Any) -> bool:
    """Whether a decoded JSON value holds a float with no fraction anywhere."""
    kind = type(value)
    if kind is float:
        return bool(value.is_integer())
    if kind is dict:
        return any(has_integral_float(item) for item in value.values())
    if kind is list:
        return any(has_integral_float(item) for item in value)
    return False


def unique(items: list[Any]) -> list[Any]:
    """The distinct JSON values of ``items`` (by their encoding: dicts are not hashable)."""
    return list(dict.fromkeys(msgspec.json.encode(item) for item in items))
