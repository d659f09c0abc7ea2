"""The bounded JSON Schema validator: agreement with the ``jsonschema`` package, messages and
paths, local-only ``$ref``, the step and depth bounds, and the official MCP schemas."""

from __future__ import annotations

import collections
import enum
import inspect
import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema.validators import validator_for

from mcpkit.exceptions import LocalProtocolError
from mcpkit.protocol._jsonschema import (
    SchemaError,
    SchemaValidationError,
    SchemaValidator,
    compile_schema,
)

SPEC = Path(__file__).parent / "fixtures" / "spec"
EXAMPLES = SPEC / "2026-07-28" / "examples"
D7 = "http://json-schema.org/draft-07/schema#"
D2020 = "https://json-schema.org/draft/2020-12/schema"
STEP_BUDGET = "schema validation exceeded its step budget"
DEPTH_LIMIT = "schema validation exceeded its depth limit"

# The conformance tool schema: $defs, $ref and additionalProperties false.
CONFORMANCE_TOOL: dict[str, Any] = {
    "$schema": D2020,
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}
TREE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "value": {"type": "integer"},
        "children": {"type": "array", "items": {"$ref": "#"}},
    },
    "additionalProperties": False,
}


def theirs(schema: Any) -> Any:
    """The reference validator for the schema's dialect (2020-12 unless ``$schema`` says)."""
    cls = validator_for(schema, default=jsonschema.Draft202012Validator)
    assert cls in (jsonschema.Draft202012Validator, jsonschema.Draft7Validator)
    return cls(schema)


def case(name: str, schema: Any, valid: list[Any], invalid: list[Any]) -> list[Any]:
    return [
        *(pytest.param(schema, inst, True, id=f"{name}-valid{i}") for i, inst in enumerate(valid)),
        *(
            pytest.param(schema, inst, False, id=f"{name}-invalid{i}")
            for i, inst in enumerate(invalid)
        ),
    ]


# fmt: off
DIFFERENTIAL: list[Any] = [
    # type
    *case("integer", {"type": "integer"}, [1, 1.0, -(2**70)], [1.5, True, "1", None]),
    *case("number", {"type": "number"}, [2.5, 0, 10**30], [True, "2"]),
    *case("string|null", {"type": ["string", "null"]}, ["a", None], [0, [], {}]),
    *case("object", {"type": "object"}, [{}], [[], "x"]),
    *case("array", {"type": "array"}, [[], [1]], [{}, "[]"]),
    *case("boolean", {"type": "boolean"}, [True, False], [0, "true"]),
    # enum and const: JSON equality
    *case("enum scalars", {"enum": [1, "a", None]}, [1, 1.0, "a", None], [True, "b", 2]),
    *case("enum containers", {"enum": [[1, 2], {"a": 1}]}, [[1, 2], {"a": 1.0}], [[2, 1], {"a": True}, 1]),
    *case("enum bools", {"enum": [True]}, [True], [1, 1.0]),
    *case("const false", {"const": False}, [False], [0, None]),
    *case("const nested", {"const": {"a": [1, {"b": None}]}}, [{"a": [1.0, {"b": None}]}], [{"a": [1, {"b": 0}]}]),
    *case("const number", {"const": 1}, [1, 1.0], [True, "1"]),
    # objects
    *case(
        "properties+required",
        {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name"]},
        [{"name": "a"}, {"name": "a", "age": 3, "other": None}],
        [{}, {"name": 1}, {"name": "a", "age": "3"}],
    ),
    *case(
        "additionalProperties false",
        {"properties": {"a": {}}, "additionalProperties": False},
        [{}, {"a": 1}, "not an object"],
        [{"b": 1}],
    ),
    *case("additionalProperties schema", {"additionalProperties": {"type": "integer"}}, [{"x": 1}], [{"x": "s"}]),
    *case(
        "patternProperties",
        {"patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": False},
        [{"x-a": "s"}, {}],
        [{"x-a": 1}, {"y": 1}],
    ),
    *case("propertyNames", {"propertyNames": {"maxLength": 3, "pattern": "^[a-z]+$"}}, [{"abc": 1}], [{"abcd": 1}, {"A": 1}]),
    *case("minProperties", {"minProperties": 1}, [{"a": 1}], [{}]),
    *case("maxProperties", {"maxProperties": 1}, [{"a": 1}], [{"a": 1, "b": 2}]),
    *case("dependentRequired", {"dependentRequired": {"a": ["b"]}}, [{"a": 1, "b": 2}, {"b": 1}, {}], [{"a": 1}]),
    *case("dependentSchemas", {"dependentSchemas": {"a": {"required": ["c"]}}}, [{"a": 1, "c": 1}, {}], [{"a": 1}]),
    *case(
        "draft-07 dependencies",
        {"$schema": D7, "dependencies": {"a": ["b"], "c": {"required": ["d"]}}},
        [{"a": 1, "b": 1}, {"c": 1, "d": 1}],
        [{"a": 1}, {"c": 1}],
    ),
    # arrays
    *case("items", {"items": {"type": "string"}}, [[], ["a", "b"]], [["a", 1]]),
    *case(
        "prefixItems+items false",
        {"prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False},
        [[1, "a"], [1], []],
        [[1, "a", 2], ["a"]],
    ),
    *case("prefixItems only", {"prefixItems": [{"type": "integer"}]}, [[1, "x", None], []], [["x"]]),
    *case("true subschemas", {"items": True, "additionalProperties": {}, "propertyNames": True}, [[1], {"a": 1}], []),
    *case("prefixItems+items schema", {"prefixItems": [{"type": "integer"}], "items": {"type": "string"}}, [[1, "a", "b"]], [[1, "a", 2]]),
    *case(
        "draft-07 tuple items",
        {"$schema": D7, "items": [{"type": "integer"}, {"type": "string"}], "additionalItems": False},
        [[1, "a"], [1]],
        [[1, "a", 3], ["a"]],
    ),
    *case(
        "draft-07 additionalItems schema",
        {"$schema": D7, "items": [{"type": "integer"}], "additionalItems": {"type": "string"}},
        [[1, "a"]],
        [[1, 2]],
    ),
    *case("draft-07 items schema", {"$schema": D7, "items": {"type": "integer"}, "additionalItems": False}, [[1, 2, 3]], [[1, "a"]]),
    *case("contains", {"contains": {"type": "integer"}}, [["a", 1], "not an array"], [["a"], []]),
    *case("minContains", {"contains": {"type": "integer"}, "minContains": 2}, [[1, "a", 2]], [[1, "a"]]),
    *case("maxContains", {"contains": {"type": "integer"}, "maxContains": 1}, [[1, "a"]], [[1, 2]]),
    *case("minContains 0", {"contains": {"type": "integer"}, "minContains": 0}, [[], ["a"]], []),
    *case("minItems", {"minItems": 2}, [[1, 2]], [[1]]),
    *case("maxItems", {"maxItems": 1}, [[1]], [[1, 2]]),
    *case(
        "uniqueItems",
        {"uniqueItems": True},
        [[1, True], [[1], [True]], [{"a": 1}, {"a": 2}], [0, False, None, "0"]],
        [[1, 1.0], [{"a": 1, "b": 2}, {"b": 2, "a": 1.0}], [[1, [2]], [1, [2]]]],
    ),
    # strings (lengths count code points)
    *case("minLength", {"minLength": 2}, ["日本", "ab", 5], ["é", ""]),
    *case("maxLength", {"maxLength": 1}, ["😀", ""], ["ab"]),
    *case("pattern anchored", {"pattern": "^[a-z]+$"}, ["abc", 1], ["abC", ""]),
    *case("pattern unanchored", {"pattern": "b"}, ["abc"], ["ac"]),
    *case("format is an annotation", {"format": "email"}, ["not an email"], []),
    # numbers
    *case("minimum", {"minimum": 0}, [0, 0.5, "x"], [-1, -0.5]),
    *case("exclusiveMinimum", {"exclusiveMinimum": 0}, [1, 0.001], [0]),
    *case("maximum", {"maximum": 10}, [10], [10.5]),
    *case("exclusiveMaximum", {"exclusiveMaximum": 10}, [9.99], [10]),
    *case("draft-07 exclusiveMinimum", {"$schema": D7, "exclusiveMinimum": 5}, [6], [5]),
    *case("multipleOf int", {"multipleOf": 3}, [9, 0, -3, 9.0], [10, 9.5]),
    *case("multipleOf float", {"multipleOf": 2.5}, [7.5, 5], [7]),
    *case("multipleOf half", {"multipleOf": 0.5}, [3, 1.5], [1.25]),
    # composition
    *case("allOf", {"allOf": [{"minimum": 1}, {"maximum": 5}]}, [3], [6, 0]),
    *case("anyOf", {"anyOf": [{"type": "string"}, {"type": "integer"}]}, ["a", 1], [1.5, None]),
    *case("oneOf", {"oneOf": [{"minimum": 0}, {"maximum": 10}]}, [-1, 11], [5]),
    *case("not", {"not": {"type": "string"}}, [1], ["a"]),
    *case(
        "if/then/else",
        {"if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["a"]}, "else": {"required": ["b"]}},
        [{"kind": "a", "a": 1}, {"kind": "x", "b": 1}],
        [{"kind": "a"}, {"kind": "x"}, {}],
    ),
    *case("if without then/else", {"if": {"type": "string"}}, ["a", 1], []),
    # $ref
    *case(
        "conformance tool",
        CONFORMANCE_TOOL,
        [{}, {"name": "n", "address": {"street": "s", "city": "c", "zip": 1}}],
        [{"name": 1}, {"address": {"street": 5}}, {"extra": 1}, []],
    ),
    *case("$ref with siblings", {"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "minLength": 2}, ["ab"], ["a", 1]),
    *case(
        "draft-07 $ref hides siblings",
        {"$schema": D7, "definitions": {"s": {"type": "string"}}, "$ref": "#/definitions/s", "minLength": 2},
        ["a"],
        [1],
    ),
    *case(
        "tree",
        TREE,
        [{"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}, {}]}],
        [{"children": [{"children": [{"value": "3"}]}]}, {"children": [{"extra": 1}]}],
    ),
    *case(
        "pointer escapes",
        {"$defs": {"a/b": {"type": "integer"}, "c~d": {"type": "string"}, "e f": {"type": "null"}},
         "properties": {"x": {"$ref": "#/$defs/a~1b"}, "y": {"$ref": "#/$defs/c~0d"}, "z": {"$ref": "#/$defs/e%20f"}}},
        [{"x": 1, "y": "s", "z": None}],
        [{"x": "1"}, {"y": 1}, {"z": 0}],
    ),
    *case("$anchor", {"$defs": {"n": {"$anchor": "num", "type": "number"}}, "properties": {"a": {"$ref": "#num"}}}, [{"a": 1}], [{"a": "x"}]),
    *case("$ref into an array", {"$defs": {"w": {"anyOf": [{"type": "integer"}]}}, "properties": {"a": {"$ref": "#/$defs/w/anyOf/0"}}}, [{"a": 1}], [{"a": 1.5}]),
    *case(
        "definitions + $id",
        {"$id": "https://example.com/tool.json", "definitions": {"p": {"type": "integer"}},
         "properties": {"a": {"$ref": "#/definitions/p"}, "b": {"$ref": "https://example.com/tool.json#/definitions/p"}}},
        [{"a": 1, "b": 2}],
        [{"a": "1"}, {"b": "2"}],
    ),
    # boolean schemas and annotations
    *case("true", True, [1, None, {"a": [1]}], []),
    *case("false", False, [], [1, None, {}]),
    *case("false property", {"properties": {"a": False}}, [{"b": 1}], [{"a": 1}]),
    *case(
        "annotations ignored",
        {"title": "t", "description": "d", "default": 1, "examples": [1], "deprecated": True,
         "readOnly": True, "writeOnly": False, "$comment": "c", "x-vendor": {"type": "string"},
         "unknownKeyword": {"type": "string"}, "contentMediaType": "text/plain"},
        [5, "s"],
        [],
    ),
]
# fmt: on


def test_the_differential_table_is_large() -> None:
    assert len(DIFFERENTIAL) >= 60


@pytest.mark.parametrize(("schema", "instance", "valid"), DIFFERENTIAL)
def test_agrees_with_jsonschema(schema: Any, instance: Any, valid: bool) -> None:
    errors = compile_schema(schema).errors(instance)
    assert theirs(schema).is_valid(instance) is valid, "the table itself is wrong"
    assert (not errors) is valid, errors
    assert compile_schema(schema).is_valid(instance) is valid
    assert all(isinstance(e, SchemaError) and e.message for e in errors)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 12)
    | st.sampled_from([0.0, 1.0, 2.5, -1.5, 1e30])
    | st.sampled_from(["", "a", "ab", "abc", "x-1", "日本", "A1"]),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["a", "b", "c", "name", "x-a", "Z"]), children, max_size=4
        )
    ),
    max_leaves=12,
)
PROPERTY_SCHEMAS: list[Any] = [
    CONFORMANCE_TOOL,
    TREE,
    {"type": "object", "properties": {"a": {"type": "integer", "minimum": 0}, "b": {"enum": ["a", 1, None]}},
     "required": ["a"], "patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": {"type": "array"}},
    {"anyOf": [{"type": "string", "minLength": 2}, {"type": "array", "uniqueItems": True, "maxItems": 3}, {"const": {"a": 1}}]},
    {"oneOf": [{"type": "number"}, {"type": "integer"}, {"type": "array", "contains": {"type": "null"}}]},
    {"$schema": D7, "items": [{"type": "integer"}, {}], "additionalItems": {"type": "string"}, "minItems": 1},
    {"prefixItems": [{"type": "integer"}], "items": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}}},
    {"if": {"type": "object", "required": ["a"]}, "then": {"dependentRequired": {"a": ["b"]}},
     "else": {"not": {"type": "object", "minProperties": 2}}},
]  # fmt: skip


@pytest.mark.parametrize("schema", PROPERTY_SCHEMAS)
@given(instance=json_values)
@settings(max_examples=150, deadline=None)
def test_random_instances_agree_with_jsonschema(schema: Any, instance: Any) -> None:
    ours = compile_schema(schema)
    errors = ours.errors(instance)
    assert (not errors) is theirs(schema).is_valid(instance), errors
    assert ours.is_valid(instance) is (not errors)


# -- messages and paths ---------------------------------------------------------------------

PERSON: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "age": {"type": "integer"},
        "size": {"type": "number", "maximum": 100},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string", "pattern": "^[A-Z]"}},
            "required": ["street"],
            "additionalProperties": False,
        },
        "kind": {"enum": ["a", "b"]},
        "nick": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
    "required": ["name"],
}


@pytest.mark.parametrize(
    ("instance", "expected"),
    [
        pytest.param({"name": "n", "age": "x"}, [("/age", "type", "'age' must be an integer, got a string")], id="type"),
        pytest.param({}, [("", "required", "missing required property 'name'")], id="required"),
        pytest.param({"name": "n", "size": 500}, [("/size", "maximum", "'size' must be <= 100, got 500")], id="maximum"),
        pytest.param({"name": ""}, [("/name", "minLength", "'name' must have at least 1 character, got 0")], id="minLength"),
        pytest.param({"name": "n", "address": {"street": 5}}, [("/address/street", "type", "'address.street' must be a string, got an integer")], id="nested"),
        pytest.param({"name": "n", "address": {"street": "low"}}, [("/address/street", "pattern", "'address.street' must match the pattern '^[A-Z]'")], id="pattern"),
        pytest.param({"name": "n", "address": {}}, [("/address", "required", "missing required property 'address.street'")], id="nested required"),
        pytest.param({"name": "n", "address": {"street": "S", "zip": 1}}, [("/address/zip", "additionalProperties", "unexpected property 'address.zip'")], id="additional"),
        pytest.param({"name": "n", "tags": ["a", "b", 3]}, [("/tags/2", "type", "'tags[2]' must be a string, got an integer")], id="array item"),
        pytest.param({"name": "n", "tags": ["a", "a"]}, [("/tags", "uniqueItems", "'tags' must not contain duplicates (items 0 and 1)")], id="unique"),
        pytest.param({"name": "n", "kind": "c"}, [("/kind", "enum", "'kind' must be one of 'a', 'b', got 'c'")], id="enum"),
        pytest.param({"name": "n", "nick": 1}, [("/nick", "anyOf", "'nick' must be a string or null, got an integer")], id="optional"),
        pytest.param({"name": True, "age": 1.5, "size": None}, [
            ("/name", "type", "'name' must be a string, got a boolean"),
            ("/age", "type", "'age' must be an integer, got a number"),
            ("/size", "type", "'size' must be a number, got null"),
        ], id="several"),
        pytest.param([], [("", "type", "the value must be an object, got an array")], id="root"),
    ],
)  # fmt: skip
def test_messages_and_paths(instance: Any, expected: list[tuple[str, str, str]]) -> None:
    errors = compile_schema(PERSON).errors(instance)
    assert [(e.pointer, e.keyword, e.message) for e in errors] == expected


@pytest.mark.parametrize(
    ("schema", "instance", "message"),
    [
        ({"const": 5}, 6, "the value must be 5, got 6"),
        ({"exclusiveMinimum": 0}, 0, "the value must be > 0, got 0"),
        ({"multipleOf": 3}, 7, "the value must be a multiple of 3, got 7"),
        ({"maxItems": 1}, [1, 2], "the value must have at most 1 item, got 2"),
        ({"minProperties": 2}, {}, "the value must have at least 2 properties, got 0"),
        ({"contains": {"type": "integer"}}, ["a"], "the value must contain at least 1 matching item, got 0"),
        ({"prefixItems": [{}], "items": False}, [1, 2], "the value must have at most 1 item, got 2"),
        ({"not": {"type": "string"}}, "s", "the value must not match the 'not' schema"),
        ({"properties": {"a": False}}, {"a": 1}, "'a' is not allowed here"),
        ({"dependentRequired": {"a": ["b"]}}, {"a": 1}, "missing required property 'b' (required when 'a' is present)"),
        ({"propertyNames": {"maxLength": 1}}, {"ab": 1}, "invalid property name 'ab'"),
        ({"oneOf": [{}, {}]}, 1, "the value must match exactly one oneOf alternative, but matches alternatives 0 and 1"),
        ({"anyOf": [{"minimum": 5}, {"type": "string"}]}, 1, "the value matches none of the anyOf alternatives: the value must be >= 5, got 1; the value must be a string, got an integer"),
        ({"type": "string"}, {1, 2}, "the value must be a string, got a set (not JSON)"),
    ],
)  # fmt: skip
def test_keyword_messages(schema: Any, instance: Any, message: str) -> None:
    errors = compile_schema(schema).errors(instance)
    assert [e.message for e in errors] == [message]


def test_pointer_escapes_and_limit() -> None:
    assert SchemaError(("a/b", "c~d", 0), "m", "type").pointer == "/a~1b/c~0d/0"
    assert SchemaError((), "m", "type").pointer == ""
    validator = compile_schema({"additionalProperties": False})
    instance = {f"k{i}": i for i in range(30)}
    assert len(validator.errors(instance)) == 10
    assert len(validator.errors(instance, limit=3)) == 3
    assert len(validator.errors(instance, limit=100)) == 30
    with pytest.raises(LocalProtocolError):
        validator.errors(instance, limit=0)


def test_validate_raises_with_the_errors() -> None:
    validator = compile_schema(PERSON)
    validator.validate({"name": "n"})
    with pytest.raises(SchemaValidationError) as caught:
        validator.validate({"age": "x"})
    assert isinstance(caught.value, ValueError)
    assert [e.keyword for e in caught.value.errors] == ["type", "required"]
    assert str(caught.value) == "'age' must be an integer, got a string (and 1 more)"
    assert str(SchemaValidationError([])) == "the value does not match its schema"
    with pytest.raises(SchemaValidationError, match="step budget"):
        compile_schema({"items": {"type": "integer"}}, max_steps=3).validate([1, 2, 3])


# -- JSON semantics and odd instances -------------------------------------------------------


class Color(enum.IntEnum):
    RED = 1


@pytest.mark.parametrize(
    ("schema", "instance", "valid"),
    [
        ({"type": "array", "items": {"type": "integer"}}, (1, 2), True),
        ({"type": "integer", "enum": [1]}, Color.RED, True),
        ({"type": "object", "required": ["a"]}, collections.OrderedDict(a=1), True),
        ({"properties": {"a": {"type": "integer"}}}, collections.OrderedDict(a="1"), False),
        ({"type": "integer"}, type("F", (float,), {})(2.0), True),
        ({"properties": {"a": {}}}, object(), True),
        ({"type": ["integer", "string"], "not": {"const": 1}}, object(), False),
        ({"multipleOf": 0.5}, float("inf"), False),
        ({"minLength": 2.0}, "ab", True),
        ({"type": "object"}, object(), False),
        ({"enum": [[1]]}, {1}, False),
        ({"patternProperties": {"^a": {"type": "string"}}}, {1: 1, "a": "s"}, True),
        ({"propertyNames": {"type": "string"}}, {1: 1}, False),
        ({"uniqueItems": True}, [{"a": [1, {"b": 2}]}, {"a": [1, {"b": 2.0}]}], False),
        # A float stands for its decimal: unlike jsonschema, 0.3 is a multiple of 0.1.
        ({"multipleOf": 0.1}, 0.3, True),
        ({"multipleOf": 0.01}, 19.99, True),
        ({"multipleOf": 0.1}, 0.35, False),
        ({"multipleOf": 1e-308}, 1e308, True),
    ],
)  # fmt: skip
def test_json_semantics(schema: Any, instance: Any, valid: bool) -> None:
    validator = compile_schema(schema)
    assert (not validator.errors(instance)) is valid
    assert validator.is_valid(instance) is valid


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ("email", ["a@b.c", "x+y@localhost"], ["ab.c", "a@", "a b@c.d"]),
        ("uri", ["https://example.com/a?b#c", "urn:isbn:123"], ["example.com", "http://a b", ""]),
        ("date", ["2024-02-29", "2023-12-31"], ["2023-02-29", "2024-13-01", "2024-1-01", "٢٠٢٤-01-01"]),
        ("date-time", ["2024-01-01T10:00:00Z", "2024-01-01t23:59:60.5+05:30"], ["2024-01-01T24:00:00Z", "2024-01-01T10:00:00", "2024-02-30T10:00:00Z"]),
        ("uuid", ["123e4567-e89b-12d3-a456-426614174000"], ["123e4567e89b12d3a456426614174000", "g23e4567-e89b-12d3-a456-426614174000"]),
    ],
)  # fmt: skip
def test_formats(fmt: str, good: list[str], bad: list[str]) -> None:
    checked = compile_schema({"format": fmt}, check_formats=True)
    assert all(checked.is_valid(value) for value in good)
    for value in bad:
        assert [e.keyword for e in checked.errors(value)] == ["format"], value
        assert compile_schema({"format": fmt}).is_valid(value)  # an annotation by default
    assert checked.is_valid(5)  # formats apply to strings only
    assert compile_schema({"format": "hostname"}, check_formats=True).is_valid("not a host!")


# -- $ref: local only -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "ref",
    [
        "http://example.com/schema.json",
        "https://example.com/schema.json#/$defs/a",
        "file:///etc/passwd",
        "urn:example:schema",
        "other.json",
        "other.json#/$defs/a",
        "//evil.example/schema.json",
        "https://json-schema.org/draft/2020-12/schema",
    ],
)
def test_remote_ref_is_rejected(ref: str) -> None:
    with pytest.raises(LocalProtocolError, match=r"remote \$ref not allowed"):
        compile_schema({"properties": {"a": {"$ref": ref}}})
    with pytest.raises(LocalProtocolError, match=r"remote \$ref not allowed"):
        compile_schema({"$id": "https://example.com/root.json", "$ref": ref})


def test_refs_inside_the_document_resolve() -> None:
    embedded = {
        "$id": "https://example.com/root.json",
        "$defs": {
            "inner": {
                "$id": "inner.json",
                "$defs": {"leaf": {"type": "integer"}},
                "properties": {"x": {"$ref": "#/$defs/leaf"}},
            },
            "named": {"$id": "#named", "type": "string"},
        },
        "properties": {
            "a": {"$ref": "inner.json"},
            "b": {"$ref": "https://example.com/inner.json#/$defs/leaf"},
            "c": {"$ref": "#"},
        },
    }
    validator = compile_schema(embedded)
    assert validator.is_valid({"a": {"x": 1}, "b": 2, "c": {"b": 3}})
    assert not validator.is_valid({"a": {"x": "1"}})
    assert not validator.is_valid({"c": {"b": "3"}})
    draft07 = compile_schema(
        {"$schema": D7, "definitions": {"s": {"$id": "#s", "type": "string"}}, "$ref": "#s"}
    )
    assert draft07.is_valid("x")
    assert not draft07.is_valid(1)
    assert compile_schema(
        {
            "$id": "urn:example:root",
            "properties": {"a": {"$ref": "urn:example:root"}},
            "type": "object",
        }
    ).is_valid({"a": {}})


def test_ref_chains_and_self_reference() -> None:
    chain = {
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/c"}, "c": {"type": "null"}},
        "$ref": "#/$defs/a",
    }
    assert compile_schema(chain).is_valid(None)
    assert not compile_schema(chain).is_valid(0)
    with pytest.raises(LocalProtocolError, match=r"\$ref cycle"):
        compile_schema({"$ref": "#"})
    with pytest.raises(LocalProtocolError, match=r"\$ref cycle"):
        compile_schema(
            {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}
        )


# -- compile-time errors --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "match"),
    [
        ({"$schema": "http://json-schema.org/draft-04/schema#"}, "unsupported \\$schema dialect"),
        ({"$schema": "https://example.com/my-dialect"}, "unsupported \\$schema dialect"),
        ({"$schema": 7}, "unsupported \\$schema dialect"),
        ([], "must be an object or a boolean"),
        ("schema", "must be an object or a boolean"),
        ({"properties": {"a": 1}}, "must be an object or a boolean"),
        ({"required": 5}, "'required' must be an array of strings"),
        ({"required": [1]}, "'required' must be an array of strings"),
        ({"type": "text"}, "'type' must be a type name"),
        ({"type": [["string"]]}, "'type' must be a type name"),
        ({"enum": "a"}, "'enum' must be an array"),
        ({"minimum": "1"}, "'minimum' must be a number"),
        ({"maximum": True}, "'maximum' must be a number"),
        ({"multipleOf": float("inf")}, "'multipleOf' must be a number"),
        ({"minimum": float("nan")}, "'minimum' must be a number"),
        ({"multipleOf": 0}, "'multipleOf' must be greater than 0"),
        ({"minLength": -1}, "'minLength' must be a non-negative integer"),
        ({"maxItems": 1.5}, "'maxItems' must be a non-negative integer"),
        ({"minContains": "1", "contains": {}}, "'minContains' must be a non-negative integer"),
        ({"uniqueItems": 1}, "'uniqueItems' must be a boolean"),
        ({"pattern": "("}, "invalid pattern"),
        ({"pattern": "a" * 1001}, "at most 1000 chars"),
        ({"patternProperties": {"(": {}}}, "invalid pattern"),
        ({"format": 5}, "'format' must be a string"),
        ({"properties": []}, "'properties' must be an object of schemas"),
        ({"allOf": []}, "'allOf' must be a non-empty array"),
        ({"anyOf": {}}, "'anyOf' must be a non-empty array"),
        ({"prefixItems": [{}], "items": [{}]}, "'items' must be a schema"),
        ({"dependentRequired": []}, "'dependentRequired' must be an object"),
        ({"dependentRequired": {"a": "b"}}, "'dependentRequired' must be an array of strings"),
        ({"$ref": 5}, "'\\$ref' must be a string"),
        ({"$id": 5}, "'\\$id' must be a string"),
        ({"$anchor": 5}, "'\\$anchor' must be a string"),
        ({"$ref": "#/$defs/missing"}, "unresolvable \\$ref"),
        ({"$ref": "#nowhere"}, "unresolvable \\$ref"),
        ({"items": [{}], "properties": {"a": {"$ref": "#/items/1"}}}, "unresolvable \\$ref"),
        ({"unevaluatedProperties": False}, "'unevaluatedProperties' is not supported"),
        ({"unevaluatedItems": False}, "'unevaluatedItems' is not supported"),
        ({"$dynamicRef": "#meta"}, "'\\$dynamicRef' is not supported"),
        ({"$recursiveRef": "#"}, "'\\$recursiveRef' is not supported"),
        ({"$defs": {"bad": {"minimum": "x"}}}, "at #/\\$defs/bad: 'minimum' must be a number"),
        ({"const": json.loads("[" * 150 + "]" * 150)}, "nests too deeply"),
    ],
)
def test_bad_schemas_raise(schema: Any, match: str) -> None:
    with pytest.raises(LocalProtocolError, match=match):
        compile_schema(schema)


def test_deeply_nested_schema_is_refused_not_a_recursion_error() -> None:
    schema: dict[str, Any] = {}
    for _ in range(5000):
        schema = {"not": schema}
    with pytest.raises(LocalProtocolError, match="nests deeper than 128"):
        compile_schema(schema)
    cyclic: dict[str, Any] = {}
    cyclic["items"] = cyclic  # only a Python caller can build this
    with pytest.raises(LocalProtocolError, match="nests deeper"):
        compile_schema(cyclic)


@pytest.mark.parametrize(("max_depth", "max_steps"), [(0, 10), (257, 10), (10, 0)])
def test_limits_out_of_range(max_depth: int, max_steps: int) -> None:
    with pytest.raises(LocalProtocolError):
        compile_schema({}, max_depth=max_depth, max_steps=max_steps)


@pytest.mark.parametrize(
    "uri",
    [
        None,
        D2020,
        D2020 + "#",
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-07/schema",
        "https://json-schema.org/draft-07/schema#",
        "https://json-schema.org/draft/2019-09/schema",
    ],
)
def test_accepted_dialects(uri: str | None) -> None:
    schema: dict[str, Any] = {"type": "object", "required": ["a"]}
    if uri is not None:
        schema["$schema"] = uri
    validator = compile_schema(schema)
    assert isinstance(validator, SchemaValidator)
    assert validator.is_valid({"a": 1})
    assert not validator.is_valid({})


# -- bounds ---------------------------------------------------------------------------------


def tree(levels: int) -> dict[str, Any]:
    """A tree ``levels`` deep: 2 * levels + 1 nested objects and arrays."""
    node: dict[str, Any] = {"value": 0}
    for _ in range(levels):
        node = {"value": 1, "children": [node]}
    return node


def test_recursive_ref_validates_up_to_max_depth_and_reports_beyond() -> None:
    validator = compile_schema(TREE, max_depth=64)
    assert validator.errors(tree(31)) == []  # 63 nested values
    errors = validator.errors(tree(32))  # 65 nested values
    assert [(e.keyword, e.message) for e in errors] == [("$limit", DEPTH_LIMIT)]
    assert len(errors[0].path) == 64
    assert not validator.is_valid(tree(32))
    deep = compile_schema(TREE, max_depth=256)
    assert deep.errors(tree(127)) == []
    assert [e.keyword for e in deep.errors(tree(5000))] == ["$limit"]
    bad = tree(20)
    bad["children"][0]["value"] = "x"
    assert [e.pointer for e in deep.errors(bad)] == ["/children/0/value"]


def test_in_place_recursion_is_bounded() -> None:
    # Each level applies the same schema to the same instance: only the depth limit stops it.
    for schema in ({"anyOf": [{"$ref": "#"}]}, {"allOf": [{"$ref": "#"}]}, {"not": {"$ref": "#"}}):
        validator = compile_schema(schema, max_depth=256)
        assert [e.message for e in validator.errors(1)] == [DEPTH_LIMIT]
        assert validator.is_valid(1) is False


def test_pathological_composition_stops_at_the_step_budget() -> None:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(30):  # 2**30 applications without a budget
        schema = {"anyOf": [schema, {"allOf": [schema, {"type": "integer"}]}]}
    validator = compile_schema(schema, max_depth=256)
    instance = ["x"] * 1000
    errors = validator.errors(instance)
    assert errors[-1] == SchemaError((), STEP_BUDGET, "$limit")
    assert validator.is_valid(instance) is False
    small = compile_schema(schema, max_depth=256, max_steps=500)
    assert [e.keyword for e in small.errors("x")] == ["$limit"]


@given(instance=json_values)
@settings(max_examples=100, deadline=None)
def test_bounds_hold_for_any_instance(instance: Any) -> None:
    schema: dict[str, Any] = {"items": {"$ref": "#"}, "additionalProperties": {"$ref": "#"}}
    for _ in range(12):
        schema = {"oneOf": [schema, {"not": schema}], "$defs": {}}
    validator = compile_schema(schema, max_steps=2_000)
    errors = validator.errors(instance)
    assert len(errors) <= 10
    assert validator.is_valid(instance) is (not errors)


@pytest.mark.parametrize("inner", [True, False, {"type": "integer"}, {"not": False}])
def test_every_kind_of_node_spends_a_step(inner: Any) -> None:
    # The allOf node spends the only step, so the inner node finds the budget empty.
    errors = compile_schema({"allOf": [inner]}, max_steps=1).errors(1)
    assert errors == [SchemaError((), STEP_BUDGET, "$limit")]
    assert "$limit" not in [
        e.keyword for e in compile_schema({"allOf": [inner]}, max_steps=3).errors(1)
    ]


def test_unique_items_and_values_count_against_the_bounds() -> None:
    assert compile_schema({"uniqueItems": True}, max_steps=100).errors(list(range(1000))) == [
        SchemaError((), STEP_BUDGET, "$limit")
    ]
    deep: Any = []
    for _ in range(200):
        deep = [deep]
    for schema in ({"uniqueItems": True}, {"enum": [[1, 2]]}, {"const": [1, 2]}):
        assert [e.message for e in compile_schema(schema).errors([deep, 1])] == [DEPTH_LIMIT]


def test_a_nearly_full_stack_is_reported_not_raised() -> None:
    validator = compile_schema(TREE, max_depth=256)
    instance = tree(120)  # needs several hundred frames

    def dive(levels: int) -> tuple[list[SchemaError], bool]:
        if levels:
            return dive(levels - 1)
        return validator.errors(instance), validator.is_valid(instance)

    room = sys.getrecursionlimit() - len(inspect.stack(0)) - 40
    errors, valid = dive(room)
    assert errors == [SchemaError((), DEPTH_LIMIT, "$limit")]  # RecursionError, caught
    assert valid is False
    assert validator.errors(instance) == []


# -- the official MCP schemas ---------------------------------------------------------------


def test_conformance_tool_schema() -> None:
    validator = compile_schema(CONFORMANCE_TOOL)
    validator.validate({"name": "Ada", "address": {"street": "Main St", "city": "Springfield"}})
    errors = validator.errors({"name": 1, "address": {"street": 5}, "phone": "x"})
    assert [(e.pointer, e.keyword) for e in errors] == [
        ("/name", "type"),
        ("/address/street", "type"),
        ("/phone", "additionalProperties"),
    ]


TOOLS = sorted((EXAMPLES / "Tool").glob("*.json"))


@pytest.mark.parametrize("path", TOOLS, ids=lambda p: p.stem)
def test_official_tool_schemas_compile(path: Path) -> None:
    tool = json.loads(path.read_text())
    for key in ("inputSchema", "outputSchema"):
        if key in tool:
            assert isinstance(compile_schema(tool[key]), SchemaValidator)


def test_there_are_official_tool_examples() -> None:
    assert len(TOOLS) >= 6


def requested_schemas() -> list[Any]:
    found: list[Any] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key in ("inputSchema", "outputSchema", "requestedSchema"):
                    found.append(item)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for path in sorted(EXAMPLES.rglob("*.json")):
        walk(json.loads(path.read_text()))
    return found


def test_every_schema_in_the_official_examples_compiles() -> None:
    schemas = requested_schemas()
    assert len(schemas) >= 15
    for schema in schemas:
        compile_schema(schema)


@pytest.mark.parametrize("revision", sorted(p.name for p in SPEC.iterdir() if p.is_dir()))
def test_the_mcp_schema_documents_compile(revision: str) -> None:
    compile_schema(json.loads((SPEC / revision / "schema.json").read_text()))


def mutations(document: Any) -> list[Any]:
    """The document with one top-level member removed or given a value of another type."""
    if not isinstance(document, dict):
        return []
    out: list[Any] = []
    for key, value in document.items():
        out.append({k: v for k, v in document.items() if k != key})
        out.append({**document, key: [] if not isinstance(value, list) else "x"})
    return out


def test_official_examples_agree_with_jsonschema_on_the_mcp_schema() -> None:
    schema = json.loads((SPEC / "2026-07-28" / "schema.json").read_text())
    folders = sorted(p for p in EXAMPLES.iterdir() if p.name in schema["$defs"])
    # One document validates every type: {"<type name>": <instance of that type>}.
    by_name = {**schema, "properties": {f.name: {"$ref": f"#/$defs/{f.name}"} for f in folders}}
    ours, reference = compile_schema(by_name), theirs(by_name)
    checked = 0
    for folder in folders:
        for path in sorted(folder.glob("*.json")):
            example = json.loads(path.read_text())
            assert ours.errors({folder.name: example}) == [], path
            for variant in mutations(example):
                wrapped = {folder.name: variant}
                assert ours.is_valid(wrapped) is reference.is_valid(wrapped), (path, variant)
                checked += 1
    assert checked > 300


# -- random schemas -------------------------------------------------------------------------

NAMES = st.sampled_from(["a", "b", "name", "x-a"])
TYPE_NAMES = st.sampled_from(["null", "boolean", "object", "array", "number", "string", "integer"])
SMALL_INTS = st.integers(-2, 3)
ASSERTIONS = st.one_of(
    st.fixed_dictionaries({"type": TYPE_NAMES | st.lists(TYPE_NAMES, min_size=1, max_size=3, unique=True)}),
    st.fixed_dictionaries({"enum": st.lists(json_values, min_size=1, max_size=3)}),
    st.fixed_dictionaries({"const": json_values}),
    *(st.fixed_dictionaries({k: SMALL_INTS}) for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")),
    st.fixed_dictionaries({"multipleOf": st.integers(1, 3) | st.sampled_from([0.5, 2.5])}),
    *(
        st.fixed_dictionaries({k: st.integers(0, 3)})
        for k in ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")
    ),
    st.fixed_dictionaries({"pattern": st.sampled_from(["^a", "b$", "^[a-z]*$", "[0-9]"])}),
    st.fixed_dictionaries({"required": st.lists(NAMES, max_size=2, unique=True)}),
    st.fixed_dictionaries({"uniqueItems": st.booleans()}),
    st.fixed_dictionaries({"dependentRequired": st.dictionaries(NAMES, st.lists(NAMES, max_size=2, unique=True), max_size=2)}),
)  # fmt: skip


def applicators(children: Any) -> Any:
    lists = st.lists(children, min_size=1, max_size=3)
    return st.one_of(
        st.fixed_dictionaries({"properties": st.dictionaries(NAMES, children, max_size=3)}),
        st.fixed_dictionaries({"patternProperties": st.dictionaries(st.sampled_from(["^a", "^x-"]), children, max_size=2)}),
        st.fixed_dictionaries({"additionalProperties": children}),
        st.fixed_dictionaries({"propertyNames": children}),
        st.fixed_dictionaries({"dependentSchemas": st.dictionaries(NAMES, children, max_size=2)}),
        st.fixed_dictionaries({"items": children}),
        st.fixed_dictionaries({"prefixItems": lists}),
        st.fixed_dictionaries({"contains": children}, optional={"minContains": st.integers(0, 2), "maxContains": st.integers(0, 2)}),
        *(st.fixed_dictionaries({k: lists}) for k in ("allOf", "anyOf", "oneOf")),
        st.fixed_dictionaries({"not": children}),
        st.fixed_dictionaries({"if": children}, optional={"then": children, "else": children}),
    )  # fmt: skip


def merged(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in parts:
        out.update(part)
    return out


random_schemas = st.recursive(
    st.booleans() | st.lists(ASSERTIONS, max_size=3).map(merged),
    lambda children: st.lists(applicators(children) | ASSERTIONS, min_size=1, max_size=3).map(
        merged
    ),
    max_leaves=8,
)


@given(schema=random_schemas, instance=json_values)
@settings(max_examples=400, deadline=None)
def test_random_schemas_agree_with_jsonschema(schema: Any, instance: Any) -> None:
    ours = compile_schema(schema)
    errors = ours.errors(instance)
    assert (not errors) is jsonschema.Draft202012Validator(schema).is_valid(instance), errors
    assert ours.is_valid(instance) is (not errors)
    assert all(e.message and e.keyword for e in errors)


def test_reporting_an_alternatives_error_gives_its_depth_back() -> None:
    # Each anyOf alternative's first error unwound from deep inside without returning the
    # depth it used: by the fourth, a 20-level instance "exceeded" the limit of 64.
    def nest(levels: int, leaf: Any) -> Any:
        for _ in range(levels):
            leaf = {"type": "object", "properties": {"a": leaf}}
        return leaf

    instance: Any = 1
    for _ in range(20):
        instance = {"a": instance}
    kinds = ["string", "boolean", "null", "array"]
    validator = compile_schema({"anyOf": [nest(20, {"type": kind}) for kind in kinds]})
    assert [error.keyword for error in validator.errors(instance)] == ["anyOf"]


def test_the_default_budget_takes_a_table_a_message_can_hold() -> None:
    # 40,000 rows (about 1 MiB of JSON): the old budget of 100,000 steps refused it.
    row = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}
    rows = [{"a": n, "b": "x" * 10} for n in range(40_000)]
    assert compile_schema({"type": "array", "items": row}).is_valid(rows)


def test_draft_07_ignores_an_id_beside_a_ref() -> None:
    # Draft-07: "All other properties in a $ref object MUST be ignored", its $id too (it
    # made the $ref resolve against a.json, where #/definitions/b does not exist).
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": "http://x/root.json",
        "definitions": {
            "b": {"type": "integer"},
            "a": {"$id": "a.json", "$ref": "#/definitions/b"},
        },
        "properties": {"p": {"$ref": "#/definitions/a"}},
    }
    validator = compile_schema(schema)
    assert validator.is_valid({"p": 1})
    assert not validator.is_valid({"p": "s"})


def test_enum_refuses_a_container_of_another_shape_without_reading_it() -> None:
    # An 11 MiB object checked against 20 small const objects cost 6 s: its key was
    # computed for each. One whose size matches none is refused at once; here its depth
    # (past the limit) shows that nothing of it was read.
    deep: Any = []
    for _ in range(200):
        deep = [deep]
    alternatives = [{"const": {"n": n}} for n in range(20)]
    errors = compile_schema({"anyOf": alternatives}).errors({"a": deep, "b": 1})
    assert DEPTH_LIMIT not in [e.message for e in errors]
    assert [e.keyword for e in errors] == ["anyOf"]
