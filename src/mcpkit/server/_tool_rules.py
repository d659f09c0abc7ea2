"""What every tool has to follow, whichever API registered it (:class:`LowLevelServer` or
the decorator API): the rules a definition is checked against before it is registered, the
tool error for arguments that break its input schema, and what the model and the server's
log are told when a tool fails."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any, Final

from ..exceptions import ConnectionClosedError, LocalProtocolError, ToolError
from ..protocol import ParamHeader, SchemaValidator, param_headers
from ..types import CallToolResult, TextContent, Tool

__all__ = ["arguments_refused", "checked_tool", "invalid_arguments", "tool_error", "tool_failure"]

logger = logging.getLogger("mcpkit.server")

# Tool names (server/tools.mdx 2025-11-25, SEP-986): 1-128 of [A-Za-z0-9_.-].
_TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_.\-]{1,128}")


def checked_tool(tool: Tool) -> tuple[ParamHeader, ...]:
    """Check a tool definition before it is registered; return the parameters it mirrors
    into ``Mcp-Param-*`` headers (``x-mcp-header``).

    Raises:
        LocalProtocolError: the name breaks the 2025-11-25 naming rules (1-128 of
            ``A-Z a-z 0-9 _ - .``), the input schema is not an object schema (its root
            must say ``"type": "object"``), or it has an invalid ``x-mcp-header``
            annotation (see :func:`mcpkit.protocol.param_headers`).
    """
    if not _TOOL_NAME.fullmatch(tool.name):
        raise LocalProtocolError(
            f"invalid tool name {tool.name!r}: use 1-128 letters, digits, '_', '-' or '.'"
        )
    schema: object = tool.input_schema  # not checked when the Tool was built
    # Every revision's schema.json requires inputSchema.type == "object" (the arguments are
    # always one JSON object); a strict client (the TypeScript SDK) refuses the whole
    # tools/list, every other tool with it, when one tool breaks this.
    if not isinstance(schema, dict) or schema.get("type") != "object":
        if not isinstance(schema, dict):
            said = f"it is a {type(schema).__name__}"
        else:
            said = f"its type is {schema['type']!r}" if "type" in schema else "it has no type"
        raise LocalProtocolError(
            f'tool {tool.name!r}: its input schema must say "type": "object" at the root '
            f"(tool arguments are always a JSON object); {said}"
        )
    try:
        return param_headers(schema)
    except LocalProtocolError as exc:
        raise LocalProtocolError(f"tool {tool.name!r}: {exc}") from None


def invalid_arguments(
    validator: SchemaValidator, arguments: Mapping[str, Any]
) -> CallToolResult | None:
    """The tool error for ``arguments`` that break the tool's input schema, naming each
    problem (``None`` when they fit). Servers MUST validate tool inputs (server/tools.mdx,
    "Security Considerations"); a tool error lets the model correct the call."""
    if validator.is_valid(arguments):  # the common case, without building messages
        return None
    return arguments_refused(validator, arguments)


def arguments_refused(validator: SchemaValidator, arguments: Any) -> CallToolResult:
    """The tool error for ``arguments`` that ``validator.is_valid`` refused (a caller on a
    hot path checks ``is_valid`` itself, one call less per ``tools/call``)."""
    detail = "; ".join(error.message for error in validator.errors(arguments))
    return tool_error(f"Invalid arguments: {detail}")


def tool_error(text: str) -> CallToolResult:
    """A tool execution error (``isError: true``) the model can read."""
    return CallToolResult(content=[TextContent(text=text)], is_error=True)


def tool_failure(name: str, exc: Exception | SystemExit, *, mask: bool) -> CallToolResult:
    """The tool error for tool ``name`` ending in ``exc``, something else than the
    :class:`ToolError` or :class:`~mcpkit.exceptions.RPCError` it may raise on purpose; the
    traceback goes to the ``mcpkit.server`` log, never to the client (server/tools.mdx,
    "Error Handling"). ``mask`` keeps the exception's message (a secret, a path) from the
    model too."""
    if isinstance(exc, SystemExit):
        # sys.exit() in a tool (argparse does it on a bad option, which the model
        # chooses): the call's failure, never the server's end.
        logger.error("tool %r called sys.exit(%r)", name, exc.code)
        if mask:
            return tool_error(f"Tool {name!r} failed")
        return tool_error(f"Tool {name!r} failed: it called sys.exit({exc.code!r})")
    reported = _tool_errors(exc)
    if reported:  # ToolErrors raised in a task group the tool ran
        return tool_error("; ".join(str(error) for error in reported))
    if isinstance(exc, ConnectionClosedError):
        # Most often the client left while the tool was asking it something (sampling,
        # elicitation) or telling it (progress, logs): ordinary churn, not an error of the
        # server's; nobody may be there to read the answer.
        logger.info("tool %r ended: %s", name, exc)
    else:
        logger.exception("tool %r failed", name, exc_info=exc)
    if mask:
        return tool_error(f"Tool {name!r} failed")
    return tool_error(f"Tool {name!r} failed: {type(exc).__name__}: {exc}")


def _tool_errors(exc: BaseException) -> list[ToolError]:
    """The ToolErrors an exception group holds, when it holds nothing else."""
    inner = getattr(exc, "exceptions", None)  # (BaseExceptionGroup, also 3.10's backport)
    if not isinstance(inner, tuple) or not inner:
        return []
    found: list[ToolError] = []
    for error in inner:
        if isinstance(error, ToolError):
            found.append(error)
        else:
            nested = _tool_errors(error)
            if not nested:
                return []
            found.extend(nested)
    return found
