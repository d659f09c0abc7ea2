"""A server shutting down (``close_all()``, which ``mcpkit run`` and ``serve_http`` call
when shutdown begins) with requests still running: each is answered at once with a clear
503, never left hanging until the ASGI server's grace period ends (then a bare 500) nor
answered 404 (which sends a client off to open a new session with a server going away)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpkit.client import Client
from mcpkit.exceptions import MCPError
from mcpkit.server import Server, StreamableHTTPApp

from ._http_testserver import Gates
from ._httpserver import running_server

pytestmark = pytest.mark.anyio

LIMIT = 10.0
SHUTTING_DOWN = "Service Unavailable: the server is shutting down; the request was not completed"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def blocking_server(gates: Gates) -> Server:
    server = Server("shutdown")

    @server.tool()
    async def block(key: str) -> str:
        """Signal that it runs, then wait until cancelled."""
        gates.open(key)
        await anyio.sleep_forever()
        return "never"

    return server


MODES: list[tuple[str, dict[str, Any], str]] = [
    ("2026-07-28", {}, "2026-07-28"),
    ("stateful json", {"json_response": True}, "handshake"),
    ("stateless json", {"json_response": True, "stateless": True}, "handshake"),
]


@pytest.mark.parametrize(("options", "era"), [m[1:] for m in MODES], ids=[m[0] for m in MODES])
async def test_a_running_request_is_answered_503_when_the_server_shuts_down(
    options: dict[str, Any], era: str
) -> None:
    gates = Gates()
    app = StreamableHTTPApp(blocking_server(gates), **options)
    with running_server(app) as http, anyio.fail_after(LIMIT):
        async with Client(http.url + "/mcp", era=era) as client:  # type: ignore[arg-type]
            failure: list[BaseException] = []

            async def call() -> None:
                try:
                    await client.call_tool("block", {"key": "started"}, timeout=LIMIT)
                except MCPError as exc:
                    failure.append(exc)

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await gates.wait("started")
                http.call(app.close_all)
        assert len(failure) == 1
        assert SHUTTING_DOWN in str(failure[0])


# On a stream the answer cannot become a 503: the stream ends, and the client says so at
# once (resuming it finds the session gone).
STREAMS: list[tuple[str, dict[str, Any], str]] = [
    ("stateful sse", {}, "the server ended the session while answering"),
    (
        "stateless sse",
        {"stateless": True},
        "the server closed the response stream before answering",
    ),
]


@pytest.mark.parametrize(
    ("options", "expected"), [m[1:] for m in STREAMS], ids=[m[0] for m in STREAMS]
)
async def test_a_running_request_on_a_stream_fails_at_once_when_the_server_shuts_down(
    options: dict[str, Any], expected: str
) -> None:
    gates = Gates()
    app = StreamableHTTPApp(blocking_server(gates), **options)
    with running_server(app) as http, anyio.fail_after(LIMIT):
        async with Client(http.url + "/mcp", era="handshake") as client:
            failure: list[BaseException] = []

            async def call() -> None:
                try:
                    await client.call_tool("block", {"key": "started"}, timeout=LIMIT)
                except MCPError as exc:
                    failure.append(exc)

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await gates.wait("started")
                http.call(app.close_all)
        assert len(failure) == 1
        assert expected in str(failure[0])
