"""The legacy HTTP+SSE transport (MCP 2024-11-05 ``basic/transports.mdx``), both sides, end
to end over real sockets on 127.0.0.1 (uvicorn in a thread, ``tests/_httpserver.py``).

* mcpkit's client (:class:`SSETransport`) against mcpkit's server (:class:`SSEApp`) serving
  ``examples/everything.py``: a full session with progress, logging and sampling;
* interop both ways with the official Python SDK (``mcp``): its ``sse_client`` against
  :class:`SSEApp`, and :class:`SSETransport` against its ``sse_app()``;
* every status rule of the server, probed with raw httpx requests;
* the client's security check: an ``endpoint`` event on another origin is refused;
* a client that disconnects ends its session: handlers cancelled, state freed.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator, MutableMapping
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any, Final

import anyio
import httpx
import pytest
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import SamplingMessage
from mcp_types import TextContent as OfficialText

from mcpkit.client import Client
from mcpkit.exceptions import MessageNotDelivered, RemoteProtocolError, TransportError
from mcpkit.protocol import (
    OVERSIZED_HEAD,
    FrameTooLarge,
    SSEEvent,
    SSEParser,
    TransportSecurity,
    encode_event,
)
from mcpkit.server import LowLevelServer, RequestContext, ServerSession, SSEApp
from mcpkit.server._http_apps import app_for
from mcpkit.transports import SSEChannel, SSETransport
from mcpkit.types import (
    CallToolResult,
    CreateMessageRequestParams,
    CreateMessageResult,
    LoggingMessageNotificationParams,
    ProgressNotificationParams,
    TextContent,
    Tool,
)

from ._httpserver import ASGIApp, RunningServer, running_server
from .conftest import EXAMPLES

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

#: Bound on every test's waits.
LIMIT: Final = 15.0
FIXTURES: Final = Path(__file__).resolve().parent / "fixtures"
SSE_ACCEPT: Final = {"accept": "text/event-stream"}
JSON: Final = {"content-type": "application/json"}


def load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def everything() -> LowLevelServer:
    server = load(EXAMPLES / "everything.py", "_sse_everything").server
    assert isinstance(server, LowLevelServer)
    return server


class Closed:
    """Records each session an app reports closed (it runs in the server's thread)."""

    def __init__(self) -> None:
        self.sessions: list[ServerSession] = []
        self._event = threading.Event()

    def __call__(self, session: ServerSession) -> None:
        self.sessions.append(session)
        self._event.set()

    async def wait(self) -> None:
        """Wait (bounded by the caller's ``fail_after``) for a session to close."""
        await anyio.to_thread.run_sync(self._event.wait, abandon_on_cancel=True)


def request(rid: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


INITIALIZE: Final = request(
    1,
    "initialize",
    {
        "protocolVersion": "2024-11-05",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
)
INITIALIZED: Final = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


class RawStream:
    """A hand-driven legacy SSE session: the GET stream and its endpoint."""

    def __init__(self, http: httpx.AsyncClient, response: httpx.Response, base: str) -> None:
        self.http = http
        self.response = response
        self.base = base
        self._parser = SSEParser()
        self._events: list[SSEEvent] = []
        self._chunks = response.aiter_raw()
        self.endpoint = ""

    async def aclose(self) -> None:
        # Cancel a read inside httpx so its chain of async generators unwinds (on trio an
        # abandoned one is finalized late, with a ResourceWarning).
        with anyio.CancelScope() as scope:
            scope.cancel()
            async for _ in self._chunks:
                pass

    async def next_event(self) -> SSEEvent:
        while not self._events:
            self._events.extend(self._parser.feed(await self._chunks.__anext__()))
        return self._events.pop(0)

    async def next_message(self) -> dict[str, Any]:
        event = await self.next_event()
        assert event.event == "message", event
        value = json.loads(event.data)
        assert isinstance(value, dict)
        return value

    async def post(self, body: bytes, **headers: str) -> httpx.Response:
        return await self.http.post(
            self.base + self.endpoint, content=body, headers={**JSON, **headers}
        )


@asynccontextmanager
async def raw_stream(base: str, path: str = "/sse") -> AsyncIterator[RawStream]:
    async with httpx.AsyncClient() as http:
        request_ = http.build_request("GET", base + path, headers=SSE_ACCEPT)
        response = await http.send(request_, stream=True)
        try:
            assert response.status_code == 200, response.status_code
            assert response.headers["content-type"] == "text/event-stream"
            stream = RawStream(http, response, base)
            first = await stream.next_event()
            assert first.event == "endpoint"
            stream.endpoint = first.data.decode()
            try:
                yield stream
            finally:
                await stream.aclose()
        finally:
            await response.aclose()


async def sample(params: CreateMessageRequestParams) -> CreateMessageResult:
    text = params.messages[0].content
    assert isinstance(text, TextContent)
    return CreateMessageResult(
        role="assistant", content=TextContent(text=f"re: {text.text}"), model="m"
    )


def texts(result: CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


# --------------------------------------------------------------------------- mcpkit <-> mcpkit


async def test_full_session(everything: LowLevelServer) -> None:
    app = SSEApp(everything)
    closed = Closed()
    app.on_session_closed = closed
    progress: list[ProgressNotificationParams] = []
    logs: list[LoggingMessageNotificationParams] = []
    with running_server(app) as server, anyio.fail_after(LIMIT):
        transport = SSETransport(server.url + "/sse")
        async with transport.connect() as channel:
            assert channel.endpoint_url is not None
            assert channel.endpoint_url.startswith(server.url + "/messages?session_id=")
            async with Client(
                channel, era="handshake", sampling=sample, on_log=logs.append
            ) as client:
                assert client.server_info.name == everything.info.name
                assert client.protocol_version == "2025-11-25"
                tools = {tool.name for tool in (await client.list_tools()).tools}
                assert {"test_simple_text", "test_sampling", "echo"} <= tools
                result = await client.call_tool("test_simple_text")
                assert texts(result) == ["This is a simple text response for testing."]
                result = await client.call_tool(
                    "test_tool_with_progress", on_progress=progress.append
                )
                assert result.is_error is not True
                assert [(p.progress, p.total) for p in progress] == [
                    (0, 100),
                    (50, 100),
                    (100, 100),
                ]
                result = await client.call_tool("test_tool_with_logging")
                assert texts(result) == ["Tool with logging executed successfully"]
                assert [log.data for log in logs] == [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ]
                result = await client.call_tool("test_sampling", {"prompt": "hello"})
                assert texts(result) == ["LLM response: re: hello"]
                text = "héllo\nwörld 🌍 " * 1000  # multi-line data, non-ASCII, 20 KB
                assert texts(await client.call_tool("echo", {"text": text})) == [text]
        await closed.wait()
    assert len(closed.sessions) == 1
    assert app.sessions == {}
    assert everything.sessions == set()


async def test_an_answer_over_the_event_limit_fails_its_call_only(
    everything: LowLevelServer,
) -> None:
    """One stream carries every message of a session: an event over ``max_event_bytes``
    is skipped to its end and the call it answers fails saying so; the session goes on."""
    with running_server(SSEApp(everything)) as server, anyio.fail_after(LIMIT):
        transport = SSETransport(server.url + "/sse", max_event_bytes=1000)
        async with Client(transport, era="handshake") as client:
            answers: list[list[str]] = []

            async def small() -> None:  # another call in flight meanwhile: unharmed
                answers.append(texts(await client.call_tool("echo", {"text": "small"})))

            async with anyio.create_task_group() as tg:
                tg.start_soon(small)
                with pytest.raises(RemoteProtocolError, match="exceeds the limit of 1000 bytes"):
                    await client.call_tool("echo", {"text": "x" * 5000})
            assert answers == [["small"]]
            result = await client.call_tool("echo", {"text": "after"})
            assert texts(result) == ["after"]


async def test_protocol_errors_arrive_on_the_stream(everything: LowLevelServer) -> None:
    with running_server(SSEApp(everything)) as server, anyio.fail_after(LIMIT):
        async with raw_stream(server.url) as stream:
            # Valid JSON but not JSON-RPC: accepted, answered on the stream (-32600).
            response = await stream.post(b'{"hello": 1}')
            assert response.status_code == 202
            assert response.content == b""
            message = await stream.next_message()
            assert message["id"] is None
            assert message["error"]["code"] == -32600
            response = await stream.post(INITIALIZE)
            assert response.status_code == 202
            message = await stream.next_message()
            assert message["id"] == 1
            assert message["result"]["protocolVersion"] == "2024-11-05"


async def test_channel_ends_and_send_failures(everything: LowLevelServer) -> None:
    app = SSEApp(everything)
    with running_server(app) as server, anyio.fail_after(LIMIT):
        async with SSETransport(server.url + "/sse").connect() as channel:
            # A body that is not JSON is refused by the server: MessageNotDelivered(400).
            with pytest.raises(MessageNotDelivered) as refused:
                await channel.send(b"{not json")
            assert refused.value.status == 400
            assert "-32700" in str(refused.value)
            # The server ends the session: the stream ends, receive says so.
            server.call(app.close_all)
            with pytest.raises(anyio.EndOfStream):
                await channel.receive()
            # Posting to the ended session: 404.
            with pytest.raises(MessageNotDelivered) as gone:
                await channel.send(INITIALIZE)
            assert gone.value.status == 404
        with pytest.raises(anyio.ClosedResourceError):
            await channel.send(INITIALIZE)


# --------------------------------------------------------------------------- status rules


@contextmanager
def rules_server(everything: LowLevelServer, **options: Any) -> Iterator[RunningServer]:
    with running_server(SSEApp(everything, **options)) as server:
        yield server


async def test_status_rules(everything: LowLevelServer) -> None:
    limit = 1024
    with rules_server(everything, max_body_bytes=limit) as server, anyio.fail_after(LIMIT):
        base = server.url
        async with httpx.AsyncClient() as http, raw_stream(base) as stream:
            session_url = base + stream.endpoint
            # GET whose Accept excludes SSE: 406.
            response = await http.get(base + "/sse", headers={"accept": "application/json"})
            assert response.status_code == 406
            assert response.json()["error"]["code"] == -32600
            assert response.json()["id"] is None
            # Not JSON: 415, before the session or the body is looked at.
            response = await http.post(
                session_url, content=INITIALIZE, headers={"content-type": "text/plain"}
            )
            assert response.status_code == 415
            # No session_id: 400; malformed: 400; unknown: 404.
            response = await http.post(base + "/messages", content=INITIALIZE, headers=JSON)
            assert response.status_code == 400
            assert "session_id" in response.json()["error"]["message"]
            for bad in ("has space", "x" * 300):
                response = await http.post(
                    base + "/messages", params={"session_id": bad}, content=INITIALIZE, headers=JSON
                )
                assert response.status_code == 400, bad
            response = await http.post(
                base + "/messages?session_id=nosuchsession", content=INITIALIZE, headers=JSON
            )
            assert response.status_code == 404
            # Body limit: exactly the limit is accepted, one byte more is 413.
            exact = INITIALIZE + b" " * (limit - len(INITIALIZE))
            assert (await stream.post(exact)).status_code == 202
            assert (await stream.next_message())["id"] == 1
            response = await stream.post(exact + b" ")
            assert response.status_code == 413
            assert "connection" not in response.headers  # just over: the rest is read
            # A compressed body: 415, naming what is accepted (RFC 9110 section 15.5.16).
            response = await stream.post(gzip.compress(INITIALIZE), **{"content-encoding": "gzip"})
            assert response.status_code == 415
            assert response.headers["accept-encoding"] == "identity"
            # Not JSON at all: 400 with an id-less -32700 (no message reaches the session).
            response = await stream.post(b"{nope")
            assert response.status_code == 400
            assert response.json()["id"] is None
            assert response.json()["error"]["code"] == -32700
            # Wrong methods and paths.
            response = await http.post(base + "/sse", content=b"{}", headers=JSON)
            assert response.status_code == 405
            assert response.headers["allow"] == "GET, OPTIONS"
            response = await http.get(session_url)
            assert response.status_code == 405
            assert response.headers["allow"] == "POST, OPTIONS"
            assert (await http.get(base + "/elsewhere")).status_code == 404
            # The session survived all of it.
            assert (await stream.post(INITIALIZED)).status_code == 202
            assert (await stream.post(request(2, "ping"))).status_code == 202
            assert await stream.next_message() == {"jsonrpc": "2.0", "id": 2, "result": {}}


@pytest.mark.parametrize(
    ("header", "value", "status"),
    [
        ("host", "evil.example.com", 421),
        ("host", "localhost@evil.example.com", 421),
        ("origin", "null", 403),
        ("origin", "http://evil.example.com", 403),
    ],
)
async def test_dns_rebinding_refused_on_both_endpoints(
    everything: LowLevelServer, header: str, value: str, status: int
) -> None:
    with rules_server(everything) as server, anyio.fail_after(LIMIT):
        async with httpx.AsyncClient() as http, raw_stream(server.url) as stream:
            response = await http.get(server.url + "/sse", headers={**SSE_ACCEPT, header: value})
            assert response.status_code == status
            assert response.json()["error"]["code"] == -32600
            response = await stream.post(INITIALIZE, **{header: value})
            assert response.status_code == status
            # Nothing reached the session; a legitimate Origin is fine.
            response = await stream.post(INITIALIZE, origin=f"http://localhost:{server.port}")
            assert response.status_code == 202
            assert response.headers["access-control-allow-origin"] == (
                f"http://localhost:{server.port}"
            )
            assert (await stream.next_message())["id"] == 1


async def test_session_cap(everything: LowLevelServer) -> None:
    with rules_server(everything, max_sessions=1) as server, anyio.fail_after(LIMIT):
        async with httpx.AsyncClient() as http, raw_stream(server.url):
            response = await http.get(server.url + "/sse", headers=SSE_ACCEPT)
            assert response.status_code == 503
            assert response.headers["retry-after"] == "5"
            assert response.json()["error"]["code"] == -32000
        # The first session ended with its stream: there is room again.
        async with raw_stream(server.url):
            pass


async def test_endpoint_respects_root_path(everything: LowLevelServer) -> None:
    """Mounted under a prefix, the endpoint event names the prefixed message path."""
    app = SSEApp(everything, message_path="/msg")
    sent: list[dict[str, Any]] = []
    got_endpoint = anyio.Event()
    requests = [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive() -> dict[str, Any]:
        if requests:
            return requests.pop()
        await got_endpoint.wait()
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(dict(message))
        if b"event: endpoint" in message.get("body", b""):
            got_endpoint.set()

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/api/v1/sse",
        "root_path": "/api/v1",
        "query_string": b"",
        "headers": [(b"host", b"localhost"), (b"accept", b"text/event-stream")],
    }
    with anyio.fail_after(LIMIT):
        await app(scope, receive, send)
    assert sent[0]["status"] == 200
    body = b"".join(message.get("body", b"") for message in sent[1:])
    [endpoint] = [e for e in SSEParser().feed(body) if e.event == "endpoint"]
    path, _, query = endpoint.data.decode().partition("?")
    assert path == "/api/v1/msg"
    assert query.startswith("session_id=")
    assert app.sessions == {}
    assert everything.sessions == set()


# --------------------------------------------------------------------------- disconnects


def blocking_server(started: threading.Event, cancelled: threading.Event) -> LowLevelServer:
    server = LowLevelServer("blocking")

    async def block(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "unreachable"

    server.add_tool(Tool(name="block", input_schema={"type": "object"}), block)
    return server


async def test_disconnect_ends_the_session() -> None:
    started, cancelled = threading.Event(), threading.Event()
    server = blocking_server(started, cancelled)
    app = SSEApp(server)
    closed = Closed()
    app.on_session_closed = closed
    with running_server(app) as running, anyio.fail_after(LIMIT):
        async with raw_stream(running.url) as stream:
            assert (await stream.post(INITIALIZE)).status_code == 202
            assert (await stream.next_message())["id"] == 1
            assert (await stream.post(INITIALIZED)).status_code == 202
            call = request(2, "tools/call", {"name": "block", "arguments": {}})
            assert (await stream.post(call)).status_code == 202
            await anyio.to_thread.run_sync(started.wait, abandon_on_cancel=True)
            assert running.call(lambda: (len(app.sessions), len(server.sessions))) == (1, 1)
            endpoint = stream.endpoint
        # The GET is closed without a word (no cancellation was sent): the server notices,
        # cancels the handler and forgets the session.
        await closed.wait()
        assert cancelled.is_set()
        assert running.call(lambda: (len(app.sessions), len(server.sessions))) == (0, 0)
        async with httpx.AsyncClient() as http:
            response = await http.post(running.url + endpoint, content=INITIALIZE, headers=JSON)
            assert response.status_code == 404


# --------------------------------------------------------------------------- client checks


def scripted_sse(body: bytes | Callable[[], bytes]) -> ASGIApp:
    """A server that answers any GET with ``body`` as an event stream and keeps it open."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        data = body if isinstance(body, bytes) else body()
        await send({"type": "http.response.body", "body": data, "more_body": True})
        while (await receive())["type"] != "http.disconnect":
            pass

    return app


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://evil.example.com/messages?session_id=x",
        "//evil.example.com/messages",
        "https://127.0.0.1:{port}/messages",  # another scheme
        "http://127.0.0.1:1/messages",  # another port
        "http://user:pw@127.0.0.1:{port}/messages",  # credentials of its own
    ],
)
async def test_client_refuses_an_endpoint_on_another_origin(endpoint: str) -> None:
    box: dict[str, bytes] = {}
    with running_server(scripted_sse(lambda: box["body"])) as server, anyio.fail_after(LIMIT):
        data = endpoint.format(port=server.port).encode()
        box["body"] = encode_event(data, event="endpoint")
        with pytest.raises(TransportError, match="not on the origin"):
            async with SSETransport(server.url + "/sse").connect():
                pass


async def test_client_keeps_the_first_endpoint() -> None:
    # A second endpoint event (here: to another origin) is ignored; the stream goes on.
    body = (
        encode_event(b"/messages?session_id=a", event="endpoint")
        + encode_event(b"http://evil.example.com/messages", event="endpoint")
        + encode_event(b'{"jsonrpc":"2.0","method":"x/y"}')
    )
    with running_server(scripted_sse(body)) as server, anyio.fail_after(LIMIT):
        async with SSETransport(server.url + "/sse").connect() as channel:
            assert await channel.receive() == b'{"jsonrpc":"2.0","method":"x/y"}'
            assert channel.endpoint_url == server.url + "/messages?session_id=a"


@pytest.mark.parametrize("endpoint", ["http://xn--/m", "http://[zz]/m", "http://a\u00adb/m"])
async def test_client_refuses_a_malformed_endpoint(endpoint: str) -> None:
    # (an invalid IDNA host came out as a bare idna error in an exception group)
    body = encode_event(endpoint.encode(), event="endpoint")
    with (
        running_server(scripted_sse(body)) as server,
        anyio.fail_after(LIMIT),
        pytest.raises(TransportError, match=r"malformed endpoint|not on the origin"),
    ):
        async with SSETransport(server.url + "/sse").connect():
            pass


async def test_client_refuses_an_endpoint_over_the_event_limit() -> None:
    # (skipped to its end like any event over it, its first bytes must not become a URL)
    body = encode_event(b"/messages?session_id=" + b"a" * 2000, event="endpoint")
    with (
        running_server(scripted_sse(body)) as server,
        anyio.fail_after(LIMIT),
        pytest.raises(TransportError, match="the endpoint event exceeded 1000 bytes"),
    ):
        async with SSETransport(server.url + "/sse", max_event_bytes=1000).connect():
            pass


def redirecting_sse(target: Callable[[], str]) -> ASGIApp:
    """An SSE server whose message endpoint answers every POST with 307 to ``target()``."""
    stream = scripted_sse(encode_event(b"/messages?session_id=x", event="endpoint"))

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] == "GET":
            await stream(scope, receive, send)
            return
        location = [(b"location", target().encode()), (b"content-length", b"0")]
        await send({"type": "http.response.start", "status": 307, "headers": location})
        await send({"type": "http.response.body", "body": b""})

    return app


async def test_client_never_follows_a_redirect_even_with_a_following_http_client() -> None:
    seen: list[tuple[str, str]] = []

    async def elsewhere(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen.append((scope["method"], scope["path"]))
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})

    with running_server(elsewhere) as other:
        app = redirecting_sse(lambda: other.url + "/steal")
        with running_server(app) as server, anyio.fail_after(LIMIT):
            headers = {"x-api-key": "secret"}
            async with httpx.AsyncClient(follow_redirects=True, headers=headers) as http:
                transport = SSETransport(server.url + "/sse", http_client=http)
                async with transport.connect() as channel:
                    with pytest.raises(MessageNotDelivered) as refused:
                        await channel.send(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    assert refused.value.status == 307
    assert seen == []


async def test_client_stream_rules() -> None:
    with anyio.fail_after(LIMIT):
        # No endpoint event in time.
        with (
            running_server(scripted_sse(b": hello\n\n")) as server,
            pytest.raises(TransportError, match="no endpoint event"),
        ):
            async with SSETransport(server.url + "/sse", endpoint_timeout=0.3).connect():
                pass
        # An event over the size limit is skipped to its end (receive reports it, with
        # its first bytes), and the stream goes on; empty message events and unknown
        # event types are skipped.
        events = (
            encode_event(b"/messages?session_id=x", event="endpoint")
            + encode_event(b"", event="message")
            + encode_event(b'{"jsonrpc":"2.0","method":"a/b"}', event="other")
            + encode_event(b'{"jsonrpc":"2.0","method":"x/y"}')
            + encode_event(b"x" * 2000)
            + encode_event(b'{"jsonrpc":"2.0","method":"z/z"}')
        )
        with running_server(scripted_sse(events)) as server:
            transport = SSETransport(server.url + "/sse", max_event_bytes=1000)
            async with transport.connect() as channel:
                assert await channel.receive() == b'{"jsonrpc":"2.0","method":"x/y"}'
                skipped = await channel.receive()
                assert skipped == FrameTooLarge(1000)
                assert isinstance(skipped, FrameTooLarge)
                assert skipped.head == b"x" * OVERSIZED_HEAD
                assert await channel.receive() == b'{"jsonrpc":"2.0","method":"z/z"}'
        # Not an event stream, or an error status: refused with the status.
        with running_server(app_for(LowLevelServer("x"), "http")) as server:
            with pytest.raises(TransportError) as refused:
                async with SSETransport(server.url + "/sse").connect():
                    pass
            assert refused.value.status == 404


async def _refusal(
    status: int, headers: list[tuple[bytes, bytes]], body: bytes
) -> tuple[TransportError, str]:
    """How the SSE client refuses a server that answers its GET so; and the server's URL."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    with (
        running_server(app) as server,
        anyio.fail_after(LIMIT),
        pytest.raises(TransportError) as refused,
    ):
        async with SSETransport(server.url + "/sse").connect():
            pass
    return refused.value, server.url


async def test_a_refusal_s_text_becomes_one_short_line() -> None:
    # The server's words go into the caller's exception (and logs): one line, a bounded
    # excerpt and no control characters, whatever it sent.
    page = b"<h1>\r\nforged\nERROR x: y\x1b[2J</h1>" + b"z" * 5000
    refused, _ = await _refusal(500, [(b"content-type", b"text/html")], page)
    text = str(refused)
    assert "HTTP 500 (<h1> forged ERROR x: y [2J</h1>zzz" in text, text
    assert text.isprintable(), text
    assert len(text) < 400, text


async def test_a_redirected_sse_stream_is_not_followed_and_names_its_target() -> None:
    # Following it would send the messages (and credentials) wherever it points; the
    # refusal says where, so the user can connect there (Starlette's /sse -> /sse/).
    refused, url = await _refusal(307, [(b"location", b"/sse/")], b"")
    assert refused.status == 307
    assert f"HTTP 307 (a redirect to '{url}/sse/'; mcpkit does not follow" in str(refused)


async def test_client_against_a_closed_port() -> None:
    with running_server(scripted_sse(b"")) as server:
        url = server.url + "/sse"
    with anyio.fail_after(LIMIT), pytest.raises(TransportError, match="cannot open"):
        async with SSETransport(url).connect():
            pass


def test_missing_httpx_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "httpx", None)
    with pytest.raises(TransportError, match=r"pip install 'mcpkit\[http\]'"):
        SSETransport("http://127.0.0.1:1/sse")


def test_app_for_and_settings(everything: LowLevelServer) -> None:
    app = app_for(everything, "sse", path="/events", security=TransportSecurity())
    assert isinstance(app, SSEApp)
    assert app.sse_path == "/events"
    with pytest.raises(ValueError, match="invalid option"):
        app_for(everything, "sse", nonsense=1)
    with pytest.raises(ValueError, match="must be a path"):
        SSEApp(everything, message_path="messages")
    with pytest.raises(ValueError, match="positive"):
        SSEApp(everything, max_sessions=0)


# --------------------------------------------------------------------------- official SDK


@pytest.mark.interop
async def test_official_client_against_sse_app(everything: LowLevelServer) -> None:
    from mcp import Client as OfficialClient
    from mcp.client.sse import sse_client

    app = SSEApp(everything)
    closed = Closed()
    app.on_session_closed = closed
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    with running_server(app) as server, anyio.fail_after(LIMIT):
        async with OfficialClient(sse_client(server.url + "/sse"), mode="legacy") as client:
            assert client.server_info is not None
            assert client.server_info.name == everything.info.name
            listed = await client.list_tools()
            assert "test_simple_text" in {tool.name for tool in listed.tools}
            result = await client.call_tool("echo", {"text": "héllo\nthere"})
            assert [block.text for block in result.content] == ["héllo\nthere"]  # type: ignore[union-attr]
            result = await client.call_tool(
                "test_tool_with_progress", {}, progress_callback=on_progress
            )
            assert result.is_error is not True
        await closed.wait()
    assert [(p, t) for p, t, _ in updates] == [(0, 100), (50, 100), (100, 100)]
    assert app.sessions == {}


def official_sse_app() -> ASGIApp:
    """The official SDK's ``sse_app()``, built on first use in the server thread (its locks
    bind to the loop they are created on)."""
    box: dict[str, Any] = {}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if "app" not in box:
            server: MCPServer[Any] = MCPServer("official-sse")

            @server.tool()
            async def count(steps: int, ctx: Context[Any, Any]) -> str:
                """Report progress 1..steps, log, then return."""
                for step in range(1, steps + 1):
                    await ctx.report_progress(step, steps, f"step {step}")
                await ctx.info("counted")
                return f"counted {steps}"

            @server.tool()
            async def ask(question: str, ctx: Context[Any, Any]) -> str:
                """Ask the client's model."""
                message = SamplingMessage(
                    role="user", content=OfficialText(type="text", text=question)
                )
                result = await ctx.session.create_message([message], max_tokens=10)
                assert isinstance(result.content, OfficialText)
                return result.content.text

            # Its default for host 127.0.0.1 is its own Host/Origin allowlist (loopback).
            box["app"] = server.sse_app(host="127.0.0.1")
        await box["app"](scope, receive, send)

    return app


@pytest.mark.interop
async def test_sse_transport_against_official_server() -> None:
    progress: list[ProgressNotificationParams] = []
    logs: list[LoggingMessageNotificationParams] = []
    with running_server(official_sse_app()) as server, anyio.fail_after(LIMIT):
        transport = SSETransport(server.url + "/sse")
        async with transport.connect() as channel:
            assert channel.endpoint_url is not None
            assert channel.endpoint_url.startswith(server.url + "/messages/?session_id=")
            async with Client(
                channel, era="handshake", sampling=sample, on_log=logs.append
            ) as client:
                assert client.server_info.name == "official-sse"
                tools = {tool.name for tool in (await client.list_tools()).tools}
                assert tools == {"count", "ask"}
                result = await client.call_tool("count", {"steps": 3}, on_progress=progress.append)
                assert texts(result) == ["counted 3"]
                assert [(p.progress, p.total) for p in progress] == [(1, 3), (2, 3), (3, 3)]
                assert [log.data for log in logs] == ["counted"]
                result = await client.call_tool("ask", {"question": "hi"})
                assert texts(result) == ["re: hi"]


async def test_channel_is_its_own_transport(everything: LowLevelServer) -> None:
    with running_server(SSEApp(everything)) as server, anyio.fail_after(LIMIT):
        channel = SSETransport(server.url + "/sse").connect()
        assert isinstance(channel, SSEChannel)
        async with Client(channel) as client:
            assert texts(await client.call_tool("echo", {"text": "x"})) == ["x"]


async def test_an_unexpected_failure_while_reading_ends_the_stream_cleanly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A failure that is not an HTTP error (here: the body stream of a custom transport)
    # ends the stream, as a broken connection does; it does not escape from the reader
    # task into the caller's task group.
    async def body() -> AsyncIterator[bytes]:
        yield encode_event(b"/messages?session_id=x", event="endpoint")
        yield encode_event(b'{"jsonrpc":"2.0","method":"x/y"}')
        raise RuntimeError("decoder bug")

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        transport = SSETransport("http://127.0.0.1:9/sse", http_client=http)
        with anyio.fail_after(LIMIT):
            async with transport.connect() as channel:
                assert await channel.receive() == b'{"jsonrpc":"2.0","method":"x/y"}'
                with pytest.raises(anyio.EndOfStream):
                    await channel.receive()
    assert "failed unexpectedly" in caplog.text
