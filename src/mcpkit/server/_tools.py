"""Tools defined by plain Python functions: registration, listing and calling.

A call validates its arguments before the function runs, runs a sync function in a worker
thread so it never blocks the event loop, and turns whatever the function returns into a
``CallToolResult``. Failures are tool execution errors (``isError: true``) the model can
read and act on, never a traceback (``server/tools.mdx``, "Error Handling").
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec
from msgspec import UNSET

from ..aio import run_in_worker
from ..exceptions import LocalProtocolError, RPCError, ToolError
from ..protocol import ParamHeader, SchemaValidator, compile_schema
from ..types import (
    AudioContent,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    Icon,
    ImageContent,
    Meta,
    ResourceLink,
    TextContent,
    Tool,
    ToolAnnotations,
)
from ..types._echo import peer_text
from ._callables import callable_kind, refuse_unnamed_lambda, registered_name
from ._context import RequestContext
from ._docstrings import parse_docstring
from ._results import refuse_non_finite
from ._signature import ArgumentError, FunctionSchema, ResultError, function_schema
from ._tool_rules import checked_tool, invalid_arguments, tool_error, tool_failure
from ._typehooks import JSON_ENCODER, enc_hook
from ._typeschema import is_context, type_hints

__all__ = ["FunctionTool", "ToolRegistry"]

logger = logging.getLogger("mcpkit.server")

_CONTENT = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)


@dataclass
class FunctionTool:
    """A registered tool: its definition and how to run it."""

    tool: Tool
    fn: Callable[..., Any]
    #: None for a hand-given schema served by a ``**kwargs`` function (no Python signature
    #: to derive anything from: the arguments object is passed as it is).
    schema: FunctionSchema | None
    raw_validator: Any = None  # a compiled JSON Schema validator for hand-given schemas
    context_param: str | None = None
    is_async: bool = True
    #: The parameters mirrored into ``Mcp-Param-*`` headers (``x-mcp-header``).
    param_headers: tuple[ParamHeader, ...] = ()
    #: The declared output schema, compiled (``None`` without one): checks structured
    #: content the function built itself (a hand-given schema, a ``CallToolResult``).
    output_validator: SchemaValidator | None = None

    @property
    def name(self) -> str:
        return self.tool.name


class ToolRegistry:
    """The tools of a server, in registration order."""

    def __init__(self, *, strict: bool = True, mask_errors: bool = False) -> None:
        self.strict = strict
        self.mask_errors = mask_errors
        self._tools: dict[str, FunctionTool] = {}

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def get(self, name: str) -> FunctionTool | None:
        return self._tools.get(name)

    def definitions(self) -> list[Tool]:
        return [entry.tool for entry in self._tools.values()]

    def add(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: Sequence[Icon] | None = None,
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        meta: Meta | None = None,
        strict: bool | None = None,
    ) -> FunctionTool:
        """Register ``fn`` as a tool (see :meth:`Server.tool`).

        Raises:
            LocalProtocolError: the name is taken or invalid, the signature cannot be
                described (``*args``, unresolvable annotations, ...), or a hand-given
                input schema does not say ``"type": "object"`` at its root or has an
                invalid ``x-mcp-header`` annotation, or a pattern is refused (malformed, or
                only Python's backtracking engine can run it and could take too long).
        """
        refuse_unnamed_lambda(fn, name)
        raw_validator = None
        if input_schema is not None:
            raw_validator = compile_schema(input_schema)
        schema: FunctionSchema | None
        if input_schema is not None and _takes_var_keyword(fn):
            # The hand-given schema may name properties that are not Python identifiers, or
            # leave additional properties open: the function takes them all as **kwargs.
            schema = None
            context_param = _context_param(fn)
            tool_name = registered_name(fn, name)
            is_async = callable_kind(fn, tool_name)[1]
            tool_description = description or _summary(fn)
            derived_output = None
        else:
            schema = function_schema(
                fn,
                name=name,
                description=description,
                strict=self.strict if strict is None else strict,
            )
            context_param, is_async = schema.context_param, schema.is_async
            tool_name, tool_description = schema.name, schema.description
            derived_output = schema.output_schema
        final_output = dict(output_schema) if output_schema is not None else derived_output
        assert input_schema is not None or schema is not None
        tool = Tool(
            name=tool_name,
            title=UNSET if title is None else title,
            description=UNSET if tool_description is None else tool_description,
            # A hand-given schema is kept exactly as given, 2020-12 keywords included.
            input_schema=dict(input_schema) if input_schema is not None else schema.input_schema,  # type: ignore[union-attr]
            output_schema=UNSET if final_output is None else final_output,
            annotations=UNSET if annotations is None else annotations,
            icons=UNSET if icons is None else list(icons),
            meta=UNSET if meta is None else dict(meta),
        )
        mirrored = checked_tool(tool)
        if tool.name in self._tools:
            raise LocalProtocolError(f"a tool named {tool.name!r} is already registered")
        output_validator = compile_schema(final_output) if final_output is not None else None
        entry = FunctionTool(
            tool, fn, schema, raw_validator, context_param, is_async, mirrored, output_validator
        )
        self._tools[tool.name] = entry
        return entry

    def remove(self, name: str) -> bool:
        """Unregister a tool; returns whether it existed."""
        return self._tools.pop(name, None) is not None

    async def call(
        self, ctx: RequestContext, name: str, arguments: Mapping[str, Any]
    ) -> CallToolResult:
        """Run a tool and describe the outcome as a ``CallToolResult``.

        Raises:
            RPCError: unknown tool (-32602), or an RPCError the tool raised on purpose.
        """
        entry = self._tools.get(name)
        if entry is None:
            raise RPCError.invalid_params(f"Unknown tool: {peer_text(name)}")
        schema = entry.schema
        try:
            if entry.raw_validator is not None:
                refused = invalid_arguments(entry.raw_validator, dict(arguments))
                if refused is not None:
                    return refused
                if schema is None:  # a **kwargs function: the arguments as they are
                    kwargs = dict(arguments)
                else:
                    # A typed function still gets its parameters converted (a dataclass,
                    # a datetime); members the hand-given schema allows but the function
                    # does not take are left out, not passed as unexpected keywords.
                    known = schema.parameter_names
                    kwargs = schema.bind({k: v for k, v in arguments.items() if k in known})
            else:
                assert schema is not None
                kwargs = schema.bind(arguments)
        except ArgumentError as exc:
            return tool_error(str(exc))
        if entry.context_param is not None:
            kwargs[entry.context_param] = ctx
        try:
            if entry.is_async:
                value = await entry.fn(**kwargs)
            else:
                value = await run_in_worker(functools.partial(entry.fn, **kwargs))
            return self._result(entry, value)
        except RPCError as exc:
            if not exc.received:
                raise
            return tool_error(f"Tool {name!r} failed: {exc}")
        except ToolError as exc:
            return tool_error(str(exc))
        except ResultError as exc:
            logger.error("tool %r returned an invalid result: %s", name, exc)
            return tool_error(f"Tool {name!r} returned an invalid result")
        except (Exception, SystemExit) as exc:
            return tool_failure(name, exc, mask=self.mask_errors)

    def _result(self, entry: FunctionTool, value: Any) -> CallToolResult:
        # A declared outputSchema is a promise: "Servers MUST provide structured results
        # that conform to this schema" (server/tools.mdx 2025-06-18, "Output Schema").
        # A tool error is exempt: it reports a failure, not a result.
        validator = entry.output_validator
        if isinstance(value, CallToolResult):
            if validator is not None and not value.is_error:
                if value.structured_content is UNSET:
                    raise ResultError([("", _NO_STRUCTURED)])
                _conform(validator, value.structured_content)
            return value
        schema = entry.schema
        no_blocks = (
            isinstance(value, (list, tuple))
            and not value
            and schema is not None
            and schema.returns_content  # list[ImageContent] and no image: no content
        )
        if no_blocks or _is_content(value):
            if validator is None:
                return CallToolResult(content=[] if no_blocks else to_content(value))
            if schema is None or schema.output_schema is None:
                raise ResultError([("", _NO_STRUCTURED)])
            # Blocks returned under a data annotation (``-> list[Any]``): they are the
            # content, and, as data, the structured content its schema promises.
            structured = schema.structure(value)
            if entry.tool.output_schema is not schema.output_schema:
                _conform(validator, structured)
            return CallToolResult(content=to_content(value), structured_content=structured)
        if validator is not None:
            if schema is not None and schema.output_schema is not None:
                structured = schema.structure(value)
                if entry.tool.output_schema is not schema.output_schema:
                    _conform(validator, structured)  # the schema advertised is a hand-given one
            else:  # a hand-given output schema: the value as it is, checked against it
                try:
                    structured = msgspec.to_builtins(value, enc_hook=enc_hook)
                except TypeError as exc:
                    raise ResultError([("", f"the result is not JSON: {exc}")]) from exc
                _conform(validator, structured)
            # Structured results also travel as text for clients without structured
            # output (server/tools.mdx 2025-06-18, "Structured Content").
            encoded = JSON_ENCODER.encode(structured)
            refuse_non_finite(encoded, lambda: structured)
            text = encoded.decode()
            return CallToolResult(content=[TextContent(text=text)], structured_content=structured)
        return CallToolResult(content=to_content(value))


_NO_STRUCTURED: Final = "the tool declares an outputSchema but returned no structured content"


def _conform(validator: SchemaValidator, structured: Any) -> None:
    errors = validator.errors(structured)
    if errors:
        raise ResultError(("/" + "/".join(map(str, e.path)), e.message) for e in errors)


def _takes_var_keyword(fn: Callable[..., Any]) -> bool:
    return any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in inspect.signature(fn).parameters.values()
    )


def _context_param(fn: Callable[..., Any]) -> str | None:
    signature = inspect.signature(fn)
    hints = type_hints(fn, signature, fn.__name__)
    for name, parameter in signature.parameters.items():
        if parameter.kind is not inspect.Parameter.VAR_KEYWORD and is_context(hints.get(name)):
            return str(name)
    return None


def _summary(fn: Callable[..., Any]) -> str | None:
    return parse_docstring(inspect.getdoc(fn) or "").description or None


def _is_content(value: Any) -> bool:
    if isinstance(value, _CONTENT):
        return True
    return (
        isinstance(value, (list, tuple))
        and bool(value)
        and all(isinstance(v, _CONTENT) for v in value)
    )


def to_content(value: Any) -> list[ContentBlock]:
    """Turn a tool's return value into content blocks.

    ``None`` is no content; text stays text; content blocks pass through; anything else is
    encoded as JSON text.

    Raises:
        ResultError: the value cannot be encoded as JSON.
    """
    if value is None:
        return []
    if isinstance(value, str):
        return [TextContent(text=value)]
    if isinstance(value, _CONTENT):
        return [value]
    if _is_content(value):
        return list(value)
    try:
        encoded = JSON_ENCODER.encode(value)
    except (TypeError, ValueError) as exc:
        raise ResultError([("", f"the result cannot be encoded as JSON: {exc}")]) from exc
    refuse_non_finite(encoded, lambda: value)  # (the text would say null for a NaN)
    return [TextContent(text=encoded.decode())]
