"""Picking a transport from a URL, and the Streamable HTTP -> HTTP+SSE fallback.

MCP ``basic/transports.mdx`` (2025-03-26 and later), "Backwards Compatibility": a client
that wants to support older servers POSTs its ``InitializeRequest`` to the server URL; if
that fails with an HTTP 4xx status, it issues a GET to the same URL and expects an SSE
stream whose first event is ``endpoint`` (the 2024-11-05 HTTP+SSE transport).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from ..exceptions import LocalProtocolError, MessageNotDelivered

if TYPE_CHECKING:
    import ssl

    from ._client import ClientTransport
    from ._inprocess import Target

__all__ = ["candidates_for", "falls_back_to_sse", "transports_for_url", "url_options"]

#: 4xx answers to the initialize POST that do not mean "not a Streamable HTTP endpoint":
#: authentication and authorization (answered the same way by either transport), a slow
#: request, and rate limiting. Falling back on these would hide the real problem.
_NO_FALLBACK: Final = frozenset({401, 403, 408, 429})


def transports_for_url(
    url: str,
    timeout: float | None = None,
    headers: Mapping[str, str] | None = None,
    ssl_context: ssl.SSLContext | None = None,
) -> list[ClientTransport]:
    """The transports to try, in order, for ``url`` (each with ``headers`` on every
    request and ``ssl_context`` for TLS):

    * ``http://`` and ``https://``: Streamable HTTP, then the legacy HTTP+SSE transport on
      the same URL (see :func:`falls_back_to_sse`);
    * ``ws://`` and ``wss://``: WebSocket (mcpkit's binding, ``docs/websocket.md``).

    ``timeout`` (the client's) also bounds opening them: waiting for the HTTP+SSE
    ``endpoint`` event (30 s by default) and the WebSocket handshake (10 s), as it bounds
    the ``initialize`` request that follows.

    Raises:
        LocalProtocolError: the URL has another scheme or no host; a header no request
            could carry.
        TransportError: the library the transport needs is not installed.
    """
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (reading it checks it: a ValueError when out of range)
    except ValueError as exc:
        raise LocalProtocolError(f"not a server URL ({exc}): {url!r}") from None
    scheme = parts.scheme.lower()
    if not parts.hostname:
        raise LocalProtocolError(f"not a server URL (no host): {url!r}{_hint(url)}")
    if scheme in ("http", "https"):
        from ..transports import SSETransport, StreamableHTTPTransport

        # (Each checks the URL: an invalid IDNA host is a LocalProtocolError.)
        sse = SSETransport(url, headers=headers, ssl_context=ssl_context)
        sse.endpoint_timeout = _shorter(sse.endpoint_timeout, timeout)
        return [StreamableHTTPTransport(url, headers=headers, ssl_context=ssl_context), sse]
    if scheme in ("ws", "wss"):
        from ..transports import WebSocketTransport

        ws = WebSocketTransport(url, headers=headers, ssl_context=ssl_context)
        ws.open_timeout = _shorter(ws.open_timeout, timeout)
        return [ws]
    raise LocalProtocolError(
        f"cannot pick a transport for {url!r}: use an http(s):// or ws(s):// URL, "
        "or pass a transport (e.g. StdioTransport)"
    )


#: What a server URL's transports are made with: headers, a TLS context.
URLOptions = tuple["Mapping[str, str] | None", "ssl.SSLContext | None"]


def url_options(
    target: object, headers: Mapping[str, str] | None, ssl_context: ssl.SSLContext | None
) -> URLOptions:
    """``Client(..., headers=, ssl_context=)``, which only a server URL can use.

    Raises:
        LocalProtocolError: either is given with a target that is not a URL.
    """
    if (headers is not None or ssl_context is not None) and not isinstance(target, str):
        raise LocalProtocolError(
            "headers= and ssl_context= are for a server URL: give them to the transport"
        )
    return headers, ssl_context


def candidates_for(
    target: Target | str, timeout: float | None, options: URLOptions
) -> Sequence[Target]:
    """The transports to try for ``target``: itself, or those a URL picks (made with
    ``options``, from :func:`url_options`)."""
    if not isinstance(target, str):
        return (target,)
    return transports_for_url(target, timeout, *options)


def _shorter(default: float, timeout: float | None) -> float:
    return default if timeout is None else min(default, timeout)


def falls_back_to_sse(error: BaseException) -> bool:
    """Whether the failure of the initialize POST means "try HTTP+SSE": an HTTP 4xx
    answer, except those in ``_NO_FALLBACK``. A connection failure or a 5xx is not."""
    if not isinstance(error, MessageNotDelivered) or error.status is None:
        return False
    return 400 <= error.status < 500 and error.status not in _NO_FALLBACK


def _hint(url: str) -> str:
    """What was probably meant: a URL without its scheme, or a server file."""
    if url.endswith(".py") or ".py:" in url:
        return (
            "; to start a server file and talk to it over stdio, pass "
            f"StdioTransport(sys.executable, ['-m', 'mcpkit', 'run', {url!r}])"
        )
    if url and "://" not in url:
        return f"; did you mean 'http://{url}'?"
    return ""
