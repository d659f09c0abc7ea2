"""What the Streamable HTTP client's own httpx client still does on its short way to the
connection layer: cookies a server sets are kept and sent back (a load balancer's sticky
session), and a proxy the environment names carries every request."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import anyio
import pytest

from mcpkit.client import Client

from ._fake_mcp_http import Exchange, FakeMCPServer, answer, reply, rpc_result
from ._httpserver import running_server

pytestmark = pytest.mark.anyio

LIMIT = 20.0


@pytest.fixture
def fake() -> Iterator[tuple[FakeMCPServer, str]]:
    server = FakeMCPServer()
    with running_server(server) as running:
        yield server, running.url


def initialize_with_cookie(cookie: str) -> object:
    async def handler(ex: Exchange) -> None:
        result = {
            "protocolVersion": ex.server.version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "1.0"},
        }
        headers = [("mcp-session-id", "s1"), ("set-cookie", cookie)]
        await reply(200, rpc_result(ex.seen.rpc_id, result), headers=headers)(ex)

    return handler


async def test_cookies_a_server_sets_are_sent_back(fake: tuple[FakeMCPServer, str]) -> None:
    server, base = fake
    server.script("initialize", initialize_with_cookie("LB=node-2; Path=/"))  # type: ignore[arg-type]
    server.script(
        "tools/call",
        reply(200, answer({"content": []})),
        reply(200, answer({"content": []}), headers=[("set-cookie", "LB=node-3; Path=/")]),
        reply(200, answer({"content": []})),
    )
    with anyio.fail_after(LIMIT):
        async with Client(base + "/mcp", era="handshake") as client:
            for _ in range(3):
                await client.call_tool("echo", {})
    cookies = [(s.rpc_method, s.headers.get("cookie")) for s in server.requests("POST")]
    assert cookies == [
        ("initialize", None),
        ("notifications/initialized", "LB=node-2"),
        ("tools/call", "LB=node-2"),
        ("tools/call", "LB=node-2"),
        ("tools/call", "LB=node-3"),
    ]


async def test_a_proxy_named_by_the_environment_carries_every_request(
    fake: tuple[FakeMCPServer, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    server, base = fake
    monkeypatch.setenv("HTTP_PROXY", base)
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    server.script("tools/call", reply(200, answer({"content": []})))
    # Nothing listens on localhost:1: only through the proxy does anything arrive.
    with anyio.fail_after(LIMIT):
        async with Client("http://localhost:1/mcp", era="handshake") as client:
            await client.call_tool("echo", {})
    posts = server.requests("POST")
    assert [s.rpc_method for s in posts] == [
        "initialize",
        "notifications/initialized",
        "tools/call",
    ]
    assert {s.headers["host"] for s in posts} == {"localhost:1"}


async def test_without_httptools_the_client_runs_on_httpxs_default(
    fake: tuple[FakeMCPServer, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # httptools comes with the http extra; an install without it keeps working, on httpcore.
    server, base = fake
    monkeypatch.setitem(sys.modules, "httptools", None)  # (None: "import httptools" fails)
    for name in ("mcpkit.transports._h1", "mcpkit.transports._h1_wire"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    server.script("tools/call", reply(200, answer({"content": []})))
    with anyio.fail_after(LIMIT):
        async with Client(base + "/mcp", era="handshake") as client:
            await client.call_tool("echo", {})
    assert [s.rpc_method for s in server.requests("POST")][-1] == "tools/call"
    assert "mcpkit.transports._h1" not in sys.modules  # (its import failed: not used)
