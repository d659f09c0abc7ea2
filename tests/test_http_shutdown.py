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


# (mode, app options, client era, what the pending call fails with). A JSON answer
# becomes the 503; on a stream the answer cannot: the stream ends, and the client says so
# at once (resuming it finds the session gone).
MODES: list[tuple[str, dict[str, Any], str, str]] = [
    ("2026-07-28", {}, "2026-07-28", SHUTTING_DOWN),
    ("stateful json", {"json_response": True}, "handshake", SHUTTING_DOWN),
    ("stateless json", {"json_response": True, "stateless": True}, "handshake", SHUTTING_DOWN),
    ("stateful sse", {}, "handshake", "the server ended the session while answering"),
    (
        "stateless sse",
        {"stateless": True},
        "handshake",
        "the server closed the response stream before answering",
    ),
]


@pytest.mark.parametrize(
    ("options", "era", "expected"), [m[1:] for m in MODES], ids=[m[0] for m in MODES]
)
async def test_a_running_request_fails_at_once_when_the_server_shuts_down(
    options: dict[str, Any], era: str, expected: str
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
        assert expected in str(failure[0])
