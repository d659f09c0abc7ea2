"""The handler context's questions to the client: sampling, elicitation and roots, the
same calls in both eras (requests to the client in the handshake era, multi round trips on
2026-07-28; see ``_inputs.py``)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast, overload

import anyio

from ..exceptions import CapabilityError, MCPDeprecationWarning
from ..types import (
    ClientCapabilities,
    CreateMessageResult,
    ElicitResult,
    IncludeContext,
    ModelPreferences,
    Root,
    SamplingMessage,
    Tool,
    ToolChoice,
    method_spec,
)
from ._asking_requests import Elicitation, InputBuilders
from ._inputs import InputRequest, InputRound, check_modern, no_input

if TYPE_CHECKING:
    from ._lowlevel import LowLevelServer
    from ._session import ServerSession

__all__ = ["Asking", "Elicitation"]

T = TypeVar("T")

#: Inputs that 2026-07-28 deprecates (still served through multi round trips).
_DEPRECATED_INPUTS: Final = {"sampling/createMessage": "sampling", "roots/list": "roots"}


async def _push_all(
    session: ServerSession, requests: Sequence[InputRequest[Any]], timeout: float | None
) -> list[Any]:
    """Handshake era: send every request at once and gather the answers; the first
    failure cancels the rest and is raised as itself (not inside a group)."""
    if len(requests) == 1:
        request = requests[0]
        return [request.finish(await request.push(session, timeout))]
    results: list[Any] = [None] * len(requests)
    failures: list[Exception] = []
    async with anyio.create_task_group() as tg:

        async def one(index: int, request: InputRequest[Any]) -> None:
            try:
                results[index] = request.finish(await request.push(session, timeout))
            except Exception as exc:
                failures.append(exc)
                tg.cancel_scope.cancel()

        for index, request in enumerate(requests):
            tg.start_soon(one, index, request)
    if failures:
        raise failures[0]
    return results


class Asking(InputBuilders):
    """The questions a handler may ask the client; mixed into ``RequestContext``."""

    __slots__ = ()

    if TYPE_CHECKING:  # (modern and protocol_version: see InputBuilders)
        session: ServerSession
        method: str
        _inputs: InputRound | None

        @property
        def client_capabilities(self) -> ClientCapabilities: ...
        @property
        def server(self) -> LowLevelServer: ...

    async def ask(self, *requests: InputRequest[Any], timeout: float | None = 600.0) -> list[Any]:
        """Get several inputs from the client at once; returns their answers in order.

        Handshake era: the requests go out together and are awaited (each bounded by
        ``timeout``). 2026-07-28: they are asked together in one ``InputRequiredResult``;
        the handler runs again when the client retries with the answers, and this call
        then returns them (so do nothing irreversible before the last question).

        Raises:
            CapabilityError: (handshake era) the client did not declare what one needs.
            RPCError: -32021 (2026-07-28) the client did not declare what one needs;
                -32602 an answer does not fit its request; the client refused.
            RequestTimeoutError: no answer in time.
            LocalProtocolError: two inputs of one request share a key.
        """
        if self.modern is None:
            return await _push_all(self.session, requests, timeout)
        for request in requests:
            check_modern(request, self.modern.client_capabilities)
            self._deprecated(_DEPRECATED_INPUTS.get(request.method))
            if getattr(request.params, "include_context", None) in ("thisServer", "allServers"):
                self._deprecated("includeContext other than 'none'")
        if self._inputs is None:
            raise no_input(self.method)
        return self._inputs.resolve(requests)

    async def sample(
        self,
        messages: str | Sequence[SamplingMessage | str],
        *,
        key: str | None = None,
        max_tokens: int = 1024,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        model_preferences: ModelPreferences | None = None,
        include_context: IncludeContext | None = None,
        tools: Sequence[Tool] | None = None,
        tool_choice: ToolChoice | None = None,
        metadata: Mapping[str, Any] | None = None,
        timeout: float | None = 120.0,
    ) -> CreateMessageResult:
        """Ask the client's model for a completion (``sampling/createMessage``).

        ``messages`` may be plain text (one user message) or a list of messages and texts.
        On 2026-07-28 this is a multi round-trip request (see :meth:`ask`).

        Raises:
            CapabilityError: the client did not declare what this needs (see
                :func:`mcpkit.server._peer.create_message`); -32021 on 2026-07-28.
            RPCError: the client refused (e.g. the user rejected the request).
            RequestTimeoutError: no answer in time.
        """
        request = self.sampling(
            messages,
            key=key,
            max_tokens=max_tokens,
            system_prompt=system_prompt,
            temperature=temperature,
            stop_sequences=stop_sequences,
            model_preferences=model_preferences,
            include_context=include_context,
            tools=tools,
            tool_choice=tool_choice,
            metadata=metadata,
        )
        [result] = await self.ask(request, timeout=timeout)
        return cast(CreateMessageResult, result)

    @overload
    async def elicit(
        self, message: str, schema: type[T], *, key: str | None = ..., timeout: float | None = ...
    ) -> Elicitation[T]: ...
    @overload
    async def elicit(
        self,
        message: str,
        schema: Mapping[str, Any],
        *,
        key: str | None = ...,
        timeout: float | None = ...,
    ) -> Elicitation[dict[str, Any]]: ...
    async def elicit(
        self, message: str, schema: Any, *, key: str | None = None, timeout: float | None = 600.0
    ) -> Elicitation[Any]:
        """Ask the user for structured input through the client (form mode).

        ``schema`` is a struct, dataclass or TypedDict of primitive fields (the form and the
        type of the answer), or a raw ``requestedSchema`` dict (the answer stays a dict).
        On 2026-07-28 this is a multi round-trip request (see :meth:`ask`).

        Raises:
            CapabilityError: the client cannot elicit (or the version has no elicitation,
                or the form needs a shape the version lacks, e.g. multi-select before
                2025-11-25); -32021 on 2026-07-28.
            LocalProtocolError: the type cannot be shown as a form, or the raw schema is
                not one (nested objects, other types, a format other than date,
                date-time, email or uri).
            RemoteProtocolError: the answer does not match the form.
        """
        [result] = await self.ask(self.elicitation(message, schema, key=key), timeout=timeout)
        return cast(Elicitation[Any], result)

    async def elicit_url(
        self,
        message: str,
        url: str,
        *,
        key: str | None = None,
        elicitation_id: str | None = None,
        timeout: float | None = 600.0,
    ) -> ElicitResult:
        """Send the user to ``url`` (URL-mode elicitation, 2025-11-25), e.g. to authorize a
        third party. Follow up with :meth:`complete_elicitation` when done (handshake era;
        2026-07-28 has no completion notification: the retry is the completion).

        Raises:
            CapabilityError: the client did not declare ``elicitation.url``; -32021 on
                2026-07-28.
        """
        request = self.elicitation_url(message, url, key=key, elicitation_id=elicitation_id)
        [result] = await self.ask(request, timeout=timeout)
        return cast(ElicitResult, result)

    async def complete_elicitation(self, elicitation_id: str) -> None:
        """Tell the client a URL-mode elicitation finished
        (``notifications/elicitation/complete``, which only 2025-11-25 has).

        Raises:
            CapabilityError: the request's protocol version has no such notification.
        """
        version = self.protocol_version or ""
        spec = method_spec("notifications/elicitation/complete")
        if spec is not None and not spec.in_version(version):
            raise CapabilityError(
                f"notifications/elicitation/complete does not exist in protocol {version}"
            )
        await self.session.notify(
            "notifications/elicitation/complete", {"elicitationId": elicitation_id}
        )

    async def list_roots(
        self, *, key: str | None = None, timeout: float | None = 30.0
    ) -> list[Root]:
        """The client's roots (``roots/list``; on 2026-07-28 a multi round-trip request).

        Raises:
            CapabilityError: the client did not declare ``roots``; -32021 on 2026-07-28.
        """
        [result] = await self.ask(self.roots(key=key), timeout=timeout)
        return cast(list[Root], result)

    def _deprecated(self, feature: str | None) -> None:
        """Warn (once per feature and server) that a 2026-07-28 request uses a feature
        that revision deprecates (``deprecated.mdx``); it still works."""
        if feature is None or feature in self.server.deprecations_warned:
            return
        self.server.deprecations_warned.add(feature)
        warnings.warn(
            f"{feature} is deprecated in MCP 2026-07-28 (it still works; see the "
            "specification's deprecated.mdx): a handler used it for a 2026-07-28 request",
            MCPDeprecationWarning,
            stacklevel=4,
        )
