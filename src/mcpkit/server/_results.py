"""What a tool's return annotation means for ``outputSchema`` and ``structuredContent``.

``outputSchema`` must be an object schema (``"type": "object"``, ``server/tools.mdx``
2025-11-25 "Output Schema"), so:

* an object-like type (msgspec Struct, dataclass, TypedDict, ``dict[str, X]``, pydantic
  model) is the output schema itself, and the return value is the structured content;
* any other data type (``int``, ``list[X]``, tuples, ``Literal``, unions ...) is wrapped:
  ``{"type": "object", "properties": {"result": <schema>}, "required": ["result"]}``, and
  the structured content is ``{"result": value}``;
* unstructured returns get no output schema: no annotation, ``Any``/``object``, ``None``,
  ``str``, content blocks (or lists of them), and ``CallToolResult``. ``str`` is here on
  purpose: a tool returning text means text for the model, and wrapping every such tool in
  ``{"result": "..."}`` would only duplicate it.
"""

from __future__ import annotations

import collections.abc
import inspect
import typing
from collections.abc import Callable, Iterable
from typing import Any, Final

import msgspec

from ..exceptions import LocalProtocolError, MCPError
from ..protocol import non_finite_path
from ..types import (
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)
from ._explain import Segment, explain_msgspec, explain_pydantic, pointer
from ._pydantic import pydantic_adapter, pydantic_error_type, pydantic_loaded, uses_pydantic
from ._typehooks import JSON_ENCODER, dec_hook
from ._typeschema import UNION_TYPES, SchemaSet, msgspec_schema_error

__all__ = [
    "ResultError",
    "Structurer",
    "is_content_sequence",
    "output_for",
    "refuse_non_finite",
]

_CONTENT: Final = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)
_SEQUENCES: Final = (
    list,
    tuple,
    collections.abc.Sequence,
    collections.abc.MutableSequence,
    collections.abc.Iterable,
)


class ResultError(MCPError, ValueError):
    """A function's return value does not match its return annotation (a bug in the
    function, not in the client's request).

    Attributes:
        errors: one ``(JSON pointer into the structured content, sentence)`` pair per problem.
    """

    def __init__(self, errors: Iterable[tuple[str, str]]) -> None:
        self.errors = list(errors)
        super().__init__("Invalid result: " + "; ".join(text for _, text in self.errors))


class Structurer:
    """Turns return values of one annotation into checked, JSON-able structured content."""

    __slots__ = ("_adapter", "_error", "_schema", "_type", "wraps")

    def __init__(self, tp: Any, adapter: Any, wraps: bool, schema: dict[str, Any]) -> None:
        self._type = tp
        self._adapter = adapter
        self._error = pydantic_error_type()
        self.wraps = wraps
        self._schema = schema

    def structure(self, value: Any) -> Any:
        """The structured content for ``value``.

        Raises:
            ResultError: ``value`` does not match the annotation.
        """
        base: list[Segment] = ["result"] if self.wraps else []
        try:
            # (NaN and infinity come out of both as null: a changed value, which would
            # pass a nullable annotation, and fail any other as a confusing "got null".)
            if self._adapter is not None:
                validated = self._adapter.validate_python(value)
                data = self._adapter.dump_python(validated, mode="json")
                adapter = self._adapter
                refuse_non_finite(_encode_json(data), lambda: adapter.dump_python(validated), base)
            else:
                # Through JSON and back gives exactly what the client will see (lists, not
                # tuples; string keys); converting that to the annotation checks it,
                # constraints included.
                encoded = _encode_json(value)
                refuse_non_finite(encoded, lambda: value, base)
                data = msgspec.json.decode(encoded)
                msgspec.convert(data, self._type, strict=True, str_keys=True, dec_hook=dec_hook)
        except msgspec.ValidationError as exc:
            path, text = explain_msgspec(
                exc,
                data,
                self._type,
                strict=True,
                base=base,
                schema=self._schema,
                root="the result",
            )
            raise ResultError([(pointer(path), text)]) from None
        except self._error as exc:
            problems = explain_pydantic(exc, base=base, root="the result")
            raise ResultError([(pointer(path), text) for path, text in problems]) from None
        except TypeError as exc:
            raise ResultError([(pointer(base), f"the result is not JSON data: {exc}")]) from None
        return {"result": data} if self.wraps else data


_encode_json: Final = JSON_ENCODER.encode


def refuse_non_finite(
    encoded: bytes, plain: Callable[[], Any], base: list[Segment] | None = None
) -> None:
    """Refuse a result holding NaN or infinity, given its JSON (``encoded``) and, to look
    into only when that holds a ``null`` (where msgspec and pydantic's JSON mode write
    them), the Python value (``plain()``): JSON has neither, and ``null`` would hand the
    client a value the function never returned.

    Raises:
        ResultError: there is one.
    """
    if b"null" not in encoded:
        return
    found = non_finite_path(plain(), "the result")
    if found is not None:
        why = f"{found} is not a finite number (JSON has no NaN or infinity)"
        raise ResultError([(pointer(base or []), why)])


def output_for(
    annotation: Any, label: str, returns: str | None
) -> tuple[dict[str, Any] | None, Structurer | None]:
    """The output schema and structurer for a return annotation (``None, None`` when the
    return is unstructured); ``returns`` is the docstring's description of the result.

    Raises:
        LocalProtocolError: the return type has no JSON Schema.
    """
    if _unstructured(annotation):
        return None, None
    schemas = SchemaSet()
    by_pydantic = uses_pydantic(annotation) or (
        pydantic_loaded() and msgspec_schema_error(annotation) is not None
    )
    try:
        if by_pydantic:
            schema = schemas.add_pydantic(annotation, serialization=True)
        else:
            schema = schemas.add_msgspec([annotation])[0]
    except Exception as exc:
        raise LocalProtocolError(
            f"{label!r}: the return type {annotation!r} has no JSON Schema: "
            f"{' '.join(str(exc).split())}"
        ) from None
    root = schemas.inline(schema)
    wraps = root.get("type") != "object"
    if wraps:
        if returns and "description" not in schema:
            schema = {**schema, "description": returns}
        root = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
    elif returns and "description" not in root:
        root = {**root, "description": returns}
    document = schemas.document(root)
    adapter = pydantic_adapter(annotation) if by_pydantic else None
    return document, Structurer(annotation, adapter, wraps, document)


def _strip(tp: Any) -> Any:
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def _is_content(tp: Any) -> bool:
    tp = _strip(tp)
    if typing.get_origin(tp) in UNION_TYPES:
        return all(_is_content(arg) for arg in typing.get_args(tp))
    return isinstance(tp, type) and issubclass(tp, _CONTENT)


def is_content_sequence(tp: Any) -> bool:
    """Whether an annotation is a sequence of content blocks (``list[ImageContent]``): an
    empty one is then no content, not the JSON text ``[]``."""
    tp = _strip(tp)
    if typing.get_origin(tp) not in _SEQUENCES:
        return False
    items = [arg for arg in typing.get_args(tp) if arg is not Ellipsis]
    return bool(items) and all(_is_content(arg) for arg in items)


def _unstructured(tp: Any) -> bool:
    tp = _strip(tp)
    if tp in (inspect.Signature.empty, Any, object, None, type(None), str):
        return True
    if isinstance(tp, type) and issubclass(tp, (*_CONTENT, CallToolResult)):
        return True
    origin = typing.get_origin(tp)
    if origin in UNION_TYPES:
        return all(_unstructured(arg) for arg in typing.get_args(tp))
    return origin in _SEQUENCES and is_content_sequence(tp)
