"""Resources defined by plain Python functions: static URIs and RFC 6570 templates.

A static resource's function takes no arguments (besides the context); a template's
function takes the template's variables, converted to the annotated types. Either returns
text, bytes, :class:`ResourceContents` or a list of them (``server/resources.mdx``), or
data (a dict, a list, a struct, a dataclass), which is read as JSON text.
"""

from __future__ import annotations

import base64
import functools
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
from msgspec import UNSET

from ..aio import run_in_worker
from ..exceptions import LocalProtocolError, RPCError
from ..protocol import UriTemplate, non_finite_path
from ..types import (
    Annotations,
    ErrorCode,
    Icon,
    Meta,
    ReadResourceResult,
    Resource,
    ResourceContents,
    ResourceTemplate,
)
from ..types._echo import one_line, peer_text
from ._context import RequestContext
from ._signature import ArgumentError, FunctionSchema, function_schema

#: A scheme and its colon, then anything but whitespace (RFC 3986 section 3.1).
_ABSOLUTE_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S*\Z")
#: A simple expression (no operator) of one exploded variable: ``{path*}``.
_SIMPLE_EXPLODED = re.compile(r"\{([A-Za-z0-9_%][A-Za-z0-9_%.]*)\*\}")

__all__ = ["ResourceRegistry", "to_contents"]


@dataclass
class _Static:
    resource: Resource
    fn: Callable[..., Any]
    schema: FunctionSchema


@dataclass
class _Templated:
    template: ResourceTemplate
    matcher: UriTemplate
    fn: Callable[..., Any]
    schema: FunctionSchema


class ResourceRegistry:
    """Static resources and templates, in registration order."""

    def __init__(self) -> None:
        self._static: dict[str, _Static] = {}
        self._templates: dict[str, _Templated] = {}

    def __len__(self) -> int:
        return len(self._static) + len(self._templates)

    def resources(self) -> list[Resource]:
        return [entry.resource for entry in self._static.values()]

    def templates(self) -> list[ResourceTemplate]:
        return [entry.template for entry in self._templates.values()]

    def add(
        self,
        uri: str,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: Annotations | None = None,
        icons: Sequence[Icon] | None = None,
        meta: Meta | None = None,
    ) -> Resource | ResourceTemplate:
        """Register ``fn`` for a URI or a URI template (see :meth:`Server.resource`).

        Raises:
            LocalProtocolError: the URI is taken, the template is invalid, or the function's
                parameters do not match the template's variables.
        """
        # Template variables arrive as strings: convert them leniently ("7" -> 7 for an int).
        schema = function_schema(fn, name=name, description=description, strict=False)
        common: dict[str, Any] = {
            "name": schema.name,
            "title": UNSET if title is None else title,
            "description": UNSET if schema.description is None else schema.description,
            "mime_type": UNSET if mime_type is None else mime_type,
            "annotations": UNSET if annotations is None else annotations,
            "icons": UNSET if icons is None else list(icons),
            "meta": UNSET if meta is None else dict(meta),
        }
        params = {p.name for p in schema.parameters}
        if "{" in uri or "}" in uri:
            # A template (braces are not allowed in a URI, RFC 3986 section 2): an invalid
            # one is refused, not registered as a fixed URI with its braces.
            matcher = UriTemplate(uri)
            variables = set(matcher.variables)
            # Every variable a URI matches is passed to the function, so the two sets are
            # the same (a variable such as {a.b} can never be a parameter).
            if params != variables:
                raise LocalProtocolError(
                    f"the parameters of {schema.name!r} ({', '.join(sorted(params)) or 'none'}) "
                    f"must be the variables of the template {uri!r} "
                    f"({', '.join(sorted(variables)) or 'none'})"
                )
            for param in schema.parameters:
                if param.name in matcher.exploded and not _takes_string(param.schema):
                    raise LocalProtocolError(
                        f"the template variable {{{param.name}*}} of {uri!r} is matched as one "
                        f"string: declare {schema.name!r}'s parameter {param.name!r} as str"
                    )
            for name in _SIMPLE_EXPLODED.findall(uri):
                # FastMCP reads {path*} as a wildcard across '/'; in RFC 6570 it is the
                # explode modifier, and a simple value stops at '/' either way.
                warnings.warn(
                    f"the template variable {{{name}*}} of {uri!r} stops at '/' as {{{name}}} "
                    f"does (RFC 6570 explode, not a wildcard); for a value across path "
                    f"segments use {{+{name}}}",
                    stacklevel=3,  # (the decorated function: add, register, its caller)
                )
            if uri in self._templates:
                raise LocalProtocolError(f"a resource template {uri!r} is already registered")
            template = ResourceTemplate(uri_template=uri, **common)
            self._templates[uri] = _Templated(template, matcher, fn, schema)
            return template
        if any(p.required for p in schema.parameters):
            raise LocalProtocolError(
                f"the resource {uri!r} has no template variables, so {schema.name!r} must not "
                "take required parameters"
            )
        if not _ABSOLUTE_URI.match(uri):
            raise LocalProtocolError(
                f"a resource URI needs a scheme (RFC 3986 section 3.1), such as "
                f"'file:///notes.txt' or 'app://config': {uri!r}"
            )
        if uri in self._static:
            raise LocalProtocolError(f"a resource {uri!r} is already registered")
        resource = Resource(uri=uri, size=UNSET if size is None else size, **common)
        self._static[uri] = _Static(resource, fn, schema)
        return resource

    def remove(self, uri: str) -> bool:
        """Unregister a resource or template; returns whether it existed."""
        return (self._static.pop(uri, None) or self._templates.pop(uri, None)) is not None

    def variables_of(self, uri_template: str) -> list[str] | None:
        """The variables of a registered template, or ``None`` if there is no such one."""
        entry = self._templates.get(uri_template)
        return None if entry is None else list(entry.matcher.variables)

    def knows(self, uri: str) -> bool:
        """Whether ``uri`` names a registered resource or matches a template."""
        if uri in self._static:
            return True
        return any(entry.matcher.match(uri) is not None for entry in self._templates.values())

    async def read(
        self, ctx: RequestContext, uri: str, *, not_found_code: int
    ) -> list[ResourceContents] | ReadResourceResult:
        """Read a resource: its contents, or the whole result when the function returned
        one (e.g. with its own caching hints, ``ttl_ms`` / ``cache_scope``).

        Raises:
            RPCError: no such resource (``not_found_code``: -32002 before 2026-07-28, -32602
                after), or invalid template variables (-32602).
        """
        static = self._static.get(uri)
        if static is not None:
            value = await _call(static.fn, static.schema, ctx, {})
            if isinstance(value, ReadResourceResult):
                return value
            return to_contents(uri, value, static.resource.mime_type)
        for entry in self._templates.values():
            variables = entry.matcher.match(uri)
            if variables is None:
                continue
            try:
                kwargs = entry.schema.bind(variables)
            except ArgumentError as exc:
                raise RPCError.invalid_params(
                    f"Invalid resource URI {peer_text(uri)}: {one_line(exc.detail)}"
                ) from None
            value = await _call(entry.fn, entry.schema, ctx, kwargs)
            if isinstance(value, ReadResourceResult):
                return value
            return to_contents(uri, value, entry.template.mime_type)
        raise RPCError(not_found_code, "Resource not found", {"uri": uri})


def _takes_string(schema: dict[str, Any]) -> bool:
    """Whether a parameter's JSON Schema accepts a string (str, str | None, Any)."""
    if not schema or schema.get("type") == "string":
        return True
    kinds = schema.get("type")
    if isinstance(kinds, list) and "string" in kinds:
        return True
    return any(_takes_string(option) for option in schema.get("anyOf", ()))


async def _call(
    fn: Callable[..., Any], schema: FunctionSchema, ctx: RequestContext, kwargs: dict[str, Any]
) -> Any:
    if schema.context_param is not None:
        kwargs[schema.context_param] = ctx
    if schema.is_async:
        return await fn(**kwargs)
    return await run_in_worker(functools.partial(fn, **kwargs))


_PARTS = (ResourceContents, str, bytes, bytearray, memoryview)
_encode_json = msgspec.json.Encoder().encode


def to_contents(uri: str, value: Any, mime_type: Any = UNSET) -> list[ResourceContents]:
    """Turn a resource function's return value into contents parts.

    Text becomes ``text`` (``text/plain`` unless a MIME type was declared), bytes become a
    base64 ``blob`` (``application/octet-stream`` unless declared), a list or tuple of
    those one part each. Any other data (a dict, a list of numbers, a struct, a dataclass)
    becomes one ``text`` part of JSON (``application/json`` unless declared), as a tool's
    result does.

    Raises:
        RPCError: -32603 for ``None``, a value JSON cannot represent (an unsupported type,
            NaN or infinity), or a list mixing parts with data.
    """
    if isinstance(value, ResourceContents):
        return [value]
    if isinstance(value, str):
        mime = mime_type if isinstance(mime_type, str) else "text/plain"
        return [ResourceContents(uri=uri, mime_type=mime, text=value)]
    if isinstance(value, (bytes, bytearray, memoryview)):
        mime = mime_type if isinstance(mime_type, str) else "application/octet-stream"
        blob = base64.b64encode(bytes(value)).decode("ascii")
        return [ResourceContents(uri=uri, mime_type=mime, blob=blob)]
    if isinstance(value, (list, tuple)):
        parts = sum(isinstance(item, _PARTS) for item in value)
        if parts == len(value):  # (an empty list: no contents)
            return [part for item in value for part in to_contents(uri, item, mime_type)]
        if parts:
            raise _not_contents(
                f"a {type(value).__name__} mixing text, bytes or ResourceContents with data"
            )
    if value is None:
        raise _not_contents("None")
    return [_json_contents(uri, value, mime_type)]


def _json_contents(uri: str, value: Any, mime_type: Any) -> ResourceContents:
    try:
        encoded = _encode_json(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise _not_contents(f"{type(value).__name__}, which JSON cannot represent ({exc})") from exc
    if b"null" in encoded:  # where msgspec writes NaN and infinity
        found = non_finite_path(value, "the value")
        if found is not None:
            raise _not_contents(f"NaN or infinity ({found}), which JSON cannot represent")
    mime = mime_type if isinstance(mime_type, str) else "application/json"
    return ResourceContents(uri=uri, mime_type=mime, text=encoded.decode())


def _not_contents(what: str) -> RPCError:
    return RPCError(
        ErrorCode.INTERNAL_ERROR,
        f"Internal error: the resource function returned {what}; it returns text, bytes, "
        "ResourceContents or JSON data",
    )
