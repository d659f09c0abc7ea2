"""Misuse of the public API is refused the way its docstrings say: the documented
exception type, at the call, with the reason (not a library's own exception, not a
silent acceptance that fails later)."""

from __future__ import annotations

from typing import Any, cast

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


async def _lifespan_coroutine(server: Any) -> None:
    return None


async def _lifespan_async_generator(server: Any) -> Any:
    yield None


def _lifespan_generator(server: Any) -> Any:
    yield None


_DECORATE = "must return an async context manager: decorate"
SERVER_OPTIONS: list[tuple[str, dict[str, Any], str]] = [
    ("int version", {"name": "x", "version": 1}, "version a string, not 'x', 1"),
    ("empty name", {"name": ""}, "name must be a non-empty string"),
    ("bytes name", {"name": b"x"}, "name must be a non-empty string"),
    ("coroutine lifespan", {"name": "x", "lifespan": _lifespan_coroutine}, _DECORATE),
    ("async generator lifespan", {"name": "x", "lifespan": _lifespan_async_generator}, _DECORATE),
    ("generator lifespan", {"name": "x", "lifespan": _lifespan_generator}, _DECORATE),
    ("lifespan object", {"name": "x", "lifespan": 3}, "lifespan= must be callable, not int"),
]


@pytest.mark.parametrize(
    ("options", "message"), [c[1:] for c in SERVER_OPTIONS], ids=[c[0] for c in SERVER_OPTIONS]
)
@pytest.mark.parametrize("kind", [Server, LowLevelServer])
def test_a_server_that_would_fail_its_clients_is_refused_when_made(
    kind: type[LowLevelServer], options: dict[str, Any], message: str
) -> None:
    """An int version went out in serverInfo and failed every client's initialize; an
    undecorated lifespan failed only at startup, with a TypeError."""
    with pytest.raises(LocalProtocolError) as refused:
        kind(**options)
    assert message in str(refused.value)


async def test_add_tool_refuses_a_handler_of_the_wrong_shape_and_takes_a_plain_one() -> None:
    server = LowLevelServer("low", "1")
    tool = Tool(name="one_arg", input_schema={"type": "object"})
    with pytest.raises(LocalProtocolError, match=r"called with \(ctx, arguments\); <lambda>"):
        server.add_tool(tool, cast(Any, lambda arguments: "x"))  # (what mypy would catch)
    server.add_tool(Tool(name="plain", input_schema={"type": "object"}), lambda ctx, args: "x")
    async with connect_memory(server, era="handshake") as client:
        result = await client.call_tool("plain", {})
    assert result.is_error is not True
    assert [getattr(block, "text", None) for block in result.content] == ["x"]
