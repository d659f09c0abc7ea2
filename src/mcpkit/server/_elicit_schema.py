"""Typed form-mode elicitation: a Python type becomes ``requestedSchema``, and the user's
answer comes back as an instance of that type.

``client/elicitation.mdx`` limits the requested schema to a flat object of primitive
properties: string (with ``format`` email/uri/date/date-time, length limits), number or
integer (with bounds), boolean, and enums in the shapes of SEP-1330 (2025-11-25): a
``Literal`` becomes an untitled single select (``enum``), an ``Enum`` class a titled one
(``oneOf`` of ``const``/``title``, the member name as title), ``list[Literal]`` and
``list[Enum]`` the multi-select forms. Defaults come from the type's defaults (SEP-1034).
"""

from __future__ import annotations

import enum
import typing
from collections.abc import Mapping
from typing import Any, Final, TypeVar

import msgspec

from ..exceptions import CapabilityError, LocalProtocolError, RemoteProtocolError
from ..types import V2025_11_25
from ..types._echo import one_line

__all__ = ["answer_as", "check_form", "form_for", "requested_schema"]

T = TypeVar("T")
_PRIMITIVE: Final = frozenset({"string", "number", "integer", "boolean"})
#: The string formats a form may ask for (StringSchema.format).
_FORMATS: Final = frozenset({"date", "date-time", "email", "uri"})
_ALLOWED: Final = frozenset(
    {
        "type",
        "title",
        "description",
        "default",
        "enum",
        "enumNames",  # (the legacy titled enum: LegacyTitledEnumSchema)
        "oneOf",
        "format",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "items",
        "minItems",
        "maxItems",
    }
)


def _enum_titles(tp: Any) -> list[dict[str, Any]] | None:
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return [
            {"const": member.value, "title": member.name.replace("_", " ").title()} for member in tp
        ]
    return None


def requested_schema(tp: type) -> dict[str, Any]:
    """The ``requestedSchema`` for a struct, dataclass or TypedDict of primitive fields.

    Raises:
        LocalProtocolError: a field is not a primitive, an enum or a list of enum values.
    """
    try:
        schema = msgspec.json.schema(tp)
    except TypeError as exc:
        raise LocalProtocolError(f"cannot describe {tp!r} as an elicitation form: {exc}") from exc
    defs = schema.get("$defs", {})
    root = defs.get(schema.get("$ref", "").rsplit("/", 1)[-1], schema)
    if root.get("type") != "object":
        raise LocalProtocolError(f"an elicitation form must be an object type, not {tp!r}")
    hints = typing.get_type_hints(tp)
    properties: dict[str, Any] = {}
    for name, prop in root.get("properties", {}).items():
        annotation = hints.get(name)
        properties[name] = _field(name, prop, annotation, defs)
    result: dict[str, Any] = {"type": "object", "properties": properties}
    if root.get("required"):
        result["required"] = list(root["required"])
    return result


def _deref(prop: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = prop.get("$ref")
    if ref is None:
        return prop
    target = dict(defs[ref.rsplit("/", 1)[-1]])
    target.pop("title", None)
    return {**target, **{k: v for k, v in prop.items() if k != "$ref"}}


def _field(
    name: str, prop: dict[str, Any], annotation: Any, defs: dict[str, Any]
) -> dict[str, Any]:
    prop = _deref(prop, defs)
    inner = annotation
    while typing.get_origin(inner) is typing.Annotated:
        inner = typing.get_args(inner)[0]
    titles = _enum_titles(inner)
    if titles is not None:
        out = {k: v for k, v in prop.items() if k not in ("enum",)}
        out.update(type="string", oneOf=titles)
        return _check(name, out)
    if "enum" in prop and "type" not in prop:
        prop = {**prop, "type": "string"}
    if prop.get("type") == "array":
        items = _deref(prop.get("items", {}), defs)
        args = typing.get_args(inner)
        item_titles = _enum_titles(args[0]) if args else None
        if item_titles is not None:
            items = {"anyOf": item_titles}
        elif "enum" in items:
            items = {"type": "string", "enum": items["enum"]}
        else:
            raise LocalProtocolError(
                f"elicitation field {name!r}: lists must be of Literal or Enum values"
            )
        return _check(name, {**prop, "items": items})
    if prop.get("type") not in _PRIMITIVE:
        raise LocalProtocolError(
            f"elicitation field {name!r} must be a string, number, integer, boolean or enum "
            f"(client/elicitation.mdx allows only primitives), not {prop!r}"
        )
    return _check(name, prop)


def _refuse_unknown(name: str, prop: Mapping[str, Any]) -> None:
    unknown = set(prop) - _ALLOWED
    if unknown:
        raise LocalProtocolError(
            f"elicitation field {name!r} uses {sorted(unknown)}, which requestedSchema does "
            "not allow"
        )


def _check(name: str, prop: dict[str, Any]) -> dict[str, Any]:
    _refuse_unknown(name, prop)
    if "format" in prop and prop["format"] not in _FORMATS:
        # A type msgspec describes with a format the form cannot carry (a UUID, a
        # Decimal, a duration): the field stays a string, and the answer is converted.
        prop = {k: v for k, v in prop.items() if k != "format"}
    return prop


def check_form(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A raw ``requestedSchema`` checked against what ``client/elicitation.mdx`` allows: an
    object of primitive properties (string with ``format`` date, date-time, email or uri;
    number, integer, boolean; single and multi-select enums), without nesting.

    Raises:
        LocalProtocolError: the schema is not such a form.
    """
    properties = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(properties, Mapping):
        raise LocalProtocolError(
            "a requestedSchema is an object schema: {'type': 'object', 'properties': {...}}"
        )
    for name, prop in properties.items():
        if not isinstance(prop, Mapping):
            raise LocalProtocolError(f"elicitation field {name!r} is not a schema: {prop!r}")
        kind = prop.get("type")
        items = prop.get("items")
        choices = isinstance(items, Mapping) and ("enum" in items or "anyOf" in items)
        multi = kind == "array" and choices
        if kind not in _PRIMITIVE and not multi:
            raise LocalProtocolError(
                f"elicitation field {name!r} must be a string, number, integer, boolean or "
                f"enum (client/elicitation.mdx allows only primitives), not {dict(prop)!r}"
            )
        if "format" in prop and prop["format"] not in _FORMATS:
            raise LocalProtocolError(
                f"elicitation field {name!r}: format {prop['format']!r} is not one of "
                f"{', '.join(sorted(_FORMATS))}"
            )
        _refuse_unknown(name, prop)
    return dict(schema)


def form_for(version: str, schema: dict[str, Any]) -> dict[str, Any]:
    """A requested schema as a client of ``version`` understands it.

    Defaults (SEP-1034) and the titled and multi-select enum shapes (SEP-1330) arrived in
    2025-11-25. For 2025-06-18 a titled single select becomes the legacy ``enum`` +
    ``enumNames`` form and defaults are left out; multi-select has no older form.

    Raises:
        CapabilityError: the form needs a shape ``version`` cannot express.
    """
    if version >= V2025_11_25:
        return schema
    properties: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        prop = {k: v for k, v in prop.items() if k != "default"}
        if prop.get("type") == "array":
            raise CapabilityError(
                f"elicitation field {name!r} is a multi-select, which needs protocol 2025-11-25"
            )
        if "oneOf" in prop:
            options = prop.pop("oneOf")
            prop["enum"] = [option["const"] for option in options]
            prop["enumNames"] = [option.get("title", str(option["const"])) for option in options]
        properties[name] = prop
    return {**schema, "properties": properties}


def answer_as(content: Any, tp: type[T]) -> T:
    """Convert the user's accepted answer into ``tp``.

    Raises:
        RemoteProtocolError: the answer does not match the requested form.
    """
    try:
        return msgspec.convert(content, tp, strict=False)
    except msgspec.ValidationError as exc:
        raise RemoteProtocolError(
            "the client's elicitation answer does not match the requested form: "
            f"{one_line(str(exc))}"
        ) from None
