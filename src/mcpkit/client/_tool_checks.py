"""What the client checks in the tools a server lists, and in their results: invalid
``x-mcp-header`` annotations (2026-07-28) and structured content against the tool's
``outputSchema`` (2025-06-18 and later)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import msgspec
from msgspec import UNSET

from ..exceptions import LocalProtocolError, RemoteProtocolError
from ..protocol import SchemaValidator, annotation_problem, compile_schema
from ..types import V2025_06_18, CallToolResult, ListToolsResult, Tool
from ..types._echo import peer_text

__all__ = ["OutputChecks", "screen_tools"]

logger = logging.getLogger("mcpkit.client")


def screen_tools(result: ListToolsResult, known: dict[str, Tool] | None) -> ListToolsResult:
    """2026-07-28: drop tools whose ``x-mcp-header`` annotations are invalid (clients MUST
    exclude them, ``basic/transports/streamable-http.mdx`` "Schema Extension") and
    remember the others' definitions in ``known`` for their calls' headers."""
    kept = []
    for tool in result.tools:
        problem = annotation_problem(tool.input_schema)
        if problem is not None:
            logger.warning("ignoring tool %r: %s", tool.name, problem)
            continue
        kept.append(tool)
    if known is not None:
        known.update((tool.name, tool) for tool in kept)
    if len(kept) == len(result.tools):
        return result
    return msgspec.structs.replace(result, tools=kept)


#: Most tools whose output schemas are kept: a server whose tool set keeps changing
#: (per-job tool names) must not grow the table for the life of the client.
_MAX_TOOLS = 1024


class OutputChecks:
    """The output schemas of the tools seen in ``tools/list``, compiled (``None``: not
    checkable); the most recently listed :data:`_MAX_TOOLS` (a tool forgotten is checked
    again once listed again)."""

    __slots__ = ("_validators",)

    def __init__(self) -> None:
        self._validators: dict[str, SchemaValidator | None] = {}

    def learn(self, tools: Sequence[Tool], version: str) -> None:
        """Take the output schemas of listed ``tools``. outputSchema and structured
        content exist from 2025-06-18: an older revision's tool may carry the member,
        meaning nothing (a plain result is not refused)."""
        structured = version >= V2025_06_18
        for tool in tools:
            self._validators.pop(tool.name, None)  # (re-listed: now the newest)
            if structured and isinstance(tool.output_schema, dict):
                if len(self._validators) >= _MAX_TOOLS:
                    del self._validators[next(iter(self._validators))]  # the oldest
                try:
                    # The server's schema: its patterns may not backtrack exponentially.
                    validator = compile_schema(tool.output_schema, untrusted=True)
                    self._validators[tool.name] = validator
                except LocalProtocolError as exc:
                    logger.warning("cannot check the output of tool %r: %s", tool.name, exc)
                    self._validators[tool.name] = None

    def check(self, name: str, result: CallToolResult, *, tolerant: bool) -> None:
        """Check structured content against the tool's ``outputSchema`` (clients SHOULD,
        ``server/tools.mdx`` 2025-06-18 "Output Schema"), when the tool was listed.

        Raises:
            RemoteProtocolError: it does not match (only logged when ``tolerant``).
        """
        validator = self._validators.get(name)
        if validator is None or result.is_error is True:
            return
        if result.structured_content is UNSET:
            problem = "declares an outputSchema but returned no structured content"
        else:
            errors = validator.errors(result.structured_content, limit=3)
            if not errors:
                return
            problem = "returned structured content that does not match its outputSchema: "
            problem += "; ".join(error.message for error in errors)
        if tolerant:
            logger.warning("tool %r %s", name, problem)
            return
        raise RemoteProtocolError(f"tool {peer_text(name)} {problem}")
