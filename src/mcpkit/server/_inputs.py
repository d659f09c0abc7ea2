"""Input a handler needs from the client, in either era.

In the handshake era the server asks with a request of its own (``sampling/createMessage``,
``elicitation/create``, ``roots/list``) and waits for the answer. 2026-07-28 has no
server-to-client requests (``basic/patterns/mrtr.mdx``): the server answers the original
request with an ``InputRequiredResult`` naming what it needs, and the client retries that
request with the answers. mcpkit keeps one handler API for both: on 2026-07-28 a handler
that asks for input it does not have yet is stopped (:class:`InputRequired`), the result
asks the client, and on the retry the handler runs again from the start, this time finding
each answer where it asked (earlier rounds' answers travel in the sealed ``requestState``).
Handlers therefore must not do irreversible work before their last question.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

import msgspec
from msgspec import UNSET

from ..exceptions import LocalProtocolError, RPCError
from ..types import INPUT_REQUIRED_METHODS, ClientCapabilities, ErrorCode, InputRequiredResult
from ..types._echo import one_line, peer_text
from ._modern import missing_capability
from ._request_state import RequestStateSealer, SealedState

if TYPE_CHECKING:
    from ._session import ServerSession

__all__ = [
    "MRTR_METHODS",
    "InputRequest",
    "InputRequired",
    "InputRound",
    "input_required_in",
    "same",
]

T = TypeVar("T")
R = TypeVar("R")

#: The only requests that may answer with an ``InputRequiredResult`` (mrtr.mdx).
MRTR_METHODS: Final = INPUT_REQUIRED_METHODS
_KEY_LIMIT: Final = 256


@dataclass(frozen=True, eq=False)
class InputRequest(Generic[T]):
    """One piece of input a handler needs from the client; build it with
    ``ctx.elicitation(...)``, ``ctx.sampling(...)`` or ``ctx.roots()`` and pass one or more
    to ``await ctx.ask(...)``.

    Attributes:
        method: the client-side method (``elicitation/create``, ...).
        params: its params (a struct, or ``UNSET``).
        key: the name of this input within the request (``None``: numbered in the order
            asked, which is stable as long as the handler asks in a stable order).
    """

    method: str
    params: Any
    key: str | None
    #: What this needs that ``capabilities`` lack, as (name, sub-capabilities), or None.
    missing: Callable[[ClientCapabilities], tuple[str, Any] | None] = field(repr=False)
    #: Handshake era: send the request and return the decoded result.
    push: Callable[[ServerSession, float | None], Awaitable[Any]] = field(repr=False)
    #: The result struct an answer decodes into.
    result_type: type[Any] = field(repr=False)
    #: The decoded result -> what the handler receives.
    finish: Callable[[Any], T] = field(repr=False)


class InputRequired(BaseException):
    """Raised inside a 2026-07-28 handler that asked for input the client has not given
    yet; the server turns it into an ``InputRequiredResult``. A ``BaseException`` so that
    a handler's ``except Exception`` cannot swallow it: never catch it yourself."""

    def __init__(self, requests: dict[str, InputRequest[Any]]) -> None:
        super().__init__(f"input required: {', '.join(requests)}")
        self.requests = requests


def input_required_in(exc: BaseException) -> InputRequired | None:
    """The :class:`InputRequired` that ended a handler, even inside an exception group
    (a handler that asked from a task group)."""
    if isinstance(exc, InputRequired):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        if isinstance(inner, BaseException):
            found = input_required_in(inner)
            if found is not None:
                return found
    return None


def _digest(value: Any) -> str:
    """A stable digest of the request's arguments (the state is bound to them)."""
    encoded = msgspec.json.encode(value, order="sorted")
    return base64.urlsafe_b64encode(hashlib.sha256(encoded).digest()[:18]).decode("ascii")


def binding_of(method: str, params: Any) -> tuple[str, str]:
    """The (target, arguments digest) a state of ``method`` is bound to."""
    if method == "resources/read":
        return str(params.uri), _digest(None)
    arguments = params.arguments
    return str(params.name), _digest(None if arguments is UNSET else arguments)


class InputRound:
    """The input of one 2026-07-28 request: the answers so far, and the questions asked
    again by this run of the handler."""

    def __init__(
        self,
        sealer: RequestStateSealer,
        method: str,
        params: Any,
        binding: tuple[str, str] | None,
        answers: dict[str, Any],
    ) -> None:
        self._sealer = sealer
        self._method = method
        self._params = params
        # (target, arguments digest): computed when first needed, since most requests
        # never ask for input (a digest of the arguments on every 2026-07-28 call).
        self._bound = binding
        self.answers = answers
        self._asked: set[str] = set()
        self._counter = 0

    @classmethod
    async def begin(cls, sealer: RequestStateSealer, method: str, params: Any) -> InputRound:
        """Open the state a retry carries and collect its answers.

        Answers are taken only for the questions the state says were asked (extra keys are
        ignored, mrtr.mdx); a first call without a state may bring answers for anything.

        Raises:
            RPCError: -32602, the state is invalid (see :meth:`RequestStateSealer.open`).
        """
        responses = params.input_responses
        responses = {} if responses is UNSET else responses
        if params.request_state is UNSET:
            return cls(sealer, method, params, None, dict(responses))
        target, arguments = binding_of(method, params)
        state: SealedState = await sealer.open(params.request_state, method, target, arguments)
        answers = dict(state.answers)
        answers.update((k, responses[k]) for k in state.pending if k in responses)
        return cls(sealer, method, params, (target, arguments), answers)

    def key_for(self, request: InputRequest[Any]) -> str:
        """The key of ``request`` in this run.

        Raises:
            LocalProtocolError: the handler used the same key twice, or an invalid key.
        """
        self._counter += 1
        key = request.key or f"{request.method.rsplit('/', 1)[0]}-{self._counter}"
        if not key or len(key) > _KEY_LIMIT:
            raise LocalProtocolError(f"input keys are 1-{_KEY_LIMIT} characters, not {key!r}")
        if key in self._asked:
            raise LocalProtocolError(f"input key {key!r} is used twice in one request")
        self._asked.add(key)
        return key

    def resolve(self, requests: Sequence[InputRequest[Any]]) -> list[Any]:
        """The answers to ``requests``, in order.

        Raises:
            InputRequired: some are not answered yet (all of those are asked together).
            RPCError: -32602, an answer is not a valid result of its method.
        """
        keyed = [(self.key_for(request), request) for request in requests]
        missing = {key: request for key, request in keyed if key not in self.answers}
        if missing:
            raise InputRequired(missing)
        results = []
        for key, request in keyed:
            try:
                decoded = msgspec.convert(self.answers[key], request.result_type)
            except msgspec.ValidationError as exc:
                raise RPCError.invalid_params(
                    f"Invalid params: inputResponses[{peer_text(key)}] is not a valid result of "
                    f"{request.method}: {one_line(str(exc))}"
                ) from None
            results.append(request.finish(decoded))
        return results

    def result(self, required: InputRequired) -> InputRequiredResult:
        """The ``InputRequiredResult`` asking for what ``required`` names, with a freshly
        sealed state carrying every answer gathered so far.

        Raises:
            RPCError: -32603, the state would exceed the sealer's size bound.
        """
        target, arguments = self._bound or binding_of(self._method, self._params)
        state = self._sealer.new_state(
            self._method, target, arguments, list(required.requests), self.answers
        )
        requests = {
            key: {"method": request.method, "params": _params(request.params)}
            for key, request in required.requests.items()
        }
        return InputRequiredResult(input_requests=requests, request_state=state)


def _params(params: Any) -> Any:
    return {} if params is UNSET else msgspec.to_builtins(params)


def check_modern(request: InputRequest[Any], capabilities: ClientCapabilities) -> None:
    """-32021 when the client's declared capabilities do not cover ``request``.

    Raises:
        RPCError: -32021 naming the missing capability.
    """
    missing = request.missing(capabilities)
    if missing is not None:
        raise missing_capability(*missing)


def no_input(method: str) -> RPCError:
    """The error for a 2026-07-28 handler asking for input where the spec allows none."""
    return RPCError(
        ErrorCode.INTERNAL_ERROR,
        f"{method} cannot ask the client for input on protocol 2026-07-28 (only tools/call, "
        "prompts/get and resources/read may answer with an input-required result)",
    )


def url_elicitations_required(
    error: RPCError, inputs: InputRound | None, method: str, capabilities: ClientCapabilities
) -> InputRequiredResult:
    """2026-07-28 retires -32042 URLElicitationRequired (``basic/patterns/mrtr.mdx``): a
    handler that raises it (as in the handshake era) asks for the same URL elicitations
    through an ``InputRequiredResult`` instead; the client retries once the user is done.

    Raises:
        RPCError: -32021 without ``elicitation.url``; -32603 where no input may be asked
            or when the error names no elicitation.
    """
    data = error.data if isinstance(error.data, dict) else {}
    elicitations = data.get("elicitations")
    if not isinstance(elicitations, list) or not elicitations:
        raise RPCError(ErrorCode.INTERNAL_ERROR, f"URL elicitation required: {error.message}")
    if inputs is None:
        raise no_input(method)
    declared = capabilities.elicitation
    if declared is UNSET or "url" not in declared:
        raise missing_capability("elicitation", {"url": {}})
    requests: dict[str, InputRequest[Any]] = {}
    for n, item in enumerate(elicitations, 1):
        if not isinstance(item, dict) or not isinstance(item.get("url"), str):
            raise RPCError(ErrorCode.INTERNAL_ERROR, "a URL elicitation without a url")
        key = item.get("elicitationId")
        key = key if isinstance(key, str) and key else f"url-{n}"
        # 2026-07-28 URL mode has no elicitationId and no completion notification.
        params = {"mode": "url", "message": str(item.get("message", "")), "url": item["url"]}
        requests[key] = InputRequest(
            "elicitation/create", params, key, _never, _never_push, dict, same
        )
    return inputs.result(InputRequired(requests))


def _never(capabilities: ClientCapabilities) -> tuple[str, Any] | None:
    return None


async def _never_push(session: ServerSession, timeout: float | None) -> Any:
    raise RPCError(ErrorCode.INTERNAL_ERROR, "not sent in the handshake era")


def same(value: T) -> T:
    """The identity: a request whose decoded result is what the handler receives."""
    return value
