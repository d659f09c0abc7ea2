"""The shortcut for plain tool-argument schemas (``protocol/_jsonschema_fast.py``): which
schemas take it, and that it never changes a result of the general validator, bounds
included (random schemas and instances, then the edge cases one by one)."""

from __future__ import annotations

import enum
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.protocol._jsonschema import SchemaValidator, compile_schema
from mcpkit.protocol._jsonschema_compile import compile_document
from mcpkit.protocol._jsonschema_fast import fast_check

D7 = "http://json-schema.org/draft-07/schema#"
ECHO: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "Text to echo back."}},
    "required": ["text"],
    "additionalProperties": False,
}


class Text(str):
    pass


class Level(enum.IntEnum):
    LOW = 1


def general(schema: Any, **limits: Any) -> SchemaValidator:
    """The validator without the shortcut."""
    depth, steps = limits.get("max_depth", 64), limits.get("max_steps", 1_000_000)
    return SchemaValidator(
        compile_document(schema, limits.get("check_formats", False)), depth, steps
    )


def assert_same(schema: Any, instance: Any, **limits: Any) -> bool:
    ours = compile_schema(schema, **limits)
    valid = ours.is_valid(instance)
    assert valid is general(schema, **limits).is_valid(instance)
    assert valid is (not ours.errors(instance))
    return valid


# -- random schemas of the handled shape ----------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-3, 5)
    | st.sampled_from([0.0, 1.0, 2.5, -1.5, 1e30, float("inf"), float("nan")])
    | st.sampled_from(["", "a", "ab", "日本", "2024-02-30", "2024-02-29", "x@y", "A1"])
)
odd_values = st.sampled_from([Text("ab"), Level.LOW, ("a", "b"), (), b"ab", object()])
names = st.sampled_from(["a", "b", "c"])
values = st.recursive(
    scalars | odd_values,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(names, children),
    max_leaves=10,
)
type_names = st.sampled_from(["null", "boolean", "object", "array", "number", "string", "integer"])
numbers = st.integers(-2, 4) | st.sampled_from([0.5, 1.0, 2.5])


@st.composite
def value_schemas(draw: st.DrawFn, items: bool = True) -> Any:
    """A property's schema of the kind the shortcut handles."""
    if draw(st.integers(0, 9)) == 0:
        return True
    schema: dict[str, Any] = {}
    if draw(st.booleans()):
        schema["type"] = draw(type_names | st.lists(type_names, min_size=1, max_size=3))
    if draw(st.integers(0, 3)) == 0:
        schema["enum"] = draw(st.lists(scalars | st.just([1]), min_size=1, max_size=4))
    if draw(st.integers(0, 5)) == 0:
        schema["const"] = draw(scalars)
    for keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if draw(st.integers(0, 3)) == 0:
            value = draw(numbers | st.booleans()) if keyword[0] == "e" else draw(numbers)
            schema[keyword] = value
    for keyword in ("minLength", "maxLength", "minItems", "maxItems"):
        if draw(st.integers(0, 3)) == 0:
            schema[keyword] = draw(st.integers(0, 3))
    if draw(st.integers(0, 3)) == 0:
        schema["format"] = draw(st.sampled_from(["date", "email", "uuid", "color"]))
    if items and draw(st.integers(0, 3)) == 0:
        schema["items"] = draw(value_schemas(items=False))
    if draw(st.integers(0, 4)) == 0:
        schema[draw(st.sampled_from(["description", "title", "default", "x-mcp-header"]))] = "a"
    return schema


@st.composite
def object_schemas(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    if draw(st.integers(0, 5)) == 0:
        schema["$schema"] = D7
    props = draw(st.dictionaries(names, value_schemas(), max_size=3))
    empty = draw(st.booleans())  # "properties": {} or none
    if props or empty:
        schema["properties"] = props
    if draw(st.booleans()):
        schema["required"] = draw(st.lists(names, max_size=3))
    if draw(st.booleans()):
        schema["additionalProperties"] = draw(st.booleans())
    return schema


@given(
    schema=object_schemas(),
    instance=st.dictionaries(names | st.just("d"), values, max_size=4) | values,
    check_formats=st.booleans(),
    max_depth=st.integers(1, 3),
    max_steps=st.sampled_from([1, 2, 3, 4, 6, 1_000_000]),
)
@settings(max_examples=1500, deadline=None)
def test_the_shortcut_agrees_with_the_general_validator(
    schema: dict[str, Any], instance: Any, check_formats: bool, max_depth: int, max_steps: int
) -> None:
    limits = {"check_formats": check_formats, "max_depth": max_depth, "max_steps": max_steps}
    if max_steps == 1_000_000 and max_depth > 1:
        assert fast_check(schema, check_formats, max_depth, max_steps) is not None
    assert_same(schema, instance, **limits)


# -- which schemas take it ------------------------------------------------------------------

SHORTCUT = [
    ECHO,
    {"type": "object"},
    {"type": "object", "properties": {}, "additionalProperties": True},
    {"type": "object", "properties": {"a": True, "b": {}}, "$defs": {"x": {"type": "string"}}},
    {"type": "object", "properties": {"n": {"type": ["integer", "null"], "minimum": 0}}},
    {"type": "object", "properties": {"t": {"type": "array", "items": {"enum": ["a", "b"]}}}},
    {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A"}}},
    {"$schema": D7, "type": "object", "properties": {"a": {"const": 1}}, "title": "t"},
]
GENERAL_ONLY = [
    {"properties": {"a": {"type": "string"}}},  # no "type": "object"
    {"type": ["object"]},
    {"type": "object", "$ref": "#/$defs/a", "$defs": {"a": {}}},
    {"type": "object", "properties": {"a": {"$ref": "#"}}},
    {"type": "object", "properties": {"a": {"type": "string", "pattern": "^a"}}},
    {"type": "object", "properties": {"a": {"type": "number", "multipleOf": 2}}},
    {"type": "object", "properties": {"a": {"type": "object", "properties": {}}}},
    {"type": "object", "properties": {"a": {"type": "array", "items": {"items": {}}}}},
    {"type": "object", "properties": {"a": {"type": "array", "uniqueItems": True}}},
    {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}]}}},
    {"type": "object", "properties": {"a": {"unknownKeyword": 1}}},
    {"type": "object", "properties": {"a": False}},
    {"type": "object", "additionalProperties": {"type": "string"}},
    {"type": "object", "patternProperties": {"^a": {}}},
    {"type": "object", "minProperties": 1},
    {"type": "object", "$id": "https://example.com/s"},
]


@pytest.mark.parametrize("schema", SHORTCUT)
def test_plain_schemas_take_the_shortcut(schema: dict[str, Any]) -> None:
    assert fast_check(schema, False, 64, 1_000_000) is not None


@pytest.mark.parametrize("schema", GENERAL_ONLY)
def test_other_schemas_go_the_general_way(schema: dict[str, Any]) -> None:
    compile_schema(schema)  # (valid schemas, all of them)
    assert fast_check(schema, False, 64, 1_000_000) is None


def test_the_shortcut_is_taken_only_where_the_bounds_cannot_run_out() -> None:
    two = {"type": "object", "properties": {"a": {}, "b": {}}}
    assert fast_check(two, False, 64, 2) is None  # the object and both properties: 3 steps
    assert fast_check(two, False, 64, 3) is not None
    tags = {"type": "object", "properties": {"t": {"type": "array", "items": {"type": "string"}}}}
    assert fast_check(tags, False, 1, 1_000) is None  # the array is a level deeper
    assert fast_check(tags, False, 2, 1_000) is not None


# -- edge cases -----------------------------------------------------------------------------


def props(**schemas: Any) -> dict[str, Any]:
    return {"type": "object", "properties": schemas}


# fmt: off
EDGES: list[tuple[dict[str, Any], Any, bool]] = [
    (ECHO, {"text": "hello"}, True),
    (ECHO, {"text": Text("hello")}, True),  # a str subclass: the general path says
    (ECHO, {"text": 1}, False),
    (ECHO, {}, False),
    (ECHO, {"text": "a", "more": 1}, False),
    (ECHO, [("text", "a")], False),
    (props(a={"type": "integer"}), {"a": 1.0}, True),  # 2020-12: zero fraction
    (props(a={"type": "integer"}), {"a": 1.5}, False),
    (props(a={"type": "integer"}), {"a": True}, False),
    (props(a={"type": "integer"}), {"a": float("inf")}, False),
    (props(a={"type": "integer"}), {"a": Level.LOW}, True),
    (props(a={"type": ["integer", "number"]}), {"a": 1.5}, True),
    (props(a={"type": "number"}), {"a": False}, False),
    (props(a={"type": "number", "maximum": 3}), {"a": float("nan")}, False),
    (props(a={"type": "boolean"}), {"a": 0}, False),
    (props(a={"type": "null"}), {"a": None}, True),
    (props(a={"minimum": 2}), {"a": True}, True),  # bounds are for numbers only
    (props(a={"maximum": 2, "exclusiveMaximum": True}), {"a": 2}, False),  # draft-04 form
    (props(a={"maximum": 2, "exclusiveMaximum": False}), {"a": 2}, True),
    (props(a={"exclusiveMinimum": 0}), {"a": 0.0}, False),
    (props(a={"enum": [1, "x", None]}), {"a": 1.0}, True),  # JSON equality
    (props(a={"enum": [1]}), {"a": True}, False),
    (props(a={"enum": [True]}), {"a": 1}, False),
    (props(a={"enum": [[1], {"b": 2}]}), {"a": [1]}, True),
    (props(a={"enum": [[1], {"b": 2}]}), {"a": {"b": 2.0}}, True),
    (props(a={"const": "x", "enum": ["x", "y"]}), {"a": "y"}, False),
    (props(a={"type": "string", "maxLength": 2}), {"a": "日本"}, True),  # code points
    (props(a={"type": "string", "minLength": 3}), {"a": "日本"}, False),
    (props(a={"type": "array", "maxItems": 1}), {"a": ["x", "y"]}, False),
    (props(a={"type": "array", "items": {"type": "string"}}), {"a": ("x", 1)}, False),
    (props(a={"type": "array", "items": {"type": "string"}}), {"a": ("x", "y")}, True),
    (props(a={"type": "array", "items": {"type": "string"}}), {"a": [Text("x")]}, True),
    (props(a={"unknown": 1, "x-also": 2}), {"a": {"deep": [[[]]]}}, True),
    (props(a={"format": "date"}), {"a": "2024-02-30"}, True),  # an annotation by default
    (props(a={"minimum": 1, "exclusiveMinimum": 1.0}), {"a": 1}, False),  # ties: strict
    (props(a={"minimum": 1, "exclusiveMinimum": 0}), {"a": 1}, True),
    (props(a={"maximum": 2.5, "exclusiveMaximum": 3}), {"a": 2.75}, False),
    (props(a={"minimum": 0}), {"a": float("nan")}, False),
    (props(a={"type": "integer", "maximum": 9}), {"a": float("nan")}, False),
    (props(a={"minimum": 0, "maximum": 2**53 + 1}), {"a": 2**53 + 2}, False),  # exact
    (props(a={"enum": [True, None]}), {"a": None}, True),
    (props(a={"enum": [True, None]}), {"a": False}, False),
    (props(a={"type": "array", "items": {"minimum": 1}}), {"a": [1, "x", 0]}, False),
    (ECHO, {"other": "hello"}, False),  # as many members as required, the wrong one
    ({"type": "object", "required": ["a"]}, {"a": [[]]}, True),
    ({"type": "object", "required": ["a"], "additionalProperties": False}, {"a": 1}, False),
    ({**props(a={}), "additionalProperties": True}, {"b": 1}, True),
    ({**props(a={}), "additionalProperties": False}, {"b": 1}, False),
    ({**props(a={}), "additionalProperties": False}, {1: 1}, False),
]
# fmt: on


@pytest.mark.parametrize(("schema", "instance", "valid"), EDGES)
def test_edge_cases(schema: dict[str, Any], instance: Any, valid: bool) -> None:
    assert assert_same(schema, instance) is valid


def test_asserted_formats() -> None:
    schema = props(a={"type": "string", "format": "date"})
    assert fast_check(schema, True, 64, 1_000_000) is not None
    assert assert_same(schema, {"a": "2024-02-29"}, check_formats=True)
    assert not assert_same(schema, {"a": "2024-02-30"}, check_formats=True)


def test_the_bounds_hold_on_the_shortcut() -> None:
    two = {"type": "object", "properties": {"a": {}, "b": {}}}
    assert not assert_same(two, {"a": 1, "b": 2}, max_steps=2)  # 3 steps needed
    assert assert_same(two, {"a": 1, "b": 2}, max_steps=3)
    tags = {"type": "object", "properties": {"t": {"type": "array", "items": {"type": "string"}}}}
    assert not assert_same(tags, {"t": ["x"] * 10}, max_steps=10)  # 12 steps needed
    assert assert_same(tags, {"t": ["x"] * 10}, max_steps=12)
    assert not assert_same(tags, {"t": ["x"]}, max_depth=1)
