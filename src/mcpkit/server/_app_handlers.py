"""The handlers of the high-level :class:`~mcpkit.server.Server`'s MCP methods (listing and
calling tools, listing and reading resources and templates, subscribing, prompts,
completions), as a mixin of it.

Every result passes through :mod:`._compat` for the session's negotiated revision. Kept
apart from ``_app.py`` (registration and notifications) so each reads in one sitting; the
methods are inherited, not wrapped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from ..aio import call_off_loop
from ..exceptions import RPCError
from ..types import (
    CallToolResult,
    CompleteResult,
    Completion,
    ErrorCode,
    GetPromptResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PromptReference,
    ReadResourceResult,
)
from ..types._echo import peer_text
from ._compat import (
    described_for,
    prompt_for,
    prompt_message_for,
    read_result_for,
    tool_for,
    tool_result_for,
)
from ._listen import too_many_subscriptions

if TYPE_CHECKING:
    from ..types import (
        CallToolRequestParams,
        CompleteRequestParams,
        CompletionReference,
        GetPromptRequestParams,
        ListToolsRequestParams,
        PaginatedRequestParams,
        ReadResourceRequestParams,
        SubscribeRequestParams,
        UnsubscribeRequestParams,
    )
    from ._app import CompletionHandler
    from ._context import RequestContext
    from ._prompts import PromptRegistry
    from ._resources import ResourceRegistry
    from ._tools import ToolRegistry

__all__ = ["AppHandlers"]

T = TypeVar("T")
P = TypeVar("P")
_MAX_COMPLETIONS: Final = 100  # server/utilities/completion.mdx: at most 100 values
# resources.mdx "Error Handling" (handshake era; the session maps it to -32602 on 2026-07-28)
_RESOURCE_NOT_FOUND: Final = ErrorCode.RESOURCE_NOT_FOUND


class AppHandlers:
    """The request handlers :class:`~mcpkit.server.Server` routes its MCP methods to."""

    if TYPE_CHECKING:
        tool_registry: ToolRegistry
        resource_registry: ResourceRegistry
        prompt_registry: PromptRegistry
        _completion: CompletionHandler | None
        max_subscriptions: int

        def page(
            self, items: Sequence[P], cursor: str | UnsetType, *, kind: str = ""
        ) -> tuple[list[P], str | None]: ...

    def _listing(
        self,
        ctx: RequestContext,
        items: Sequence[T],
        cursor: str | UnsetType,
        adapt: Callable[[str, T], T],
    ) -> tuple[list[T], str | UnsetType]:
        """One page of ``items`` as the session's revision sees them, and the next cursor."""
        page, next_cursor = self.page(items, cursor, kind=ctx.method)
        version = ctx.protocol_version or ""
        return [
            adapt(version, item) for item in page
        ], UNSET if next_cursor is None else next_cursor

    async def _list_tools(
        self, ctx: RequestContext, params: ListToolsRequestParams
    ) -> ListToolsResult:
        tools, cursor = self._listing(
            ctx, self.tool_registry.definitions(), params.cursor, tool_for
        )
        return ListToolsResult(tools=tools, next_cursor=cursor)

    async def _call_tool(
        self, ctx: RequestContext, params: CallToolRequestParams
    ) -> CallToolResult:
        arguments = params.arguments if isinstance(params.arguments, dict) else {}
        result = await self.tool_registry.call(ctx, params.name, arguments)
        return tool_result_for(ctx.protocol_version or "", result)

    async def _list_resources(
        self, ctx: RequestContext, params: PaginatedRequestParams
    ) -> ListResourcesResult:
        items = self.resource_registry.resources()
        resources, cursor = self._listing(ctx, items, params.cursor, described_for)
        return ListResourcesResult(resources=resources, next_cursor=cursor)

    async def _list_templates(
        self, ctx: RequestContext, params: PaginatedRequestParams
    ) -> ListResourceTemplatesResult:
        items = self.resource_registry.templates()
        templates, cursor = self._listing(ctx, items, params.cursor, described_for)
        return ListResourceTemplatesResult(resource_templates=templates, next_cursor=cursor)

    async def _read_resource(
        self, ctx: RequestContext, params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        contents = await self.resource_registry.read(
            ctx, params.uri, not_found_code=_RESOURCE_NOT_FOUND
        )
        if not isinstance(contents, ReadResourceResult):
            contents = ReadResourceResult(contents=contents)
        # (A function's own result keeps its caching hints and _meta.)
        return read_result_for(ctx.protocol_version or "", contents)

    async def _subscribe(
        self, ctx: RequestContext, params: SubscribeRequestParams
    ) -> dict[str, Any]:
        if ctx.session.stateless:  # (not declared to it: see ServerSession.stateless)
            raise RPCError(
                ErrorCode.METHOD_NOT_FOUND,
                "Method not found: a stateless server cannot deliver resource updates",
            )
        if not self.resource_registry.knows(params.uri):
            raise RPCError(_RESOURCE_NOT_FOUND, "Resource not found", {"uri": params.uri})
        updates = ctx.session.resource_updates
        if params.uri not in updates.uris:
            refused = too_many_subscriptions(
                len(updates.uris) + 1, updates.uri_bytes + len(params.uri), self.max_subscriptions
            )
            if refused is not None:
                raise refused
        updates.add(params.uri)
        return {}

    async def _unsubscribe(
        self, ctx: RequestContext, params: UnsubscribeRequestParams
    ) -> dict[str, Any]:
        ctx.session.resource_updates.discard(params.uri)
        return {}

    async def _list_prompts(
        self, ctx: RequestContext, params: PaginatedRequestParams
    ) -> ListPromptsResult:
        items = self.prompt_registry.definitions()
        prompts, cursor = self._listing(ctx, items, params.cursor, prompt_for)
        return ListPromptsResult(prompts=prompts, next_cursor=cursor)

    async def _get_prompt(
        self, ctx: RequestContext, params: GetPromptRequestParams
    ) -> GetPromptResult:
        arguments = params.arguments if isinstance(params.arguments, dict) else {}
        result = await self.prompt_registry.get(ctx, params.name, arguments)
        version = ctx.protocol_version or ""
        return GetPromptResult(
            messages=[prompt_message_for(version, m) for m in result.messages],
            description=result.description,
            meta=result.meta,
        )

    def _check_completion_ref(self, ref: CompletionReference, argument: str) -> None:
        """A prompt or template this server does not have, or an argument it does not
        take: -32602 (server/utilities/completion.mdx, "Error Handling": "Invalid prompt
        name: -32602 (Invalid params)")."""
        if isinstance(ref, PromptReference):
            names = self.prompt_registry.arguments_of(ref.name)
            if names is None:
                raise RPCError.invalid_params(f"Unknown prompt: {peer_text(ref.name)}")
            if argument not in names:
                raise RPCError.invalid_params(
                    f"Prompt {peer_text(ref.name)} has no argument {peer_text(argument)}"
                )
        else:
            variables = self.resource_registry.variables_of(ref.uri)
            if variables is None:
                raise RPCError.invalid_params(f"Unknown resource template: {peer_text(ref.uri)}")
            if argument not in variables:
                raise RPCError.invalid_params(
                    f"Resource template {peer_text(ref.uri)} has no variable {peer_text(argument)}"
                )

    async def _complete(self, ctx: RequestContext, params: CompleteRequestParams) -> CompleteResult:
        handler = self._completion
        if handler is None:
            raise RPCError(ErrorCode.METHOD_NOT_FOUND, "This server does not offer completions")
        self._check_completion_ref(params.ref, params.argument.name)
        context = (
            params.context.arguments
            if params.context is not UNSET and params.context.arguments is not UNSET
            else {}
        )
        # (As a tool's: a plain function may block, so not on the event loop.)
        outcome = await call_off_loop(
            handler, params.ref, params.argument.name, params.argument.value, dict(context)
        )
        if isinstance(outcome, str):  # one value, not one per character
            outcome = (outcome,)
        elif not isinstance(outcome, (Completion, list, tuple)):
            raise RPCError(
                ErrorCode.INTERNAL_ERROR,
                f"Internal error: the completion handler returned {type(outcome).__name__}; "
                "it returns a list of strings or a Completion",
            )
        if isinstance(outcome, Completion):
            # Strings on the wire, as for a plain list (a Completion is not validated when
            # built); past the 100 a result may hold, the handler's own total still counts.
            values = [v if isinstance(v, str) else str(v) for v in outcome.values]
            if len(values) > _MAX_COMPLETIONS:
                total = outcome.total if isinstance(outcome.total, int) else 0
                outcome = Completion(
                    values=values[:_MAX_COMPLETIONS],
                    total=max(total, len(values)),
                    has_more=True,
                )
            elif values != outcome.values:
                outcome = msgspec.structs.replace(outcome, values=values)
            return CompleteResult(completion=outcome)
        values = [str(v) for v in outcome]
        more = len(values) > _MAX_COMPLETIONS
        return CompleteResult(
            completion=Completion(
                values=values[:_MAX_COMPLETIONS],
                total=len(values) if more else UNSET,
                has_more=True if more else UNSET,
            )
        )
