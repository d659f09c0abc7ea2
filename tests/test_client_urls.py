"""``Client(url)``: the transport picked from the URL, the fallback from Streamable HTTP to
the legacy HTTP+SSE transport (``basic/transports.mdx`` "Backwards Compatibility"), and a
new session when the server ends the old one (HTTP 404, "Session Management"). End to end
over real sockets on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final

import anyio
import pytest

from mcpkit.client import Client
from mcpkit.exceptions import LocalProtocolError, MessageNotDelivered, TransportError
from mcpkit.server import SSEApp, WebSocketApp
from mcpkit.transports import SSETransport, StreamableHTTPTransport, WebSocketTransport
from mcpkit.types import CallToolResult, TextContent

from ._http_testserver import build_server
from ._httpserver import ASGIApp, running_server

pytestmark = pytest.mark.anyio

LIMIT: Final = 15.0

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def text(result: CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


class Counting:
    """Counts the HTTP requests reaching ``app`` by (method, path)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.seen: list[tuple[str, str]] = []
        self.initializes = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.seen.append((scope["method"], scope["path"]))
        body = bytearray()

        async def peeking() -> MutableMapping[str, Any]:
            message = await receive()
            if message["type"] == "http.request":
                body.extend(message.get("body", b""))
                if not message.get("more_body") and b'"method":"initialize"' in body:
                    self.initializes += 1
            return message

        await self.app(scope, peeking, send)


async def test_http_url_speaks_streamable_http() -> None:
    app = build_server().streamable_http_app()
    counting = Counting(app)
    with running_server(counting) as http, anyio.fail_after(LIMIT):
        async with Client(http.url + "/mcp", era="handshake") as client:
            assert text(await client.call_tool("echo", {"text": "hi"})) == "hi"
            assert len(app.sessions) == 1
        assert ("GET", "/sse") not in counting.seen
        assert counting.initializes == 1
        # DELETE on close ended the session.
        assert ("DELETE", "/mcp") in counting.seen
        assert http.call(lambda: len(app.sessions)) == 0


async def test_http_url_falls_back_to_the_legacy_sse_transport() -> None:
    app = SSEApp(build_server())
    counting = Counting(app)
    with running_server(counting) as http, anyio.fail_after(LIMIT):
        async with Client(http.url + "/sse", era="handshake") as client:
            assert text(await client.call_tool("echo", {"text": "old"})) == "old"
            assert len(app.sessions) == 1
        # First the initialize POST to the URL (refused with a 4xx), then the GET.
        assert counting.seen[:2] == [("POST", "/sse"), ("GET", "/sse")]


def refusing(status: int) -> ASGIApp:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = [(b"content-type", b"text/plain")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"no"})

    return app


@pytest.mark.parametrize(
    ("status", "falls_back"),
    [(400, True), (404, True), (405, True), (401, False), (403, False), (500, False)],
)
async def test_which_statuses_lead_to_the_fallback(status: int, falls_back: bool) -> None:
    counting = Counting(refusing(status))
    with running_server(counting) as http, anyio.fail_after(LIMIT):
        with pytest.raises(Exception) as failed:
            async with Client(http.url + "/mcp"):
                pass
        # The last attempt's error is reported, with its status.
        assert getattr(failed.value, "status", None) == status
        assert (("GET", "/mcp") in counting.seen) is falls_back
        if not falls_back:
            assert isinstance(failed.value, MessageNotDelivered)
            assert counting.seen == [("POST", "/mcp")]


async def silent(scope: Scope, receive: Receive, send: Send) -> None:
    """Refuses the initialize POST (405); opens an SSE stream and sends no ``endpoint``
    event; leaves a WebSocket handshake unanswered."""
    if scope["type"] == "http" and scope["method"] == "POST":
        await refusing(405)(scope, receive, send)
        return
    if scope["type"] == "http":
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b": hello\n\n", "more_body": True})
    if scope["type"] in ("http", "websocket"):
        while (await receive())["type"] not in ("http.disconnect", "websocket.disconnect"):
            pass


@pytest.mark.usefixtures("websocket_client")
@pytest.mark.parametrize(
    ("scheme", "error"),
    [("http", "no endpoint event from .* within 0.3 s"), ("ws", "cannot open a WebSocket")],
)
async def test_the_client_timeout_bounds_opening_a_url_s_transport(scheme: str, error: str) -> None:
    # The transports' own bounds (30 s for the endpoint event, 10 s for the WebSocket
    # handshake) would exceed LIMIT: the client's timeout applies to them too.
    with running_server(silent) as http, anyio.fail_after(LIMIT / 3):
        url = http.url.replace("http", scheme, 1) + "/mcp"
        with pytest.raises(TransportError, match=error):
            async with Client(url, timeout=0.3):
                pass


async def test_closed_port_fails_without_fallback() -> None:
    with running_server(refusing(404)) as http:
        url = http.url + "/mcp"
    with anyio.fail_after(LIMIT), pytest.raises(MessageNotDelivered) as failed:
        async with Client(url):
            pass
    assert failed.value.status is None


@pytest.mark.parametrize(
    "url",
    [
        "ftp://127.0.0.1/mcp",
        "mailto:someone@example.com",
        "http:///mcp",
        "/mcp",
        "http://[::1/mcp",  # unclosed bracket
        "http://127.0.0.1:99999/mcp",  # port out of range
        "ws://127.0.0.1:99999/mcp",
        "http://xn--/mcp",  # not a valid IDNA host
    ],
)
async def test_unusable_urls_are_refused(url: str) -> None:
    with pytest.raises(LocalProtocolError):
        async with Client(url):
            pass


@pytest.mark.parametrize(
    ("url", "hint"),
    [
        ("localhost:8000/mcp", "did you mean 'http://localhost:8000/mcp'?"),
        ("127.0.0.1:8000", "did you mean 'http://127.0.0.1:8000'?"),
        ("server.py", "pass StdioTransport(sys.executable, ['-m', 'mcpkit', 'run', 'server.py'])"),
        ("app/main.py:mcp", "'run', 'app/main.py:mcp'])"),
    ],
)
async def test_a_url_without_its_scheme_or_a_file_gets_a_hint(url: str, hint: str) -> None:
    with pytest.raises(LocalProtocolError, match="not a server URL") as refused:
        async with Client(url):
            pass
    assert str(refused.value).endswith(hint)


TRANSPORTS: Final = {
    "streamable": (StreamableHTTPTransport, "http://127.0.0.1:1/mcp"),
    "legacy": (SSETransport, "http://127.0.0.1:1/sse"),
    "websocket": (WebSocketTransport, "ws://127.0.0.1:1/ws"),
}


@pytest.mark.parametrize("kind", sorted(TRANSPORTS))
@pytest.mark.parametrize(
    ("headers", "problem"),
    [
        ({"X-Trace": "a\r\nInjected: 1"}, "invalid value"),  # header injection
        ({"X-Trace": "a\nb"}, "invalid value"),
        ({"X-Trace": "nul\x00"}, "invalid value"),
        ({"X-Name": "Zoë"}, "invalid value"),  # non-ASCII: encode it first
        ({"Bad Name": "x"}, "invalid header name"),
        ({"X-Colon:": "x"}, "invalid header name"),
        ({"": "x"}, "invalid header name"),
        ({"X-Count": 5}, "must be a str"),
        # What the transport sets itself: a stale session id would go out with a new
        # session's initialize, a Content-Type or Accept clash with its own.
        ({"Mcp-Session-Id": "abc"}, "header Mcp-Session-Id: the transport sets it"),
        ({"mcp-protocol-version": "2025-11-25"}, "the transport sets it"),
        ({"Content-Type": "text/plain"}, "the transport sets it"),
        ({"ACCEPT": "*/*"}, "the transport sets it"),
        ({"Last-Event-ID": "1"}, "the transport sets it"),
        ({"Content-Length": "5"}, "the transport sets it"),
        ({"Authorization": "Bearer a.b-c_d~e+f/g=", "X-Tab": "a\tb c"}, None),
    ],
)
def test_headers_no_request_could_carry_are_refused_when_given(
    kind: str, headers: dict[str, Any], problem: str | None
) -> None:
    # At construction, naming the header, rather than as a failed first request.
    transport, url = TRANSPORTS[kind]
    if problem is None:
        assert transport(url, headers=headers).headers == headers
        return
    with pytest.raises(LocalProtocolError, match=problem):
        transport(url, headers=headers)


async def test_expired_session_is_renewed_once_for_concurrent_calls() -> None:
    app = build_server().streamable_http_app()
    counting = Counting(app)
    with running_server(counting) as http, anyio.fail_after(LIMIT):
        async with Client(http.url + "/mcp", era="handshake") as client:
            assert text(await client.call_tool("echo", {"text": "a"})) == "a"
            [old] = list(app.sessions.values())
            http.call(lambda: app.drop(old))  # the server forgets the session
            http.run(app.wait_ended)
            results: list[str] = []

            async def call(n: int) -> None:
                results.append(text(await client.call_tool("echo", {"text": str(n)})))

            async with anyio.create_task_group() as tg:
                for n in range(5):
                    tg.start_soon(call, n)
            assert sorted(results) == ["0", "1", "2", "3", "4"]
            assert counting.initializes == 2  # the first session and one renewal
            [new] = list(app.sessions.values())
            assert new.id != old.id
            # Notifications renew too: the next one reaches the new session.
            http.call(lambda: app.drop(new))
            http.run(app.wait_ended)
            await client.notify("notifications/roots/list_changed")
            assert counting.initializes == 3
            assert text(await client.call_tool("echo", {"text": "z"})) == "z"


@pytest.mark.usefixtures("websocket_client")
async def test_websocket_url() -> None:
    app = WebSocketApp(build_server())
    with running_server(app) as http, anyio.fail_after(LIMIT):
        async with Client(http.url.replace("http://", "ws://") + "/ws") as client:
            assert text(await client.call_tool("echo", {"text": "ws"})) == "ws"
            assert len(app.connections) == 1


class Recording:
    """Records the ``Authorization`` header of every HTTP request and WebSocket handshake."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.seen: list[tuple[str, bytes | None]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            headers = dict(scope["headers"])
            self.seen.append((scope.get("method", "WS"), headers.get(b"authorization")))
        await self.app(scope, receive, send)


@pytest.mark.usefixtures("websocket_client")
@pytest.mark.parametrize("kind", ["http", "sse", "ws"])
async def test_a_url_s_transports_send_the_client_s_headers(kind: str) -> None:
    server = build_server()
    makers: dict[str, Callable[[], ASGIApp]] = {
        "http": server.streamable_http_app,
        "sse": lambda: SSEApp(server),
        "ws": lambda: WebSocketApp(server),
    }
    app = makers[kind]()
    recording = Recording(app)
    path = {"http": "/mcp", "sse": "/sse", "ws": "/ws"}[kind]
    with running_server(recording) as http, anyio.fail_after(LIMIT):
        url = http.url.replace("http://", "ws://" if kind == "ws" else "http://") + path
        headers = {"Authorization": "Bearer t0ken"}
        async with Client(url, era="handshake", headers=headers) as client:
            assert text(await client.call_tool("echo", {"text": kind})) == kind
    assert recording.seen
    assert all(value == b"Bearer t0ken" for _, value in recording.seen), recording.seen


async def test_url_options_need_a_url() -> None:
    with pytest.raises(LocalProtocolError, match="are for a server URL"):
        Client(build_server(), headers={"Authorization": "Bearer t"})
