"""A server shutting down (``close_all()``, which ``mcpkit run`` and ``serve_http`` call
when shutdown begins) with requests still running: each is answered at once with a clear
error (a 503 for a JSON answer, the last event of a streamed one), never left hanging until
the ASGI server's grace period ends (then a bare 500), cut off a stream without an answer
(the client then retried a server going away), nor answered 404 (which sends a client off
to open a new session with a server going away)."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

from mcpkit.client import Client
from mcpkit.exceptions import MCPError, RPCError
from mcpkit.server import RequestContext, Server, StreamableHTTPApp

from ._http_testserver import Gates
from ._httpserver import RunningServer, running_server
from ._mcphttp import RawSession, call, messages_of

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

    @server.tool()
    async def talk_then_block(ctx: RequestContext) -> str:
        """Log (the answer becomes a stream), signal that it runs, wait until cancelled."""
        await ctx.info("working")
        gates.open("talking")
        await anyio.sleep_forever()
        return "never"

    @server.tool()
    async def stubborn() -> str:
        """Signal that it runs (and has to wait: the answer is a stream), then ignore its
        cancellation until the test lets it go."""
        gates.open("stubborn")
        while True:
            try:
                await gates.wait("let go")
            except anyio.get_cancelled_exc_class():
                gates.open("cancelled")
                continue  # (misbehaving on purpose)
            return "late"

    return server


# (mode, app options, client era). A JSON answer becomes the 503 with the request's
# JSON-RPC error (it had no id: the client reported a failed delivery); an answer on an
# SSE stream becomes the same error, the stream's last event (it was cut without one: the
# client then said the session had ended, or, the server being gone, that resuming the
# stream failed, seconds later).
MODES: list[tuple[str, dict[str, Any], str]] = [
    ("2026-07-28", {}, "2026-07-28"),
    ("stateful json", {"json_response": True}, "handshake"),
    ("stateless json", {"json_response": True, "stateless": True}, "handshake"),
    ("stateful sse", {}, "handshake"),
    ("stateless sse", {"stateless": True}, "handshake"),
]


@pytest.mark.parametrize(("options", "era"), [m[1:] for m in MODES], ids=[m[0] for m in MODES])
async def test_a_running_request_fails_at_once_when_the_server_shuts_down(
    options: dict[str, Any], era: str
) -> None:
    gates = Gates()
    app = StreamableHTTPApp(blocking_server(gates), **options)
    with running_server(app) as http, anyio.fail_after(LIMIT):
        failure = await shut_down_during(http, app, gates, era, "block", {"key": "started"})
        # The request's own answer (a failed call, not a failed delivery: a client must
        # not take it for a request that never arrived), in every mode.
        assert isinstance(failure, RPCError), repr(failure)
        assert failure.code == -32603
        assert SHUTTING_DOWN in str(failure)


@pytest.mark.parametrize("era", ["2026-07-28", "handshake"])
async def test_a_streaming_answer_ends_with_the_error(era: str) -> None:
    # A handler that has emitted a message answers on a stream in every mode (2026-07-28
    # included); the stream's last event is the error.
    gates = Gates()
    app = StreamableHTTPApp(blocking_server(gates))
    with running_server(app) as http, anyio.fail_after(LIMIT):
        failure = await shut_down_during(http, app, gates, era, "talk_then_block", {}, "talking")
        assert isinstance(failure, RPCError), repr(failure)
        assert SHUTTING_DOWN in str(failure)


async def shut_down_during(
    http: RunningServer,
    app: StreamableHTTPApp,
    gates: Gates,
    era: str,
    tool: str,
    arguments: dict[str, Any],
    gate: str | None = None,
) -> MCPError:
    """Call ``tool`` (with info logs asked for), shut the app down once ``gate`` (by
    default the ``key`` argument, or the tool's name) is open, and return what the call
    failed with."""
    async with Client(http.url + "/mcp", era=era) as client:  # type: ignore[arg-type]
        await client.set_logging_level("info")
        failure: list[MCPError] = []

        async def call() -> None:
            try:
                await client.call_tool(tool, arguments, timeout=LIMIT)
            except MCPError as exc:
                failure.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await gates.wait(gate or arguments.get("key", tool))
            http.call(app.close_all)
    [error] = failure
    return error


async def test_a_handler_ignoring_its_cancellation_still_gets_its_stream_answered() -> None:
    # Its answer is given once the session's end has waited out the handler (the
    # endpoint's stop grace), rather than left off a stream that then ends; the
    # handler's late result goes nowhere.
    gates = Gates()
    app = StreamableHTTPApp(blocking_server(gates))
    with running_server(app) as http:
        try:
            with anyio.fail_after(LIMIT):
                failure = await shut_down_during(http, app, gates, "handshake", "stubborn", {})
            assert gates.get("cancelled").is_set()  # (it was, and went on)
            assert SHUTTING_DOWN in str(failure)
        finally:
            gates.open("let go")  # (before the server stops: it waits for the handler)


# The modes whose answer is a JSON body (a 2026-07-28 handler that emits nothing
# answers with JSON too): on asyncio the handler runs in the POST's own task.
JSON_MODES = [m for m in MODES if m[0] != "stateful sse" and m[0] != "stateless sse"]


@pytest.mark.parametrize(
    ("options", "era"), [m[1:] for m in JSON_MODES], ids=[m[0] for m in JSON_MODES]
)
async def test_a_json_answer_is_not_held_by_a_handler_ignoring_its_cancellation(
    options: dict[str, Any], era: str
) -> None:
    # The handler runs in the task that answers the POST: the session's end answers for
    # it (the POST waited for as long as the handler ran, here until the test ended).
    gates = Gates()
    app = StreamableHTTPApp(blocking_server(gates), **options)
    with running_server(app) as http:
        try:
            with anyio.fail_after(LIMIT):
                failure = await shut_down_during(http, app, gates, era, "stubborn", {})
            assert isinstance(failure, RPCError), repr(failure)
            assert (failure.code, failure.message) == (-32603, SHUTTING_DOWN)
            assert not gates.get("let go").is_set()  # (answered while it still ran)
        finally:
            gates.open("let go")  # (before the server stops: it waits for the handler)


async def test_a_deleted_session_answers_its_json_post_at_once_with_404() -> None:
    # DELETE ends the session while a handler ignoring its cancellation runs: its POST is
    # answered as any request of an ended session is (404), then, not when the handler
    # gives up; the handler's late result goes nowhere, and the server serves on.
    gates = Gates()
    app = StreamableHTTPApp(blocking_server(gates), json_response=True)
    with running_server(app) as http:
        try:
            async with httpx.AsyncClient(timeout=LIMIT) as client:
                session = RawSession(client, http.url + "/mcp")
                await session.open()
                answers: list[httpx.Response] = []

                async def post() -> None:
                    answers.append(await session.post(call(7, "stubborn")))

                with anyio.fail_after(LIMIT):
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(post)
                        await gates.wait("stubborn")
                        deleted = await client.delete(session.url, headers=session.headers())
                        assert deleted.status_code == 204, deleted.text
                [response] = answers
                assert response.status_code == 404, response.text
                assert "unknown or expired session" in response.json()["error"]["message"]
                assert not gates.get("let go").is_set()
                gates.open("let go")
                fresh = RawSession(client, http.url + "/mcp")
                await fresh.open()
                listed = await fresh.call(8, "tools/list")
                assert "stubborn" in [tool["name"] for tool in listed["result"]["tools"]]
        finally:
            gates.open("let go")


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_in_process_a_streamed_answer_ends_with_the_shutdown_error(backend: str) -> None:
    # On trio every handler has a task (and cancel scope) of its own, on asyncio the
    # POST's; either way its stream's last event answers the request.
    gates = Gates()
    app = StreamableHTTPApp(blocking_server(gates))

    async def main() -> None:
        with anyio.fail_after(LIMIT):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, timeout=LIMIT) as http:
                session = RawSession(http, "http://127.0.0.1/mcp")
                await session.open()
                answers: list[httpx.Response] = []

                async def send() -> None:
                    answers.append(await session.post(call(7, "block", key="k")))

                async with anyio.create_task_group() as tg:
                    tg.start_soon(send)
                    await gates.wait("k")
                    app.close_all()
        [response] = answers
        assert response.headers["content-type"].startswith("text/event-stream")
        [answer] = [m for m in messages_of(response) if m.get("id") == 7]
        assert answer["error"] == {"code": -32603, "message": SHUTTING_DOWN}

    anyio.run(main, backend=backend)
