"""Streamable HTTP runs a POST's handler in the POST's own task: an instant answer is plain
JSON, a handler that has to wait still gets an SSE stream opened at once, and the peer's
cancellation, the end of the session, the in-flight cap and stateless mode keep working
(``basic/transports.mdx`` 2025-11-25, "Sending Messages to the Server")."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

from mcpkit.server import Server

from ._httpserver import RunningServer, running_server
from ._leakcheck import modern_body, modern_headers
from ._mcphttp import JSON_HEADERS, RawSession, call, events, messages_of, notification, request

pytestmark = pytest.mark.anyio

#: Bound on every wait for the server.
LIMIT = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server runs in its own thread


class Holds:
    """Tools that wait on the server's loop until the test releases them."""

    def __init__(self) -> None:
        self.release: dict[str, anyio.Event] = {}
        self.started: dict[str, threading.Event] = {}
        self.cancelled: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def flag(self, table: dict[str, threading.Event], key: str) -> threading.Event:
        with self._lock:
            return table.setdefault(key, threading.Event())

    async def wait_started(self, key: str) -> None:
        assert await anyio.to_thread.run_sync(self.flag(self.started, key).wait, LIMIT), key

    async def wait_cancelled(self, key: str) -> None:
        assert await anyio.to_thread.run_sync(self.flag(self.cancelled, key).wait, LIMIT), key

    def open(self, http: RunningServer, key: str) -> None:
        http.call(lambda: self.release[key].set())


HOLDS = Holds()


def build() -> Server:
    server = Server("inline-test", "1.0", max_in_flight=2)

    @server.tool()
    async def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool()
    async def boom() -> str:
        """Fail at once."""
        raise ValueError("boom")

    @server.tool()
    async def hold(key: str) -> str:
        """Wait until the test releases ``key``; note a cancellation."""
        release = HOLDS.release.setdefault(key, anyio.Event())
        HOLDS.flag(HOLDS.started, key).set()
        try:
            await release.wait()
        except anyio.get_cancelled_exc_class():
            HOLDS.flag(HOLDS.cancelled, key).set()
            raise
        return f"released {key}"

    return server


SERVER = build()


@pytest.fixture(scope="module")
def http() -> Iterator[RunningServer]:
    with running_server(SERVER.streamable_http_app(keepalive=60)) as server:
        yield server


def text_of(message: dict[str, Any]) -> str:
    text: str = message["result"]["content"][0]["text"]
    return text


async def test_instant_failure_is_plain_json(http: RunningServer) -> None:
    async with httpx.AsyncClient(timeout=LIMIT) as client:
        session = RawSession(client, http.url + "/mcp")
        await session.open()
        response = await session.post(call(2, "boom"))
        assert response.headers["content-type"] == "application/json"
        answer = response.json()
        assert answer["id"] == 2
        assert answer["result"]["isError"] is True
        unknown = await session.post(request(3, "no/such/method"))
        assert unknown.headers["content-type"] == "application/json"
        assert unknown.json()["error"]["code"] == -32601


async def test_waiting_handler_gets_a_stream_at_once(http: RunningServer) -> None:
    async with httpx.AsyncClient(timeout=LIMIT) as client:
        session = RawSession(client, http.url + "/mcp")
        await session.open()
        async with session.stream(call(2, "hold", key="stream")) as response:
            assert response.headers["content-type"] == "text/event-stream"
            it = aiter(events(response))
            priming = await anext(it)  # sent before the handler is done
            assert priming.data == b""
            assert priming.id is not None
            await HOLDS.wait_started("stream")
            HOLDS.open(http, "stream")
            rest = [json.loads(e.data) async for e in it if e.data]
        assert [m["id"] for m in rest] == [2]
        assert text_of(rest[0]) == "released stream"


async def test_cancelled_by_the_client_ends_the_stream_without_answer(
    http: RunningServer,
) -> None:
    async with httpx.AsyncClient(timeout=LIMIT) as client:
        session = RawSession(client, http.url + "/mcp")
        await session.open()
        async with session.stream(call(7, "hold", key="cancel")) as response:
            it = aiter(events(response))
            await anext(it)  # priming
            await HOLDS.wait_started("cancel")
            cancel = notification("notifications/cancelled", {"requestId": 7})
            assert (await session.post(cancel)).status_code == 202
            await HOLDS.wait_cancelled("cancel")
            assert [e async for e in it if e.data] == []  # the stream ends, no response
        # The session is healthy, and id 7 is free again.
        assert (
            text_of(
                await session.call(7, "tools/call", {"name": "echo", "arguments": {"text": "ok"}})
            )
            == "ok"
        )


async def test_delete_cancels_a_waiting_handler_and_releases_its_post(
    http: RunningServer,
) -> None:
    async with httpx.AsyncClient(timeout=LIMIT) as client:
        session = RawSession(client, http.url + "/mcp")
        await session.open()
        async with session.stream(call(2, "hold", key="delete")) as response:
            it = aiter(events(response))
            await anext(it)
            await HOLDS.wait_started("delete")
            deleted = await client.delete(session.url, headers=session.headers())
            assert deleted.status_code == 204
            await HOLDS.wait_cancelled("delete")
            assert [e async for e in it if e.data] == []


async def test_in_flight_cap_counts_handlers_running_in_their_posts(
    http: RunningServer,
) -> None:
    async with httpx.AsyncClient(timeout=LIMIT) as client:
        session = RawSession(client, http.url + "/mcp")
        await session.open()
        async with (
            session.stream(call(2, "hold", key="cap-a")) as first,
            session.stream(call(3, "hold", key="cap-b")) as second,
        ):
            await HOLDS.wait_started("cap-a")
            await HOLDS.wait_started("cap-b")
            busy = await session.post(call(4, "echo", text="x"))
            assert busy.json()["error"]["code"] == -32000  # max_in_flight=2
            HOLDS.open(http, "cap-a")
            HOLDS.open(http, "cap-b")
            answers = [
                json.loads(e.data)
                for response in (first, second)
                async for e in events(response)
                if e.data
            ]
        assert sorted(text_of(a) for a in answers) == ["released cap-a", "released cap-b"]


async def test_json_mode_waits_for_a_slow_handler() -> None:
    with running_server(SERVER.streamable_http_app(json_response=True)) as http:
        async with httpx.AsyncClient(timeout=LIMIT) as client:
            session = RawSession(client, http.url + "/mcp")
            await session.open()
            async with anyio.create_task_group() as tg:
                answers: list[httpx.Response] = []

                async def post() -> None:
                    answers.append(await session.post(call(2, "hold", key="json")))

                tg.start_soon(post)
                await HOLDS.wait_started("json")
                HOLDS.open(http, "json")
            assert answers[0].headers["content-type"] == "application/json"
            assert text_of(answers[0].json()) == "released json"


async def test_stateless_concurrent_posts() -> None:
    app = SERVER.streamable_http_app(stateless=True, json_response=True)
    with running_server(app) as http:
        url = http.url + "/mcp"
        async with httpx.AsyncClient(timeout=LIMIT) as client:
            results: dict[int, str] = {}

            async def post(rid: int, body: bytes) -> None:
                response = await client.post(url, content=body, headers=JSON_HEADERS)
                assert response.status_code == 200, response.text
                results[rid] = text_of(messages_of(response)[-1])

            async with anyio.create_task_group() as tg:
                # Every POST is its own session: ids may repeat across them.
                tg.start_soon(post, 100, call(1, "hold", key="stateless"))
                await HOLDS.wait_started("stateless")
                for rid in range(30):
                    tg.start_soon(post, rid, call(1, "echo", text=str(rid)))
                HOLDS.open(http, "stateless")
        assert results == {100: "released stateless", **{rid: str(rid) for rid in range(30)}}
        assert not app.sessions
        assert http.run(lambda: app.wait_ended(LIMIT)) is None


def standing_alone(modern: bool, rid: int, key: str) -> tuple[bytes, dict[str, str]]:
    """A POST of the ``hold`` tool that stands alone: stateless, or 2026-07-28."""
    if not modern:
        return call(rid, "hold", key=key), {**JSON_HEADERS, "mcp-protocol-version": "2025-11-25"}
    params = {"name": "hold", "arguments": {"key": key}}
    return modern_body(rid, "tools/call", params), modern_headers("tools/call", "hold")


@pytest.mark.parametrize("modern", [False, True], ids=["stateless", "2026-07-28"])
async def test_requests_standing_alone_are_capped_app_wide(modern: bool) -> None:
    """No session bounds them (max_in_flight is per session): the app does, with a 503
    that says so, and serves again once one of them ends."""
    app = SERVER.streamable_http_app(stateless=not modern, max_stateless_requests=2)
    keys = [f"capped-{modern}-{n}" for n in range(3)]
    with running_server(app) as http:
        url = http.url + "/mcp"
        async with httpx.AsyncClient(timeout=LIMIT) as client:
            answers: dict[str, httpx.Response] = {}

            async def post(key: str) -> None:
                body, headers = standing_alone(modern, 1, key)
                answers[key] = await client.post(url, content=body, headers=headers)

            async with anyio.create_task_group() as tg:
                for key in keys[:2]:
                    tg.start_soon(post, key)
                    await HOLDS.wait_started(key)
                await post(keys[2])  # a third, refused at once
                HOLDS.open(http, keys[0])
                HOLDS.open(http, keys[1])
            busy = answers[keys[2]]
            assert busy.status_code == 503
            assert busy.headers["retry-after"] == "1"
            error = busy.json()["error"]
            assert error["code"] == -32000
            assert "serving 2 stateless requests" in error["message"]
            assert [answers[key].status_code for key in keys[:2]] == [200, 200]
            async with anyio.create_task_group() as tg:  # room again: served
                tg.start_soon(post, keys[2])
                await HOLDS.wait_started(keys[2])
                HOLDS.open(http, keys[2])
            assert answers[keys[2]].status_code == 200


@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
async def test_stateless_request_abandoned_by_its_client_ends_the_handler(
    json_response: bool,
) -> None:
    """Stateless: an answer nobody can resume (SSE) or wait for again (JSON); when its
    client leaves, the handler's work is ended instead of finishing for no one."""
    key = f"abandoned-{json_response}"
    app = SERVER.streamable_http_app(stateless=True, json_response=json_response)
    with running_server(app) as http:
        async with httpx.AsyncClient(timeout=LIMIT) as client:
            session = RawSession(client, http.url + "/mcp")
            async with anyio.create_task_group() as tg:
                # (The POST's task is cancelled once the tool runs: httpx closes the
                # connection, as a client giving up on a call does.)
                tg.start_soon(session.post, call(1, "hold", key=key))
                await HOLDS.wait_started(key)
                tg.cancel_scope.cancel()
            await HOLDS.wait_cancelled(key)
            # The server goes on answering.
            answer = await client.post(
                session.url, content=call(2, "echo", text="still here"), headers=JSON_HEADERS
            )
            assert text_of(messages_of(answer)[-1]) == "still here"
        assert http.run(lambda: app.wait_ended(LIMIT)) is None
