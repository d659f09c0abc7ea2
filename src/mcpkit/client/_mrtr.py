"""Multi round-trip requests (MRTR) on the client, and the deprecation warnings of the
2026-07-28 era.

2026-07-28 ``basic/patterns/mrtr.mdx``: a ``prompts/get``, ``resources/read`` or
``tools/call`` may be answered with ``resultType: "input_required"``; the client fulfils each
``inputRequests`` entry (``elicitation/create``, ``sampling/createMessage``, ``roots/list``)
and retries the original request with a new JSON-RPC id, the same params, ``inputResponses``
and the ``requestState`` echoed verbatim (never one of its own). The server MUST NOT ask for
input the client did not declare a capability for; such a request is a protocol violation
here, never answered with made-up data.

``deprecated.mdx`` of 2026-07-28: roots, sampling, logging and the ``includeContext`` values
``thisServer`` / ``allServers`` still work but are deprecated; using them on that era warns
once per kind per client.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable
from typing import Any, Final

import anyio
import msgspec
from msgspec import UNSET

from ..aio import call_off_loop, single_errors
from ..exceptions import (
    ConnectionClosedError,
    MCPDeprecationWarning,
    RemoteProtocolError,
    RequestTimeoutError,
)
from ..types import (
    INPUT_REQUIRED_METHODS,
    ClientCapabilities,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ListRootsResult,
)
from ..types._echo import one_line, peer_text
from ._callbacks import ClientHandlers, checked

__all__ = ["Deprecations", "InputFulfiller", "ResultKind", "result_kind", "run_rounds"]


class ResultKind(msgspec.Struct):
    """What a 2026-07-28 result says about itself: the members MRTR and caching read."""

    result_type: Any = msgspec.field(default=UNSET, name="resultType")
    input_requests: Any = msgspec.field(default=UNSET, name="inputRequests")
    request_state: Any = msgspec.field(default=UNSET, name="requestState")
    ttl_ms: Any = msgspec.field(default=UNSET, name="ttlMs")
    cache_scope: Any = msgspec.field(default=UNSET, name="cacheScope")


_KIND: Final = msgspec.json.Decoder(ResultKind)
_DEPRECATED_CONTEXT: Final = frozenset({"thisServer", "allServers"})
_RETRY: Final = frozenset({"inputResponses", "requestState"})


def result_kind(raw: bytes, method: str) -> ResultKind:
    """Read ``resultType`` and the MRTR and caching members of a 2026-07-28 result.

    A missing ``resultType`` means ``"complete"`` (an older server); an unknown one is
    invalid (``basic/index.mdx`` "Responses"), as is ``input_required`` on a method that
    may not return it (``mrtr.mdx`` "Supported Requests").

    Raises:
        RemoteProtocolError: an invalid ``resultType`` or input-required result.
    """
    try:
        kind = _KIND.decode(raw)
    except msgspec.DecodeError as exc:
        raise RemoteProtocolError(f"invalid result for {method}: {one_line(str(exc))}") from None
    if kind.result_type is UNSET:
        kind.result_type = "complete"
    if kind.result_type == "complete":
        return kind
    if kind.result_type != "input_required":
        raise RemoteProtocolError(
            f"invalid result for {method}: unknown resultType {peer_text(kind.result_type)}"
        )
    if method not in INPUT_REQUIRED_METHODS:
        raise RemoteProtocolError(f"the server answered {method} with an input-required result")
    requests, state = kind.input_requests, kind.request_state
    if requests is UNSET and state is UNSET:
        raise RemoteProtocolError(
            f"an input-required result for {method} has neither inputRequests nor requestState"
        )
    if requests is not UNSET and not isinstance(requests, dict):
        raise RemoteProtocolError(f"inputRequests of a {method} result is not an object")
    if state is not UNSET and not isinstance(state, str):
        raise RemoteProtocolError(f"requestState of a {method} result is not a string")
    return kind


class Deprecations:
    """Warns (:class:`MCPDeprecationWarning`, a ``DeprecationWarning``) the first time each
    deprecated feature is used."""

    def __init__(self) -> None:
        self._warned: set[str] = set()

    def use(self, kind: str, what: str) -> None:
        """Note a use of ``kind`` (roots, sampling, logging, includeContext)."""
        if kind in self._warned:
            return
        self._warned.add(kind)
        warnings.warn(
            f"{what} is deprecated in MCP 2026-07-28 (deprecated.mdx); it still works but "
            "may be removed in a later revision",
            MCPDeprecationWarning,
            stacklevel=4,
        )


class InputFulfiller:
    """Answers the ``inputRequests`` of an input-required result with the client's
    callbacks, within the capabilities the client declared."""

    def __init__(
        self, handlers: ClientHandlers, declared: ClientCapabilities, deprecations: Deprecations
    ) -> None:
        self.handlers = handlers
        self.declared = declared
        self.deprecations = deprecations

    async def fulfil(self, requests: dict[str, Any]) -> dict[str, Any]:
        """The ``inputResponses`` for ``requests``, one by one in the server's order.

        Raises:
            RemoteProtocolError: an entry is malformed, or asks for a capability this
                client did not declare.
            Exception: whatever a callback raised (the request is not retried).
        """
        responses: dict[str, Any] = {}
        for key, entry in requests.items():
            method = entry.get("method") if isinstance(entry, dict) else None
            params = entry.get("params", {}) if isinstance(entry, dict) else None
            if not isinstance(method, str) or not isinstance(params, dict):
                raise RemoteProtocolError(
                    f"input request {peer_text(key)} is not a {{method, params}}"
                )
            result = await self._answer(key, method, params)
            responses[key] = msgspec.to_builtins(result)
        return responses

    def _refuse(self, key: str, method: str, capability: str) -> RemoteProtocolError:
        return RemoteProtocolError(
            f"the server asked for input {peer_text(key)} ({method}) although this client did not "
            f"declare the {capability} capability (mrtr.mdx: servers MUST NOT)"
        )

    async def _answer(self, key: str, method: str, params: dict[str, Any]) -> Any:
        handlers, declared = self.handlers, self.declared
        if method == "elicitation/create":
            request = _convert(params, ElicitRequestParams, key)
            if declared.elicitation is UNSET or handlers.elicitation is None:
                raise self._refuse(key, method, "elicitation")
            if request.mode == "url" and not handlers.elicitation_url:
                raise self._refuse(key, method, "elicitation.url")
            return await handlers.elicited(request)
        if method == "sampling/createMessage":
            sampling = _convert(params, CreateMessageRequestParams, key)
            if declared.sampling is UNSET or handlers.sampling is None:
                raise self._refuse(key, method, "sampling")
            if (
                sampling.tools is not UNSET or sampling.tool_choice is not UNSET
            ) and not handlers.sampling_tools:
                raise self._refuse(key, method, "sampling.tools")
            self.deprecations.use("sampling", "Sampling (sampling/createMessage)")
            if sampling.include_context in _DEPRECATED_CONTEXT:
                self.deprecations.use(
                    "includeContext", f"includeContext {peer_text(sampling.include_context)}"
                )
            answer = await call_off_loop(handlers.sampling, sampling)
            return checked(answer, CreateMessageResult, "sampling")
        if method == "roots/list":
            if declared.roots is UNSET or handlers.roots is None:
                raise self._refuse(key, method, "roots")
            self.deprecations.use("roots", "Roots (roots/list)")
            return ListRootsResult(roots=list(await handlers.list_roots()))
        raise RemoteProtocolError(
            f"input request {peer_text(key)} has an unknown method {peer_text(method)}"
        )


def _convert(params: dict[str, Any], kind: type[Any], key: str) -> Any:
    try:
        return msgspec.convert(params, kind)
    except (msgspec.ValidationError, ValueError) as exc:
        raise RemoteProtocolError(
            f"input request {peer_text(key)} has invalid params: {one_line(str(exc))}"
        ) from None


Send = Callable[[dict[str, Any]], Awaitable[bytes]]
Fulfil = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


def until_closed(fulfil: Fulfil, closed: Callable[[], Awaitable[None]]) -> Fulfil:
    """``fulfil``, stopped when the connection closes: the callbacks run in the caller's
    task (not as handlers the connection cancels), and a call must not outlive its client
    because a callback is still waiting (a person who never answers an elicitation).

    Raises:
        ConnectionClosedError: the connection closed while the callbacks ran.
    """

    async def fulfil_or_closed(requests: dict[str, Any]) -> dict[str, Any]:
        answered: list[dict[str, Any]] = []
        with single_errors():
            async with anyio.create_task_group() as tg:

                async def watch() -> None:
                    await closed()
                    tg.cancel_scope.cancel()

                tg.start_soon(watch)
                answered.append(await fulfil(requests))
                tg.cancel_scope.cancel()
        if not answered:
            raise ConnectionClosedError(
                "the connection closed while a callback was answering the server's input request"
            )
        return answered[0]

    return fulfil_or_closed


async def run_rounds(
    send: Send,
    method: str,
    params: dict[str, Any],
    fulfil: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]],
    *,
    max_rounds: int,
    deadline: float | None,
) -> tuple[bytes, ResultKind, bool]:
    """Send ``params`` and follow input-required results until a complete one: the raw
    result, its kind, and whether it came from a retry (then it must not be cached).

    Every retry is a new request (``send`` gives it a new id) with the original params,
    the ``inputResponses`` of the latest round and, only when the server sent one, its
    ``requestState`` verbatim. Earlier rounds' answers are not resent: a server that needs
    them keeps them in its ``requestState``.

    Raises:
        RemoteProtocolError: more than ``max_rounds`` input-required results, or an
            invalid result.
        RequestTimeoutError: the input rounds took longer than ``deadline`` seconds in
            all, counted from the first input-required result.
    """

    raw = await send(params)
    kind = result_kind(raw, method)
    if kind.result_type == "complete":
        return raw, kind, False

    async def retries(kind: ResultKind) -> tuple[bytes, ResultKind, bool]:
        for _ in range(max_rounds):
            current = {name: value for name, value in params.items() if name not in _RETRY}
            if kind.input_requests is not UNSET:
                current["inputResponses"] = await fulfil(kind.input_requests)
            if kind.request_state is not UNSET:
                current["requestState"] = kind.request_state
            raw = await send(current)
            kind = result_kind(raw, method)
            if kind.result_type == "complete":
                return raw, kind, True
        raise RemoteProtocolError(
            f"the server still needs input for {method} after {max_rounds} rounds"
        )

    # The deadline starts with the first input-required result: a request that runs long
    # without asking for anything is bounded by its own timeouts, as in the handshake era.
    if deadline is None:  # no cancel scope to set up (each request has its own timeout)
        return await retries(kind)
    with anyio.move_on_after(deadline) as scope:
        return await retries(kind)
    assert scope.cancel_called
    raise RequestTimeoutError(f"{method} needed input for longer than {deadline} s in all")
