"""A deliberately raw MCP-over-HTTP client for testing servers: every header and byte is
under the test's control (mcpkit's own client would hide the rules under test)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx

from mcpkit.protocol import SSEEvent, SSEParser

ACCEPT_BOTH = "application/json, text/event-stream"
JSON_HEADERS = {"accept": ACCEPT_BOTH, "content-type": "application/json"}


def request(rid: int | str, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def call(rid: int, tool: str, **arguments: Any) -> bytes:
    """A ``tools/call`` request's body."""
    return request(rid, "tools/call", {"name": tool, "arguments": arguments})


def asgi_scope(method: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    """The ASGI scope of an HTTP request to ``/mcp`` on 127.0.0.1:8000 (an app driven in
    process); ``headers`` after ``Host``."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1:8000"), *headers],
        "client": ("127.0.0.1", 5555),
        "server": ("127.0.0.1", 8000),
    }


def asgi_receive(
    body: bytes, stay: Callable[[], Awaitable[Any]]
) -> Callable[[], Awaitable[dict[str, Any]]]:
    """An ASGI ``receive`` of a client that sends ``body`` whole, then stays connected
    until ``stay()`` returns (then disconnects)."""
    given = False

    async def receive() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        await stay()
        return {"type": "http.disconnect"}

    return receive


def notification(method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def initialize(rid: int = 1, version: str = "2025-11-25", capabilities: Any = None) -> bytes:
    return request(
        rid,
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": capabilities or {},
            "clientInfo": {"name": "raw-test-client", "version": "0"},
        },
    )


def parse_sse(body: bytes) -> list[SSEEvent]:
    parser = SSEParser()
    return [*parser.feed(body), *parser.close()]


def messages_of(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages a POST's answer carried (JSON body or SSE events)."""
    ctype = response.headers.get("content-type", "")
    if ctype.startswith("application/json"):
        value = response.json()
        return value if isinstance(value, list) else [value]
    assert ctype.startswith("text/event-stream"), ctype
    messages: list[dict[str, Any]] = []
    for event in parse_sse(response.content):
        if event.data:  # a priming event has none
            value = json.loads(event.data)
            messages.extend(value if isinstance(value, list) else [value])
    return messages


class RawSession:
    """One session on a Streamable HTTP endpoint, spoken by hand."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.session_id: str | None = None
        self.version: str | None = None

    def headers(self, **extra: str) -> dict[str, str]:
        headers = dict(JSON_HEADERS)
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
        if self.version is not None:
            headers["mcp-protocol-version"] = self.version
        headers.update({k.replace("_", "-"): v for k, v in extra.items()})
        return headers

    async def open(self, version: str = "2025-11-25", capabilities: Any = None) -> dict[str, Any]:
        response = await self.http.post(
            self.url,
            content=initialize(version=version, capabilities=capabilities),
            headers=self.headers(),
        )
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        self.version = version
        answer = messages_of(response)[0]
        response = await self.http.post(
            self.url, content=notification("notifications/initialized"), headers=self.headers()
        )
        assert response.status_code == 202, response.text
        return answer

    async def post(self, body: bytes, **headers: str) -> httpx.Response:
        return await self.http.post(self.url, content=body, headers=self.headers(**headers))

    async def call(
        self, rid: int, method: str, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Send a request and return its response (the last message of the answer)."""
        response = await self.post(request(rid, method, params))
        assert response.status_code == 200, response.text
        messages = messages_of(response)
        assert messages[-1].get("id") == rid, messages
        return messages[-1]

    @asynccontextmanager
    async def stream(
        self, body: bytes | None = None, **headers: str
    ) -> AsyncIterator[httpx.Response]:
        """POST ``body`` (or GET when None) and keep the answer open for streaming."""
        if body is None:
            hdrs = self.headers(**headers)
            hdrs["accept"] = headers.get("accept", "text/event-stream")
            hdrs.pop("content-type", None)
            request_ = self.http.build_request("GET", self.url, headers=hdrs)
        else:
            request_ = self.http.build_request(
                "POST", self.url, content=body, headers=self.headers(**headers)
            )
        response = await self.http.send(request_, stream=True)
        try:
            yield response
        finally:
            await response.aclose()


async def events(response: httpx.Response) -> AsyncIterator[SSEEvent]:
    """The SSE events of a streaming response, as they arrive (priming events included)."""
    parser = SSEParser()
    async for chunk in response.aiter_raw():
        for event in parser.feed(chunk):
            yield event
