"""The handshake-era lifecycle of a server connection, as a transition table.

``basic/lifecycle.mdx`` (2024-11-05 ... 2025-11-25): the first request MUST be
``initialize``; only ``ping`` may precede it; the client then sends
``notifications/initialized``. A second ``initialize`` is refused. A request arriving too
early gets an error and the connection stays up.

Rule block: everything that decides whether a message is allowed in a lifecycle state lives
in ``_REQUEST_RULES`` and ``_NOTIFICATION_RULES`` below; anything not in a table is refused.
"""

from __future__ import annotations

import enum
from typing import Final

from ..exceptions import LocalProtocolError
from ..types import HANDSHAKE_VERSIONS, ErrorCode, ErrorObject

__all__ = ["READY_HANDSHAKES", "HandshakeState", "ServerHandshake", "ready_handshake"]


class HandshakeState(enum.Enum):
    """Where a server connection stands in the handshake."""

    #: Nothing but ``initialize`` and ``ping`` is accepted yet.
    AWAITING_INITIALIZE = "awaiting-initialize"
    #: ``initialize`` was answered; waiting for ``notifications/initialized``. Requests are
    #: served already (clients commonly pipeline them right behind the notification).
    INITIALIZED = "initialized"
    #: The client confirmed with ``notifications/initialized``.
    READY = "ready"

    # Members are singletons: identity hashing (in C) instead of Enum's Python-level
    # hash of the name, which the rule lookup below pays on every request.
    __hash__ = object.__hash__


_S = HandshakeState
# The members as plain module constants: reading one through the class (Enum's
# metaclass) costs ten times a global read, and the handshake is consulted per request
# (a stateless HTTP POST makes a handshake of its own).
_AWAITING: Final = _S.AWAITING_INITIALIZE
_INITIALIZED: Final = _S.INITIALIZED
_READY: Final = _S.READY

_NOT_INITIALIZED: Final = ErrorObject(
    code=ErrorCode.INVALID_REQUEST,
    message="Invalid Request: the connection is not initialized; send `initialize` first",
)
_ALREADY_INITIALIZED: Final = ErrorObject(
    code=ErrorCode.INVALID_REQUEST,
    message="Invalid Request: `initialize` may only be sent once per connection",
)
# state -> ({method: error to answer with, or None to accept}, the same for any other
# method).
_REQUEST_RULES: Final[
    dict[HandshakeState, tuple[dict[str, ErrorObject | None], ErrorObject | None]]
] = {
    _S.AWAITING_INITIALIZE: ({"initialize": None, "ping": None}, _NOT_INITIALIZED),
    _S.INITIALIZED: ({"initialize": _ALREADY_INITIALIZED}, None),
    _S.READY: ({"initialize": _ALREADY_INITIALIZED}, None),
}
# (state, notification) -> next state; notifications absent from the table leave the state
# unchanged and are delivered (cancelled, progress, roots/list_changed, ...), except that
# nothing but cancellation is delivered before initialize.
_NOTIFICATION_RULES: Final[dict[tuple[HandshakeState, str], HandshakeState]] = {
    (_S.INITIALIZED, "notifications/initialized"): _S.READY,
}


class ServerHandshake:
    """Tracks the lifecycle of one server connection (sans-I/O)."""

    # Class-level initial values, no __init__: making one runs no Python code.
    state: HandshakeState = _AWAITING
    protocol_version: str | None = None

    def check_request(self, method: str) -> ErrorObject | None:
        """Return the error to answer a request with in the current state, or ``None`` if
        the request may be served."""
        named, other = _REQUEST_RULES[self.state]
        return named.get(method, other)

    def initialize_succeeded(self, protocol_version: str) -> None:
        """Record that ``initialize`` was answered with ``protocol_version``."""
        if self.state is not _AWAITING:
            raise LocalProtocolError("initialize already succeeded on this connection")
        self.state = _INITIALIZED
        self.protocol_version = protocol_version

    def assume_ready(self, protocol_version: str) -> None:
        """Skip the handshake: what :meth:`initialize_succeeded` with ``protocol_version``
        and then ``notifications/initialized`` do, in one step (stateless HTTP, where no
        ``initialize`` precedes a request).

        Raises:
            LocalProtocolError: ``initialize`` already succeeded on this connection.
        """
        if self.state is not _AWAITING:
            raise LocalProtocolError("initialize already succeeded on this connection")
        self.state = _READY
        self.protocol_version = protocol_version

    def receive_notification(self, method: str) -> bool:
        """Apply a notification; return whether it should be delivered to handlers."""
        next_state = _NOTIFICATION_RULES.get((self.state, method))
        if next_state is not None:
            self.state = next_state
            return False
        if method == "notifications/initialized":
            return False  # early or repeated: nothing to do
        return self.state is not _AWAITING


def _ready(protocol_version: str) -> ServerHandshake:
    handshake = ServerHandshake()
    handshake.assume_ready(protocol_version)
    return handshake


#: A ready handshake per handshake-era version, shared (read-only: never assign to one).
#: Sharing lets no state cross between the sessions using one, because no message moves
#: a ready handshake: ``initialize`` is refused before any change,
#: ``notifications/initialized`` changes nothing, :meth:`ServerHandshake.assume_ready`
#: raises. (Stateless HTTP makes a session per POST: this spares it a handshake.)
READY_HANDSHAKES: Final[dict[str, ServerHandshake]] = {
    version: _ready(version) for version in HANDSHAKE_VERSIONS
}


def ready_handshake(protocol_version: str) -> ServerHandshake:
    """A handshake in the state :meth:`ServerHandshake.assume_ready` leaves a new one in:
    for a handshake-era version, the shared one of :data:`READY_HANDSHAKES` (read-only);
    otherwise a new one.

    Raises:
        Nothing: a new handshake accepts any version.
    """
    shared = READY_HANDSHAKES.get(protocol_version)
    return _ready(protocol_version) if shared is None else shared
