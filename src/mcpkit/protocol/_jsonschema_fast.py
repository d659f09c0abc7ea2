"""A shortcut for the schemas tools almost always have: one object of plain values.

``{"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}``
goes through the general validator (:mod:`._jsonschema_runtime`) as a validation context,
a node, a properties check, a node per property and a required check: about a microsecond
per ``tools/call``. :func:`fast_check` recognises the shape (properties that are type
checks, maybe with ``enum`` / ``const``, number bounds, string lengths, ``format`` and
arrays of such values; ``required``; ``additionalProperties`` true or false) and builds one
function doing the same checks directly.

The function only ever says "valid for sure": it answers ``True`` when the general
validator would, and ``False`` both for invalid instances and for anything it does not
handle itself (a ``str`` subclass, a tuple, an enormous array), after which the caller runs
the general validator. So a result never changes: every invalid instance, and every error
message, still comes from the general path. Bounds: the shortcut never recurses (property
values are plain values, arrays of plain values at most) and takes the shape only where the
general path's step and depth limits cannot run out on an instance it accepts.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from ._jsonschema_runtime import json_key
from ._jsonschema_scalar import FORMATS

__all__ = ["fast_check"]

_NONE = type(None)
_PY: dict[str, tuple[type, ...]] = {
    "null": (_NONE,), "boolean": (bool,), "object": (dict,), "array": (list,),
    "number": (int, float), "string": (str,), "integer": (int, float),
}  # fmt: skip
_ALL: frozenset[type] = frozenset({dict, list, str, int, float, bool, _NONE})  # exact types only
# Keywords that never make an instance invalid (annotations; ``format`` unless asserted).
_INERT = frozenset({
    "title", "description", "default", "examples", "$comment", "deprecated", "readOnly",
    "writeOnly", "contentEncoding", "contentMediaType", "format"})  # fmt: skip
_VALUE = frozenset({
    "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength", "maxLength", "minItems", "maxItems", "items"})  # fmt: skip
_ROOT = frozenset({
    "type", "properties", "required", "additionalProperties", "$schema", "$defs",
    "definitions"})  # fmt: skip
_COMPARE = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt}

Test = Callable[[Any], bool]
# A property's allowed Python types (``type``) and a test of its other keywords, if any.
_Entry = tuple[frozenset[type], Test | None]


def _plain(schema: Mapping[str, Any], allowed: frozenset[str]) -> bool:
    """Whether ``schema`` uses only ``allowed`` and inert keywords (``x-`` ones included)."""
    return all(
        isinstance(k, str) and (k in allowed or k in _INERT or k.startswith("x-")) for k in schema
    )


def fast_check(
    schema: Any, check_formats: bool, max_depth: int, max_steps: int
) -> Callable[[Any], bool] | None:
    """The shortcut for an already compiled ``schema`` (see the module), or ``None`` when
    the schema is not of the shape it handles."""
    if not isinstance(schema, dict) or not _plain(schema, _ROOT):
        return None
    if schema.get("type") != "object" or "$ref" in schema:
        return None
    additional = schema.get("additionalProperties", True)
    required = schema.get("required", [])
    props = schema.get("properties", {})
    if not isinstance(additional, bool) or not isinstance(props, dict):
        return None
    arrays = sum(isinstance(s, dict) and "items" in s for s in props.values())
    # The general path spends a step on the object and one on each property it checks:
    # an instance this accepts never runs out of steps there.
    spare = max_steps - 1 - len(props)
    if spare < 0 or (arrays and max_depth < 2):  # an array with items is one level more
        return None
    per_array = spare // arrays if arrays else 0  # steps its items may take
    entries: dict[str, _Entry] = {}
    for name, sub in props.items():
        entry = _entry(sub, check_formats, per_array)
        if entry is None:
            return None
        entries[name] = entry
    return _object_check(entries, tuple(dict.fromkeys(required)), closed=not additional)


def _object_check(
    entries: dict[str, _Entry], required: tuple[str, ...], closed: bool
) -> Callable[[Any], bool]:
    get = entries.get

    def check(inst: Any) -> bool:
        if type(inst) is not dict:
            return False
        for name in required:
            if name not in inst:
                return False
        for name, value in inst.items():
            entry = get(name)
            if entry is None:
                if closed:
                    return False
                continue
            kinds, test = entry
            if type(value) not in kinds or (test is not None and not test(value)):
                return False
        return True

    return check


def _entry(schema: Any, check_formats: bool, per_array: int) -> _Entry | None:
    """The Python types a property's value may have and a test of the rest, or ``None``."""
    if schema is True:
        return _ALL, None
    if not isinstance(schema, dict) or not _plain(schema, _VALUE):
        return None
    names = schema.get("type")
    kinds = _ALL
    if names is not None:
        names = [names] if isinstance(names, str) else names
        kinds = frozenset(t for n in names for t in _PY[n])
    # "integer" takes a float with a zero fraction (2020-12 validation 6.1.1), unless
    # "number" takes every float anyway.
    integral = names is not None and "integer" in names and "number" not in names
    keys = None
    if "enum" in schema or "const" in schema:  # (each one must hold)
        keys = [{json_key(v) for v in schema["enum"]}] if "enum" in schema else []
        if "const" in schema:
            keys.append({json_key(schema["const"])})
    fmt = schema.get("format")
    valid = FORMATS[fmt] if check_formats and fmt in FORMATS else None
    items: _Entry | None = None
    if "items" in schema:
        if isinstance(schema["items"], dict) and "items" in schema["items"]:
            return None  # (nested arrays would need depth bookkeeping)
        items = _entry(schema["items"], check_formats, 0)
        if items is None:
            return None
    pairs = _bounds(schema)
    text = schema.get("minLength", 0), schema.get("maxLength")
    size = schema.get("minItems", 0), schema.get("maxItems")
    if not (integral or keys or valid or items or pairs) and text == size == (0, None):
        return kinds, None  # the type alone: checked by the caller
    return kinds, _value_test(integral, keys, pairs, text, valid, size, items, per_array)


def _value_test(
    integral: bool,
    keys: list[set[Any]] | None,
    pairs: list[tuple[Callable[[Any, Any], bool], float]],
    text: tuple[float, float | None],
    valid: Callable[[str], bool] | None,
    size: tuple[float, float | None],
    items: _Entry | None,
    most: int,
) -> Test:
    """Everything but the type, in one call: a value's keywords for its own type only."""
    shortest, longest = text
    fewest, most_items = size
    item_kinds, item_test = items if items is not None else (_ALL, None)

    def test(v: Any) -> bool:
        t = type(v)
        if t is str:
            if len(v) < shortest or (longest is not None and len(v) > longest):
                return False
            if valid is not None and not valid(v):
                return False
        elif t is int or t is float:
            if integral and t is float and not v.is_integer():
                return False
            for compare, limit in pairs:
                if not compare(v, limit):
                    return False
        elif t is list:
            count = len(v)
            if count < fewest or (most_items is not None and count > most_items):
                return False
            if items is not None:
                if count > most:  # the general path's steps could run out: its call
                    return False
                for item in v:
                    if type(item) not in item_kinds:
                        return False
                    if item_test is not None and not item_test(item):
                        return False
        if keys is not None:  # JSON equality: 1 == 1.0, true != 1
            if t is bool:
                v = json_key(v)
            elif t is dict or t is list:
                return False  # (an array or object in an enum: the general path's call)
            for allowed in keys:
                if v not in allowed:
                    return False
        return True

    return test


def _bounds(schema: Mapping[str, Any]) -> list[tuple[Callable[[Any, Any], bool], float]]:
    """``minimum`` / ``maximum`` / ``exclusive*``, read as the compiler reads them (the
    draft-04 boolean ``exclusiveMinimum`` makes ``minimum`` strict)."""
    found: list[tuple[Callable[[Any, Any], bool], float]] = []
    for bound, exclusive, op in (
        ("minimum", "exclusiveMinimum", ">="),
        ("maximum", "exclusiveMaximum", "<="),
    ):
        strict = schema.get(exclusive) is True
        if bound in schema:
            found.append((_COMPARE[op[0] if strict else op], schema[bound]))
        if exclusive in schema and not isinstance(schema[exclusive], bool):
            found.append((_COMPARE[op[0]], schema[exclusive]))
    return found
