"""Typed methods for every client-to-server request of the handshake era."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, TypeVar, get_args

from msgspec import UNSET, UnsetType

from ..aio import ProgressCallback
from ..exceptions import (
    CapabilityError,
    LocalProtocolError,
    RemoteProtocolError,
    RPCError,
    ToolError,
)
from ..types import (
    V2025_06_18,
    CallToolRequestParams,
    CallToolResult,
    CompleteRequestParams,
    CompleteResult,
    CompletionArgument,
    CompletionContext,
    CompletionReference,
    EmptyResult,
    ErrorCode,
    GetPromptRequestParams,
    GetPromptResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsRequestParams,
    ListToolsResult,
    LoggingLevel,
    PaginatedRequestParams,
    Prompt,
    PromptReference,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ResourceTemplateReference,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextContent,
    Tool,
    UnsubscribeRequestParams,
)
from ._tool_checks import OutputChecks, screen_tools

__all__ = ["ClientMethods"]

if TYPE_CHECKING:
    from ._cache import ResultCache

logger = logging.getLogger("mcpkit.client")

T = TypeVar("T")
Page = TypeVar("Page")
Item = TypeVar("Item")
Timeout = float | None | UnsetType
_LOG_LEVELS: Final[tuple[str, ...]] = get_args(LoggingLevel)
_MAX_PAGES: Final = 10_000


class ClientMethods:
    """The MCP methods, built on :meth:`request` (implemented by :class:`Client`)."""

    tolerant: bool = False
    cache: ResultCache | None = None
    #: The output schemas of the tools listed so far (set by :class:`Client`).
    _output_checks: OutputChecks

    if TYPE_CHECKING:  # provided by Client (a stub here would shadow it in the MRO)

        @property
        def protocol_version(self) -> str: ...

    async def request(
        self,
        method: str,
        params: Any,
        result_type: type[T],
        *,
        timeout: Timeout = UNSET,
        max_timeout: Timeout = UNSET,
        on_progress: ProgressCallback | None = None,
    ) -> T:
        raise NotImplementedError

    # -- utilities ----------------------------------------------------------------------

    def _is_modern(self) -> bool:
        """Whether the 2026-07-28 era is in use (implemented by :class:`Client`)."""
        return False

    def _tool_definitions(self) -> dict[str, Tool] | None:
        """Where the transport looks up a called tool's definition (for ``Mcp-Param-*``
        headers), if it uses them (implemented by :class:`Client`)."""
        return None

    def _use_log_level(self, level: LoggingLevel) -> None:
        raise NotImplementedError

    async def _discover_now(self, timeout: Timeout) -> None:
        raise NotImplementedError

    def _stateless_only_not(self, what: str) -> CapabilityError:
        return CapabilityError(
            f"{what} does not exist in MCP 2026-07-28 (this server speaks it); "
            "use subscriptions/listen"
        )

    async def ping(self, *, timeout: Timeout = UNSET) -> None:
        """Check that the server answers: ``ping``, or on 2026-07-28 (which has no
        ``ping``) an uncached ``server/discover``.

        Raises:
            RequestTimeoutError: no answer in time.
        """
        if self._is_modern():
            await self._discover_now(timeout)
            return
        await self.request("ping", UNSET, EmptyResult, timeout=timeout)

    async def set_logging_level(self, level: LoggingLevel) -> None:
        """Ask the server to send log messages at ``level`` and above: ``logging/setLevel``,
        or on 2026-07-28 the ``logLevel`` that every later request carries (logging is
        deprecated there; this warns once).

        Raises:
            RPCError: the server does not support logging or refused the level.
            LocalProtocolError: ``level`` is not a logging level (on 2026-07-28 it would
                travel with, and fail, every later request).
        """
        if level not in _LOG_LEVELS:
            raise LocalProtocolError(
                f"unknown logging level {level!r}; one of: {', '.join(_LOG_LEVELS)}"
            )
        if self._is_modern():
            self._use_log_level(level)
            return
        await self.request("logging/setLevel", SetLevelRequestParams(level=level), EmptyResult)

    async def _pages(
        self,
        fetch: Callable[[str | None], Any],
        items: Callable[[Any], list[Any]],
        what: str,
    ) -> AsyncIterator[Any]:
        cursor: str | None = None
        # Digests, not the cursors: 10,000 pages of 16 MiB cursors would be kept otherwise.
        seen: set[bytes] = set()
        for _ in range(_MAX_PAGES):
            page = await fetch(cursor)
            for item in items(page):
                yield item
            next_cursor = page.next_cursor
            if isinstance(next_cursor, UnsetType):
                return
            digest = hashlib.blake2b(next_cursor.encode(), digest_size=16).digest()
            if digest in seen:
                raise RemoteProtocolError(f"the server repeated a {what} pagination cursor")
            seen.add(digest)
            cursor = next_cursor
        raise RemoteProtocolError(f"more than {_MAX_PAGES} pages of {what}")

    # -- tools --------------------------------------------------------------------------

    async def list_tools(self, cursor: str | None = None) -> ListToolsResult:
        """One page of the server's tools; pass ``next_cursor`` back for the next page."""
        params = ListToolsRequestParams(cursor=UNSET if cursor is None else cursor)
        result = await self.request("tools/list", params, ListToolsResult)
        if self._is_modern():
            result = screen_tools(result, self._tool_definitions())
        self._output_checks.learn(result.tools, self.protocol_version)
        return result

    def iter_tools(self) -> AsyncIterator[Tool]:
        """Every tool, following pagination.

        Raises:
            RemoteProtocolError: the server repeats a cursor (a pagination loop).
        """
        return self._pages(self.list_tools, lambda page: page.tools, "tools")

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        on_progress: ProgressCallback | None = None,
        timeout: Timeout = UNSET,
        max_timeout: Timeout = UNSET,
        raise_on_error: bool = False,
    ) -> CallToolResult:
        """Call a tool. A tool that failed returns a result with ``is_error`` set, or,
        with ``raise_on_error``, raises :class:`ToolError`.

        Args:
            name: the tool's name.
            arguments: the arguments object.
            on_progress: receives progress notifications for this call.
            timeout: overrides the client's default for this call.
            max_timeout: overrides the client's absolute bound for this call.
            raise_on_error: raise for a tool execution error instead of returning it.

        Raises:
            RPCError: the server refused the call (unknown tool: -32602).
            RequestTimeoutError: no answer in time (the call was cancelled).
            ToolError: ``raise_on_error`` and the tool reported an error (its message is
                the result's text; the result is its ``result``).
            LocalProtocolError: ``arguments`` is not a mapping (a JSON object).
        """
        params = CallToolRequestParams(name=name, arguments=_object(arguments, "arguments"))
        known = self._tool_definitions() if self._is_modern() else None
        if known is not None and name not in known:
            # 2026-07-28 over HTTP: the call's Mcp-Param-* headers come from the tool's
            # definition (x-mcp-header), so learn the definitions first.
            async for _ in self.iter_tools():
                pass
        for attempt in range(2):
            try:
                result = await self.request(
                    "tools/call",
                    params,
                    CallToolResult,
                    on_progress=on_progress,
                    timeout=timeout,
                    max_timeout=max_timeout,
                )
                break
            except RPCError as exc:
                if known is None or attempt or exc.code != ErrorCode.HEADER_MISMATCH:
                    raise
                # The tool's definition changed (its x-mcp-header mirrors): "the client
                # SHOULD call tools/list ... then retry the original request" (2026-07-28
                # streamable-http.mdx, "Client Behavior"); the refused call did not run.
                # From the server, not from the cache: the cached list is the stale one.
                if self.cache is not None:
                    self.cache.invalidate("notifications/tools/list_changed")
                async for _ in self.iter_tools():
                    pass
        self._output_checks.check(name, result, tolerant=self.tolerant)
        if raise_on_error and result.is_error is True:
            text = "\n".join(b.text for b in result.content if isinstance(b, TextContent))
            raise ToolError(text or f"tool {name!r} reported an error", result=result)
        return result

    # -- resources ----------------------------------------------------------------------

    async def list_resources(self, cursor: str | None = None) -> ListResourcesResult:
        """One page of the server's resources."""
        params = PaginatedRequestParams(cursor=UNSET if cursor is None else cursor)
        return await self.request("resources/list", params, ListResourcesResult)

    def iter_resources(self) -> AsyncIterator[Resource]:
        """Every resource, following pagination."""
        return self._pages(self.list_resources, lambda page: page.resources, "resources")

    async def list_resource_templates(
        self, cursor: str | None = None
    ) -> ListResourceTemplatesResult:
        """One page of the server's resource templates."""
        params = PaginatedRequestParams(cursor=UNSET if cursor is None else cursor)
        return await self.request("resources/templates/list", params, ListResourceTemplatesResult)

    def iter_resource_templates(self) -> AsyncIterator[ResourceTemplate]:
        """Every resource template, following pagination."""
        return self._pages(
            self.list_resource_templates,
            lambda page: page.resource_templates,
            "resource templates",
        )

    async def read_resource(
        self, uri: str, *, timeout: Timeout = UNSET, on_progress: ProgressCallback | None = None
    ) -> ReadResourceResult:
        """Read a resource (``resources/read``).

        Raises:
            RPCError: unknown resource (-32002 before 2026, -32602 from 2026-07-28).
        """
        return await self.request(
            "resources/read",
            ReadResourceRequestParams(uri=uri),
            ReadResourceResult,
            timeout=timeout,
            on_progress=on_progress,
        )

    async def subscribe_resource(self, uri: str) -> None:
        """Ask for ``notifications/resources/updated`` when ``uri`` changes.

        Raises:
            CapabilityError: on 2026-07-28 (subscriptions moved to ``subscriptions/listen``).
        """
        if self._is_modern():
            raise self._stateless_only_not("resources/subscribe")
        await self.request("resources/subscribe", SubscribeRequestParams(uri=uri), EmptyResult)

    async def unsubscribe_resource(self, uri: str) -> None:
        """Stop the notifications for ``uri``.

        Raises:
            CapabilityError: on 2026-07-28 (see :meth:`subscribe_resource`).
        """
        if self._is_modern():
            raise self._stateless_only_not("resources/unsubscribe")
        await self.request("resources/unsubscribe", UnsubscribeRequestParams(uri=uri), EmptyResult)

    # -- prompts ------------------------------------------------------------------------

    async def list_prompts(self, cursor: str | None = None) -> ListPromptsResult:
        """One page of the server's prompts."""
        params = PaginatedRequestParams(cursor=UNSET if cursor is None else cursor)
        return await self.request("prompts/list", params, ListPromptsResult)

    def iter_prompts(self) -> AsyncIterator[Prompt]:
        """Every prompt, following pagination."""
        return self._pages(self.list_prompts, lambda page: page.prompts, "prompts")

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> GetPromptResult:
        """Get a prompt's messages with its arguments filled in (``prompts/get``).

        Raises:
            RPCError: unknown prompt or missing required arguments (-32602).
            LocalProtocolError: ``arguments`` is not a mapping of names to strings.
        """
        params = GetPromptRequestParams(
            name=name, arguments=_object(arguments, "prompt arguments", strings=True)
        )
        return await self.request("prompts/get", params, GetPromptResult)

    # -- completion ---------------------------------------------------------------------

    async def complete(
        self,
        ref: CompletionReference,
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
    ) -> CompleteResult:
        """Ask for completions of an argument value (``completion/complete``).

        ``ref`` is a :class:`PromptReference` or :class:`ResourceTemplateReference`;
        ``context`` holds the values of the other arguments already chosen (sent from
        2025-06-18, which added it; an older server completes without it).

        Raises:
            LocalProtocolError: ``context`` is not a mapping of names to strings.
        """
        sent: CompletionContext | UnsetType = UNSET
        if context is not None and self.protocol_version >= V2025_06_18:
            sent = CompletionContext(arguments=_object(context, "context", strings=True))
        params = CompleteRequestParams(
            ref=ref, argument=CompletionArgument(name=argument, value=value), context=sent
        )
        return await self.request("completion/complete", params, CompleteResult)

    async def complete_prompt_argument(
        self, prompt: str, argument: str, value: str, *, context: Mapping[str, str] | None = None
    ) -> list[str]:
        """The completion values for a prompt argument."""
        result = await self.complete(PromptReference(name=prompt), argument, value, context=context)
        return list(result.completion.values)

    async def complete_template_variable(
        self, template: str, variable: str, value: str, *, context: Mapping[str, str] | None = None
    ) -> list[str]:
        """The completion values for a resource template variable."""
        ref = ResourceTemplateReference(uri=template)
        result = await self.complete(ref, variable, value, context=context)
        return list(result.completion.values)


def _object(values: Mapping[str, Any] | None, what: str, *, strings: bool = False) -> Any:
    """``values`` as the JSON object a request sends (``UNSET``: absent); ``strings``: its
    values must be strings (prompt arguments and completion context: the schema's
    ``{[key: string]: string}``), refused here rather than by the server as -32602."""
    if values is None:
        return UNSET
    if not isinstance(values, Mapping):
        raise LocalProtocolError(
            f"{what} must be a mapping of names to values (a dict), not {type(values).__name__}"
        )
    sent = dict(values)
    for key, value in sent.items() if strings else ():
        if not isinstance(value, str):
            raise LocalProtocolError(
                f"{what}: values must be strings; {key!r} is {type(value).__name__}"
            )
    return sent
