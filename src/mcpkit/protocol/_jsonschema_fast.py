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
_MISSING: Any = object()  # an absent member, and "this type is not allowed": in no entry

Test = Callable[[Any], bool]
# A value's allowed Python types (exact), each with a test of the keywords that apply to
# that type (``None``: the type is all there is to check).
Entry = dict[type, Test | None]
# A bound as (limit, strict): ``minimum`` 0 is (0, False), ``exclusiveMinimum`` 0 (0, True).
Bound = tuple[int | float, bool]


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
    entries: dict[str, Entry] = {}
    for name, sub in props.items():
        entry = _entry(sub, check_formats, per_array)
        if entry is None:
            return None
        entries[name] = entry
    return _object_check(entries, tuple(dict.fromkeys(required)), closed=not additional)


def _object_check(
    entries: dict[str, Entry], required: tuple[str, ...], closed: bool
) -> Callable[[Any], bool]:
    get = entries.get
    # A required member without a property schema: anything, unless none such may be there.
    other: Entry = {} if closed else dict.fromkeys(_ALL)
    wanted = tuple((name, entries.get(name, other)) for name in required)
    count = len(wanted)

    def check(inst: Any) -> bool:
        if type(inst) is not dict:
            return False
        if len(inst) == count:
            # As many members as are required: when each required one is there (an absent
            # one is _MISSING, of a type no entry has), they are all there is.
            for name, entry in wanted:
                value = inst.get(name, _MISSING)
                test = entry.get(type(value), _MISSING)
                if test is not None and (test is _MISSING or not test(value)):
                    return False
            return True
        for name in required:
            if name not in inst:
                return False
        for name, value in inst.items():
            tests = get(name)
            if tests is None:
                if closed:
                    return False
                continue
            test = tests.get(type(value), _MISSING)
            if test is not None and (test is _MISSING or not test(value)):
                return False
        return True

    return check


def _entry(schema: Any, check_formats: bool, per_array: int) -> Entry | None:
    """The Python types a property's value may have, each with a test of the keywords
    that apply to it, or ``None`` when the schema is not a plain value's."""
    if schema is True:
        return dict.fromkeys(_ALL)
    if not isinstance(schema, dict) or not _plain(schema, _VALUE):
        return None
    names = schema.get("type")
    kinds = _ALL
    if names is not None:
        names = [names] if isinstance(names, str) else names
        kinds = frozenset(t for n in names for t in _PY[n])
    # "integer" takes a float with a zero fraction (2020-12 validation 6.1.1), unless
    # "number" takes every float anyway.
    whole = names is not None and "integer" in names and "number" not in names
    keys: list[set[Any]] | None = None
    if "enum" in schema or "const" in schema:  # (each one must hold)
        keys = [{json_key(v) for v in schema["enum"]}] if "enum" in schema else []
        if "const" in schema:
            keys.append({json_key(schema["const"])})
        kinds -= {dict, list}  # an array or object compared: the general path's call
    fmt = schema.get("format")
    valid = FORMATS[fmt] if check_formats and fmt in FORMATS else None
    items: Entry | None = None
    if "items" in schema:
        if isinstance(schema["items"], dict) and "items" in schema["items"]:
            return None  # (nested arrays would need depth bookkeeping)
        items = _entry(schema["items"], check_formats, 0)
        if items is None:
            return None
    low, high = _bounds(schema)
    text = schema.get("minLength", 0), schema.get("maxLength")
    size = schema.get("minItems", 0), schema.get("maxItems")
    tests: Entry = {}
    for t in kinds:
        if t is str:
            tests[t] = _string_test(text, valid, keys)
        elif t is int or t is float:
            tests[t] = _number_test(whole and t is float, low, high, keys)
        elif t is list:
            tests[t] = _array_test(size, items, per_array)
        elif t is dict or keys is None:
            tests[t] = None
        else:  # true, false or null, in an enum or const
            tests[t] = _in_test(keys, json_key if t is bool else None)
    return tests


def _string_test(
    text: tuple[float, float | None],
    valid: Callable[[str], bool] | None,
    keys: list[set[Any]] | None,
) -> Test | None:
    shortest, longest = text
    if not shortest and longest is None and valid is None and keys is None:
        return None

    def test(v: str) -> bool:
        size = len(v)  # code points, as JSON Schema counts (2020-12 validation 6.3.1)
        if size < shortest or (longest is not None and size > longest):
            return False
        if valid is not None and not valid(v):
            return False
        if keys is not None:
            for choices in keys:
                if v not in choices:
                    return False
        return True

    return test


def _number_test(
    whole: bool, low: Bound | None, high: Bound | None, keys: list[set[Any]] | None
) -> Test | None:
    if not whole and low is None and high is None and keys is None:
        return None
    least, above = low if low is not None else (0, False)
    most, below = high if high is not None else (0, False)

    def test(v: float) -> bool:
        # Each comparison is written so that NaN fails it, as in the general path.
        if whole and not v.is_integer():
            return False
        if low is not None and not (v > least if above else v >= least):
            return False
        if high is not None and not (v < most if below else v <= most):
            return False
        if keys is not None:
            for choices in keys:
                if v not in choices:  # JSON equality: 1 == 1.0
                    return False
        return True

    return test


def _array_test(size: tuple[float, float | None], items: Entry | None, most: int) -> Test | None:
    fewest, longest = size
    if not fewest and longest is None and items is None:
        return None
    kinds: Entry = items if items is not None else {}

    def test(v: list[Any]) -> bool:
        count = len(v)
        if count < fewest or (longest is not None and count > longest):
            return False
        if items is not None:
            if count > most:  # the general path's steps could run out: its call
                return False
            for item in v:
                check = kinds.get(type(item), _MISSING)
                if check is not None and (check is _MISSING or not check(item)):
                    return False
        return True

    return test


def _in_test(keys: list[set[Any]], key: Callable[[Any], Any] | None) -> Test:
    def test(v: Any) -> bool:
        k = v if key is None else key(v)  # true != 1 in JSON
        return all(k in allowed for allowed in keys)

    return test


def _bounds(schema: Mapping[str, Any]) -> tuple[Bound | None, Bound | None]:
    """The tightest lower and upper bound from ``minimum`` / ``maximum`` / ``exclusive*``,
    read as the compiler reads them (the draft-04 boolean ``exclusiveMinimum`` makes
    ``minimum`` strict). A value within the tightest one is within all of them."""
    lows: list[Bound] = []
    highs: list[Bound] = []
    for bound, exclusive, found in (
        ("minimum", "exclusiveMinimum", lows),
        ("maximum", "exclusiveMaximum", highs),
    ):
        if bound in schema:
            found.append((schema[bound], schema.get(exclusive) is True))
        if exclusive in schema and not isinstance(schema[exclusive], bool):
            found.append((schema[exclusive], True))
    # (int and float compare exactly; on a tie the strict one is tighter)
    low = max(lows) if lows else None
    high = min(highs, key=lambda b: (b[0], not b[1])) if highs else None
    return low, high
