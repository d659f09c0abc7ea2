"""The one exception hierarchy of mcpkit.

::

    MCPError
    ├── ProtocolError                  a JSON-RPC / MCP rule was broken
    │   ├── LocalProtocolError         ... by this program (API misuse; fix the calling code)
    │   └── RemoteProtocolError        ... by the peer (bad message; nothing local to fix)
    ├── CapabilityError                the peer did not declare what a request needs
    ├── RPCError                       an error response: raised by handlers, or received
    ├── ToolError                      a tool failed: reported to the model as isError
    ├── RequestTimeoutError            a request got no answer in time (also TimeoutError)
    ├── ConnectionClosedError          the connection ended before the answer arrived
    └── TransportError                 a transport could not be opened or broke
        ├── MessageNotDelivered        one message could not be delivered (the
        │                              connection stays up; e.g. HTTP 500 on its POST)
        └── SessionExpiredError        the server no longer knows this session (HTTP 404)

Outside the hierarchy, for process control: ``Interrupted`` (a ``KeyboardInterrupt`` that
is also ``SystemExit(130)``), what ``Server.run`` raises after Ctrl-C.

Warnings: ``MCPDeprecationWarning`` (a ``DeprecationWarning``) when code uses a feature the
protocol revision in use deprecates (2026-07-28 ``deprecated.mdx``: roots, sampling, logging,
``includeContext`` other than "none"); it still works.

Local misuse and remote violations are different types because the caller's response to
each differs (h11's ``LocalProtocolError`` / ``RemoteProtocolError`` split).
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET, UnsetType

from .types import CallToolResult, ErrorCode, ErrorObject
from .types._echo import peer_text

__all__ = [
    "CapabilityError",
    "ConnectionClosedError",
    "Interrupted",
    "LocalProtocolError",
    "MCPDeprecationWarning",
    "MCPError",
    "ProtocolError",
    "RPCError",
    "RemoteProtocolError",
    "RequestTimeoutError",
    "ToolError",
    "TransportError",
    "MessageNotDelivered",
    "SessionExpiredError",
    "SubscriptionOverflowError",
]


class Interrupted(SystemExit, KeyboardInterrupt):
    """Ctrl-C (SIGINT) stopped a server that ``run()`` was serving; it has shut down.

    A ``KeyboardInterrupt``, so the usual ``except KeyboardInterrupt`` around ``run()``
    still sees it; also ``SystemExit`` with status 130 (128 + SIGINT, the shell's
    convention), so that left uncaught it ends the program quietly instead of printing a
    traceback of the event loop's internals (a common complaint about Python MCP servers
    stopped from a terminal).
    """

    def __init__(self) -> None:
        super().__init__(130)


class MCPError(Exception):
    """Base of every exception mcpkit raises on purpose."""


class ProtocolError(MCPError):
    """A JSON-RPC or MCP rule was broken."""


class LocalProtocolError(ProtocolError, ValueError):
    """This program misused the API (for example answered a request twice, or registered a
    handler under a reserved method name). Fix the calling code."""


class RemoteProtocolError(ProtocolError):
    """The peer sent something the protocol does not allow."""


class CapabilityError(MCPError):
    """A request was not sent because the peer did not declare the capability it needs (or
    the negotiated protocol version does not have the feature). MCP 2025-06-18+
    ``basic/lifecycle.mdx``: both sides MUST respect the negotiated capabilities."""


class RPCError(MCPError):
    """A JSON-RPC error response.

    Raise it from a handler to answer with this exact error; a client raises it when the
    peer answered a request with an error.

    Args:
        code: the JSON-RPC error code (see :class:`mcpkit.types.ErrorCode`).
        message: one concise sentence for a person to read.
        data: optional JSON value with details.
    """

    def __init__(self, code: int, message: str, data: Any | UnsetType = UNSET) -> None:
        super().__init__(message)
        self.code = int(code)
        self.message = message
        self.data = data
        #: True when the peer sent this error (rather than local code raising it to answer).
        self.received = False

    @classmethod
    def from_error(cls, error: ErrorObject) -> RPCError:
        """Build from a received error object (``received`` is set)."""
        exc = cls(error.code, error.message, error.data)
        exc.received = True
        return exc

    def to_error(self) -> ErrorObject:
        """The error object to put on the wire."""
        return ErrorObject(code=self.code, message=self.message, data=self.data)

    @classmethod
    def invalid_params(cls, message: str, data: Any | UnsetType = UNSET) -> RPCError:
        """An ``Invalid params`` (-32602) error."""
        return cls(ErrorCode.INVALID_PARAMS, message, data)

    @classmethod
    def method_not_found(cls, method: str) -> RPCError:
        """A ``Method not found`` (-32601) error naming the method."""
        return cls(ErrorCode.METHOD_NOT_FOUND, f"Method not found: {peer_text(method)}")

    def __str__(self) -> str:
        return f"{self.message} (code {self.code})"

    def __repr__(self) -> str:
        return f"RPCError(code={self.code}, message={self.message!r})"


class ToolError(MCPError):
    """Raise from a tool to report a tool execution error (``isError: true``) with exactly
    this message; the model sees it and may retry (``server/tools.mdx`` "Error Handling").

    The client raises it too, from ``call_tool(..., raise_on_error=True)``, for a result
    with ``isError`` set; its message is the result's text.

    Attributes:
        result: on the client, the :class:`~mcpkit.types.CallToolResult` that reported the
            error; ``None`` on the server.
    """

    def __init__(self, message: str, *, result: CallToolResult | None = None) -> None:
        super().__init__(message)
        self.result = result


class RequestTimeoutError(MCPError, TimeoutError):
    """A request received no response within its timeout; it was cancelled."""


class ConnectionClosedError(MCPError):
    """The connection closed while a request was waiting for its response."""


class TransportError(MCPError):
    """A transport failed to open, broke, or could not carry a message.

    Attributes:
        status: the HTTP status behind the failure, if there was one (informational: HTTP
            statuses are never JSON-RPC error codes).
        retry_after: seconds the server asked the client to wait before trying again
            (its ``Retry-After`` header, RFC 9110 section 10.2.3, say with a 503 at its
            session cap or a gateway's 429), at most a day; ``None`` if it said nothing.
    """

    def __init__(
        self, message: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class MessageNotDelivered(TransportError):
    """One message could not be delivered; the connection itself is still usable.

    Raised, for example, when an HTTP server answers a POST with an error status, or when a
    server has no open stream on which to send a request to its client.
    """


class SessionExpiredError(TransportError):
    """The server ended or forgot this session (Streamable HTTP: 404 for a request carrying
    a session id, ``basic/transports.mdx`` "Session Management"); a new session must be
    initialized."""


class SubscriptionOverflowError(MCPError):
    """A notification subscriber fell too far behind (its bounded queue filled up) and was
    cut off; what was queued for it is dropped. Subscribe again, and refetch what it
    tracked (see ``mcpkit.aio.MemoryNotificationBus``)."""


class MCPDeprecationWarning(DeprecationWarning):
    """A feature that the protocol revision in use deprecates was used (it still works:
    deprecated features stay functional for at least twelve months, 2026-07-28
    ``deprecated.mdx``)."""
