"""The signature layer: from a plain function to input/output schemas and validated arguments.

Every schema produced here is checked against the JSON Schema 2020-12 metaschema, with every
``$ref`` local and every ``$defs`` entry used; arguments ``bind`` accepts also validate
against the produced schema with ``jsonschema``.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import functools
import inspect
import subprocess
import sys
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple, Optional, TypedDict, Union

import msgspec
import pydantic
import pytest
from jsonschema import Draft202012Validator

from mcpkit.exceptions import LocalProtocolError, MCPError
from mcpkit.server._context import RequestContext
from mcpkit.server._docstrings import parse_docstring
from mcpkit.server._signature import (
    ArgumentError,
    FunctionSchema,
    ResultError,
    function_schema,
)
from mcpkit.types import CallToolResult, ContentBlock, ImageContent, TextContent

if TYPE_CHECKING:
    from mcpkit.server._signature import ParameterInfo

EMPTY = inspect.Parameter.empty
M = msgspec.Meta

# --- types the tests use (module level, so string annotations resolve) -----------------------


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Point(msgspec.Struct):
    """A point on the plane."""

    x: int
    y: int = 0


class Tree(msgspec.Struct):
    value: int
    children: list[Tree] = []


@dataclasses.dataclass
class Segment:
    start: Point
    end: Point
    label: str = ""


class Movie(TypedDict):
    title: str
    year: int


class Pair(NamedTuple):
    left: int
    right: str = "r"


class Address(pydantic.BaseModel):
    street: str
    zip: Annotated[str, pydantic.Field(pattern=r"^\d{5}$")]


class Person(pydantic.BaseModel):
    """Someone."""

    name: str = pydantic.Field(description="full name")
    age: int
    address: Address | None = None


class Pyd:
    """Namespace for a pydantic model whose name clashes with the msgspec ``Point``."""

    class Point(pydantic.BaseModel):
        lat: float
        lon: float


def single(tp: Any, default: Any = EMPTY) -> FunctionSchema:
    """The schema of a one-parameter function ``f(x: tp = default)``."""

    def f(x: Any) -> None:
        return None

    f.__annotations__ = {"x": tp}
    if default is not EMPTY:
        f.__defaults__ = (default,)
    return function_schema(f)


def returning(tp: Any) -> FunctionSchema:
    """The schema of a function ``f() -> tp`` (``EMPTY``: no annotation)."""

    def f() -> None:
        return None

    f.__annotations__ = {} if tp is EMPTY else {"return": tp}
    return function_schema(f)


def refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"]} if isinstance(node.get("$ref"), str) else set()
        return found.union(*(refs(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(refs(value) for value in node))
    return set()


def check_document(schema: dict[str, Any]) -> None:
    """Valid 2020-12, every $ref local and resolvable, no unused $defs."""
    Draft202012Validator.check_schema(schema)
    defs = schema.get("$defs", {})
    for ref in refs(schema):
        assert ref.startswith("#/$defs/"), ref
        assert ref[len("#/$defs/") :] in defs, ref
    reachable: set[str] = set()
    pending = {
        ref[len("#/$defs/") :] for ref in refs({k: v for k, v in schema.items() if k != "$defs"})
    }
    while pending:
        name = pending.pop()
        if name not in reachable:
            reachable.add(name)
            pending |= {ref[len("#/$defs/") :] for ref in refs(defs[name])}
    assert set(defs) == reachable


def check(fs: FunctionSchema) -> FunctionSchema:
    check_document(fs.input_schema)
    if fs.output_schema is not None:
        check_document(fs.output_schema)
        assert fs.output_schema["type"] == "object"
    return fs


# --- parameter type -> property schema ---------------------------------------------------------

POINT_DEF = {
    "title": "Point",
    "description": "A point on the plane.",
    "type": "object",
    "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
    "required": ["x"],
}
SCHEMA_CASES: list[tuple[str, Any, dict[str, Any], dict[str, Any]]] = [
    ("int", int, {"type": "integer"}, {}),
    ("float", float, {"type": "number"}, {}),
    ("bool", bool, {"type": "boolean"}, {}),
    ("str", str, {"type": "string"}, {}),
    ("bytes", bytes, {"type": "string", "contentEncoding": "base64"}, {}),
    ("None", None, {"type": "null"}, {}),
    ("Any", Any, {}, {}),
    ("Optional", Optional[int], {"anyOf": [{"type": "integer"}, {"type": "null"}]}, {}),  # noqa: UP045
    ("pipe union", int | str, {"anyOf": [{"type": "integer"}, {"type": "string"}]}, {}),
    (
        "Union",
        Union[int, str, None],  # noqa: UP007
        {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]},
        {},
    ),
    ("Literal", Literal["a", "b"], {"enum": ["a", "b"]}, {}),
    ("Literal int", Literal[1, 2], {"enum": [1, 2]}, {}),
    (
        "Enum",
        Color,
        {"$ref": "#/$defs/Color"},
        {"Color": {"title": "Color", "enum": ["blue", "red"]}},
    ),
    ("IntEnum", Level, {"$ref": "#/$defs/Level"}, {"Level": {"title": "Level", "enum": [1, 2]}}),
    ("list", list[int], {"type": "array", "items": {"type": "integer"}}, {}),
    ("Sequence", Sequence[str], {"type": "array", "items": {"type": "string"}}, {}),
    (
        "tuple",
        tuple[int, str],
        {
            "type": "array",
            "minItems": 2,
            "maxItems": 2,
            "prefixItems": [{"type": "integer"}, {"type": "string"}],
            "items": False,
        },
        {},
    ),
    ("variadic tuple", tuple[int, ...], {"type": "array", "items": {"type": "integer"}}, {}),
    ("set", set[int], {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}, {}),
    (
        "frozenset",
        frozenset[str],
        {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        {},
    ),
    ("dict", dict[str, float], {"type": "object", "additionalProperties": {"type": "number"}}, {}),
    ("datetime", datetime.datetime, {"type": "string"}, {}),
    (
        "aware datetime",
        Annotated[datetime.datetime, M(tz=True)],
        {"type": "string", "format": "date-time"},
        {},
    ),
    ("date", datetime.date, {"type": "string", "format": "date"}, {}),
    ("time", datetime.time, {"type": "string"}, {}),
    ("timedelta", datetime.timedelta, {"type": "string", "format": "duration"}, {}),
    ("UUID", uuid.UUID, {"type": "string", "format": "uuid"}, {}),
    ("Decimal", decimal.Decimal, {"type": "string", "format": "decimal"}, {}),
    ("Struct", Point, {"$ref": "#/$defs/Point"}, {"Point": POINT_DEF}),
    (
        "recursive Struct",
        Tree,
        {"$ref": "#/$defs/Tree"},
        {
            "Tree": {
                "title": "Tree",
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}, "default": []},
                },
                "required": ["value"],
            }
        },
    ),
    (
        "dataclass of Structs",
        Segment,
        {"$ref": "#/$defs/Segment"},
        {
            "Point": POINT_DEF,
            "Segment": {
                "title": "Segment",
                "type": "object",
                "properties": {
                    "start": {"$ref": "#/$defs/Point"},
                    "end": {"$ref": "#/$defs/Point"},
                    "label": {"type": "string", "default": ""},
                },
                "required": ["start", "end"],
            },
        },
    ),
    (
        "TypedDict",
        Movie,
        {"$ref": "#/$defs/Movie"},
        {
            "Movie": {
                "title": "Movie",
                "type": "object",
                "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
                "required": ["title", "year"],
            }
        },
    ),
    (
        "NamedTuple",
        Pair,
        {"$ref": "#/$defs/Pair"},
        {
            "Pair": {
                "title": "Pair",
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string", "default": "r"}],
                "minItems": 1,
                "maxItems": 2,
            }
        },
    ),
    (
        "list of Structs",
        list[Point],
        {"type": "array", "items": {"$ref": "#/$defs/Point"}},
        {"Point": POINT_DEF},
    ),
    (
        "Annotated numbers",
        Annotated[int, M(ge=1, le=10, description="how many", title="Count", examples=[3])],
        {
            "type": "integer",
            "minimum": 1,
            "maximum": 10,
            "description": "how many",
            "title": "Count",
            "examples": [3],
        },
        {},
    ),
    (
        "Annotated exclusive",
        Annotated[float, M(gt=0, lt=1, multiple_of=0.25)],
        {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "multipleOf": 0.25},
        {},
    ),
    (
        "Annotated string",
        Annotated[str, M(min_length=2, max_length=5, pattern="^[a-z]+$")],
        {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
        {},
    ),
    (
        "Annotated list",
        Annotated[list[int], M(min_length=1, max_length=3)],
        {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3},
        {},
    ),
    (
        "Annotated Struct",
        Annotated[Point, M(description="where")],
        {"description": "where", "$ref": "#/$defs/Point"},
        {"Point": POINT_DEF},
    ),
]


@pytest.mark.parametrize(
    ("tp", "prop", "defs"), [c[1:] for c in SCHEMA_CASES], ids=[c[0] for c in SCHEMA_CASES]
)
def test_parameter_schema(tp: Any, prop: dict[str, Any], defs: dict[str, Any]) -> None:
    fs = check(single(tp))
    expected: dict[str, Any] = {
        "type": "object",
        "properties": {"x": prop},
        "required": ["x"],
        "additionalProperties": False,
    }
    if defs:
        expected["$defs"] = defs
    assert fs.input_schema == expected
    assert fs.parameters[0].schema == prop


def test_unannotated_parameter_is_any() -> None:
    def f(x, y: int = 1):  # type: ignore[no-untyped-def]
        return x

    fs = check(function_schema(f))
    assert fs.input_schema["properties"] == {"x": {}, "y": {"type": "integer", "default": 1}}
    assert fs.bind({"x": [1, {"a": None}]}) == {"x": [1, {"a": None}]}
    assert fs.output_schema is None


# --- required, defaults, Optional --------------------------------------------------------------


def test_required_defaults_and_optional() -> None:
    def f(
        a: int,
        b: int | None,
        c: str = "x",
        d: int | None = None,
        e: int = None,  # type: ignore[assignment]  # noqa: RUF013  (`= None` allows null)
        *,
        f: Color = Color.BLUE,
        g: Point = Point(1, 2),  # noqa: B008
        h: list[int] = [1, 2],  # noqa: B006
        i: datetime.date = datetime.date(2025, 1, 31),
        j: object = object(),  # not JSON: no "default" in the schema
    ) -> None:
        return None

    fs = check(function_schema(f))
    props = fs.input_schema["properties"]
    assert fs.input_schema["required"] == ["a", "b"]
    assert props["b"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert props["c"] == {"type": "string", "default": "x"}
    assert props["d"] == {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}
    assert props["e"] == {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}
    assert props["f"] == {"$ref": "#/$defs/Color", "default": "blue"}
    assert props["g"] == {"$ref": "#/$defs/Point", "default": {"x": 1, "y": 2}}
    assert props["h"] == {"type": "array", "items": {"type": "integer"}, "default": [1, 2]}
    assert props["i"] == {"type": "string", "format": "date", "default": "2025-01-31"}
    assert props["j"] == {}
    assert [(p.name, p.required) for p in fs.parameters][:3] == [
        ("a", True),
        ("b", True),
        ("c", False),
    ]
    assert fs.parameters[2].default == "x"
    assert fs.parameters[0].default is EMPTY
    # Absent optional arguments are left out, so the function's own defaults apply.
    assert fs.bind({"a": 1, "b": None}) == {"a": 1, "b": None}
    assert fs.bind({"a": 1, "b": 2, "e": None, "d": 4}) == {"a": 1, "b": 2, "e": None, "d": 4}
    with pytest.raises(ArgumentError, match="'b'"):
        fs.bind({"a": 1})


def test_keyword_only_and_method_parameters() -> None:
    class Service:
        def lookup(self, key: str, *, limit: int = 10) -> list[str]:
            return [key] * limit

    fs = check(function_schema(Service().lookup))
    assert fs.name == "lookup"
    assert list(fs.input_schema["properties"]) == ["key", "limit"]
    assert fs.bind({"key": "k", "limit": 2}) == {"key": "k", "limit": 2}


# --- descriptions -------------------------------------------------------------------------------


def google(
    city: str, days: int = 1, units: Annotated[str, M(description="from Meta")] = "metric"
) -> str:
    """Get the weather forecast.

    Uses the national service.

    Args:
        city (str): The city name,
            e.g. "Paris".
        days: How many days.
        units: ignored because Annotated wins.

    Returns:
        The forecast as text.

    Raises:
        ValueError: never.
    """
    return city


def numpy_style(city: str, days: int = 1) -> str:
    """Get the weather forecast.

    Parameters
    ----------
    city : str
        The city name,
        e.g. "Paris".
    days : int, optional
        How many days.

    Returns
    -------
    str
        The forecast as text.

    Examples
    --------
    >>> numpy_style("Paris")
    """
    return city


def sphinx_style(city: str, days: int = 1) -> str:
    """Get the weather forecast.

    :param city: The city name,
        e.g. "Paris".
    :param int days: How many days.
    :type city: str
    :returns: The forecast as text.
    :rtype: str
    :raises ValueError: never.
    """
    return city


def test_google_docstring() -> None:
    fs = check(function_schema(google))
    assert fs.description == "Get the weather forecast.\n\nUses the national service."
    props = fs.input_schema["properties"]
    assert props["city"]["description"] == 'The city name, e.g. "Paris".'
    assert props["days"]["description"] == "How many days."
    assert props["units"]["description"] == "from Meta"
    assert [p.description for p in fs.parameters] == [
        'The city name, e.g. "Paris".',
        "How many days.",
        "from Meta",
    ]


def test_numpy_docstring() -> None:
    fs = check(function_schema(numpy_style))
    assert (
        fs.description
        == 'Get the weather forecast.\n\nExamples\n--------\n>>> numpy_style("Paris")'
    )
    assert [p.description for p in fs.parameters] == [
        'The city name, e.g. "Paris".',
        "How many days.",
    ]


def test_sphinx_docstring() -> None:
    fs = check(function_schema(sphinx_style))
    assert fs.description == "Get the weather forecast."
    assert [p.description for p in fs.parameters] == [
        'The city name, e.g. "Paris".',
        "How many days.",
    ]


@pytest.mark.parametrize(
    ("doc", "description", "params", "returns"),
    [
        (None, None, {}, None),
        ("   ", None, {}, None),
        ("One line.", "One line.", {}, None),
        ("Args:\n    x: only params.", None, {"x": "only params."}, None),
        (
            "Sum.\n\nArguments:\n  *args: values.\n  **kw: options.",
            "Sum.",
            {"args": "values.", "kw": "options."},
            None,
        ),
        (
            "Sum.\n\nNote:\n    Keep me.\n\nReturns:\n    The sum.",
            "Sum.\n\nNote:\n    Keep me.",
            {},
            "The sum.",
        ),
        (
            "Sum.\n\nParameters\n----------\na, b : int\n    Terms.\n",
            "Sum.",
            {"a": "Terms.", "b": "Terms."},
            None,
        ),
        (
            "Sum.\n\n:param a: first\n:param b:\n    second\n",
            "Sum.",
            {"a": "first", "b": "second"},
            None,
        ),
        ("Example: not a section.\n\nText.", "Example: not a section.\n\nText.", {}, None),
    ],
)
def test_parse_docstring(
    doc: str | None, description: str | None, params: dict[str, str], returns: str | None
) -> None:
    parsed = parse_docstring(doc)
    assert (parsed.description, parsed.params, parsed.returns) == (description, params, returns)


def test_name_and_description_overrides() -> None:
    fs = function_schema(google, name="forecast", description="Custom.")
    assert (fs.name, fs.description) == ("forecast", "Custom.")
    assert function_schema(google, description="").description == ""


def test_returns_section_describes_a_wrapped_result() -> None:
    def f() -> list[int]:
        """Numbers.

        Returns:
            the primes below ten.
        """
        return [2, 3, 5, 7]

    fs = check(function_schema(f))
    assert fs.output_schema == {
        "type": "object",
        "properties": {
            "result": {
                "type": "array",
                "items": {"type": "integer"},
                "description": "the primes below ten.",
            }
        },
        "required": ["result"],
    }


def test_returns_section_describes_an_object_result() -> None:
    def f() -> Movie:
        """A film.

        Returns:
            the film of the day.
        """
        return {"title": "Up", "year": 2009}

    def g() -> Point:
        """Where.

        Returns:
            ignored: the struct's own docstring describes it.
        """
        return Point(0)

    movie, point = check(function_schema(f)), check(function_schema(g))
    assert movie.wraps_result is False
    assert movie.output_schema is not None
    assert movie.output_schema["description"] == "the film of the day."
    assert (point.wraps_result, point.output_schema) == (False, POINT_DEF)


# --- pydantic ------------------------------------------------------------------------------------


def greet(person: Person, point: Point, other: Pyd.Point | None = None) -> str:
    """Greet someone.

    Args:
        point: where they are.
    """
    return f"hi {person.name}"


def test_pydantic_parameter_schema() -> None:
    fs = check(function_schema(greet))
    props = fs.input_schema["properties"]
    defs = fs.input_schema["$defs"]
    person = props["person"]
    assert person["title"] == "Person"
    assert person["properties"]["name"]["description"] == "full name"
    assert person["properties"]["address"] == {
        "anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}],
        "default": None,
    }
    assert "$defs" not in person  # hoisted into the document's $defs
    assert props["point"] == {"$ref": "#/$defs/Point", "description": "where they are."}
    # The pydantic `Point` clashes with the msgspec `Point`: renamed, references follow.
    assert props["other"] == {
        "anyOf": [{"$ref": "#/$defs/Point2"}, {"type": "null"}],
        "default": None,
    }
    assert defs["Point"] == POINT_DEF
    assert defs["Point2"]["properties"] == {
        "lat": {"title": "Lat", "type": "number"},
        "lon": {"title": "Lon", "type": "number"},
    }
    assert set(defs) == {"Address", "Point", "Point2"}


def test_pydantic_parameter_validation() -> None:
    fs = function_schema(greet)
    kwargs = fs.bind(
        {
            "person": {"name": "Ada", "age": 36, "address": {"street": "Main", "zip": "12345"}},
            "point": {"x": 1},
        }
    )
    assert isinstance(kwargs["person"], Person)
    assert kwargs["person"].address == Address(street="Main", zip="12345")
    assert kwargs["point"] == Point(1)
    with pytest.raises(ArgumentError) as info:
        fs.bind(
            {
                "person": {"age": "36", "address": {"street": 5, "zip": "1"}},
                "point": {"x": "1"},
                "other": {"lat": 1},
            }
        )
    assert info.value.errors == [
        ("/person/name", "missing required field 'person.name'"),
        ("/person/age", "'person.age' should be a valid integer"),
        ("/person/address/street", "'person.address.street' should be a valid string"),
        ("/person/address/zip", "'person.address.zip' should match pattern '^\\d{5}$'"),
        ("/point/x", "'point.x' must be an integer, got a string"),
        ("/other/lon", "missing required field 'other.lon'"),
    ]
    lenient = function_schema(greet, strict=False)
    assert (
        lenient.bind({"person": {"name": "Ada", "age": "36"}, "point": {"x": "1"}})["person"].age
        == 36
    )


def test_pydantic_models_shared_between_parameters_are_defined_once() -> None:
    def f(a: Person, b: list[Person], c: Address) -> Person:
        return a

    fs = check(function_schema(f))
    assert set(fs.input_schema["$defs"]) == {"Address", "Person"}
    assert fs.input_schema["properties"]["b"] == {
        "items": {"$ref": "#/$defs/Person"},
        "type": "array",
    }
    assert fs.output_schema is not None
    assert fs.output_schema["title"] == "Person"
    assert fs.wraps_result is False
    assert fs.structure(Person(name="Ada", age=36)) == {"name": "Ada", "age": 36, "address": None}
    assert fs.structure({"name": "Ada", "age": 36}) == {"name": "Ada", "age": 36, "address": None}
    with pytest.raises(ResultError) as info:
        fs.structure({"name": "Ada"})
    assert info.value.errors == [("/age", "missing required field 'age'")]


def test_pydantic_meta_description_and_constraints() -> None:
    def f(p: Annotated[Person, M(description="the person")]) -> None:
        return None

    assert function_schema(f).input_schema["properties"]["p"]["description"] == "the person"

    def g(p: Annotated[list[Person], M(max_length=2)]) -> None:
        return None

    with pytest.raises(LocalProtocolError, match=r"use pydantic\.Field"):
        function_schema(g)


def test_importing_the_signature_layer_does_not_import_pydantic() -> None:
    code = "import sys, mcpkit.server._signature; print('pydantic' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == "False"


# --- the context parameter -----------------------------------------------------------------------


def ctx_first(ctx: RequestContext, q: str) -> str:
    return q


def ctx_optional(q: str, ctx: RequestContext | None = None) -> str:
    return q


def ctx_typing_optional(q: str, context: Optional[RequestContext] = None) -> str:  # noqa: UP045
    return q


def ctx_annotated(c: Annotated[RequestContext, "injected"], q: str) -> str:
    return q


@pytest.mark.parametrize(
    ("fn", "param"),
    [
        (ctx_first, "ctx"),
        (ctx_optional, "ctx"),
        (ctx_typing_optional, "context"),
        (ctx_annotated, "c"),
    ],
)
def test_context_parameter_is_excluded(fn: Callable[..., Any], param: str) -> None:
    # This module uses `from __future__ import annotations`: every annotation is a string.
    assert isinstance(fn.__annotations__[param], str)
    fs = check(function_schema(fn))
    assert fs.context_param == param
    assert fs.input_schema == {
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "required": ["q"],
        "additionalProperties": False,
    }
    assert [p.name for p in fs.parameters] == ["q"]
    assert fs.bind({"q": "x"}) == {"q": "x"}
    with pytest.raises(ArgumentError, match=f"unexpected argument '{param}'"):
        fs.bind({"q": "x", param: {}})


def test_context_parameter_imported_only_for_type_checking() -> None:
    # `RequestContext` is not in the function's globals (imported under TYPE_CHECKING).
    namespace: dict[str, Any] = {}
    exec(
        "from __future__ import annotations\n"
        "def tool(ctx: RequestContext, n: int) -> int:\n"
        "    return n\n",
        namespace,
    )
    fs = check(function_schema(namespace["tool"]))
    assert fs.context_param == "ctx"
    assert list(fs.input_schema["properties"]) == ["n"]


def test_no_context_parameter() -> None:
    assert function_schema(google).context_param is None


def test_local_types_resolve_through_the_closure() -> None:
    class Local(msgspec.Struct):
        v: int

    def f(x: Local) -> Local:
        return Local(v=x.v)  # uses Local, so it is in the closure

    fs = check(function_schema(f))
    assert fs.bind({"x": {"v": 1}}) == {"x": Local(v=1)}
    assert fs.output_schema == {
        "title": "Local",
        "type": "object",
        "properties": {"v": {"type": "integer"}},
        "required": ["v"],
    }


def test_unresolvable_annotation_is_refused_clearly() -> None:
    class Hidden(msgspec.Struct):
        v: int

    def f(x: Hidden) -> None:  # Hidden is not in the closure: the string cannot be resolved
        return None

    with pytest.raises(
        LocalProtocolError,
        match=r"'f': cannot resolve the type 'Hidden' of parameter 'x' \(the function is defined inside another function",
    ):
        function_schema(f)


# --- refused signatures --------------------------------------------------------------------------


def var_positional(*items: int) -> None:
    return None


def var_keyword(a: int, **options: str) -> None:
    return None


def positional_only(a: int, /, b: int) -> None:
    return None


def two_contexts(a: RequestContext, b: RequestContext) -> None:
    return None


def generator(n: int) -> Any:
    yield n


async def async_generator(n: int) -> Any:
    yield n


class Opaque:
    """A class neither msgspec nor pydantic can describe."""


def opaque(x: Opaque) -> None:
    return None


def opaque_return() -> Opaque:
    return Opaque()


@pytest.mark.parametrize(
    ("fn", "match"),
    [
        (
            var_positional,
            r"'var_positional': parameter 'items' is \*items; tool arguments are passed by name",
        ),
        (var_keyword, r"parameter 'options' is \*\*options"),
        (positional_only, r"parameter 'a' is positional-only"),
        (two_contexts, "two RequestContext parameters"),
        (generator, "is a generator"),
        (async_generator, "is a generator"),
        (
            opaque,
            r"'opaque': parameter 'x' has type .*Opaque.*, which neither msgspec nor pydantic",
        ),
        (opaque_return, r"'opaque_return': the return type .*Opaque.* has no JSON Schema"),
        (functools.partial(google, "Paris"), "has no __name__; pass name="),
    ],
)
def test_refused_signatures(fn: Callable[..., Any], match: str) -> None:
    with pytest.raises(LocalProtocolError, match=match):
        function_schema(fn)


def test_unsupported_type_without_pydantic_names_the_parameter() -> None:
    code = (
        "import mcpkit.server._signature as s\n"
        "class Opaque: pass\n"
        "def f(a: int, x: Opaque): pass\n"
        "try:\n"
        "    s.function_schema(f)\n"
        "except s.LocalProtocolError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=60
    )
    assert out.stdout.startswith(
        "'f': parameter 'x' has type <class '__main__.Opaque'>, which has no JSON Schema"
    )


# --- sync/async, partials, callables -------------------------------------------------------------


async def async_tool(n: int) -> int:
    return n


class CallableTool:
    async def __call__(self, n: int) -> int:
        return n


def test_is_async() -> None:
    assert function_schema(async_tool).is_async is True
    assert function_schema(google).is_async is False
    assert function_schema(CallableTool(), name="c").is_async is True
    partial = function_schema(functools.partial(async_tool), name="p")
    assert partial.is_async is True
    assert list(partial.input_schema["properties"]) == ["n"]
    bound = function_schema(functools.partial(google, days=3), name="g")
    assert bound.input_schema["properties"]["days"]["default"] == 3


# --- output schema rules -------------------------------------------------------------------------

UNSTRUCTURED: list[tuple[str, Any]] = [
    ("no annotation", EMPTY),
    ("None", None),
    ("str", str),
    ("Optional[str]", Optional[str]),  # noqa: UP045
    ("Any", Any),
    ("object", object),
    ("TextContent", TextContent),
    ("ImageContent", ImageContent),
    ("ContentBlock", ContentBlock),
    ("list of content", list[TextContent]),
    ("Sequence of content", Sequence[ImageContent | TextContent]),
    ("tuple of content", tuple[TextContent, ...]),
    ("CallToolResult", CallToolResult),
    ("content or text", TextContent | str),
]


@pytest.mark.parametrize("tp", [c[1] for c in UNSTRUCTURED], ids=[c[0] for c in UNSTRUCTURED])
def test_unstructured_returns_have_no_output_schema(tp: Any) -> None:
    fs = returning(tp)
    assert (fs.output_schema, fs.wraps_result) == (None, False)
    with pytest.raises(LocalProtocolError, match="unstructured"):
        fs.structure("text")


def wrapped(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> dict[str, Any]:
    out = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
    return {**out, "$defs": defs} if defs else out


OUTPUT_CASES: list[tuple[str, Any, dict[str, Any], bool]] = [
    ("int", int, wrapped({"type": "integer"}), True),
    ("float", float, wrapped({"type": "number"}), True),
    ("bool", bool, wrapped({"type": "boolean"}), True),
    (
        "Optional[int]",
        Optional[int],  # noqa: UP045
        wrapped({"anyOf": [{"type": "integer"}, {"type": "null"}]}),
        True,
    ),
    ("list[str]", list[str], wrapped({"type": "array", "items": {"type": "string"}}), True),
    (
        "tuple",
        tuple[int, str],
        wrapped(
            {
                "type": "array",
                "minItems": 2,
                "maxItems": 2,
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "items": False,
            }
        ),
        True,
    ),
    ("Literal", Literal["yes", "no"], wrapped({"enum": ["no", "yes"]}), True),
    (
        "Enum",
        Color,
        wrapped({"$ref": "#/$defs/Color"}, {"Color": {"title": "Color", "enum": ["blue", "red"]}}),
        True,
    ),
    (
        "NamedTuple",
        Pair,
        wrapped(
            {"$ref": "#/$defs/Pair"},
            {"Pair": SCHEMA_CASES[[c[0] for c in SCHEMA_CASES].index("NamedTuple")][3]["Pair"]},
        ),
        True,
    ),
    (
        "Optional[Struct]",
        Optional[Point],  # noqa: UP045
        wrapped({"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}]}, {"Point": POINT_DEF}),
        True,
    ),
    (
        "list of Structs",
        list[Point],
        wrapped({"type": "array", "items": {"$ref": "#/$defs/Point"}}, {"Point": POINT_DEF}),
        True,
    ),
    ("datetime", datetime.datetime, wrapped({"type": "string"}), True),
    ("Struct", Point, POINT_DEF, False),
    (
        "dict[str, int]",
        dict[str, int],
        {"type": "object", "additionalProperties": {"type": "integer"}},
        False,
    ),
    (
        "TypedDict",
        Movie,
        {
            "title": "Movie",
            "type": "object",
            "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
            "required": ["title", "year"],
        },
        False,
    ),
    (
        "dataclass",
        Segment,
        {
            **SCHEMA_CASES[[c[0] for c in SCHEMA_CASES].index("dataclass of Structs")][3][
                "Segment"
            ],
            "$defs": {"Point": POINT_DEF},
        },
        False,
    ),
    (
        "recursive Struct keeps its definition",
        Tree,
        {
            **SCHEMA_CASES[[c[0] for c in SCHEMA_CASES].index("recursive Struct")][3]["Tree"],
            "$defs": SCHEMA_CASES[[c[0] for c in SCHEMA_CASES].index("recursive Struct")][3],
        },
        False,
    ),
]


@pytest.mark.parametrize(
    ("tp", "schema", "wraps"), [c[1:] for c in OUTPUT_CASES], ids=[c[0] for c in OUTPUT_CASES]
)
def test_output_schema(tp: Any, schema: dict[str, Any], wraps: bool) -> None:
    fs = check(returning(tp))
    assert fs.output_schema == schema
    assert fs.wraps_result is wraps


def test_pydantic_output_schema() -> None:
    fs = check(returning(Person))
    assert fs.wraps_result is False
    assert fs.output_schema == {**Person.model_json_schema(mode="serialization")}
    optional = check(returning(Person | None))
    assert optional.wraps_result is True
    assert optional.output_schema is not None
    assert optional.output_schema["properties"]["result"] == {
        "anyOf": [{"$ref": "#/$defs/Person"}, {"type": "null"}]
    }
    assert set(optional.output_schema["$defs"]) == {"Address", "Person"}


# --- structure() -----------------------------------------------------------------------------------

STRUCTURE_CASES: list[tuple[str, Any, Any, Any]] = [
    ("int", int, 5, {"result": 5}),
    ("int for float", float, 5, {"result": 5}),
    ("bool", bool, True, {"result": True}),
    ("None in Optional", Optional[int], None, {"result": None}),  # noqa: UP045
    ("list", list[int], [1, 2], {"result": [1, 2]}),
    ("tuple", tuple[int, str], (1, "a"), {"result": [1, "a"]}),
    ("set", set[int], {3}, {"result": [3]}),
    ("Literal", Literal["yes", "no"], "yes", {"result": "yes"}),
    ("Enum", Color, Color.RED, {"result": "red"}),
    ("NamedTuple", Pair, Pair(1), {"result": [1, "r"]}),
    (
        "datetime",
        datetime.datetime,
        datetime.datetime(2025, 1, 31, 12, tzinfo=datetime.timezone.utc),
        {"result": "2025-01-31T12:00:00Z"},
    ),
    ("UUID", uuid.UUID, uuid.UUID(int=1), {"result": "00000000-0000-0000-0000-000000000001"}),
    ("Decimal", decimal.Decimal, decimal.Decimal("1.50"), {"result": "1.50"}),
    ("bytes", bytes, b"hi", {"result": "aGk="}),
    ("Struct", Point, Point(1, 2), {"x": 1, "y": 2}),
    ("dict for a Struct", Point, {"x": 1}, {"x": 1}),
    (
        "dataclass",
        Segment,
        Segment(Point(0), Point(1, 1)),
        {"start": {"x": 0, "y": 0}, "end": {"x": 1, "y": 1}, "label": ""},
    ),
    ("TypedDict", Movie, {"title": "Up", "year": 2009}, {"title": "Up", "year": 2009}),
    ("dict[str, int]", dict[str, int], {"a": 1}, {"a": 1}),
    ("dict[int, str]", dict[int, str], {1: "a"}, {"1": "a"}),
    (
        "recursive",
        Tree,
        Tree(1, [Tree(2)]),
        {"value": 1, "children": [{"value": 2, "children": []}]},
    ),
    (
        "pydantic",
        Person,
        Person(name="Ada", age=36, address=Address(street="Main", zip="12345")),
        {"name": "Ada", "age": 36, "address": {"street": "Main", "zip": "12345"}},
    ),
    (
        "pydantic in a list",
        list[Person],
        [Person(name="Ada", age=36)],
        {"result": [{"name": "Ada", "age": 36, "address": None}]},
    ),
]


@pytest.mark.parametrize(
    ("tp", "value", "expected"),
    [c[1:] for c in STRUCTURE_CASES],
    ids=[c[0] for c in STRUCTURE_CASES],
)
def test_structure(tp: Any, value: Any, expected: Any) -> None:
    fs = returning(tp)
    out = fs.structure(value)
    assert out == expected
    assert fs.output_schema is not None
    Draft202012Validator(fs.output_schema).validate(out)
    assert msgspec.json.decode(msgspec.json.encode(out)) == out  # JSON-able as is


STRUCTURE_ERRORS: list[tuple[str, Any, Any, list[tuple[str, str]]]] = [
    ("str for int", int, "5", [("/result", "'result' must be an integer, got a string")]),
    ("None for int", int, None, [("/result", "'result' must be an integer, got null")]),
    ("item", list[int], [1, "x"], [("/result/1", "'result[1]' must be an integer, got a string")]),
    (
        "Literal",
        Literal["yes", "no"],
        "maybe",
        [("/result", '\'result\' must be one of "no", "yes", got "maybe"')],
    ),
    ("Struct field", Point, {"x": "1"}, [("/x", "'x' must be an integer, got a string")]),
    ("missing field", Point, {"y": 1}, [("/x", "missing required field 'x'")]),
    ("not an object", Point, [1], [("", "the result must be an object, got an array")]),
    (
        "not JSON",
        dict[str, Any],
        {"a": object()},
        [("", "the result is not JSON data: Encoding objects of type object is unsupported")],
    ),
    (
        "pydantic",
        Person,
        {"name": "Ada", "age": "old"},
        [("/age", "'age' should be a valid integer, unable to parse string as an integer")],
    ),
]


@pytest.mark.parametrize(
    ("tp", "value", "errors"),
    [c[1:] for c in STRUCTURE_ERRORS],
    ids=[c[0] for c in STRUCTURE_ERRORS],
)
def test_structure_errors(tp: Any, value: Any, errors: list[tuple[str, str]]) -> None:
    with pytest.raises(ResultError) as info:
        returning(tp).structure(value)
    assert info.value.errors == errors
    assert str(info.value) == "Invalid result: " + "; ".join(text for _, text in errors)
    assert isinstance(info.value, MCPError)
    assert isinstance(info.value, ValueError)


# --- bind(): conversion --------------------------------------------------------------------------


class Circle(msgspec.Struct, tag="circle"):
    radius: Annotated[float, M(gt=0)]


class Square(msgspec.Struct, tag="square"):
    side: float


class Closed(msgspec.Struct, forbid_unknown_fields=True):
    a: int


class Range(msgspec.Struct):
    lo: int
    hi: int

    def __post_init__(self) -> None:
        if self.lo > self.hi:
            raise ValueError("lo must not exceed hi")


def order(
    name: str,
    age: Annotated[int, M(ge=0, le=150)],
    email: Annotated[str, M(pattern=r"^[^@]+@[^@]+$")] = "a@b",
    tags: Annotated[list[Annotated[str, M(min_length=1)]], M(max_length=3)] = [],  # noqa: B006
    color: Color = Color.RED,
    point: Point | None = None,
    points: dict[str, Point] = {},  # noqa: B006
    shape: Circle | Square | None = None,
    when: datetime.datetime | None = None,
    day: datetime.date | None = None,
    id: uuid.UUID | None = None,
    size: Literal["S", "M", "L"] = "M",
    pair: tuple[int, int] | None = None,
    ratio: Annotated[float, M(multiple_of=0.5)] = 1.0,
    blob: bytes = b"",
    counts: dict[int, int] = {},  # noqa: B006
    segment: Segment | None = None,
    movie: Movie | None = None,
    closed: Closed | None = None,
    range: Range | None = None,
    amount: decimal.Decimal | None = None,
    level: Level = Level.LOW,
    named: Pair | None = None,
    unique: set[int] = set(),  # noqa: B006
) -> None:
    return None


ORDER = function_schema(order)
GOOD_ARGUMENTS = {
    "name": "Ada",
    "age": 36,
    "email": "ada@example.org",
    "tags": ["x", "y"],
    "color": "blue",
    "point": {"x": 1},
    "points": {"a": {"x": 1, "y": 2}},
    "shape": {"type": "circle", "radius": 1.5},
    "when": "2025-01-31T12:00:00Z",
    "day": "2025-01-31",
    "id": "00000000-0000-0000-0000-000000000001",
    "size": "L",
    "pair": [1, 2],
    "ratio": 2.5,
    "blob": "aGk=",
    "counts": {"1": 2},
    "segment": {"start": {"x": 0}, "end": {"x": 1, "y": 1}},
    "movie": {"title": "Up", "year": 2009},
    "closed": {"a": 1},
    "range": {"lo": 1, "hi": 2},
    "amount": "1.50",
    "level": 2,
    "named": [1, "b"],
    "unique": [1, 2],
}


def test_bind_converts_to_the_parameter_types() -> None:
    kwargs = ORDER.bind(GOOD_ARGUMENTS)
    assert kwargs == {
        "name": "Ada",
        "age": 36,
        "email": "ada@example.org",
        "tags": ["x", "y"],
        "color": Color.BLUE,
        "point": Point(1),
        "points": {"a": Point(1, 2)},
        "shape": Circle(1.5),
        "when": datetime.datetime(2025, 1, 31, 12, tzinfo=datetime.timezone.utc),
        "day": datetime.date(2025, 1, 31),
        "id": uuid.UUID(int=1),
        "size": "L",
        "pair": (1, 2),
        "ratio": 2.5,
        "blob": b"hi",
        "counts": {1: 2},
        "segment": Segment(Point(0), Point(1, 1)),
        "movie": {"title": "Up", "year": 2009},
        "closed": Closed(1),
        "range": Range(1, 2),
        "amount": decimal.Decimal("1.50"),
        "level": Level.HIGH,
        "named": Pair(1, "b"),
        "unique": {1, 2},
    }
    Draft202012Validator(ORDER.input_schema).validate(GOOD_ARGUMENTS)
    check(ORDER)
    order(**kwargs)


def test_bind_accepts_any_mapping_and_only_required_arguments() -> None:
    import types

    arguments = types.MappingProxyType({"name": "Ada", "age": 1})
    assert ORDER.bind(arguments) == {"name": "Ada", "age": 1}
    Draft202012Validator(ORDER.input_schema).validate(dict(arguments))


def test_bind_without_parameters() -> None:
    def ping() -> str:
        return "pong"

    fs = check(function_schema(ping))
    assert fs.input_schema == {"type": "object", "properties": {}, "additionalProperties": False}
    assert fs.bind({}) == {}
    with pytest.raises(ArgumentError, match="unexpected argument 'x'"):
        fs.bind({"x": 1})


# --- bind(): errors ------------------------------------------------------------------------------

# (id, arguments, expected errors, whether JSON Schema alone also rejects the arguments)
ARGUMENT_ERRORS: list[tuple[str, Any, list[tuple[str, str]], bool]] = [
    (
        "nothing",
        {},
        [
            ("/name", "missing required argument 'name'"),
            ("/age", "missing required argument 'age'"),
        ],
        True,
    ),
    (
        "wrong type and missing",
        {"age": "5"},
        [
            ("/age", "'age' must be an integer, got a string"),
            ("/name", "missing required argument 'name'"),
        ],
        True,
    ),
    (
        "unknown",
        {"name": "A", "age": 1, "x": 1, "y/~": 2},
        [("/x", "unexpected argument 'x'"), ("/y~1~0", "unexpected argument 'y/~'")],
        True,
    ),
    (
        "several at once",
        {"name": 1, "age": -1, "zz": 0, "color": "green"},
        [
            ("/name", "'name' must be a string, got an integer"),
            ("/age", "'age' must be at least 0"),
            ("/zz", "unexpected argument 'zz'"),
            ("/color", '\'color\' must be one of "blue", "red", got "green"'),
        ],
        True,
    ),
    ("too big", {"name": "A", "age": 200}, [("/age", "'age' must be at most 150")], True),
    (
        "float for int",
        {"name": "A", "age": 1.5},
        [("/age", "'age' must be an integer, got a number")],
        True,
    ),
    (
        "bool for int",
        {"name": "A", "age": True},
        [("/age", "'age' must be an integer, got a boolean")],
        True,
    ),
    (
        "null for int",
        {"name": "A", "age": None},
        [("/age", "'age' must be an integer, got null")],
        True,
    ),
    (
        "pattern",
        {"name": "A", "age": 1, "email": "nope"},
        [("/email", "'email' must match the pattern ^[^@]+@[^@]+$")],
        True,
    ),
    (
        "too many items",
        {"name": "A", "age": 1, "tags": ["a", "b", "c", "d"]},
        [("/tags", "'tags' must have at most 3 items")],
        True,
    ),
    (
        "item too short",
        {"name": "A", "age": 1, "tags": ["a", ""]},
        [("/tags/1", "'tags[1]' must be at least 1 character long")],
        True,
    ),
    (
        "nested wrong type",
        {"name": "A", "age": 1, "point": {"x": "1"}},
        [("/point/x", "'point.x' must be an integer, got a string")],
        True,
    ),
    (
        "nested missing",
        {"name": "A", "age": 1, "point": {"y": 1}},
        [("/point/x", "missing required field 'point.x'")],
        True,
    ),
    (
        "object or null",
        {"name": "A", "age": 1, "point": [1]},
        [("/point", "'point' must be an object or null, got an array")],
        True,
    ),
    (
        "dict entry",
        {"name": "A", "age": 1, "points": {"a": {"x": 1}, "b": {"x": "no"}}},
        [("/points/b/x", "'points.b.x' must be an integer, got a string")],
        True,
    ),
    (
        "tag",
        {"name": "A", "age": 1, "shape": {"type": "hexagon"}},
        [("/shape/type", '\'shape.type\' must be one of "circle", "square", got "hexagon"')],
        True,
    ),
    (
        "tagged field",
        {"name": "A", "age": 1, "shape": {"type": "circle", "radius": 0}},
        [("/shape/radius", "'shape.radius' must be greater than 0.0")],
        True,
    ),
    (
        "missing tag",
        {"name": "A", "age": 1, "shape": {"radius": 1}},
        [("/shape/type", "missing required field 'shape.type'")],
        True,
    ),
    (
        "date-time",
        {"name": "A", "age": 1, "when": "yesterday"},
        [("/when", "'when' must be an RFC 3339 date-time string, e.g. 2025-01-31T12:00:00Z")],
        False,
    ),
    (
        "date",
        {"name": "A", "age": 1, "day": "2025-13-01"},
        [("/day", "'day' must be an RFC 3339 date string (YYYY-MM-DD)")],
        False,
    ),
    ("uuid", {"name": "A", "age": 1, "id": "x"}, [("/id", "'id' must be a UUID string")], False),
    (
        "Literal",
        {"name": "A", "age": 1, "size": "XL"},
        [("/size", '\'size\' must be one of "L", "M", "S", got "XL"')],
        True,
    ),
    (
        "tuple length",
        {"name": "A", "age": 1, "pair": [1]},
        [("/pair", "'pair' must have exactly 2 items, got 1")],
        True,
    ),
    (
        "multiple of",
        {"name": "A", "age": 1, "ratio": 0.3},
        [("/ratio", "'ratio' must be a multiple of 0.5")],
        True,
    ),
    (
        "base64",
        {"name": "A", "age": 1, "blob": "!!"},
        [("/blob", "'blob' must be a base64-encoded string")],
        False,
    ),
    (
        "dict key",
        {"name": "A", "age": 1, "counts": {"x": 1}},
        [("/counts", "a key of 'counts' must be an integer, got a string")],
        False,
    ),
    (
        "dataclass field",
        {"name": "A", "age": 1, "segment": {"start": {"x": 1}, "end": {"x": 1, "y": "2"}}},
        [("/segment/end/y", "'segment.end.y' must be an integer, got a string")],
        True,
    ),
    (
        "TypedDict",
        {"name": "A", "age": 1, "movie": {"title": "Up"}},
        [("/movie/year", "missing required field 'movie.year'")],
        True,
    ),
    (
        "closed struct",
        {"name": "A", "age": 1, "closed": {"a": 1, "b": 2}},
        [("/closed/b", "unexpected field 'closed.b'")],
        True,
    ),
    (
        "post-init check",
        {"name": "A", "age": 1, "range": {"lo": 2, "hi": 1}},
        [("/range", "'range' is invalid: lo must not exceed hi")],
        False,
    ),
    (
        "decimal",
        {"name": "A", "age": 1, "amount": "lots"},
        [("/amount", "'amount' must be a decimal number")],
        False,
    ),
    (
        "IntEnum",
        {"name": "A", "age": 1, "level": 3},
        [("/level", "'level' must be one of 1, 2, got 3")],
        True,
    ),
    (
        "NamedTuple",
        {"name": "A", "age": 1, "named": [1, 2, 3]},
        [("/named", "'named' must have 1 to 2 items, got 3")],
        True,
    ),
    (
        "set",
        {"name": "A", "age": 1, "unique": [1, "2"]},
        [("/unique/1", "'unique[1]' must be an integer, got a string")],
        True,
    ),
    ("not an object", [1], [("", "the arguments must be an object, got an array")], True),
    ("a string", "x", [("", "the arguments must be an object, got a string")], True),
    ("null", None, [("", "the arguments must be an object, got null")], True),
]


@pytest.mark.parametrize(
    ("arguments", "errors", "schema_rejects"),
    [c[1:] for c in ARGUMENT_ERRORS],
    ids=[c[0] for c in ARGUMENT_ERRORS],
)
def test_argument_errors(
    arguments: Any, errors: list[tuple[str, str]], schema_rejects: bool
) -> None:
    with pytest.raises(ArgumentError) as info:
        ORDER.bind(arguments)
    assert info.value.errors == errors
    assert str(info.value) == "Invalid arguments: " + "; ".join(text for _, text in errors)
    # The schema the client sees agrees (format keywords are annotations only in 2020-12, and
    # a struct's own checks or closed nested structs are beyond the schema).
    assert (not Draft202012Validator(ORDER.input_schema).is_valid(arguments)) is schema_rejects


def test_argument_error_message_example() -> None:
    def f(name: str, age: int) -> None:
        return None

    with pytest.raises(ArgumentError) as info:
        function_schema(f).bind({"age": "5"})
    assert (
        str(info.value)
        == "Invalid arguments: 'age' must be an integer, got a string; missing required argument 'name'"
    )
    assert isinstance(info.value, MCPError)
    assert isinstance(info.value, ValueError)
    assert ArgumentError([("", "x")]).errors == [("", "x")]


@pytest.mark.parametrize(
    ("arguments", "lenient"),
    [
        ({"n": "5", "x": "1.5", "b": "true"}, {"n": 5, "x": 1.5, "b": True}),
        ({"n": "5", "x": 2, "b": "0"}, {"n": 5, "x": 2.0, "b": False}),
    ],
)
def test_strict_and_lenient(arguments: dict[str, Any], lenient: dict[str, Any]) -> None:
    def f(n: int, x: float, b: bool) -> None:
        return None

    with pytest.raises(ArgumentError) as info:
        function_schema(f).bind(arguments)
    assert [pointer for pointer, _ in info.value.errors] == [
        f"/{k}" for k, v in arguments.items() if isinstance(v, str)
    ]
    assert function_schema(f, strict=False).bind(arguments) == lenient


def test_lenient_mode_still_rejects_nonsense() -> None:
    def f(n: int) -> None:
        return None

    with pytest.raises(ArgumentError, match="'n' must be an integer, got a string"):
        function_schema(f, strict=False).bind({"n": "five"})


# --- every schema is a good document, and agrees with bind() -----------------------------------

AGREEMENT: list[tuple[Callable[..., Any], dict[str, Any]]] = [
    (order, GOOD_ARGUMENTS),
    (google, {"city": "Paris"}),
    (
        greet,
        {
            "person": {"name": "Ada", "age": 36},
            "point": {"x": 1},
            "other": {"lat": 1.0, "lon": 2.0},
        },
    ),
    (ctx_optional, {"q": "x"}),
    (async_tool, {"n": 1}),
]


@pytest.mark.parametrize(
    ("fn", "arguments"), AGREEMENT, ids=lambda v: getattr(v, "__name__", "args")
)
def test_bound_arguments_validate_against_the_schema(
    fn: Callable[..., Any], arguments: dict[str, Any]
) -> None:
    fs = check(function_schema(fn))
    fs.bind(arguments)
    Draft202012Validator(fs.input_schema).validate(arguments)


def test_parameter_info() -> None:
    info: ParameterInfo = function_schema(google).parameters[1]
    assert (info.name, info.description, info.required, info.default, info.annotation) == (
        "days",
        "How many days.",
        False,
        1,
        int,
    )
    assert info.schema == {"type": "integer", "description": "How many days.", "default": 1}


def test_argument_names_never_clash_with_the_internal_struct() -> None:
    def f(a1: int, a0: str, type: str = "t", __struct_fields__: int = 0) -> None:
        return None

    fs = check(function_schema(f))
    assert fs.bind({"a1": 1, "a0": "x", "__struct_fields__": 3}) == {
        "a1": 1,
        "a0": "x",
        "__struct_fields__": 3,
    }
    with pytest.raises(ArgumentError) as info:
        fs.bind({"a0": 1})
    assert info.value.errors == [
        ("/a0", "'a0' must be a string, got an integer"),
        ("/a1", "missing required argument 'a1'"),
    ]
