"""The HTTP floor: the least an ASGI app can do to answer an MCP POST.

A bare ASGI callable (no framework) served by the same uvicorn set-up as mcpkit's
(``mcpkit.transports.serve_http``: uvicorn + httptools on the asyncio loop, TCP_NODELAY, the
same limits). For every POST it reads the body, decodes ``id`` and ``method`` with one tiny
msgspec struct, and answers ``200 application/json`` with the same fixed, well-formed
results as ``bench/bare_echo_server.py`` (``tools/call``: one text block ``hello, world``)
carrying the request's id; a notification gets ``202``. No sessions, no header checks, no
validation. Anything but POST gets ``405``.

Run: ``python bench/bare_http_server.py [--port N]``. Prints ``bare: serving HTTP on <url>``
on stderr once it listens.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import Any, Final

import msgspec

from bare_echo_server import _NOT_FOUND, _RESULTS
from mcpkit.transports import serve_http

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

_JSON_HEADERS: Final = [(b"content-type", b"application/json")]


class _Message(msgspec.Struct):
    id: int | str | None = None
    method: str | None = None


_decode = msgspec.json.Decoder(_Message).decode
_encode_id = msgspec.json.Encoder().encode


async def _respond(send: Send, status: int, body: bytes, json: bool = True) -> None:
    length = (b"content-length", str(len(body)).encode())
    headers = [*_JSON_HEADERS, length] if json else [length]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        while True:
            event = await receive()
            if event["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif event["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    if scope["method"] != "POST":
        await _respond(send, 405, b"", json=False)
        return
    body = b""
    more = True
    while more:
        event = await receive()
        body += event.get("body", b"")
        more = event.get("more_body", False)
    try:
        message = _decode(body)
    except msgspec.DecodeError:
        await _respond(send, 400, b"", json=False)
        return
    if message.id is None or message.method is None:
        await _respond(send, 202, b"", json=False)
        return
    head = b'{"jsonrpc":"2.0","id":' + _encode_id(message.id)
    result = _RESULTS.get(message.method)
    if result is None:
        await _respond(send, 200, head + b',"error":' + _NOT_FOUND + b"}")
    else:
        await _respond(send, 200, head + b',"result":' + result + b"}")


def serve_main(name: str, served: Callable[..., Awaitable[None]]) -> None:
    """The command line of an HTTP contender: ``--port``; announces
    ``<name>: serving HTTP on <url>`` on stderr once it listens."""
    parser = argparse.ArgumentParser(description=sys.modules[served.__module__].__doc__)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()

    def announce(http: Any) -> None:
        print(f"{name}: serving HTTP on {http.url}/mcp", file=sys.stderr, flush=True)

    asyncio.run(serve_http(served, host="127.0.0.1", port=args.port, ready=announce))


def main() -> None:
    serve_main("bare", app)


if __name__ == "__main__":
    main()
