"""Streamable HTTP: requests at the end of a session, and what the session's end leaves.

Session Management (``basic/transports.mdx`` 2025-03-26 .. 2025-11-25): once a session is
terminated the server MUST answer requests carrying its id with 404, even one whose body
was still arriving when it ended, or that was running and had no answer yet (JSON mode:
202 is only for notifications and responses). A request still being handled keeps its
session from idle expiry, even after its POST is gone (a batch's handlers run in tasks of
their own): a disconnect is not a cancellation, and its answer waits to be resumed.
``close_sse_stream`` (SSE polling) is for 2025-11-25 clients only: older ones get no event
id before the answer, so a closed stream could never be resumed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Final

import anyio
import httpx
import pytest

from mcpkit.server import RequestContext, Server, StreamableHTTPApp

from ._httpserver import RunningServer, running_server
from ._mcphttp import RawSession, call, events, messages_of, parse_sse

pytestmark = pytest.mark.anyio

TIMEOUT: Final = 10.0


class Gates:
    """Threading events the tools wait on and report through (the server runs in a
    thread of its own)."""

    def __init__(self) -> None:
        self._events: dict[str, threading.Event] = {}
        self.ran: list[str] = []
        self.closed: dict[str, bool] = {}

    def __getitem__(self, name: str) -> threading.Event:
        return self._events.setdefault(name, threading.Event())

    async def wait(self, name: str) -> None:
        with anyio.fail_after(TIMEOUT):
            await anyio.to_thread.run_sync(self[name].wait, abandon_on_cancel=True)


def build(gates: Gates) -> Server:
    server = Server("ending", "1.0")

    @server.tool()
    async def echo(text: str) -> str:
        gates.ran.append(text)
        return text

    @server.tool()
    async def hold(ctx: RequestContext, key: str) -> str:
        await ctx.log("info", f"holding {key}")  # an event with an id goes out first
        gates[f"{key} started"].set()
        await anyio.to_thread.run_sync(gates[key].wait, TIMEOUT, abandon_on_cancel=True)
        gates[f"{key} finished"].set()
        return f"released {key}"

    @server.tool()
    async def shed(ctx: RequestContext, key: str) -> str:
        gates.closed[key] = ctx.close_sse_stream(retry_ms=10)
        return f"shed {key}"

    return server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side; the server runs in its own thread


@pytest.fixture
def gates() -> Gates:
    return Gates()


@pytest.fixture
def served(gates: Gates) -> Iterator[tuple[StreamableHTTPApp, RunningServer]]:
    app = build(gates).streamable_http_app(session_idle_timeout=None)
    with running_server(app) as http:
        yield app, http


async def test_a_post_whose_session_ends_while_its_body_arrives_gets_404(
    served: tuple[StreamableHTTPApp, RunningServer], gates: Gates
) -> None:
    _, http = served
    url = http.url + "/mcp"
    async with httpx.AsyncClient() as client:
        session = RawSession(client, url)
        await session.open()
        body = call(2, "echo", text="after the end")
        head = "".join(
            f"{name}: {value}\r\n"
            for name, value in {
                "Host": f"127.0.0.1:{http.port}",
                **session.headers(),
                "Content-Length": str(len(body)),
                "Expect": "100-continue",
            }.items()
        )
        with anyio.fail_after(TIMEOUT):
            stream = await anyio.connect_tcp("127.0.0.1", http.port)
            async with stream:
                await stream.send(f"POST /mcp HTTP/1.1\r\n{head}\r\n".encode())
                # uvicorn says "100 Continue" when the app first asks for the body: the
                # session was found, and the POST waits for its body.
                assert (await stream.receive()).startswith(b"HTTP/1.1 100 Continue")
                ended = await client.delete(url, headers=session.headers())
                assert ended.status_code == 204
                await stream.send(body)
                answer = b""
                while b"\r\n\r\n" not in answer:
                    answer += await stream.receive()
    assert answer.startswith(b"HTTP/1.1 404 "), answer[:200]
    assert gates.ran == []  # nothing ran on the ended session


async def test_json_mode_a_running_request_whose_session_ends_gets_404(gates: Gates) -> None:
    app = build(gates).streamable_http_app(json_response=True, session_idle_timeout=None)
    with running_server(app) as http:
        url = http.url + "/mcp"
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:
            session = RawSession(client, url)
            await session.open()
            async with anyio.create_task_group() as tg:
                answers: list[httpx.Response] = []

                async def post() -> None:
                    answers.append(await session.post(call(2, "hold", key="json")))

                tg.start_soon(post)
                await gates.wait("json started")
                ended = await client.delete(url, headers=session.headers())
                assert ended.status_code == 204
    (answer,) = answers
    assert answer.status_code == 404, (answer.status_code, answer.text)
    assert answer.json()["error"]["code"] == -32600


async def test_a_running_batch_request_keeps_its_session_after_its_post_is_gone(
    served: tuple[StreamableHTTPApp, RunningServer], gates: Gates
) -> None:
    app, http = served
    url = http.url + "/mcp"
    async with httpx.AsyncClient(timeout=TIMEOUT) as client:
        session = RawSession(client, url)
        await session.open(version="2025-03-26")
        sid = session.session_id
        assert sid is not None
        batch = b"[" + call(2, "hold", key="batch") + b"]"
        async with session.stream(batch) as response:
            first = await anext(events(response))  # the log event, with its id
        assert first.id is not None

        async def requests_closed() -> None:
            # Bounded wait, on the server's loop, for the session's HTTP requests to have
            # ended on the server's side too (the POST: its handler runs on in a task of
            # its own). Nothing signals a request's end but the session's count of open
            # requests, so it is polled.
            with anyio.fail_after(TIMEOUT):
                while app.sessions[sid].connections:  # noqa: ASYNC110
                    await anyio.sleep(0.01)

        http.run(requests_closed)
        # Every session counts as idle past a zero timeout, except one still working.
        http.call(lambda: setattr(app, "session_idle_timeout", 0.0))
        assert http.call(app.sweep) == 0
        assert http.call(lambda: sid in app.sessions)
        gates["batch"].set()
        await gates.wait("batch finished")
        async with session.stream(None, last_event_id=first.id) as resumed:
            assert resumed.status_code == 200
            replayed = parse_sse(await resumed.aread())
        assert any(b"released batch" in event.data for event in replayed), replayed
        http.run(requests_closed)  # the resuming GET, as the POST above
        # Done and idle: the next sweep ends it.
        assert http.call(app.sweep) == 1


@pytest.mark.parametrize(
    ("version", "closes"), [("2025-03-26", False), ("2025-06-18", False), ("2025-11-25", True)]
)
async def test_close_sse_stream_is_for_2025_11_25_clients(
    served: tuple[StreamableHTTPApp, RunningServer], gates: Gates, version: str, closes: bool
) -> None:
    _, http = served
    async with httpx.AsyncClient(timeout=TIMEOUT) as client:
        session = RawSession(client, http.url + "/mcp")
        await session.open(version=version)
        async with session.stream(call(2, "shed", key=version)) as response:
            await response.aread()
        assert gates.closed[version] is closes
        if not closes:  # the answer came on the POST itself
            (message,) = messages_of(response)
            assert message["result"]["content"][0]["text"] == f"shed {version}"
