"""Misuse of the public API is refused the way its docstrings say: the documented
exception type, at the call, with the reason (not a library's own exception, not a
silent acceptance that fails later)."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec import UNSET

from mcpkit.exceptions import LocalProtocolError, RemoteProtocolError, TransportError
from mcpkit.server import LowLevelServer, Server
from mcpkit.testing import connect_memory
from mcpkit.transports import WebSocketTransport
from mcpkit.types import Tool

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize(
    "uri", ["notes://{id", "notes://{}", "notes://{a b}", "notes://id}", "notes://{+}"]
)
def test_an_invalid_resource_template_is_refused(uri: str) -> None:
    server = Server("t", "1")
    with pytest.raises(LocalProtocolError, match="template"):
        server.resource(uri)(lambda: "body")


def test_a_valid_template_and_a_plain_uri_are_taken() -> None:
    server = Server("t", "1")

    @server.resource("notes://{id}")
    def note(id: str) -> str:
        return id

    @server.resource("notes://index")
    def index() -> str:
        return "index"


@pytest.mark.parametrize("option", [{"bogus": 1}, {"path": "no-slash"}, {"max_sessions": 0}])
def test_streamable_http_app_refuses_an_invalid_option(option: dict[str, object]) -> None:
    with pytest.raises(LocalProtocolError):
        Server("t", "1").streamable_http_app(**option)


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:9/ws", "ws://", "ws://127.0.0.1:99999/ws", "not a url"]
)
async def test_a_malformed_websocket_url_is_a_transport_error(url: str) -> None:
    with pytest.raises(TransportError, match="cannot open a WebSocket"):
        async with WebSocketTransport(url).connect():
            pass


@pytest.mark.anyio
async def test_an_unknown_logging_level_is_refused_in_every_era() -> None:
    """Handshake era too: the request would break the schema (it was sent as it was)."""
    server = LowLevelServer("levels", "1.0")
    async with connect_memory(server, era="handshake") as client:
        with pytest.raises(LocalProtocolError, match="unknown logging level"):
            await client.set_logging_level("verbose")  # type: ignore[arg-type]
        await client.set_logging_level("debug")


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18"])
async def test_an_output_schema_means_something_from_2025_06_18(version: str) -> None:
    """An older revision has no outputSchema or structured content: a tool that carries
    the member anyway is not held to it (a plain result was refused as missing
    structured content)."""
    server = LowLevelServer("old", "1.0")
    tool = Tool(
        name="t",
        input_schema={"type": "object"},
        output_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
    )

    async def run(ctx: Any, arguments: dict[str, Any]) -> str:
        return "plain"

    server.add_tool(tool, run)
    async with connect_memory(server, protocol_version=version) as client:
        [listed] = (await client.list_tools()).tools
        if version < "2025-06-18":
            result = await client.call_tool("t")
            assert result.content[0].text == "plain"  # type: ignore[union-attr]
        else:
            assert listed.output_schema is not UNSET
            with pytest.raises(RemoteProtocolError, match="no structured content"):
                await client.call_tool("t")
