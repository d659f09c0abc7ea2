"""How a client answers the server: sampling, elicitation and roots requests, and the
notifications it receives. The capabilities a client declares follow from what is given
here, so a server is never told about a feature the client cannot serve.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec
from msgspec import UNSET, Raw, UnsetType

from ..aio import BURST, InboundRequest, TokenBucket, call_off_loop, check_arity
from ..aio._lograte import PeerLogLimiter
from ..exceptions import LocalProtocolError, RPCError
from ..protocol import compile_schema, decode_params
from ..types import (
    V2025_06_18,
    V2025_11_25,
    V2026_07_28,
    ClientCapabilities,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitationCompleteNotificationParams,
    ElicitRequestParams,
    ElicitResult,
    EmptyResult,
    ErrorCode,
    ListRootsResult,
    LoggingMessageNotificationParams,
    ResourceUpdatedNotificationParams,
    Root,
    RootsCapability,
)
from ..types._echo import peer_text
from ._answers import elicit_answer_for, roots_for, sampling_answer_for

__all__ = [
    "ClientHandlers",
    "ElicitationCallback",
    "LogCallback",
    "RootsProvider",
    "SamplingCallback",
    "capabilities_for",
]

logger = logging.getLogger("mcpkit.client")
server_logger = logging.getLogger("mcpkit.client.server_log")

#: An async function, or a plain one (run in a worker thread: it may block on a model or a
#: person), returning the result.
SamplingCallback = Callable[
    [CreateMessageRequestParams], Awaitable[CreateMessageResult] | CreateMessageResult
]
ElicitationCallback = Callable[[ElicitRequestParams], Awaitable[ElicitResult] | ElicitResult]
LogCallback = Callable[[LoggingMessageNotificationParams], Awaitable[None] | None]
#: The client's roots: a fixed list, or a (sync or async) function returning the list.
RootsProvider = Sequence[Root] | Callable[[], Awaitable[Sequence[Root]] | Sequence[Root]]

_PY_LEVELS: Final = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}
_SAMPLING: Final = msgspec.json.Decoder(CreateMessageRequestParams)
_ELICIT: Final = msgspec.json.Decoder(ElicitRequestParams)
_LOG: Final = msgspec.json.Decoder(LoggingMessageNotificationParams)
_UPDATED: Final = msgspec.json.Decoder(ResourceUpdatedNotificationParams)
_ELICIT_DONE: Final = msgspec.json.Decoder(ElicitationCompleteNotificationParams)
_LIST_CHANGED: Final = {
    "notifications/tools/list_changed": "tools",
    "notifications/resources/list_changed": "resources",
    "notifications/prompts/list_changed": "prompts",
}


def declares(capability: dict[str, Any] | UnsetType, sub: str) -> bool:
    """Whether a declared capability (``sampling``, ``elicitation``) includes ``sub``."""
    return isinstance(capability, dict) and sub in capability


#: The server's requests that cost the client something (a model's tokens, the user's
#: attention), and so are rate limited: method -> the callback that answers it.
_RATED: Final = {"sampling/createMessage": "sampling", "elicitation/create": "elicitation"}


def checked(value: Any, kind: Any, what: str) -> Any:
    """A callback's return value as ``kind``, or -32603: what goes back to the server
    must be a valid result (a dict with the wrong members, an action that does not
    exist, a string for roots were sent as they were)."""
    if type(value) is kind:
        return value
    try:
        return msgspec.convert(value, kind, from_attributes=True)
    except (msgspec.ValidationError, TypeError) as exc:
        logger.error("the %s callback returned an invalid result: %s", what, exc)
        raise RPCError(
            ErrorCode.INTERNAL_ERROR,
            f"Internal error: the client's {what} callback returned an invalid result",
        ) from None


#: Each callback and how many arguments it is called with.
_ARITIES: Final = {
    "sampling": 1,
    "elicitation": 1,
    "roots": 0,
    "on_log": 1,
    "on_resource_updated": 1,
    "on_list_changed": 1,
    "on_elicitation_complete": 1,
}


def _check_arity(name: str, callback: Any, arity: int) -> None:
    what = "no arguments" if arity == 0 else "one argument"
    if name in ("sampling", "elicitation"):
        what = "one argument (the request's params)"
    check_arity(f"{name}=", callback, arity, what)


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


@dataclass
class ClientHandlers:
    """Everything a client does when the server speaks first.

    Attributes:
        sampling: answers ``sampling/createMessage``; declares the ``sampling`` capability.
        sampling_tools: the sampling callback handles ``tools`` / ``toolChoice``
            (2025-11-25); declares ``sampling.tools``.
        sampling_context: the callback honours ``includeContext``; declares
            ``sampling.context``.
        elicitation: answers ``elicitation/create``; declares ``elicitation.form``.
        elicitation_url: the callback also handles URL mode; declares ``elicitation.url``.
        roots: the client's roots; declares ``roots`` (with ``listChanged``).
        on_log: the server's log messages (default: Python logging on
            ``mcpkit.client.server_log``).
        on_resource_updated: a subscribed resource changed (its URI).
        on_list_changed: the server's tools, resources or prompts changed ("tools",
            "resources" or "prompts"). On 2026-07-28 a server sends change notifications
            only on a listen stream: these two are called for what arrives on one
            (``async with client.listen(tools=True, ...)``), and never without one.
        on_elicitation_complete: a URL-mode elicitation finished (its id).
        request_rate: most sampling and elicitation requests per second the server may
            make (handshake era), after a burst of 100; past it they are refused with
            -32000 before any callback runs ("Clients SHOULD implement rate limiting",
            client/sampling.mdx and elicitation.mdx): a server must not run up model
            costs or pile prompts on the user in a loop. ``None``: no bound. Set it on
            ``client.handlers`` before connecting.
    """

    sampling: SamplingCallback | None = None
    sampling_tools: bool = False
    sampling_context: bool = False
    elicitation: ElicitationCallback | None = None
    elicitation_url: bool = False
    roots: RootsProvider | None = None
    on_log: LogCallback | None = None
    on_resource_updated: Callable[[str], Awaitable[None] | None] | None = None
    on_list_changed: Callable[[str], Awaitable[None] | None] | None = None
    on_elicitation_complete: Callable[[str], Awaitable[None] | None] | None = None
    request_rate: float | None = 10.0
    _requests: TokenBucket | None = field(default=None, init=False, repr=False, compare=False)
    #: Warnings about the server's invalid notifications, within a bound (a flood of them
    #: wrote 195,000 lines in 11 s).
    _peer_log: PeerLogLimiter = field(
        default_factory=PeerLogLimiter, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        # A callback that cannot take what it will be given fails only when the server
        # first calls it, mid-request: say so now.
        for name, arity in _ARITIES.items():
            callback = getattr(self, name)
            if callback is not None and not (name == "roots" and isinstance(callback, Sequence)):
                _check_arity(name, callback, arity)

    def capabilities(self, base: ClientCapabilities | None = None) -> ClientCapabilities:
        """The capabilities these handlers support, merged into ``base`` (explicit wins)."""
        caps = msgspec.structs.replace(base) if base is not None else ClientCapabilities()
        if self.sampling is not None and caps.sampling is UNSET:
            sampling: dict[str, Any] = {}
            if self.sampling_tools:
                sampling["tools"] = {}
            if self.sampling_context:
                sampling["context"] = {}
            caps.sampling = sampling
        if self.elicitation is not None and caps.elicitation is UNSET:
            caps.elicitation = {"form": {}, **({"url": {}} if self.elicitation_url else {})}
        if self.roots is not None and caps.roots is UNSET:
            caps.roots = RootsCapability(list_changed=True)
        return caps

    async def handle_request(
        self, request: InboundRequest, declared: ClientCapabilities, version: str
    ) -> Any:
        """Answer a request from the server; ``declared``: the capabilities this client
        declared for the session (the sub-capabilities a request may use); ``version``:
        the negotiated protocol version (answers are adapted to it).

        Raises:
            RPCError: -32601 for a method this client does not serve (capability not
                declared), -32602 for invalid params or a sub-capability not declared
                (``sampling.tools``, ``elicitation.url``), or what a callback raised.
        """
        method = request.method
        if method == "ping":
            return EmptyResult()
        if method in _RATED and getattr(self, _RATED[method]) is not None:
            self._admit(method)
        if method == "sampling/createMessage" and self.sampling is not None:
            sampling = decode_params(_SAMPLING, request.params, method)
            if (sampling.tools is not UNSET or sampling.tool_choice is not UNSET) and not declares(
                declared.sampling, "tools"
            ):
                # CreateMessageRequestParams.tools: "The client MUST return an error if this
                # field is provided but ClientCapabilities.sampling.tools is not declared."
                raise RPCError.invalid_params("this client did not declare sampling.tools")
            result = checked(
                await call_off_loop(self.sampling, sampling), CreateMessageResult, "sampling"
            )
            return sampling_answer_for(version, result)
        if method == "elicitation/create" and self.elicitation is not None:
            params = decode_params(_ELICIT, request.params, method)
            if params.mode == "url" and not declares(declared.elicitation, "url"):
                raise RPCError.invalid_params("this client does not support URL-mode elicitation")
            return elicit_answer_for(version, await self.elicited(params))
        if method == "roots/list" and self.roots is not None:
            return ListRootsResult(roots=roots_for(version, await self.list_roots()))
        raise RPCError(
            ErrorCode.METHOD_NOT_FOUND, f"Method not supported by this client: {peer_text(method)}"
        )

    def _admit(self, method: str) -> None:
        """Let one of the server's costly requests through, within ``request_rate``.

        Raises:
            RPCError: -32000 past the rate.
        """
        if self.request_rate is None:
            return
        if self._requests is None:
            self._requests = TokenBucket(self.request_rate)
        if not self._requests.take():
            raise RPCError(
                ErrorCode.SERVER_BUSY,
                f"Too many {method} requests: more than {self.request_rate:g} per second "
                f"after a burst of {BURST}; retry later",
            )

    async def elicited(self, params: ElicitRequestParams) -> ElicitResult:
        """The elicitation callback's answer to ``params``, checked: a valid result, and an
        accepted form's content valid against the ``requestedSchema`` ("Clients SHOULD
        validate all responses against the provided schema", client/elicitation.mdx
        2025-06-18 on, "Security Considerations").

        Raises:
            RPCError: -32603 when the answer is not a valid result or does not match.
        """
        assert self.elicitation is not None
        answer: ElicitResult = checked(
            await call_off_loop(self.elicitation, params), ElicitResult, "elicitation"
        )
        schema = params.requested_schema
        if answer.action != "accept" or not isinstance(schema, dict):
            return answer
        try:
            # The server's schema: its patterns may not backtrack exponentially.
            validator = compile_schema(schema, untrusted=True)
        except LocalProtocolError as exc:
            logger.warning("cannot check the elicitation answer against its schema: %s", exc)
            return answer
        content = {} if answer.content is UNSET else answer.content
        errors = validator.errors(content, limit=3)
        if errors:
            logger.error(
                "the elicitation callback's answer does not match the requested schema: %s",
                "; ".join(error.message for error in errors),
            )
            raise RPCError(
                ErrorCode.INTERNAL_ERROR,
                "Internal error: the client's answer does not match the requested schema",
            )
        return answer

    async def list_roots(self) -> Sequence[Root]:
        """The current roots.

        Raises:
            RPCError: -32603 when the provider gave something that is not roots.
        """
        roots = self.roots
        if roots is None:
            return []
        given = await _maybe_await(roots()) if callable(roots) else roots
        if isinstance(given, (str, bytes)):  # one URI: not one root per character
            given = [given]
        elif not isinstance(given, list):
            with contextlib.suppress(TypeError):  # not iterable: checked() says so
                given = list(given)
        roots_list: list[Root] = checked(given, list[Root], "roots")
        return roots_list

    async def handle_notification(self, method: str, params: Raw | None) -> None:
        """Route a notification from the server to its callback."""
        try:
            if method == "notifications/message":
                record = _LOG.decode(params if params is not None else b"{}")
                if self.on_log is None:
                    server_logger.log(_PY_LEVELS[record.level], "%s", record.data)
                else:
                    await _maybe_await(self.on_log(record))
            elif method == "notifications/resources/updated":
                if self.on_resource_updated is not None:
                    uri = _UPDATED.decode(params if params is not None else b"{}").uri
                    await _maybe_await(self.on_resource_updated(uri))
            elif method in _LIST_CHANGED:
                if self.on_list_changed is not None:
                    await _maybe_await(self.on_list_changed(_LIST_CHANGED[method]))
            elif method == "notifications/elicitation/complete":
                if self.on_elicitation_complete is not None:
                    done = _ELICIT_DONE.decode(params if params is not None else b"{}")
                    await _maybe_await(self.on_elicitation_complete(done.elicitation_id))
            else:
                logger.debug("notification %r from the server ignored", method)
        except msgspec.ValidationError as exc:
            self._peer_log.log(
                logger, logging.WARNING, "invalid %s from the server dropped: %s", method, exc
            )


def capabilities_for(version: str, caps: ClientCapabilities) -> ClientCapabilities:
    """Client capabilities as ``version`` defines them: no ``elicitation`` before
    2025-06-18, no form/url modes (nor sampling sub-capabilities, nor tasks) before
    2025-11-25; from 2026-07-28 no ``tasks`` (an extension now) and no
    ``roots.listChanged``."""
    changes: dict[str, Any] = {}
    if caps.elicitation is not UNSET:
        if version < V2025_06_18:
            changes["elicitation"] = UNSET
        elif version < V2025_11_25:
            changes["elicitation"] = {}
    if caps.sampling is not UNSET and version < V2025_11_25:
        changes["sampling"] = {}
    if caps.tasks is not UNSET and (version < V2025_11_25 or version >= V2026_07_28):
        changes["tasks"] = UNSET  # 2026-07-28: tasks moved to an extension
    if caps.roots is not UNSET and version >= V2026_07_28:
        changes["roots"] = RootsCapability()  # no roots/list_changed in 2026-07-28
    if caps.extensions is not UNSET and version < V2026_07_28:
        changes["extensions"] = UNSET  # (extensions arrived in 2026-07-28)
    return msgspec.structs.replace(caps, **changes) if changes else caps
