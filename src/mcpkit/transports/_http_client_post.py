"""The httpx client the HTTP transports create (on mcpkit's connection layer, ``_h1.py``),
and the Streamable HTTP channel's POSTs, straight to that layer when they can.

httpx's client spends about 100 us per request on work none of the channel's own POSTs
needs when the channel made the client itself: auth flows (it has none), redirects (never
followed), event hooks (none), logging, and cookie handling, which is done here only once
a server sets a cookie (then every request goes through httpx's client, which keeps and
sends them: sticky sessions behind load balancers go on working). A proxy named by the
environment, or a client the caller passed, always goes through httpx's client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    import ssl

    from ._h1 import HTTP1Transport

__all__ = ["Poster", "connection_layer", "own_client"]


class Poster:
    """POSTs for one channel and its client.

    Args:
        client: the channel's httpx client.
        url: the endpoint.
        direct: the connection layer :func:`own_client` put under ``client``, for the
            shortcut; None for a client the caller passed (used only through its own
            ``send``: whatever it was configured with applies) or one on httpx's default.
    """

    def __init__(
        self, client: httpx.AsyncClient, url: httpx.URL, direct: HTTP1Transport | None
    ) -> None:
        self._client = client
        self._url = url
        self._direct = direct

    @asynccontextmanager
    async def post(
        self, message: bytes, headers: httpx.Headers, timeout: httpx.Timeout
    ) -> AsyncIterator[httpx.Response]:
        """POST ``message``; the response streams until the block ends.

        Raises:
            httpx.HTTPError: the request failed (as from ``client.stream``).
        """
        client, direct = self._client, self._direct
        if direct is None or client.cookies:
            async with client.stream(
                "POST",
                self._url,
                content=message,
                headers=headers,
                timeout=timeout,
                follow_redirects=False,
            ) as response:
                yield response
            return
        merged = httpx.Headers(client.headers)  # User-Agent, Connection, as httpx sends
        merged.update(headers)
        request = httpx.Request(
            "POST",
            self._url,
            headers=merged,
            content=message,
            extensions={"timeout": timeout.as_dict()},
        )
        response = await direct.handle_async_request(request)
        response.request = request
        try:
            yield response
        finally:
            await response.aclose()
            if "set-cookie" in response.headers:
                client.cookies.extract_cookies(response)


def connection_layer(ssl_context: ssl.SSLContext | None) -> HTTP1Transport | None:
    """The connection layer of the httpx clients mcpkit creates itself: its own HTTP/1.1
    pool (``_h1.py``, several times cheaper per request than httpcore), or httpx's default
    (None) where the environment names a proxy (httpx honours ``HTTP_PROXY``, ``NO_PROXY``
    and the rest only with its default) or where httptools, which the ``http`` extra
    brings, is missing."""
    import urllib.request

    proxies = urllib.request.getproxies()  # the environment, as httpx reads it
    if any(proxies.get(scheme) for scheme in ("http", "https", "all")):
        return None
    try:
        from ._h1 import HTTP1Transport
    except ImportError:  # (httptools, which the http extra brings, is missing)
        return None
    return HTTP1Transport(ssl_context=ssl_context)


def own_client(
    ssl_context: ssl.SSLContext | None, layer: HTTP1Transport | None, **options: Any
) -> httpx.AsyncClient:
    """The httpx client an HTTP transport creates when it is given none: redirects not
    followed (the transports judge them), TLS by ``ssl_context`` (httpx's default if None),
    on ``layer`` (:func:`connection_layer`'s; None: httpx's default, which applies the
    environment's proxies); no auth or event hooks unless ``options`` (as
    ``httpx.AsyncClient`` takes them) give them."""
    return httpx.AsyncClient(
        follow_redirects=False, verify=ssl_context or True, transport=layer, **options
    )
