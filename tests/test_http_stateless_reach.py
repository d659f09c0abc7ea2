"""A stateless Streamable HTTP server cannot reach its clients outside a request: every
POST has a session of its own that ends with it, and there is no GET stream. So its
initialize result declares no ``listChanged`` and no resource ``subscribe`` (it did, and
accepted ``resources/subscribe`` that could never deliver), and a handler asking the client
for something (sampling, elicitation, roots, ping) is told why it cannot (it was told the
client "did not declare the sampling capability", which it had)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

import httpx
import msgspec
import pytest

from mcpkit.server import RequestContext, Server

from ._httpserver import RunningServer, running_server
from ._mcphttp import JSON_HEADERS, initialize, messages_of, notification, request

pytestmark = pytest.mark.anyio

LIMIT: Final = 10.0
HEADERS: Final = {**JSON_HEADERS, "mcp-protocol-version": "2025-11-25"}


def build() -> Server:
    server = Server("stateless")

    @server.resource("note://a")
    def note() -> str:
        return "a"

    @server.prompt()
    def greet() -> str:
        return "hi"

    @server.tool()
    async def ask(ctx: RequestContext, what: str) -> str:
        if what == "sampling":
            await ctx.sample("hi", max_tokens=5)
        elif what == "roots":
            await ctx.list_roots()
        else:
            await ctx.elicit("name?", {"type": "object", "properties": {}})
        return "asked"

    @server.tool()
    def state(ctx: RequestContext) -> dict[str, Any]:
        session = ctx.session
        return {
            "version": session.protocol_version,
            "capabilities": msgspec.to_builtins(ctx.client_capabilities),
            "level": session.log_level,
            "initialized": session.initialized,
        }

    return server


@pytest.fixture(scope="module")
def http() -> Iterator[RunningServer]:
    with running_server(build().streamable_http_app(stateless=True)) as running:
        yield running


async def post(http: RunningServer, body: bytes) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=LIMIT) as client:
        response = await client.post(http.url + "/mcp", content=body, headers=HEADERS)
    assert response.status_code == 200, response.text
    return messages_of(response)[-1]


async def test_initialize_declares_nothing_that_needs_a_stream(http: RunningServer) -> None:
    capabilities: dict[str, Any] = {"sampling": {}, "roots": {}, "elicitation": {}}
    answer = await post(http, initialize(capabilities=capabilities))
    declared = answer["result"]["capabilities"]
    assert declared["tools"] == {}
    assert declared["prompts"] == {}
    assert declared["resources"] == {}


async def test_resources_subscribe_is_refused(http: RunningServer) -> None:
    answer = await post(http, request(2, "resources/subscribe", {"uri": "note://a"}))
    assert answer["error"]["code"] == -32601
    assert "stateless" in answer["error"]["message"]


@pytest.mark.parametrize("what", ["sampling", "roots", "elicitation"])
async def test_asking_the_client_says_why_it_cannot(http: RunningServer, what: str) -> None:
    params = {"name": "ask", "arguments": {"what": what}}
    answer = await post(http, request(3, "tools/call", params))
    assert answer["result"]["isError"] is True
    text = json.dumps(answer["result"]["content"])
    assert "stateless server cannot send requests to the client" in text


async def test_no_state_crosses_between_posts(http: RunningServer) -> None:
    # Every POST's session starts afresh, whatever earlier POSTs did to theirs
    # (initialize with capabilities, notifications/initialized, logging/setLevel): the
    # sessions share a read-only ready handshake per version, and nothing else.
    fresh = {"capabilities": {}, "level": "info", "initialized": True}
    steps: list[tuple[str, bytes, Any]] = [
        ("2025-11-25", request(1, "tools/call", {"name": "state"}), "2025-11-25"),
        ("2025-06-18", initialize(version="2025-06-18", capabilities={"roots": {}}), None),
        ("2025-06-18", notification("notifications/initialized"), None),
        ("2025-06-18", request(2, "logging/setLevel", {"level": "error"}), None),
        ("2025-06-18", request(3, "tools/call", {"name": "state"}), "2025-06-18"),
        ("2025-11-25", initialize(version="2025-11-25", capabilities={"roots": {}}), None),
        ("2025-11-25", request(4, "tools/call", {"name": "state"}), "2025-11-25"),
    ]
    async with httpx.AsyncClient(timeout=LIMIT) as client:
        for version, body, expected in steps:
            headers = {**JSON_HEADERS, "mcp-protocol-version": version}
            response = await client.post(http.url + "/mcp", content=body, headers=headers)
            assert response.status_code in (200, 202), response.text
            if response.status_code == 202:
                continue
            answer = messages_of(response)[-1]
            assert "error" not in answer, answer
            if expected is not None:
                seen = answer["result"]["structuredContent"]
                assert seen == {**fresh, "version": expected}
