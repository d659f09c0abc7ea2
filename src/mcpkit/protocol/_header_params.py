"""Tool parameters mirrored into ``Mcp-Param-{Name}`` headers: the ``x-mcp-header``
annotation rules and where each annotated value sits in the call's arguments (sans-I/O).

2026-07-28 ``basic/transports/streamable-http.mdx``, "Custom Headers from Tool Parameters"
(SEP-2243), and ``server/tools.mdx``, "x-mcp-header".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..exceptions import LocalProtocolError

__all__ = ["ANNOTATION", "ParamHeader", "annotation_problem", "param_headers"]

#: The schema keyword that marks a property as mirrored into a header.
ANNOTATION: Final = "x-mcp-header"
ParamType = Literal["string", "integer", "boolean"]
# streamable-http.mdx "Schema Extension": the name is an RFC 9110 §5.1 field-name token
# (1*tchar), which also keeps out CR, LF, every other control character and non-ASCII.
_TOKEN: Final = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
# "MUST only be applied to parameters with primitive types (integer, string, boolean).
# Parameters with type `number` are not permitted."
_PRIMITIVE: Final = ("string", "integer", "boolean")
# Keywords whose values are instances, not schemas: an "x-mcp-header" key inside a default
# or an enum member is data, not an annotation.
_DATA_KEYWORDS: Final = frozenset({"const", "enum", "default", "examples"})


@dataclass(frozen=True, slots=True)
class ParamHeader:
    """One annotated tool parameter.

    Attributes:
        name: the ``x-mcp-header`` value, e.g. ``"Region"``.
        path: the chain of ``properties`` keys from the schema root to the parameter.
        type: the parameter's JSON type: ``"string"``, ``"integer"`` or ``"boolean"``.
    """

    name: str
    path: tuple[str, ...]
    type: ParamType

    @property
    def header(self) -> str:
        """The header's name, ``Mcp-Param-{name}`` (compare case-insensitively)."""
        return f"Mcp-Param-{self.name}"

    @property
    def where(self) -> str:
        """The parameter's place in the arguments, for messages (``arguments.a.b``)."""
        return ".".join(("arguments", *self.path))

    def value_in(self, arguments: Any) -> Any:
        """The argument value at :attr:`path`, or ``None`` when there is none (absent or
        ``null``: streamable-http.mdx says the header is then omitted)."""
        value = arguments
        for key in self.path:
            if not isinstance(value, Mapping):
                return None
            value = value.get(key)
        return value


def _annotated(schema: Mapping[str, Any]) -> list[tuple[tuple[str, ...] | None, Mapping[str, Any]]]:
    """Every schema object carrying ``x-mcp-header``, in document order, with its chain of
    ``properties`` keys; ``None`` for one not statically reachable (under ``items``,
    ``oneOf``, ``if``, ``$defs``, ... anywhere but a pure ``properties`` chain)."""
    found: list[tuple[tuple[str, ...] | None, Mapping[str, Any]]] = []
    queue: list[tuple[Any, tuple[str, ...] | None]] = [(schema, ())]
    index = 0
    while index < len(queue):
        node, path = queue[index]
        index += 1
        if isinstance(node, list):
            queue.extend((item, None) for item in node)
            continue
        if not isinstance(node, Mapping):
            continue
        if ANNOTATION in node:
            found.append((path, node))
        for key, value in node.items():
            if key in _DATA_KEYWORDS:
                continue
            if key == "properties" and isinstance(value, Mapping):
                queue.extend(
                    (sub, None if path is None else (*path, str(prop)))
                    for prop, sub in value.items()
                )
            elif isinstance(value, (Mapping, list)):
                queue.append((value, None))
    return found


def _collect(input_schema: Mapping[str, Any]) -> tuple[list[ParamHeader], str | None]:
    headers: list[ParamHeader] = []
    seen: dict[str, str] = {}
    for path, node in _annotated(input_schema):
        name = node[ANNOTATION]
        shown = repr(name)[:80]
        if not path:
            return headers, (
                f"{ANNOTATION} {shown} is not on a property reachable from the schema root "
                "through 'properties' alone (not under items, oneOf/anyOf/allOf/not, "
                "if/then/else or $ref)"
            )
        where = ".".join(path)
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            return headers, (
                f"{ANNOTATION} {shown} on {where!r} is not an HTTP field-name token "
                "(letters, digits and !#$%&'*+-.^_`|~; no spaces, colons or control characters)"
            )
        kind = node.get("type")
        if kind not in _PRIMITIVE:
            return headers, (
                f"{ANNOTATION} {name!r} is on {where!r} of type {kind!r}; only string, "
                "integer and boolean parameters may be mirrored into headers"
            )
        folded = name.lower()
        if folded in seen:
            return headers, (
                f"{ANNOTATION} {name!r} on {where!r} repeats {seen[folded]!r} "
                "(names are compared case-insensitively)"
            )
        seen[folded] = name
        headers.append(ParamHeader(name, path, kind))
    return headers, None


def annotation_problem(input_schema: Mapping[str, Any]) -> str | None:
    """Why the ``x-mcp-header`` annotations of a tool's ``inputSchema`` are invalid, or
    ``None`` when they are valid (or absent).

    A client drops a tool with a problem from its ``tools/list`` view
    (streamable-http.mdx, "Schema Extension")."""
    return _collect(input_schema)[1]


def param_headers(input_schema: Mapping[str, Any]) -> tuple[ParamHeader, ...]:
    """The parameters of a tool's ``inputSchema`` mirrored into ``Mcp-Param-*`` headers,
    in document order (empty without annotations).

    Raises:
        LocalProtocolError: an invalid annotation: not an HTTP token, on a non-primitive
            or ``number`` parameter, repeated case-insensitively, or not reachable from
            the root through ``properties`` alone.
    """
    headers, problem = _collect(input_schema)
    if problem is not None:
        raise LocalProtocolError(f"invalid tool input schema: {problem}")
    return tuple(headers)
