"""Streamable HTTP server: SSE streams, resumption, modes and session lifetimes, over a
real socket on 127.0.0.1 (``basic/transports.mdx`` 2025-11-25: "Resumability and
Redelivery", "Multiple Connections", "Session Management")."""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

from ._http_testserver import GATES, build_server
from ._httpserver import RunningServer, running_server
from ._leakcheck import mcpkit_objects
from ._mcphttp import JSON_HEADERS, RawSession, call, events, initialize, messages_of, request

pytestmark = pytest.mark.anyio

SERVER = build_server()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server runs in its own thread


@pytest.fixture(scope="module")
def http() -> Iterator[RunningServer]:
    with running_server(SERVER.streamable_http_app(keepalive=60)) as server:
        yield server


def with_progress(rid: int) -> bytes:
    params = {"name": "progress", "arguments": {}, "_meta": {"progressToken": "p"}}
    return request(rid, "tools/call", params)


async def wait_gate(name: str) -> None:
    assert await anyio.to_thread.run_sync(GATES.get(name).wait, 10), name


# -- SSE answers --------------------------------------------------------------------------


async def test_related_messages_then_response_on_the_post_stream(http: RunningServer) -> None:
    async with httpx.AsyncClient() as client:
        session = RawSession(client, http.url + "/mcp")
        await session.open()
        body = request(
            2, "tools/call", {"name": "progress", "arguments": {}, "_meta": {"progressToken": "p"}}
        )
        response = await session.post(body)
        assert response.headers["content-type"] == "text/event-stream"
        assert response.headers["cache-control"].startswith("no-cache")
        kinds = [m.get("method", m.get("id")) for m in messages_of(response)]
        assert kinds == ["notifications/progress"] * 3 + [2]


@pytest.mark.parametrize(
    ("version", "primed"), [("2025-11-25", True), ("2025-06-18", False), ("2025-03-26", False)]
)
async def test_priming_event_only_for_2025_11_25(
    http: RunningServer, version: str, primed: bool
) -> None:
    async with httpx.AsyncClient() as client:
        session = RawSession(client, http.url + "/mcp")
        await session.open(version=version)
        # Progress makes the answer a stream (an instant answer is plain JSON).
        async with session.stream(with_progress(2)) as response:
            first = await anext(aiter(events(response)))
        assert (first.data == b"" and first.id is not None) is primed
        if primed:
            # SEP-1699: the priming event carries the reconnection delay too.
            raw = (await session.post(with_progress(3))).content
            assert raw.startswith(b"id: ")
            assert b"\nretry: 1000\n" in raw.split(b"\n\n")[0] + b"\n"


async def test_answered_at_once_is_plain_json(http: RunningServer) -> None:
    async with httpx.AsyncClient() as client:
        session = RawSession(client, http.url + "/mcp")
        await session.open()
        response = await session.post(request(2, "ping"))
        assert response.headers["content-type"] == "application/json"
        assert response.json() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        # A tool that answers without waiting (its handler runs in the POST's own task)
        # and sends nothing before its answer: JSON too, no stream to set up.
        response = await session.post(call(3, "progress"))
        assert response.headers["content-type"] == "application/json"
        assert response.json()["result"]["content"][0]["text"] == "progressed"


# -- resumability ---------------------------------------------------------------------------


async def test_server_closes_the_stream_and_the_client_resumes(http: RunningServer) -> None:
    """SEP-1699 polling: the server ends the POST's connection mid-call; the result
    arrives on the stream resumed with GET + Last-Event-ID."""
    async with httpx.AsyncClient() as client:
        session = RawSession(client, http.url + "/mcp")
        await session.open()
        async with session.stream(call(2, "poll", key="resume")) as response:
            seen = [event async for event in events(response)]
        await wait_gate("resume:closed")
        assert [e.data for e in seen] == [b""]  # the priming event, then the close
        last_id = seen[-1].id
        assert last_id is not None
        GATES.open("resume")
        async with session.stream(None, last_event_id=last_id) as resumed:
            assert resumed.status_code == 200
            replayed = [json.loads(e.data) async for e in events(resumed) if e.data]
        assert replayed[-1]["id"] == 2
        assert replayed[-1]["result"]["content"][0]["text"] == "polled resume"


async def test_disconnect_is_not_cancellation(http: RunningServer) -> None:
    """A client dropping its POST's connection leaves the work running; the response
    waits in the event store and is delivered on resumption (events after the
    ``Last-Event-ID`` only: the log event is not sent twice)."""
    async with httpx.AsyncClient() as client:
        session = RawSession(client, http.url + "/mcp")
        await session.open()
        async with session.stream(call(2, "hold", key="drop")) as response:
            iterator = aiter(events(response))
            priming = await anext(iterator)
            log = await anext(iterator)
            assert json.loads(log.data)["method"] == "notifications/message"
        # Connection dropped after the log event. The handler is still running.
        await wait_gate("drop:started")
        GATES.open("drop")
        async with session.stream(None, last_event_id=log.id or "") as resumed:
            replayed = [e async for e in events(resumed)]
        answers = [json.loads(e.data) for e in replayed if e.data]
        assert [a["id"] for a in answers] == [2]  # the log event is not sent twice
        assert priming.id is not None
        assert replayed[-1].id != priming.id


async def test_a_stream_written_to_the_end_can_still_be_resumed(http: RunningServer) -> None:
    """The server cannot tell a write that reached the client from one that went to a
    connection the client had already dropped (it learns of the disconnect later), so a
    stream it wrote to the end stays resumable: ``Last-Event-ID`` is what the client has,
    and it gets the rest (again, if it asks again), never a 400 and a lost response. Only
    the most recent such streams are kept (8 per session)."""
    async with httpx.AsyncClient() as client:
        session = RawSession(client, http.url + "/mcp")
        await session.open()
        raw = (await session.post(with_progress(2))).content
        first = raw.split(b"\n\n")[0]
        assert first.startswith(b"id: ")
        priming_id = first.split(b"\n")[0][4:].decode()
        for _ in range(2):
            async with session.stream(None, last_event_id=priming_id) as resumed:
                assert resumed.status_code == 200
                replayed = [json.loads(e.data) async for e in events(resumed) if e.data]
            assert [m.get("method", m.get("id")) for m in replayed] == [
                "notifications/progress"
            ] * 3 + [2]
        # Eight more streams written to the end push the first one out.
        for rid in range(3, 11):
            assert (await session.post(with_progress(rid))).status_code == 200
        gone = await client.get(
            session.url,
            headers=session.headers(accept="text/event-stream", last_event_id=priming_id),
        )
        assert gone.status_code == 400


async def test_replay_never_crosses_sessions(http: RunningServer) -> None:
    async with httpx.AsyncClient() as client:
        alice = RawSession(client, http.url + "/mcp")
        await alice.open()
        bob = RawSession(client, http.url + "/mcp")
        await bob.open()
        async with alice.stream(call(2, "poll", key="cross")) as response:
            seen = [event async for event in events(response)]
        await wait_gate("cross:closed")
        stolen = await client.get(
            bob.url, headers=bob.headers(accept="text/event-stream", last_event_id=seen[0].id or "")
        )
        assert stolen.status_code == 400
        GATES.open("cross")
        async with alice.stream(None, last_event_id=seen[0].id or "") as resumed:
            answers = [json.loads(e.data) async for e in events(resumed) if e.data]
        assert answers[-1]["id"] == 2


async def test_standalone_get_stream(http: RunningServer) -> None:
    """Messages unrelated to a request go on the GET stream; a new GET replaces a
    connection the client abandoned."""
    async with httpx.AsyncClient() as client:
        session = RawSession(client, http.url + "/mcp")
        await session.open()
        async with session.stream(None) as first:
            assert first.status_code == 200
            it = aiter(events(first))
            assert (await anext(it)).data == b""  # priming
            async with session.stream(None) as second:
                it2 = aiter(events(second))
                assert (await anext(it2)).data == b""
                # The first connection was ended by the second.
                assert [e async for e in it] == []
                http.call(lambda: SERVER.tool(name="dynamic")(_dynamic))
                message = json.loads((await anext(it2)).data)
                assert message["method"] == "notifications/tools/list_changed"
                http.call(lambda: SERVER.remove_tool("dynamic"))


async def _dynamic() -> str:
    return "added at run time"


# -- modes ------------------------------------------------------------------------------------


async def test_json_response_mode() -> None:
    app = SERVER.streamable_http_app(json_response=True)
    with running_server(app) as http:
        async with httpx.AsyncClient() as client:
            session = RawSession(client, http.url + "/mcp")
            await session.open(capabilities={"sampling": {}})
            response = await session.post(call(2, "progress"))
            assert response.headers["content-type"] == "application/json"
            assert response.json()["result"]["content"][0]["text"] == "progressed"
            # A server-to-client request needs a stream: without a GET stream it fails fast
            # (a tool error naming the problem), never a hang.
            answer = (await session.post(call(3, "ask", prompt="hi"))).json()
            assert answer["result"]["isError"] is True
            assert "GET stream" in answer["result"]["content"][0]["text"]


async def test_stateless_mode() -> None:
    app = SERVER.streamable_http_app(stateless=True)
    before = len(SERVER.sessions)
    with running_server(app) as http:
        url = http.url + "/mcp"
        async with httpx.AsyncClient() as client:
            # No initialize needed; no session id issued.
            response = await client.post(
                url, content=call(1, "echo", text="hi"), headers=JSON_HEADERS
            )
            assert response.status_code == 200, response.text
            assert "mcp-session-id" not in response.headers
            assert messages_of(response)[-1]["result"]["content"][0]["text"] == "hi"
            init = await client.post(url, content=initialize(), headers=JSON_HEADERS)
            assert init.status_code == 200
            assert "mcp-session-id" not in init.headers
            for method in ("GET", "DELETE"):
                refused = await client.request(method, url, headers={"accept": "text/event-stream"})
                assert refused.status_code == 405
            bad = await client.post(
                url,
                content=call(2, "echo", text="x"),
                headers={**JSON_HEADERS, "mcp-protocol-version": "1.0"},
            )
            assert bad.status_code == 400
            # Each POST's session ends with its answer (the server keeps none of them).
            for n in range(20):
                await client.post(url, content=call(10 + n, "echo", text="x"), headers=JSON_HEADERS)
            # Read on the server's loop: the last POST's task ends its session right after
            # writing the answer, which this thread may receive first.
            assert http.call(lambda: len(SERVER.sessions)) == before
            assert not app.sessions


async def test_sampling_on_the_post_stream(http: RunningServer) -> None:
    async with httpx.AsyncClient() as client:
        session = RawSession(client, http.url + "/mcp")
        await session.open(capabilities={"sampling": {}})
        async with session.stream(call(2, "ask", prompt="2+2?")) as response:
            it = aiter(events(response))
            event = await anext(it)
            while not event.data:
                event = await anext(it)
            asked = json.loads(event.data)
            assert asked["method"] == "sampling/createMessage"
            reply = {
                "jsonrpc": "2.0",
                "id": asked["id"],
                "result": {
                    "role": "assistant",
                    "content": {"type": "text", "text": "4"},
                    "model": "m",
                },
            }
            accepted = await session.post(json.dumps(reply).encode())
            assert accepted.status_code == 202
            final = json.loads((await anext(it)).data)
        assert final["result"]["content"][0]["text"] == "model said 4"


# -- lifetimes and memory ---------------------------------------------------------------------


async def test_thousand_abandoned_sessions_are_reclaimed() -> None:
    server = build_server()
    app = server.streamable_http_app(session_idle_timeout=3600, max_sessions=2000)
    with running_server(app) as http:
        url = http.url + "/mcp"
        async with httpx.AsyncClient() as client:
            # Traced from the start: a first round grows the server's containers (sets,
            # dicts, anyio's task tables) to their working size. Python reallocates those
            # tables as they churn; tracing the first round too means each reallocation
            # frees a traced table instead of looking like a new allocation.
            tracemalloc.start()
            try:
                for _ in range(1000):
                    await client.post(url, content=initialize(), headers=JSON_HEADERS)
                app.session_idle_timeout = 0.0
                http.call(app.sweep)
                http.run(app.wait_ended)
                app.session_idle_timeout = 3600
                http.call(gc.collect)
                baseline = tracemalloc.get_traced_memory()[0]
                objects = http.call(mcpkit_objects)
                for _ in range(1000):
                    response = await client.post(url, content=initialize(), headers=JSON_HEADERS)
                    assert response.status_code == 200
                assert len(app.sessions) == len(server.sessions) == 1000
                held = tracemalloc.get_traced_memory()[0] - baseline
                # Abandoned (never deleted): the idle sweep reclaims them.
                app.session_idle_timeout = 0.0
                assert http.call(app.sweep) == 1000
                http.run(app.wait_ended)
                assert app.sessions == {}
                assert not server.sessions
                http.call(gc.collect)
                left = tracemalloc.get_traced_memory()[0] - baseline
                assert http.call(mcpkit_objects) == objects  # not one mcpkit object kept
            finally:
                tracemalloc.stop()
        assert held > 1000 * 1024  # over 1 KiB per session was really held ...
        # ... and is given back: what remains is hash-table capacity (sets and dicts grow
        # by doubling and do not shrink) and caches such as the re module's. It does not
        # grow with the number of sessions (3,000 leave no more than 1,000; it varies from
        # 60 to 200 KiB between runs), so the bound is on a constant.
        assert left < 256 * 1024, (held, left)


async def test_client_dropping_mid_stream_leaves_the_server_healthy(http: RunningServer) -> None:
    async with httpx.AsyncClient() as client:
        session = RawSession(client, http.url + "/mcp")
        await session.open()
        async with session.stream(call(2, "hold", key="mid")) as response:
            await anext(aiter(events(response)))
        await wait_gate("mid:started")
        # Other requests and other sessions are unaffected.
        assert (await session.call(3, "ping"))["result"] == {}
        other = RawSession(client, http.url + "/mcp")
        await other.open()
        assert await other.call(2, "tools/call", {"name": "echo", "arguments": {"text": "ok"}})
        GATES.open("mid")
        deleted = await client.delete(session.url, headers=session.headers())
        assert deleted.status_code == 204


async def test_without_lifespan_the_app_starts_its_work_on_the_first_request() -> None:
    # Mounted where nobody runs its lifespan (a framework that does not forward it): the
    # first request starts the background work, so sessions are still served and ended.
    app = build_server().streamable_http_app()

    async def no_lifespan(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        await app(scope, receive, send)

    with running_server(no_lifespan) as http, anyio.fail_after(10):
        async with httpx.AsyncClient() as client:
            session = RawSession(client, http.url + "/mcp")
            await session.open()
            answer = await session.post(call(2, "echo", text="lazy"))
            assert messages_of(answer)[-1]["result"]["content"][0]["text"] == "lazy"
            # Ending sessions needs that background work too: it finishes, and the id goes.
            http.call(app.close_all)
            http.run(app.wait_ended)
            assert http.call(lambda: len(app.sessions)) == 0
            expired = await session.post(call(3, "echo", text="late"))
            assert expired.status_code == 404
