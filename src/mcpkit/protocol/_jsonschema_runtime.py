"""The runtime of the JSON Schema validator: nodes, the validation context, JSON values.

:mod:`._jsonschema` reads a schema once and builds a graph of :class:`Node` objects whose
``fn`` closures run the checks of :mod:`._jsonschema_checks`; nothing looks at the raw
schema again. A check takes ``(instance, path, ctx)`` and returns whether the instance
passed; it reports an error only while ``ctx.collect`` is true, so composition keywords
probe subschemas without building messages. Every node application costs a step and every
nested one a level (MCP 2026-07-28, SEP-2106: composition must be bounded); running out
raises :class:`Exceeded`, which the validator reports as an error, so validation never
hangs and never reaches Python's recursion limit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

__all__ = [
    "DEPTH_MESSAGE",
    "STEP_MESSAGE",
    "Check",
    "Ctx",
    "Exceeded",
    "Full",
    "Node",
    "TooDeep",
    "Path",
    "accept",
    "enum_check",
    "field",
    "first_error",
    "json_key",
    "json_type",
    "key_or_exceeded",
    "kind",
    "make_node_fn",
    "parts",
    "probe",
    "reject",
    "run_all",
    "show",
]

# A location in the instance, linked from the leaf: ``(((), "tags"), 2)`` is /tags/2.
# Descending costs one 2-tuple; :func:`parts` flattens it only when an error is reported.
Path: TypeAlias = "tuple[Path, str | int] | tuple[()]"
STEP_MESSAGE = "schema validation exceeded its step budget"
DEPTH_MESSAGE = "schema validation exceeded its depth limit"
_NONE = type(None)
# Nesting allowed inside one value compared by const, enum or uniqueItems (two frames each).
_MAX_VALUE_DEPTH = 100


class Full(Exception):
    """The error list reached its limit: stop validating."""


class Exceeded(Exception):
    """The step budget or the depth limit ran out at ``path``."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


class TooDeep(Exception):
    """A value nests deeper than :data:`_MAX_VALUE_DEPTH`."""


class Ctx:
    """The state of one validation run."""

    __slots__ = ("collect", "depth_left", "errors", "limit", "steps_left")

    def __init__(self, limit: int, max_depth: int, max_steps: int, collect: bool) -> None:
        self.errors: list[tuple[Path, str, str]] = []
        self.limit = limit
        self.collect = collect
        self.steps_left = max_steps  # counting down keeps the hot path to one load and store
        self.depth_left = max_depth

    def add(self, path: Path, keyword: str, message: str) -> None:
        self.errors.append((path, keyword, message))
        if len(self.errors) >= self.limit:
            raise Full


Check: TypeAlias = Callable[[Any, Path, Ctx], bool]


def _unresolved(inst: Any, path: Path, ctx: Ctx) -> bool:
    raise RuntimeError("a $ref node was used before it was resolved")


class Node:
    """One compiled schema. A ``$ref`` alias has ``target`` set until it is resolved."""

    __slots__ = ("fn", "target")

    def __init__(self, fn: Check = _unresolved) -> None:
        self.fn = fn
        self.target: Node | None = None


# -- JSON values ----------------------------------------------------------------------------

_BASE: dict[type, type] = {
    dict: dict, list: list, tuple: list, str: str, int: int, float: float, bool: bool, _NONE: _NONE
}  # fmt: skip
_KIND = {
    dict: "an object", list: "an array", str: "a string", int: "an integer",
    float: "a number", bool: "a boolean", _NONE: "null",
}  # fmt: skip


def json_type(value: Any) -> type | None:
    """The JSON type of a value as a Python type (``list`` for tuples), ``None`` if not JSON."""
    base = _BASE.get(type(value))
    if base is not None:
        return base
    for candidate in (bool, int, float, str, dict, list, tuple):
        if isinstance(value, candidate):
            return list if candidate is tuple else candidate
    return None


def kind(value: Any) -> str:
    base = json_type(value)
    return _KIND[base] if base is not None else f"a {type(value).__name__} (not JSON)"


def parts(path: Path) -> tuple[str | int, ...]:
    """The keys and indexes of a linked path, outermost first."""
    found: list[str | int] = []
    while path:
        path, part = path
        found.append(part)
    return tuple(reversed(found))


def field(path: Path) -> str:
    """Name a location for a message: ``'address.street'``, ``'tags[2]'``, ``the value``."""
    if not path:
        return "the value"
    text = ""
    for part in parts(path):
        text += f"[{part}]" if type(part) is int else (f".{part}" if text else str(part))
    return f"'{text}'"


def show(value: Any) -> str:
    """A short rendering of a value for a message."""
    if value is True or value is False:
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:37] + "...")
    if isinstance(value, (int, float)):
        return repr(value)
    return kind(value)


_TRUE, _FALSE = object(), object()  # booleans are not numbers in JSON: True != 1


def json_key(value: Any, depth: int = 0) -> Any:
    """A hashable key equal for JSON-equal values (1 == 1.0, True != 1, key order ignored).

    Raises:
        TooDeep: the value nests deeper than the limit.
    """
    base = _BASE.get(type(value)) or json_type(value)
    if base is str or base is int or base is float or base is _NONE:
        return value
    if base is bool:
        return _TRUE if value else _FALSE
    if depth >= _MAX_VALUE_DEPTH:
        raise TooDeep
    if base is list:
        return ("[", tuple([json_key(item, depth + 1) for item in value]))
    if base is dict:
        return ("{", frozenset([(k, json_key(v, depth + 1)) for k, v in value.items()]))
    return ("?", id(value))  # not JSON: equal to nothing else


def key_or_exceeded(value: Any, path: Path) -> Any:
    try:
        return json_key(value)
    except TooDeep:
        raise Exceeded(path, DEPTH_MESSAGE) from None


# -- nodes ----------------------------------------------------------------------------------


def accept(inst: Any, path: Path, ctx: Ctx) -> bool:
    """The ``true`` schema (and ``{}``): everything is valid, for one step."""
    ctx.steps_left = left = ctx.steps_left - 1
    if left < 0:
        raise Exceeded(path, STEP_MESSAGE)
    return True


def reject(inst: Any, path: Path, ctx: Ctx) -> bool:
    """The ``false`` schema: nothing is valid."""
    ctx.steps_left = left = ctx.steps_left - 1
    if left < 0:
        raise Exceeded(path, STEP_MESSAGE)
    if ctx.collect:
        ctx.add(path, "false", f"{field(path)} is not allowed here")
    return False


def make_node_fn(
    types: Sequence[str] | None,
    generic: Sequence[Check],
    by_type: Mapping[type, Sequence[Check]],
    leaf: bool,
) -> Check:
    """A node checking ``type``, then ``generic`` checks and those for the instance's type.

    The checks are looked up by the instance's Python type, and where that type satisfies
    ``types`` the type check is left out. A leaf (no subschemas) cannot recurse, so it skips
    the depth bookkeeping.
    """
    first: tuple[Check, ...] = ()
    allowed: set[type] = set(_BASE)
    if types is not None:
        first, allowed = (type_check(types),), {t for n in types for t in _TYPE_PY[n]}
    table: dict[type | None, tuple[Check, ...]] = {
        t: (*(() if t in allowed else first), *generic, *by_type.get(_BASE[t], ())) for t in _BASE
    }
    fallback = (*first, *generic)
    if not fallback and not any(table.values()):
        return accept

    def leaf_fn(inst: Any, path: Path, ctx: Ctx) -> bool:
        ctx.steps_left = left = ctx.steps_left - 1
        if left < 0:
            raise Exceeded(path, STEP_MESSAGE)
        checks = table.get(type(inst))
        if checks is None:
            checks = table.get(json_type(inst), fallback)
        ok = True
        for check in checks:
            if not check(inst, path, ctx):
                ok = False
                if not ctx.collect:
                    break
        return ok

    def fn(inst: Any, path: Path, ctx: Ctx) -> bool:
        ctx.steps_left = left = ctx.steps_left - 1
        if left < 0:
            raise Exceeded(path, STEP_MESSAGE)
        room = ctx.depth_left
        if not room:
            raise Exceeded(path, DEPTH_MESSAGE)
        ctx.depth_left = room - 1
        checks = table.get(type(inst))
        if checks is None:
            checks = table.get(json_type(inst), fallback)
        ok = True
        for check in checks:
            if not check(inst, path, ctx):
                ok = False
                if not ctx.collect:
                    break
        ctx.depth_left = room
        return ok

    return leaf_fn if leaf else fn


def probe(node: Node, inst: Any, path: Path, ctx: Ctx) -> bool:
    """Whether ``inst`` is valid against ``node``, reporting nothing."""
    collect = ctx.collect
    ctx.collect = False
    ok = node.fn(inst, path, ctx)
    ctx.collect = collect
    return ok


def first_error(node: Node, inst: Any, path: Path, ctx: Ctx) -> tuple[Path, str, str]:
    """The first error ``node`` reports for ``inst`` (call only while collecting)."""
    errors, limit, depth = ctx.errors, ctx.limit, ctx.depth_left
    ctx.errors, ctx.limit = [], 1
    try:
        node.fn(inst, path, ctx)
    except Full:
        # Raised from deep inside: the frames it skipped did not give their depth back.
        ctx.depth_left = depth
    found, ctx.errors, ctx.limit = ctx.errors, errors, limit
    return found[0] if found else (path, "", f"{field(path)} is not valid")


def run_all(nodes: Sequence[Node], inst: Any, path: Path, ctx: Ctx) -> bool:
    ok = True
    for node in nodes:
        if not node.fn(inst, path, ctx):
            ok = False
            if not ctx.collect:
                return False
    return ok


# -- generic checks -------------------------------------------------------------------------

_TYPE_LABEL = {
    "null": "null", "boolean": "a boolean", "object": "an object", "array": "an array",
    "number": "a number", "string": "a string", "integer": "an integer",
}  # fmt: skip
_TYPE_PY: dict[str, tuple[type, ...]] = {
    "null": (_NONE,), "boolean": (bool,), "object": (dict,), "array": (list, tuple),
    "number": (int, float), "string": (str,), "integer": (int,),
}  # fmt: skip


def type_check(names: Sequence[str]) -> Check:
    """``type``, called by a node only for instances whose Python type is not plainly
    allowed: bool is never a number, and a float with zero fraction is an integer."""
    integral_floats = "integer" in names
    label = " or ".join(_TYPE_LABEL[name] for name in names) or "of no type at all"

    def check(inst: Any, path: Path, ctx: Ctx) -> bool:
        if integral_floats and json_type(inst) is float and inst.is_integer():
            return True
        if ctx.collect:
            ctx.add(path, "type", f"{field(path)} must be {label}, got {kind(inst)}")
        return False

    return check


def enum_check(values: Sequence[Any], keyword: str) -> Check:
    """``enum`` and ``const`` with JSON equality, through a set of :func:`json_key` keys."""
    keys = {json_key(value) for value in values}
    # The kind and size of each array or object allowed: an instance of another shape is
    # refused without computing its key (which costs as much as the instance is large).
    shapes = {(json_type(v), len(v)) for v in values if json_type(v) in (list, dict)}
    containers = bool(shapes)
    if keyword == "const":
        wanted = show(values[0])
    else:
        wanted = "one of " + ", ".join(show(v) for v in values[:10])
        wanted += ", ..." if len(values) > 10 else ""

    def check(inst: Any, path: Path, ctx: Ctx) -> bool:
        t = type(inst)
        if t is str or t is int or t is float or inst is None:
            if inst in keys:
                return True
        else:
            kind = json_type(inst)
            if kind not in (list, dict):
                if key_or_exceeded(inst, path) in keys:
                    return True
            elif containers and (kind, len(inst)) in shapes and key_or_exceeded(inst, path) in keys:
                return True
        if ctx.collect:
            ctx.add(path, keyword, f"{field(path)} must be {wanted}, got {show(inst)}")
        return False

    return check
