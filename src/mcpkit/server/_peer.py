"""Requests a server sends to its client in the handshake era: sampling, elicitation,
roots and ping, each checked against the client's declared capabilities and the
negotiated protocol version before anything is sent (``basic/lifecycle.mdx``
"Operation": both sides MUST respect the negotiated capabilities).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
from msgspec import UNSET

from ..exceptions import CapabilityError, RemoteProtocolError
from ..types import (
    V2025_06_18,
    V2025_11_25,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitResult,
    EmptyResult,
    ListRootsResult,
    SamplingMessage,
    ToolResultContent,
    ToolUseContent,
)
from ..types._echo import one_line
from ._compat import sampling_messages_for

if TYPE_CHECKING:
    from ._session import ServerSession

__all__ = ["create_message", "elicit", "list_roots", "ping"]

T = TypeVar("T")


async def _request(
    session: ServerSession, method: str, params: Any, result_type: type[T], timeout: float | None
) -> T:
    raw = await session.endpoint.request(
        method, params, timeout=timeout, max_timeout=session.server.max_client_request_timeout
    )
    try:
        return msgspec.json.decode(raw, type=result_type)
    except msgspec.ValidationError as exc:
        raise RemoteProtocolError(
            f"invalid result for {method} from the client: {one_line(str(exc))}"
        ) from None


def _version(session: ServerSession) -> str:
    return session.protocol_version or ""


def _reachable(session: ServerSession) -> None:
    if session.stateless:
        raise CapabilityError(
            "a stateless server cannot send requests to the client (sampling, elicitation, "
            "roots, ping): every HTTP request stands alone, and the answer would reach "
            "another one"
        )


async def ping(session: ServerSession, *, timeout: float | None = 30.0) -> None:
    """Ping the client (``basic/utilities/ping.mdx``).

    Raises:
        CapabilityError: a stateless server cannot reach its client outside a request.
        RequestTimeoutError: no answer in time.
    """
    _reachable(session)
    await _request(session, "ping", UNSET, EmptyResult, timeout)


def _uses_tools(messages: list[SamplingMessage]) -> bool:
    for message in messages:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        if any(isinstance(block, (ToolUseContent, ToolResultContent)) for block in blocks):
            return True
    return False


async def create_message(
    session: ServerSession, params: CreateMessageRequestParams, *, timeout: float | None
) -> CreateMessageResult:
    """Ask the client's model for a completion (``client/sampling.mdx``).

    Raises:
        CapabilityError: the client did not declare ``sampling`` (or ``sampling.tools`` when
            tools are offered, or ``sampling.context`` for ``includeContext`` other than
            "none"), or the negotiated version predates tool use (2025-11-25).
        RPCError: the client refused (for example the user rejected the request).
    """
    _reachable(session)
    sampling = session.client_capabilities.sampling
    if sampling is UNSET:
        raise CapabilityError("the client did not declare the sampling capability")
    with_tools = (
        params.tools is not UNSET or params.tool_choice is not UNSET or _uses_tools(params.messages)
    )
    if with_tools:
        if _version(session) < V2025_11_25:
            raise CapabilityError("sampling with tools needs protocol version 2025-11-25")
        if "tools" not in sampling:
            raise CapabilityError("the client did not declare the sampling.tools capability")
    version = _version(session)
    # sampling.context arrived in 2025-11-25 (includeContext was a plain member before).
    if (
        params.include_context not in (UNSET, "none")
        and version >= V2025_11_25
        and "context" not in sampling
    ):
        raise CapabilityError(
            "includeContext other than 'none' needs the client's sampling.context capability"
        )
    if version < V2025_11_25:
        if any(isinstance(message.content, list) for message in params.messages):
            raise CapabilityError("several content blocks per message need protocol 2025-11-25")
        messages = sampling_messages_for(version, params.messages)
        params = msgspec.structs.replace(params, messages=messages)
    return await _request(session, "sampling/createMessage", params, CreateMessageResult, timeout)


async def elicit(
    session: ServerSession, params: ElicitRequestParams, *, timeout: float | None
) -> ElicitResult:
    """Ask the user, through the client, for input (``client/elicitation.mdx``).

    Raises:
        CapabilityError: the negotiated version has no elicitation (before 2025-06-18) or no
            URL mode (before 2025-11-25), or the client did not declare the mode.
        RPCError: the client refused.
    """
    _reachable(session)
    version = _version(session)
    declared = session.client_capabilities.elicitation
    if version < V2025_06_18:
        raise CapabilityError(f"elicitation needs protocol 2025-06-18 or later, not {version}")
    if declared is UNSET:
        raise CapabilityError("the client did not declare the elicitation capability")
    if params.mode == "url":
        if version < V2025_11_25:
            raise CapabilityError("URL-mode elicitation needs protocol version 2025-11-25")
        if "url" not in declared:
            raise CapabilityError("the client did not declare elicitation.url")
    elif declared and "form" not in declared:
        # An empty object means form mode only; otherwise form must be listed.
        raise CapabilityError("the client did not declare elicitation.form")
    return await _request(session, "elicitation/create", params, ElicitResult, timeout)


async def list_roots(session: ServerSession, *, timeout: float | None) -> ListRootsResult:
    """Ask the client for its roots (``client/roots.mdx``).

    Raises:
        CapabilityError: the client did not declare the roots capability (or the server
            is stateless: see ``ping``).
    """
    _reachable(session)
    if session.client_capabilities.roots is UNSET:
        raise CapabilityError("the client did not declare the roots capability")
    return await _request(session, "roots/list", UNSET, ListRootsResult, timeout)
