"""mcpkit's client against mcpkit's server on both eras, over every real transport:
in memory, a stdio subprocess and Streamable HTTP on 127.0.0.1. A dual-era server is
spoken to statelessly (2026-07-28: ``server/discover``, per-request ``_meta``, no
``initialize``, no session); a handshake-only server (``modern_versions=()``) makes the
client fall back to ``initialize``; ``era`` pins either."""

from __future__ import annotations

import json
import sys
import threading
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Final

import anyio
import pytest

from mcpkit.client import Client, StdioTransport
from mcpkit.exceptions import RemoteProtocolError, RequestTimeoutError, RPCError
from mcpkit.protocol import encode_header_value
from mcpkit.server import Server
from mcpkit.testing import connect_memory
from mcpkit.transports._http_client_modern import modern_headers
from mcpkit.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitResult,
    Root,
    TextContent,
)

from ._httpserver import running_server
from .conftest import ROOT
from .test_client_urls import Counting

pytestmark = pytest.mark.anyio
LIMIT: Final = 20.0
FIXTURE: Final = ROOT / "tests" / "fixtures" / "dual_era_server.py"
MODERN: Final = "2026-07-28"
PV: Final = "io.modelcontextprotocol/protocolVersion"


def load_fixture() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("_dual_era_server", FIXTURE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FIXTURES = load_fixture()


@asynccontextmanager
async def over_memory(name: str, **options: Any) -> AsyncIterator[Client]:
    async with connect_memory(getattr(FIXTURES, name), **options) as client:
        yield client


@asynccontextmanager
async def over_stdio(name: str, **options: Any) -> AsyncIterator[Client]:
    argv = ["-m", "mcpkit", "run", f"{FIXTURE}:{name}"]
    async with Client(StdioTransport(sys.executable, argv), **options) as client:
        yield client


@asynccontextmanager
async def over_http(name: str, **options: Any) -> AsyncIterator[Client]:
    app = getattr(FIXTURES, name).streamable_http_app()
    with running_server(app) as http:
        async with Client(http.url + "/mcp", **options) as client:
            yield client


Connect = Callable[..., AbstractAsyncContextManager[Client]]
TRANSPORTS: Final = {"memory": over_memory, "stdio": over_stdio, "http": over_http}


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def exercise(client: Client) -> None:
    """Everything the public API offers on both eras."""
    assert client.server_info.name == "dual-era"
    assert client.server_info.version == "3.1"
    assert client.instructions == "Use echo."
    assert client.server_capabilities.tools is not None
    assert [tool.name async for tool in client.iter_tools()] == ["echo", "interview"]
    assert text(await client.call_tool("echo", {"text": "héllo"})) == "héllo"
    assert [prompt.name async for prompt in client.iter_prompts()] == ["greet"]
    prompt = await client.get_prompt("greet", {"name": "Ada"})
    assert isinstance(prompt.messages[0].content, TextContent)
    assert prompt.messages[0].content.text == "Hello Ada"
    assert [r.uri async for r in client.iter_resources()] == ["note://motd"]
    read = await client.read_resource("note://motd")
    assert read.contents[0].text == "be kind"
    with pytest.raises(RPCError) as missing:
        await client.read_resource("note://nothing")
    # -32602 from 2026-07-28 (SEP-2164); -32002 before.
    assert missing.value.code == (-32602 if client.era == MODERN else -32002)
    await client.ping()


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
async def test_a_dual_era_server_is_spoken_to_statelessly(transport: str) -> None:
    with anyio.fail_after(LIMIT):
        async with TRANSPORTS[transport]("server") as client:
            assert client.era == MODERN
            assert client.protocol_version == MODERN
            await exercise(client)
            # ttlMs 60 s on the server: a second listing comes from the cache.
            assert client.cache is not None
            cached = len(client.cache)
            await client.list_tools()
            assert len(client.cache) == cached > 0


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
async def test_a_handshake_only_server_makes_the_client_fall_back(transport: str) -> None:
    with anyio.fail_after(LIMIT):
        async with TRANSPORTS[transport]("legacy") as client:
            assert client.era == "handshake"
            assert client.protocol_version == "2025-11-25"
            await exercise(client)


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
async def test_the_handshake_can_be_chosen_with_a_dual_era_server(transport: str) -> None:
    with anyio.fail_after(LIMIT):
        async with TRANSPORTS[transport]("server", era="handshake") as client:
            assert client.protocol_version == "2025-11-25"
            await exercise(client)
        async with TRANSPORTS[transport]("server", protocol_version="2025-06-18") as client:
            assert client.protocol_version == "2025-06-18"


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
async def test_the_stateless_era_only_refuses_a_handshake_only_server(transport: str) -> None:
    with anyio.fail_after(LIMIT), pytest.raises(RemoteProtocolError, match=MODERN):
        async with TRANSPORTS[transport]("legacy", era=MODERN):
            pass


async def fill(params: ElicitRequestParams) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": "Ada"})


async def model(params: CreateMessageRequestParams) -> CreateMessageResult:
    first = params.messages[0].content
    assert isinstance(first, TextContent)
    return CreateMessageResult(role="assistant", content=TextContent(text=first.text), model="m")


@pytest.mark.parametrize("name", ["server", "legacy"])
@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
async def test_the_server_asks_the_client_on_either_era(transport: str, name: str) -> None:
    """The same ``ctx.elicit`` / ``ctx.ask`` code: on 2026-07-28 input-required results
    fulfilled by the client's callbacks and retried; on the handshake, requests to the
    client. The answers are the same."""
    options: dict[str, Any] = {
        "elicitation": fill,
        "sampling": model,
        "roots": [Root(uri="file:///work")],
    }
    with anyio.fail_after(LIMIT), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # sampling and roots on 2026
        async with TRANSPORTS[transport](name, **options) as client:
            assert client.era == (MODERN if name == "server" else "handshake")
            result = await client.call_tool("interview")
            assert text(result) == "Ada|Greet Ada|file:///work"


async def test_names_outside_the_header_safe_set_reach_the_server_over_http() -> None:
    """Mcp-Name carries ``params.uri`` (or ``params.name``); the server checks it against
    the body, so a read that succeeds proved the header (Base64 sentinel for non-ASCII)."""
    server: Server = FIXTURES.build(stateless=True)

    @server.resource("note://grüße")
    def greeting() -> str:
        return "hallo"

    with running_server(server.streamable_http_app()) as http, anyio.fail_after(LIMIT):
        async with Client(http.url + "/mcp") as client:
            assert client.era == MODERN
            assert (await client.read_resource("note://grüße")).contents[0].text == "hallo"


def test_invalid_era_and_rounds_are_refused() -> None:
    from mcpkit.exceptions import LocalProtocolError

    with pytest.raises(LocalProtocolError, match="era"):
        Client("http://x", era="sometimes")  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError, match="max_input_rounds"):
        Client("http://x", max_input_rounds=0)


@pytest.mark.parametrize(
    ("value", "header"),
    [
        ("us-west1", "us-west1"),
        ("file:///projects/a b.json", "file:///projects/a b.json"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ],
)
def test_header_values_are_encoded_as_the_spec_shows(value: str, header: str) -> None:
    """The examples of streamable-http.mdx "Value Encoding"."""
    assert encode_header_value(value) == header


@pytest.mark.parametrize(
    ("message", "headers"),
    [
        (
            {"method": "tools/call", "params": {"name": "t", "_meta": {PV: MODERN}}},
            {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "t"},
        ),
        (
            {"method": "resources/read", "params": {"uri": "a://b", "_meta": {PV: MODERN}}},
            {"MCP-Protocol-Version": MODERN, "Mcp-Method": "resources/read", "Mcp-Name": "a://b"},
        ),
        (
            {"method": "tools/list", "params": {"_meta": {PV: MODERN}}},
            {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"},
        ),
        ({"method": "tools/list", "params": {}}, None),
        ({"method": "initialize", "params": {"protocolVersion": "2025-11-25"}}, None),
        ({"method": "tools/list", "params": [1]}, None),
    ],
)
def test_which_requests_get_stateless_headers(
    message: dict[str, Any], headers: dict[str, str] | None
) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, **message}).encode()
    assert modern_headers(body) == headers


async def test_a_timed_out_stateless_request_is_cancelled_by_closing_its_stream() -> None:
    """2026-07-28 ``basic/patterns/cancellation.mdx``: over HTTP the client cancels by
    closing the response stream (the server treats it as cancellation); it does not POST
    ``notifications/cancelled``."""
    server: Server = FIXTURES.build(stateless=True)
    cancelled = threading.Event()

    @server.tool()
    async def hang() -> str:
        """Never answers."""
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "unreachable"

    counting = Counting(server.streamable_http_app())
    with running_server(counting) as http, anyio.fail_after(LIMIT):
        async with Client(http.url + "/mcp") as client:
            with pytest.raises(RequestTimeoutError):
                await client.call_tool("hang", timeout=0.3)
            assert await anyio.to_thread.run_sync(cancelled.wait, LIMIT)
            assert text(await client.call_tool("echo", {"text": "still here"})) == "still here"
    assert counting.seen == [("POST", "/mcp")] * 3  # discover, hang, echo: no cancel POST
