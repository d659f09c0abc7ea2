"""Argument values as JSON Schema sees them, where msgspec's conversion differs: an
integral float is an integer ("integer" is any number with a zero fraction, JSON Schema
2020-12 validation section 6.1.1), and a set-typed value, advertised with ``uniqueItems``,
must not repeat an item, at any depth (msgspec and pydantic would merge the repeats)."""

from __future__ import annotations

import contextlib
from collections.abc import Container, Mapping
from typing import Any, Final

import msgspec

from ..protocol import compile_schema
from ._typehooks import dec_hook

__all__ = [
    "UniqueItems",
    "has_integral_float",
    "integral",
    "integral_where_needed",
    "pydantic_validate",
]


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


def pydantic_validate(adapter: Any, value: Any, strict: bool, error: type[Exception]) -> Any:
    """``value`` (decoded JSON) validated by a pydantic ``TypeAdapter``, in JSON mode (the
    arguments came from JSON: a date-time string is a date-time even in strict mode, while
    "5" is still not an integer); an integral float is an integer here too, as msgspec's
    arguments get it: 3.0 is tried as 3 when the value fails as it came.

    Raises:
        error: (``pydantic.ValidationError``) the value fails both ways; the first failure.
    """
    try:
        return adapter.validate_json(msgspec.json.encode(value), strict=strict)
    except error:
        if has_integral_float(value):
            with contextlib.suppress(error):
                return adapter.validate_json(msgspec.json.encode(integral(value)), strict=strict)
        raise


def integral_where_needed(
    arguments: dict[str, Any], types: Mapping[str, Any], strict: bool, pydantic: Container[str]
) -> dict[str, Any]:
    """``arguments`` with integral floats made ints only in the arguments whose type needs
    it (an ``int`` given as 3.0), not in the others (a float in a ``dict[str, Any]`` stays
    a float). An argument in ``pydantic`` is left as it came: :func:`pydantic_validate`
    makes its integral floats ints itself when it has to."""
    adjusted = dict(arguments)
    for name, value in arguments.items():
        if name not in types or name in pydantic or not has_integral_float(value):
            continue
        whole = integral(value)
        if not _fits(value, types[name], strict) and _fits(whole, types[name], strict):
            adjusted[name] = whole
    return adjusted


def _fits(value: Any, tp: Any, strict: bool) -> bool:
    try:
        msgspec.convert(value, tp, strict=strict, str_keys=True, dec_hook=dec_hook)
    except msgspec.ValidationError:
        return False
    return True


class UniqueItems:
    """The arguments' repeated items where the tool's schema says ``uniqueItems``: the
    schema is what clients were promised, so ``[2, 2]`` for a set is refused, at any depth,
    not silently merged into ``{2}``. Make one with :meth:`for_schema` (``None`` for tools
    without sets, which pay nothing)."""

    __slots__ = ("_relaxed", "_strict")

    def __init__(self, input_schema: dict[str, Any]) -> None:
        # Our own generated schema: it compiles (and a trusted schema may nest repetitions).
        self._strict = compile_schema(input_schema)
        self._relaxed = compile_schema(_without_unique_items(input_schema))

    @classmethod
    def for_schema(cls, input_schema: dict[str, Any]) -> UniqueItems | None:
        if b'"uniqueItems"' in msgspec.json.encode(input_schema):
            return cls(input_schema)
        return None

    def problems(self, arguments: dict[str, Any]) -> list[tuple[str, str]]:
        """(JSON pointer, message) for each value that repeats an item; empty when none."""
        strict = self._strict
        if strict.is_valid(arguments):
            return []
        # Refused only when uniqueness is all that fails: other disagreements between the
        # schema and the binder's conversion (which accepted these arguments) are not
        # this check's business, nor is running out of steps on a huge value.
        if not self._relaxed.is_valid(arguments):
            return []
        return [
            (
                error.pointer,
                f"{_label(error.path)!r} must not contain duplicates (uniqueItems)"
                if error.keyword == "uniqueItems"
                else error.message,  # inside anyOf (an optional set): says which items
            )
            for error in strict.errors(arguments)
        ]


def _without_unique_items(node: Any) -> Any:
    """The schema with every ``uniqueItems`` keyword dropped. (A property named
    ``uniqueItems`` goes too: the relaxed schema then refuses it as unknown, so the check
    is skipped for such arguments; it never refuses what it should not.)"""
    if isinstance(node, dict):
        return {k: _without_unique_items(v) for k, v in node.items() if k != "uniqueItems"}
    if isinstance(node, list):
        return [_without_unique_items(v) for v in node]
    return node


def _label(path: tuple[str | int, ...]) -> str:
    """``('inner', 'tags', 0)`` as ``inner.tags[0]``."""
    label = str(path[0]) if path else ""
    for part in path[1:]:
        label += f"[{part}]" if type(part) is int else f".{part}"
    return label
