"""The Streamable HTTP client transport, end to end over real sockets on 127.0.0.1.

Two peers: the official Python SDK's server (stateful SSE, JSON-response and stateless
modes) for interoperability, and a scripted fake (``tests/_fake_mcp_http.py``) that injects
each fault deterministically. MCP ``basic/transports.mdx`` "Streamable HTTP".
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import httpx
import pytest
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import SamplingMessage
from mcp_types import TextContent as OfficialText

from mcpkit.aio import DeliveryFailed
from mcpkit.client import Client
from mcpkit.exceptions import (
    MessageNotDelivered,
    RemoteProtocolError,
    RequestTimeoutError,
    RPCError,
    SessionExpiredError,
    TransportError,
)
from mcpkit.transports import StreamableHTTPChannel, StreamableHTTPTransport
from mcpkit.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ListToolsResult,
    LoggingMessageNotificationParams,
    ProgressNotificationParams,
    TextContent,
)

from ._fake_mcp_http import (
    SESSION_ID,
    VERSION,
    DropConnection,
    Exchange,
    FakeMCPServer,
    answer,
    reply,
    rpc_error,
    rpc_result,
    sse,
    stream,
)
from ._httpserver import ASGIApp, running_server

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

#: Bound on every test's waits (the whole file runs in a few seconds).
LIMIT = 10.0


def transport(url: str, **options: Any) -> StreamableHTTPTransport:
    """A transport with a fast backoff (tests that check backoff set their own)."""
    options.setdefault("reconnect_initial", 0.01)
    options.setdefault("reconnect_max", 0.05)
    return StreamableHTTPTransport(url, **options)


@contextmanager
def fake_peer(fake: FakeMCPServer | None = None) -> Iterator[tuple[FakeMCPServer, str]]:
    fake = fake or FakeMCPServer()
    with running_server(fake) as server:
        yield fake, server.url + "/mcp"


@pytest.fixture(scope="module")
def shared_peer() -> Iterator[tuple[FakeMCPServer, str]]:
    with fake_peer() as pair:
        yield pair


@pytest.fixture
def peer(shared_peer: tuple[FakeMCPServer, str]) -> tuple[FakeMCPServer, str]:
    """The scripted fake server, reset for this test."""
    shared_peer[0].reset()
    return shared_peer


def request(rid: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


INITIALIZE = request(
    0,
    "initialize",
    {
        "protocolVersion": VERSION,
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
NOTE = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}'


async def initialized(channel: StreamableHTTPChannel) -> None:
    """Run the handshake by hand on a raw channel."""
    await channel.send(INITIALIZE)
    first = await channel.receive()
    assert isinstance(first, bytes)
    assert json.loads(first)["id"] == 0
    await channel.send(INITIALIZED)


def state(channel: StreamableHTTPChannel) -> tuple[str | None, str | None]:
    return channel.session_id, channel.protocol_version


def batch(ex: Exchange) -> bytes:
    """The answer wrapped in a batch (allowed only in protocol 2025-03-26)."""
    return b"[" + rpc_result(ex.seen.rpc_id, {}) + b"]"


async def failure(channel: StreamableHTTPChannel, rid: int) -> Exception:
    """The next item must be a DeliveryFailed for request ``rid``: its error."""
    item = await channel.receive()
    assert isinstance(item, DeliveryFailed), item
    assert item.request_id == rid
    return item.error


# --------------------------------------------------------------------------- official SDK


def official_app(seen: list[tuple[str, dict[str, str]]], **options: Any) -> ASGIApp:
    """The official SDK's Streamable HTTP app, built on first use in the server thread (its
    locks bind to the loop they are created on), recording each request's method and
    headers."""
    box: dict[str, Any] = {}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if "app" not in box:
            box["app"] = build_official().streamable_http_app(**options)
        if scope["type"] == "http":
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            seen.append((scope["method"], headers))
        await box["app"](scope, receive, send)

    return app


def build_official() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("official")

    @server.tool()
    async def add(a: int, b: int, ctx: Context[Any, Any]) -> int:
        """Add two numbers, reporting progress and logging."""
        await ctx.report_progress(1, 2, "halfway")
        await ctx.info("adding")
        return a + b

    @server.tool()
    async def ask(question: str, ctx: Context[Any, Any]) -> str:
        """Ask the client's model (sampling on the request's SSE stream)."""
        message = SamplingMessage(role="user", content=OfficialText(type="text", text=question))
        result = await ctx.session.create_message([message], max_tokens=10)
        assert isinstance(result.content, OfficialText)
        return result.content.text

    return server


async def sample(params: CreateMessageRequestParams) -> CreateMessageResult:
    text = params.messages[0].content
    assert isinstance(text, TextContent)
    return CreateMessageResult(
        role="assistant", content=TextContent(text=f"re: {text.text}"), model="m"
    )


@pytest.mark.interop
async def test_official_server_stateful_sse() -> None:
    seen: list[tuple[str, dict[str, str]]] = []
    progress: list[ProgressNotificationParams] = []
    logs: list[LoggingMessageNotificationParams] = []
    with running_server(official_app(seen)) as server, anyio.fail_after(LIMIT):
        async with transport(server.url + "/mcp").connect() as channel:
            async with Client(
                channel, era="handshake", sampling=sample, on_log=logs.append
            ) as client:
                session = channel.session_id
                assert session
                assert channel.protocol_version == client.protocol_version == "2025-11-25"
                tools = await client.list_tools()
                assert {tool.name for tool in tools.tools} == {"add", "ask"}
                result = await client.call_tool(
                    "add", {"a": 2, "b": 3}, on_progress=progress.append
                )
                assert result.structured_content == {"result": 5}
                assert [(p.progress, p.total, p.message) for p in progress] == [(1, 2, "halfway")]
                assert [log.data for log in logs] == ["adding"]
                result = await client.call_tool("ask", {"question": "hi"})
                assert result.structured_content == {"result": "re: hi"}
            assert channel.session_id is None
    methods = [method for method, _ in seen]
    # initialize, initialized, then the standalone GET stream, answered before connecting
    # returns: it exists before the first request.
    assert methods[:4] == ["POST", "POST", "GET", "POST"]
    deletes = [headers for method, headers in seen if method == "DELETE"]
    assert len(deletes) == 1
    assert deletes[0]["mcp-session-id"] == session
    assert "mcp-protocol-version" not in seen[0][1]
    assert all(h["mcp-protocol-version"] == "2025-11-25" for _, h in seen[1:])


@pytest.mark.interop
async def test_official_server_json_response() -> None:
    seen: list[tuple[str, dict[str, str]]] = []
    app = official_app(seen, json_response=True)
    with running_server(app) as server, anyio.fail_after(LIMIT):
        async with Client(
            transport(server.url + "/mcp"), era="handshake", sampling=sample
        ) as client:
            result = await client.call_tool("add", {"a": 1, "b": 1})
            assert result.structured_content == {"result": 2}
            await client.ping()
    assert [method for method, _ in seen].count("DELETE") == 1


@pytest.mark.interop
async def test_official_server_stateless() -> None:
    seen: list[tuple[str, dict[str, str]]] = []
    app = official_app(seen, stateless_http=True, json_response=True)
    with running_server(app) as server, anyio.fail_after(LIMIT):
        async with transport(server.url + "/mcp").connect() as channel, Client(channel) as client:
            assert channel.session_id is None
            result = await client.call_tool("add", {"a": 20, "b": 22})
            assert result.structured_content == {"result": 42}
    assert all("mcp-session-id" not in headers for _, headers in seen)
    assert "DELETE" not in [method for method, _ in seen]


# --------------------------------------------------------------------------- headers, session


async def test_headers_session_and_version(peer: tuple[FakeMCPServer, str]) -> None:
    fake, url = peer
    tr = transport(url, headers={"Authorization": "Bearer t"})
    with anyio.fail_after(LIMIT):
        async with tr.connect() as channel, Client(channel, era="handshake") as client:
            assert channel.session_id == SESSION_ID  # the header's name had another case
            assert channel.protocol_version == VERSION
            await client.ping()
            # The standalone GET stream was refused with 405: nothing breaks.
            (get,) = await fake.wait_seen("GET")
            await client.ping()
    init, initialized, ping, ping2 = fake.requests("POST")
    for seen in (init, initialized, ping, ping2):
        assert seen.headers["content-type"] == "application/json"
        assert seen.headers["accept"] == "application/json, text/event-stream"
        assert seen.headers["authorization"] == "Bearer t"
    assert init.rpc_method == "initialize"
    assert "mcp-session-id" not in init.headers
    assert "mcp-protocol-version" not in init.headers
    assert initialized.rpc_method == "notifications/initialized"
    for seen in (initialized, ping, ping2, get):
        assert seen.headers["mcp-session-id"] == SESSION_ID
        assert seen.headers["mcp-protocol-version"] == VERSION
    assert get.headers["accept"] == "text/event-stream"
    (delete,) = fake.requests("DELETE")
    assert delete.headers["mcp-session-id"] == SESSION_ID


async def test_version_sniffed_from_sse_and_no_session(peer: tuple[FakeMCPServer, str]) -> None:
    fake, url = peer
    fake.reset(session_id=None, version="2025-06-18")
    result = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "serverInfo": {"name": "f", "version": "1"},
    }
    fake.script(
        "initialize", stream(sse(event_id="p"), lambda ex: sse(rpc_result(ex.seen.rpc_id, result)))
    )
    with anyio.fail_after(LIMIT):
        async with transport(url).connect() as channel, Client(channel) as client:
            assert channel.protocol_version == "2025-06-18"
            assert channel.session_id is None
            await client.ping()
    (ping,) = fake.requests("POST", "ping")
    assert ping.headers["mcp-protocol-version"] == "2025-06-18"
    assert "mcp-session-id" not in ping.headers
    assert fake.requests("DELETE") == []  # no session, nothing to end


async def test_session_expired_404(peer: tuple[FakeMCPServer, str]) -> None:
    fake, url = peer
    fake.script("ping", reply(404, b"session not found", content_type="text/plain"))
    fake.script("notifications/roots/list_changed", reply(404, b"", content_type=None))
    with anyio.fail_after(LIMIT):
        async with transport(url).connect() as channel:
            await initialized(channel)
            await channel.send(request(1, "ping"))
            error = await failure(channel, 1)
            assert isinstance(error, SessionExpiredError)
            assert error.status == 404
            assert state(channel) == (None, None)
            # The next POST carries no session id (nor version): it is the client's job to
            # initialize again.
            await channel.send(INITIALIZE)
            assert isinstance(await channel.receive(), bytes)
            assert state(channel) == (SESSION_ID, VERSION)
            # A notification answered 404 raises.
            with pytest.raises(SessionExpiredError):
                await channel.send(b'{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}')
            assert state(channel) == (None, None)
    init2 = fake.requests("POST", "initialize")[1]
    assert "mcp-session-id" not in init2.headers
    assert "mcp-protocol-version" not in init2.headers


async def test_redirects_are_not_followed(peer: tuple[FakeMCPServer, str]) -> None:
    fake, url = peer
    with fake_peer() as (other, other_url):
        location = [("location", other_url)]
        fake.script("ping", reply(307, b"", content_type=None, headers=location))
        fake.script(
            "notifications/initialized", reply(308, b"", content_type=None, headers=location)
        )
        with anyio.fail_after(LIMIT):
            async with transport(url).connect() as channel:
                await channel.send(INITIALIZE)
                await channel.receive()
                with pytest.raises(MessageNotDelivered) as info:
                    await channel.send(INITIALIZED)
                assert info.value.status == 308
                await channel.send(request(1, "ping"))
                error = await failure(channel, 1)
                assert isinstance(error, MessageNotDelivered)
                assert error.status == 307
        assert other.seen == []


async def test_close_is_idempotent_and_ends_receive(peer: tuple[FakeMCPServer, str]) -> None:
    fake, url = peer
    with anyio.fail_after(LIMIT):
        async with transport(url).connect() as channel:
            await initialized(channel)
            async with anyio.create_task_group() as tg:
                ended = anyio.Event()

                async def reader() -> None:
                    with pytest.raises(anyio.EndOfStream):
                        await channel.receive()
                    ended.set()

                tg.start_soon(reader)
                await anyio.wait_all_tasks_blocked()
                await channel.aclose()
                await ended.wait()
            await channel.aclose()
            with pytest.raises(anyio.ClosedResourceError):
                await channel.send(request(1, "ping"))
            with pytest.raises(anyio.EndOfStream):
                await channel.receive()
    assert len(fake.requests("DELETE")) == 1


# --------------------------------------------------------------------------- failures


async def cut_json(ex: Exchange) -> None:
    """A JSON answer whose connection breaks in the middle of its body."""
    await ex.start(200, "application/json")
    await ex.body(b'{"jsonrpc": "2.0", "id": ', more=True)
    raise DropConnection


@pytest.mark.parametrize(
    ("handler", "error_type", "status", "text"),
    [
        (
            reply(
                500,
                b"<html><body><h1>Internal  Server Error</h1></body></html>",
                content_type="text/html",
            ),
            MessageNotDelivered,
            500,
            "HTTP 500 (text/html): <html><body><h1>Internal Server Error",
        ),
        (
            reply(503, rpc_error(None, -32000, "overloaded")),
            MessageNotDelivered,
            503,
            "HTTP 503: overloaded (JSON-RPC code -32000)",
        ),
        (reply(202, b"", content_type=None), MessageNotDelivered, 202, "202"),
        (  # never followed (the session and credentials would go along): it is named
            reply(307, b"", content_type=None, headers=[("location", "/mcp/")]),
            MessageNotDelivered,
            307,
            "HTTP 307: a redirect to 'http://127.0.0.1:",
        ),
        (
            reply(308, b"moved", content_type="text/plain", headers=[("location", "https://x/")]),
            MessageNotDelivered,
            308,
            "HTTP 308: a redirect to 'https://x/'; mcpkit does not follow redirects",
        ),
        (
            reply(200, b"<html>hi</html>", content_type="text/html"),
            RemoteProtocolError,
            None,
            "text/html",
        ),
        (reply(200, b'{"jsonrpc": "2.0", "id": 1, '), RemoteProtocolError, None, "invalid"),
        (reply(200, batch), RemoteProtocolError, None, "array"),
        (
            reply(200, rpc_result(99, {})),
            RemoteProtocolError,
            None,
            "did not answer the request; instead it sent a response for id 99",
        ),
        (
            reply(200, rpc_error(None, -32600, "no\nsuch request")),
            RemoteProtocolError,
            None,
            "instead it sent an error for id null: no such request (JSON-RPC code -32600)",
        ),
        (reply(200, b""), RemoteProtocolError, None, "invalid JSON-RPC message"),
        (reply(204, b"", content_type=None), RemoteProtocolError, None, "(HTTP 204)"),
        (
            cut_json,
            MessageNotDelivered,
            None,
            "closed the connection before completing its response",
        ),
        (reply(200, answer({"x": "y" * 2000})), RemoteProtocolError, None, "max_response_bytes"),
        (stream(lambda ex: sse(b"x" * 2000)), RemoteProtocolError, None, "max_event_bytes"),
        (stream(sse(b"{not json")), RemoteProtocolError, None, "invalid"),
        (stream(lambda ex: sse(batch(ex))), RemoteProtocolError, None, "array"),
        (
            stream(sse(NOTE), end="drop"),
            MessageNotDelivered,
            None,
            "no event id",
        ),
        (stream(), MessageNotDelivered, None, "no event id"),
        (
            stream(sse(rpc_result(99, {}))),
            MessageNotDelivered,
            None,
            "the stream ended; instead it sent a response for id 99",
        ),
    ],
    ids=[
        "500-html",
        "503-jsonrpc-error",
        "202",
        "307-relative",
        "308-absolute",
        "200-html",
        "invalid-json",
        "json-array",
        "wrong-id",
        "error-without-id",
        "200-empty-body",
        "204",
        "json-cut-mid-body",
        "body-too-large",
        "event-too-large",
        "event-invalid-json",
        "event-array",
        "dropped-without-id",
        "ended-without-answer",
        "sse-wrong-id",
    ],
)
async def test_request_failures_are_prompt(
    peer: tuple[FakeMCPServer, str],
    handler: Any,
    error_type: type[Exception],
    status: int | None,
    text: str,
) -> None:
    fake, url = peer
    fake.script("tools/list", handler)
    with anyio.fail_after(LIMIT):
        tr = transport(url, max_response_bytes=1000, max_event_bytes=1000)
        async with Client(tr, timeout=60) as client:
            with pytest.raises(error_type) as info:
                await client.list_tools()
            assert text in str(info.value)
            if isinstance(info.value, MessageNotDelivered):
                assert info.value.status == status
            await client.ping()  # the failure was this request's, not the channel's


def answered(ex: Exchange) -> bytes:
    return sse(rpc_result(ex.seen.rpc_id, {}))


@pytest.mark.parametrize(
    "answer_stream",
    [stream(lambda ex: answered(ex) + sse(NOTE)), stream(answered, sse(NOTE))],
    ids=["same-chunk", "next-chunk"],
)
async def test_a_message_after_the_answer_is_delivered(
    peer: tuple[FakeMCPServer, str], answer_stream: Any
) -> None:
    # The server SHOULD end the stream after the answer (transports "Sending Messages to
    # the Server"); what it sends there anyway is not dropped unseen.
    fake, url = peer
    fake.script("ping", answer_stream)
    with anyio.fail_after(LIMIT):
        async with transport(url).connect() as channel:
            await initialized(channel)
            await channel.send(request(1, "ping"))
            assert await channel.receive() == rpc_result(1, {})
            assert await channel.receive() == NOTE


async def test_an_invalid_message_after_the_answer_is_logged(
    peer: tuple[FakeMCPServer, str],
) -> None:
    fake, url = peer
    fake.script("ping", stream(answered, sse(b"{not json")))
    logged = anyio.Event()
    lines: list[str] = []

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())
            logged.set()

    catch = Catch(logging.WARNING)
    client_logger = logging.getLogger("mcpkit.transports.http.client")
    client_logger.addHandler(catch)
    try:
        with anyio.fail_after(LIMIT):
            async with Client(transport(url)) as client:
                await client.ping()
                await logged.wait()
    finally:
        client_logger.removeHandler(catch)
    assert lines[0].startswith("after answering a request, the server sent an invalid JSON-RPC")


@pytest.mark.parametrize(
    ("body", "content_type", "expected"),
    [
        (
            rpc_error(None, -32000, "forged\nERROR other: line\x1b[31m " + "x" * 5000),
            "application/json",
            "HTTP 503: forged ERROR other: line [31m xxx",
        ),
        (b"<p>\r\nforged\x00\x1b[2J</p>" + b"y" * 5000, "text/html", "HTTP 503 (text/html): <p>"),
    ],
    ids=["jsonrpc-error-message", "html-body"],
)
async def test_a_server_s_error_text_becomes_one_short_line(
    peer: tuple[FakeMCPServer, str], body: bytes, content_type: str, expected: str
) -> None:
    # The server's words go into the caller's exception (and logs): one line, a bounded
    # excerpt, no control characters, whatever the server sent.
    fake, url = peer
    fake.script("tools/list", reply(503, body, content_type=content_type))
    with anyio.fail_after(LIMIT):
        async with Client(transport(url), timeout=60) as client:
            with pytest.raises(MessageNotDelivered) as info:
                await client.list_tools()
    text = str(info.value)
    assert text.startswith(expected), text
    assert text.isprintable(), text
    assert len(text) < 300, text
    assert "..." in text, text  # the cut is marked


@pytest.mark.parametrize("status", [200, 201, 204])
async def test_any_2xx_to_a_notification_is_success(
    peer: tuple[FakeMCPServer, str], status: int
) -> None:
    # transports.mdx asks for 202; a server that says 204 (or 201) took the message all the
    # same (RFC 9110 15.3): the client must not fail its handshake over it.
    fake, url = peer
    fake.script("notifications/initialized", reply(status, b"", content_type=None))
    fake.script("notifications/roots/list_changed", reply(status, b"", content_type=None))
    with anyio.fail_after(LIMIT):
        async with transport(url).connect() as channel:
            await initialized(channel)
            await channel.send(b'{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}')
            await channel.send(request(1, "ping"))
            answer = await channel.receive()
            assert isinstance(answer, bytes)
            assert json.loads(answer)["id"] == 1


async def test_connection_refused_fails_requests_and_notifications() -> None:
    with fake_peer() as (_, url):
        pass  # the server is gone: its port refuses connections
    with anyio.fail_after(LIMIT):
        async with transport(url).connect() as channel:
            await channel.send(request(1, "ping"))
            error = await failure(channel, 1)
            assert isinstance(error, MessageNotDelivered)
            assert error.status is None
            with pytest.raises(MessageNotDelivered, match="ConnectError"):
                await channel.send(INITIALIZED)


async def test_error_answer_with_the_request_id_is_the_answer(
    peer: tuple[FakeMCPServer, str], caplog: pytest.LogCaptureFixture
) -> None:
    # The answer is all of it: the caller gets the error, and nothing is logged as if the
    # server had broken a rule (2026-07-28 answers -32602 with 400 and -32601 with 404).
    caplog.set_level(logging.DEBUG, logger="mcpkit")
    fake, url = peer
    fake.script(
        "tools/list", reply(400, lambda ex: rpc_error(ex.seen.rpc_id, -32602, "bad cursor"))
    )
    fake.script("notifications/initialized", reply(400, rpc_error(None, -32600, "no session")))
    with anyio.fail_after(LIMIT):
        async with transport(url).connect() as channel:
            await channel.send(INITIALIZE)
            await channel.receive()
            with pytest.raises(
                MessageNotDelivered, match=r"HTTP 400: no session \(JSON-RPC code -32600\)"
            ):
                await channel.send(INITIALIZED)
            async with Client(channel) as client:
                with pytest.raises(RPCError, match="bad cursor"):
                    await client.list_tools()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


# --------------------------------------------------------------------------- resumption


async def test_resume_with_last_event_id_honours_retry(peer: tuple[FakeMCPServer, str]) -> None:
    fake, url = peer
    fake.script(
        "tools/list", stream(sse(event_id="e-1", retry=10), sse(NOTE, event_id="e-2"), end="drop")
    )
    fake.script("GET", stream(sse(rpc_result(1, {"tools": []}), event_id="e-3")))
    with anyio.fail_after(LIMIT):
        # A backoff of 30 s would exceed the bound: only the server's 10 ms retry passes.
        async with transport(url, reconnect_initial=30, reconnect_max=30).connect() as channel:
            await channel.send(INITIALIZE)
            await channel.receive()
            await channel.send(request(1, "tools/list"))
            assert await channel.receive() == NOTE
            assert await channel.receive() == rpc_result(1, {"tools": []})
    (resume,) = fake.requests("GET")
    assert resume.headers["last-event-id"] == "e-2"
    assert resume.headers["accept"] == "text/event-stream"
    assert resume.headers["mcp-session-id"] == SESSION_ID
    assert resume.headers["mcp-protocol-version"] == VERSION
    assert resume.at - fake.marks["dropped"] >= 0.010


async def test_a_huge_retry_is_capped_by_reconnect_max(peer: tuple[FakeMCPServer, str]) -> None:
    # retry: 10**15 ms (30,000 years): the resumption waits reconnect_max (50 ms) instead.
    fake, url = peer
    fake.script("tools/list", stream(sse(event_id="e-1", retry=10**15), end="drop"))
    fake.script("GET", stream(sse(rpc_result(1, {"tools": []}), event_id="e-2")))
    with anyio.fail_after(LIMIT):
        async with transport(url).connect() as channel:
            await channel.send(INITIALIZE)
            await channel.receive()
            await channel.send(request(1, "tools/list"))
            assert await channel.receive() == rpc_result(1, {"tools": []})


async def test_an_answer_cut_off_mid_event_is_resumed_from_the_event_before(
    peer: tuple[FakeMCPServer, str],
) -> None:
    # The connection breaks after the answer's id line: the answer never arrived, so the
    # resumption must ask for what follows e-1, not for what follows e-2.
    fake, url = peer
    whole = sse(rpc_result(1, {"tools": []}), event_id="e-2")
    fake.script("tools/list", stream(sse(event_id="e-1", retry=10), whole[:20], end="drop"))
    fake.script("GET", stream(whole))
    with anyio.fail_after(LIMIT):
        async with transport(url).connect() as channel:
            await channel.send(INITIALIZE)
            await channel.receive()
            await channel.send(request(1, "tools/list"))
            assert await channel.receive() == rpc_result(1, {"tools": []})
    (resume,) = fake.requests("GET")
    assert resume.headers["last-event-id"] == "e-1"


async def test_reconnection_attempts_are_bounded(peer: tuple[FakeMCPServer, str]) -> None:
    fake, url = peer
    fake.script("ping", stream(sse(event_id="1", retry=1), end="drop"))
    # The first resumption delivers a message (which resets the count), then breaks; every
    # later one fails.
    fake.script(
        "GET",
        stream(sse(NOTE, event_id="2"), end="drop"),
        reply(503, b"busy", content_type="text/plain"),
        stream(end="drop"),  # a stream that breaks before any event counts too
        reply(503, b"busy", content_type="text/plain"),
    )
    with anyio.fail_after(LIMIT):
        async with transport(url, max_reconnect_attempts=3).connect() as channel:
            await channel.send(INITIALIZE)
            await channel.receive()
            await channel.send(request(1, "ping"))
            assert isinstance(await channel.receive(), bytes)  # the notification
            error = await failure(channel, 1)
    assert isinstance(error, MessageNotDelivered)
    assert "3 attempts" in str(error)
    gets = fake.requests("GET")
    assert [g.headers["last-event-id"] for g in gets] == ["1", "2", "2", "2"]


async def test_resume_refused_with_405_or_404(peer: tuple[FakeMCPServer, str]) -> None:
    fake, url = peer
    fake.script("ping", *[stream(sse(event_id="1", retry=1), end="drop")] * 2)
    fake.script("GET", reply(405, b"", content_type=None), reply(404, b"", content_type=None))
    with anyio.fail_after(LIMIT):
        async with transport(url).connect() as channel:
            await channel.send(INITIALIZE)
            await channel.receive()
            await channel.send(request(1, "ping"))
            error = await failure(channel, 1)
            assert isinstance(error, MessageNotDelivered)
            assert error.status == 405
            await channel.send(request(2, "ping"))
            error = await failure(channel, 2)
            # The server saw the request and may have acted on it: failed, and not as a
            # SessionExpiredError (which makes the client send it again in a new session).
            assert isinstance(error, TransportError)
            assert not isinstance(error, SessionExpiredError)
            assert error.status == 404
            assert "not sent again" in str(error)
            assert channel.session_id is None


# --------------------------------------------------------------------------- standalone stream


class TwoChanges:
    """An ``on_list_changed`` callback keeping the kinds; ``both`` is set at the second."""

    def __init__(self) -> None:
        self.got: list[str] = []
        self.both = anyio.Event()

    def __call__(self, kind: str) -> None:
        self.got.append(kind)
        if len(self.got) == 2:
            self.both.set()


async def test_standalone_stream_delivers_and_reconnects(peer: tuple[FakeMCPServer, str]) -> None:
    fake, url = peer
    changed = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'
    fake.script(
        "GET",
        stream(sse(event_id="g1", retry=1), sse(changed, event_id="g2"), end="drop"),
        stream(sse(changed, event_id="g3")),
        reply(500, b"", content_type=None),
        reply(500, b"", content_type=None),
    )
    changes = TwoChanges()
    with anyio.fail_after(LIMIT):
        async with Client(transport(url), on_list_changed=changes) as client:
            await changes.both.wait()
            gets = await fake.wait_seen("GET", count=4)  # then it gives up
            await client.ping()  # the channel lives on
    assert changes.got == ["tools", "tools"]
    assert "last-event-id" not in gets[0].headers
    assert [g.headers["last-event-id"] for g in gets[1:]] == ["g2", "g3", "g3"]
    assert len(fake.requests("GET")) == 4


async def test_standalone_stream_skips_an_event_over_the_limit(
    peer: tuple[FakeMCPServer, str],
) -> None:
    # It carries no answers: an event too large is skipped and the stream goes on (had it
    # ended the stream, resuming would only have replayed the same event).
    fake, url = peer
    changed = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'
    huge = b'{"jsonrpc":"2.0","method":"notifications/message","params":"' + b"x" * 3000
    fake.script(
        "GET",
        stream(sse(changed, event_id="g1"), sse(huge, event_id="g2"), sse(changed, event_id="g3")),
    )
    changes = TwoChanges()
    with anyio.fail_after(LIMIT):
        async with Client(transport(url, max_event_bytes=1000), on_list_changed=changes) as client:
            await changes.both.wait()
            await client.ping()
    assert changes.got == ["tools", "tools"]
    assert len(fake.requests("GET")) == 1


async def test_standalone_stream_refused_resumption_reopens_fresh(
    peer: tuple[FakeMCPServer, str],
) -> None:
    # The server can no longer resume from g1 (400): the client reopens the stream without
    # Last-Event-ID instead of going deaf to server messages for the rest of the session.
    fake, url = peer
    changed = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'
    fake.script(
        "GET",
        stream(sse(event_id="g1", retry=1), sse(changed), end="drop"),
        reply(400, rpc_error(None, -32600, "expired"), content_type="application/json"),
        stream(sse(changed, event_id="h1"), end="hold"),
    )
    changes = TwoChanges()
    with anyio.fail_after(LIMIT):
        async with Client(transport(url), on_list_changed=changes) as client:
            await changes.both.wait()
            await client.ping()
    gets = fake.requests("GET")
    assert [g.headers.get("last-event-id") for g in gets] == [None, "g1", None]


async def keep_alive(ex: Exchange) -> None:
    """An SSE stream of keep-alive comments, every 10 ms, until the client leaves."""
    await ex.start(200, "text/event-stream")
    async with anyio.create_task_group() as group:

        async def comment() -> None:
            while True:
                await ex.body(b": keep-alive\n\n", more=True)
                await anyio.sleep(0.01)

        group.start_soon(comment)
        await ex.wait_disconnect()
        group.cancel_scope.cancel()


@pytest.mark.parametrize(
    "answer_stream",
    [stream(sse(event_id="1"), end="hold"), keep_alive],
    ids=["silent", "keep-alive-comments"],
)
async def test_cancelled_request_closes_its_stream(
    peer: tuple[FakeMCPServer, str], answer_stream: Any
) -> None:
    # A stream that stays open (silent, or busy with comments that never carry an answer):
    # the call's timeout still ends it, and the server is told.
    fake, url = peer
    fake.script("tools/list", answer_stream)
    with anyio.fail_after(LIMIT):
        async with Client(transport(url)) as client:
            with pytest.raises(RequestTimeoutError):
                await client.request("tools/list", {}, ListToolsResult, timeout=0.1)
            (cancel,) = await fake.wait_seen("POST", "notifications/cancelled")
            (held,) = fake.requests("POST", "tools/list")
            assert cancel.rpc is not None
            assert cancel.rpc["params"]["requestId"] == held.rpc_id
            await anyio.to_thread.run_sync(held.disconnected.wait, LIMIT, abandon_on_cancel=True)
            assert held.disconnected.is_set()


# --------------------------------------------------------------------------- imports


def run_python(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=60
    ).stdout


def test_transports_package_does_not_import_httpx() -> None:
    out = run_python("import sys, mcpkit.transports, mcpkit.client; print('httpx' in sys.modules)")
    assert out.strip() == "False"


def test_missing_httpx_is_reported_on_construction() -> None:
    out = run_python(
        "import sys; sys.modules['httpx'] = None\n"
        "from mcpkit.exceptions import TransportError\n"
        "from mcpkit.transports import StreamableHTTPTransport\n"
        "try:\n"
        "    StreamableHTTPTransport('http://127.0.0.1:1/mcp')\n"
        "except TransportError as exc:\n"
        "    print(exc)\n"
    )
    assert "pip install 'mcpkit[http]'" in out


async def test_user_client_is_not_closed(peer: tuple[FakeMCPServer, str]) -> None:
    fake, url = peer
    async with httpx.AsyncClient(follow_redirects=True) as http:
        with anyio.fail_after(LIMIT):
            async with Client(transport(url, http_client=http)) as session:
                await session.ping()
        assert not http.is_closed
    assert len(fake.requests("DELETE")) == 1
