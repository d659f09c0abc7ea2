"""A scripted Streamable HTTP peer for client tests: a plain ASGI callable (no framework)
that records every request and answers each one from a script, so faults (error statuses,
HTML pages, oversized bodies, streams dropped mid-way) happen exactly where a test wants.

It runs in the server thread of ``tests/_httpserver.py``; tests wait for what it saw with
:meth:`FakeMCPServer.wait_seen` (a thread-safe condition, never a sleep).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]

SESSION_ID = "fake-session-1"
VERSION = "2025-11-25"


class DropConnection(Exception):
    """Raised by a handler to make uvicorn abort the connection mid-response."""


@dataclass
class Seen:
    """One HTTP request the fake server received."""

    method: str
    headers: dict[str, str]
    body: bytes
    at: float  # time.monotonic() on arrival
    rpc: dict[str, Any] | None = None  # the JSON-RPC message of a POST, if it is one
    disconnected: threading.Event = field(default_factory=threading.Event)

    @property
    def rpc_method(self) -> str | None:
        return None if self.rpc is None else self.rpc.get("method")

    @property
    def rpc_id(self) -> Any:
        return None if self.rpc is None else self.rpc.get("id")


@dataclass
class Exchange:
    """What a handler gets: the request and the means to answer it."""

    seen: Seen
    send: Send
    receive: Receive
    server: FakeMCPServer

    async def start(
        self, status: int, content_type: str | None, headers: Iterable[tuple[str, str]] = ()
    ) -> None:
        raw = [(k.encode(), v.encode()) for k, v in headers]
        if content_type is not None:
            raw.append((b"content-type", content_type.encode()))
        await self.send({"type": "http.response.start", "status": status, "headers": raw})

    async def body(self, data: bytes, *, more: bool = False) -> None:
        await self.send({"type": "http.response.body", "body": data, "more_body": more})

    async def wait_disconnect(self) -> None:
        while (await self.receive())["type"] != "http.disconnect":
            pass
        self.seen.disconnected.set()


Handler = Callable[[Exchange], Awaitable[None]]
Payload = bytes | Callable[[Exchange], bytes]


def rpc_result(rid: Any, result: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()


def rpc_error(rid: Any, code: int, message: str) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}
    ).encode()


def sse(
    data: bytes = b"",
    *,
    event_id: str | None = None,
    retry: int | None = None,
    event: str | None = None,
) -> bytes:
    out = b""
    if event_id is not None:
        out += b"id: " + event_id.encode() + b"\n"
    if event is not None:
        out += b"event: " + event.encode() + b"\n"
    if retry is not None:
        out += b"retry: %d\n" % retry
    return out + b"data: " + data + b"\n\n"


def answer(result: Any = None) -> Callable[[Exchange], bytes]:
    """The payload answering the exchange's request with ``result`` (default ``{}``)."""
    return lambda ex: rpc_result(ex.seen.rpc_id, {} if result is None else result)


def _resolve(payload: Payload, ex: Exchange) -> bytes:
    return payload(ex) if callable(payload) else payload


def reply(
    status: int = 200,
    payload: Payload = b"",
    *,
    content_type: str | None = "application/json",
    headers: Iterable[tuple[str, str]] = (),
) -> Handler:
    """Answer with one complete body."""

    async def handler(ex: Exchange) -> None:
        await ex.start(status, content_type, headers)
        await ex.body(_resolve(payload, ex))

    return handler


def stream(
    *events: Payload, end: str = "close", headers: Iterable[tuple[str, str]] = ()
) -> Handler:
    """Answer with an SSE stream of ``events``; then ``end``: ``"close"`` (normal end),
    ``"drop"`` (abort the connection) or ``"hold"`` (stay open until the client leaves)."""

    async def handler(ex: Exchange) -> None:
        await ex.start(200, "text/event-stream", headers)
        for event in events:
            await ex.body(_resolve(event, ex), more=True)
        if end == "drop":
            ex.server.mark("dropped")
            raise DropConnection
        if end == "hold":
            await ex.wait_disconnect()
            return
        await ex.body(b"")

    return handler


class FakeMCPServer:
    """The scripted peer. Defaults: ``initialize`` is answered with JSON and a session id,
    other requests with an empty result, notifications and responses with 202, GET with
    405 and DELETE with 200. :meth:`script` queues handlers that take precedence, in order.
    """

    def __init__(self, *, session_id: str | None = SESSION_ID, version: str = VERSION) -> None:
        self._changed = threading.Condition()
        self.reset(session_id=session_id, version=version)

    def reset(self, *, session_id: str | None = SESSION_ID, version: str = VERSION) -> None:
        """Forget what was seen and scripted (one server serves many tests)."""
        with self._changed:
            self.session_id = session_id
            self.version = version
            self.seen: list[Seen] = []
            self.marks: dict[str, float] = {}
            self._scripts: dict[str, deque[Handler]] = {}

    # -- scripting and inspection (test thread) -------------------------------------------

    def script(self, key: str, *handlers: Handler) -> None:
        """Queue handlers for POSTs of JSON-RPC method ``key``, or for ``"GET"``/``"DELETE"``."""
        self._scripts.setdefault(key, deque()).extend(handlers)

    def mark(self, name: str) -> None:
        with self._changed:
            self.marks[name] = time.monotonic()
            self._changed.notify_all()

    def requests(self, method: str | None = None, rpc: str | None = None) -> list[Seen]:
        with self._changed:
            return [
                s
                for s in self.seen
                if (method is None or s.method == method) and (rpc is None or s.rpc_method == rpc)
            ]

    async def wait_seen(self, method: str, rpc: str | None = None, count: int = 1) -> list[Seen]:
        """Wait (in a worker thread, bounded) until ``count`` such requests arrived."""

        def wait() -> list[Seen]:
            with self._changed:
                ok = self._changed.wait_for(lambda: len(self._matching(method, rpc)) >= count, 10)
                if not ok:
                    raise TimeoutError(f"the fake server did not see {count} {method} {rpc or ''}")
                return self._matching(method, rpc)

        return await anyio.to_thread.run_sync(wait, abandon_on_cancel=True)

    def _matching(self, method: str, rpc: str | None) -> list[Seen]:
        return [s for s in self.seen if s.method == method and (rpc is None or s.rpc_method == rpc)]

    # -- the ASGI app (server thread) -----------------------------------------------------

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        seen = Seen(scope["method"], headers, body, time.monotonic())
        if body:
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = None
            seen.rpc = parsed if isinstance(parsed, dict) else None
        with self._changed:
            self.seen.append(seen)
            self._changed.notify_all()
        ex = Exchange(seen, send, receive, self)
        key = seen.method if seen.method != "POST" else (seen.rpc_method or "<response>")
        queue = self._scripts.get(key)
        handler = queue.popleft() if queue else self._default
        await handler(ex)

    async def _default(self, ex: Exchange) -> None:
        seen = ex.seen
        if seen.method == "GET":
            await reply(405, b"", content_type=None)(ex)
        elif seen.method == "DELETE":
            await reply(200, b"", content_type=None)(ex)
        elif seen.rpc_method == "initialize":
            result = {
                "protocolVersion": self.version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake", "version": "1.0"},
            }
            headers = [("MCP-SESSION-ID", self.session_id)] if self.session_id else []
            await reply(200, rpc_result(seen.rpc_id, result), headers=headers)(ex)
        elif seen.rpc_id is not None and seen.rpc_method is not None:
            await reply(200, answer())(ex)
        else:
            await reply(202, b"", content_type=None)(ex)
