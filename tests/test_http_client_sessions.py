"""The Streamable HTTP client when the server polls (2025-11-25 SSE polling, SEP-1699:
it may close a stream's connection after any event and expects the client back after
``retry``) and when the server forgets the session on a GET stream (404), end to end
over real sockets on 127.0.0.1 against the scripted fake and against mcpkit's server.

Rules (``basic/transports.mdx`` 2025-11-25, "Resumability and Redelivery", "Session
Management"): a GET the server answers and ends cleanly is a poll, not a failure; a
session the server forgot is replaced by a new one before the next message goes out
(never a message without its session); a request the server has seen is not sent again
in a new session (it may have acted on it).
"""

from __future__ import annotations

import itertools

import anyio
import httpx
import pytest

from mcpkit.client import Client
from mcpkit.exceptions import RequestTimeoutError, SessionExpiredError
from mcpkit.server import LowLevelServer, RequestContext
from mcpkit.transports import StreamableHTTPTransport
from mcpkit.types import Tool

from ._fake_mcp_http import SESSION_ID, Exchange, FakeMCPServer, reply, rpc_result, sse, stream
from ._httpserver import running_server
from .test_http_client import (
    INITIALIZE,
    INITIALIZED,
    LIMIT,
    NOTE,
    failure,
    initialized,
    peer,
    request,
    shared_peer,
    state,
    transport,
)

__all__ = ["peer", "shared_peer"]  # fixtures, shared with test_http_client

pytestmark = pytest.mark.anyio


# -- polling: a clean end is not a failed attempt --------------------------------------


async def test_a_resumed_stream_that_the_server_ends_cleanly_is_polled_again(
    peer: tuple[FakeMCPServer, str],
) -> None:
    fake, url = peer
    fake.script("ping", stream(sse(event_id="1", retry=1), end="drop"))
    # Four polls that carry nothing, then the answer: twice the attempt budget.
    fake.script(
        "GET",
        *[stream() for _ in range(4)],
        stream(sse(rpc_result(1, {}), event_id="2")),
    )
    with anyio.fail_after(LIMIT):
        async with transport(url, max_reconnect_attempts=2).connect() as channel:
            await channel.send(INITIALIZE)
            await channel.receive()
            await channel.send(request(1, "ping"))
            answer = await channel.receive()
    assert answer == rpc_result(1, {})
    assert len(fake.requests("GET")) == 5


async def test_a_resumed_stream_that_breaks_still_uses_up_the_attempts(
    peer: tuple[FakeMCPServer, str],
) -> None:
    fake, url = peer
    fake.script("ping", stream(sse(event_id="1", retry=1), end="drop"))
    fake.script("GET", *[stream(end="drop") for _ in range(3)])
    with anyio.fail_after(LIMIT):
        async with transport(url, max_reconnect_attempts=2).connect() as channel:
            await channel.send(INITIALIZE)
            await channel.receive()
            await channel.send(request(1, "ping"))
            error = await failure(channel, 1)
    assert "2 attempts" in str(error)
    assert len(fake.requests("GET")) == 2


async def test_the_standalone_stream_keeps_polling(peer: tuple[FakeMCPServer, str]) -> None:
    fake, url = peer
    fake.script(
        "GET",
        *[stream(sse(event_id=f"g{i}", retry=1)) for i in range(4)],
        stream(sse(NOTE, event_id="g4"), end="hold"),
    )
    with anyio.fail_after(LIMIT):
        async with transport(url, max_reconnect_attempts=2).connect() as channel:
            await initialized(channel)
            assert await channel.receive() == NOTE
    resumed_from = [get.headers.get("last-event-id") for get in fake.requests("GET")]
    assert resumed_from == [None, "g0", "g1", "g2", "g3"]


async def test_reconnections_are_at_least_50_ms_apart_whatever_retry_says(
    peer: tuple[FakeMCPServer, str],
) -> None:
    fake, url = peer
    fake.script(
        "GET",
        *[stream(sse(event_id=f"g{i}", retry=0)) for i in range(3)],
        stream(sse(NOTE, event_id="g3"), end="hold"),
    )
    with anyio.fail_after(LIMIT):
        async with transport(url, reconnect_max=0.0).connect() as channel:
            await initialized(channel)
            assert await channel.receive() == NOTE
    times = [get.at for get in fake.requests("GET")]
    assert len(times) == 4
    assert all(later - earlier >= 0.05 for earlier, later in itertools.pairwise(times)), times


# -- a session forgotten on a GET stream -------------------------------------------------


async def test_after_a_404_on_the_get_stream_messages_fail_as_expired_until_a_new_session(
    peer: tuple[FakeMCPServer, str],
) -> None:
    fake, url = peer
    fake.script("GET", reply(404, b"", content_type=None))
    with anyio.fail_after(LIMIT):
        async with transport(url).connect() as channel:
            # The GET is answered before send() returns (the client waits for it).
            await initialized(channel)
            assert state(channel) == (None, None)
            posts = len(fake.requests("POST"))
            await channel.send(request(1, "ping"))
            error = await failure(channel, 1)
            assert isinstance(error, SessionExpiredError)
            with pytest.raises(SessionExpiredError):
                await channel.send(NOTE)
            # Nothing went out without a session (the server would answer 400).
            assert len(fake.requests("POST")) == posts
            # A new initialize starts a new session, and messages flow again.
            await channel.send(INITIALIZE)
            await channel.receive()
            assert state(channel)[0] == SESSION_ID
            await channel.send(INITIALIZED)
            await channel.send(request(2, "ping"))
            assert isinstance(await channel.receive(), bytes)
    last = fake.requests("POST", rpc="ping")[-1]
    assert last.headers["mcp-session-id"] == SESSION_ID


async def test_a_server_that_forgets_every_session_is_not_renewed_in_a_loop(
    peer: tuple[FakeMCPServer, str],
) -> None:
    """Every request after initialize meets 404: each call starts one new session, then
    fails with SessionExpiredError (it does not renew again and again)."""
    fake, url = peer
    fake.script("ping", *[reply(404, b"", content_type=None)] * 4)
    with anyio.fail_after(LIMIT):
        async with Client(transport(url), era="handshake") as client:
            # (the second call's first try does not go out: the session is known lost)
            for calls, pings in ((1, 2), (2, 3)):
                with pytest.raises(SessionExpiredError):
                    await client.ping()
                assert len(fake.requests("POST", "initialize")) == 1 + calls
                assert len(fake.requests("POST", "ping")) == pings


# -- against mcpkit's own server -----------------------------------------------------------


def polling_server() -> LowLevelServer:
    server = LowLevelServer("polling", "1.0")

    async def shed(ctx: RequestContext, arguments: dict[str, object]) -> str:
        # Work, dropping the connection three times on the way; the answer must arrive.
        for _ in range(3):
            await anyio.sleep(0.02)  # the work (the stream opens at the first wait)
            ctx.close_sse_stream(retry_ms=10)
        return "done"

    async def echo(ctx: RequestContext, arguments: dict[str, object]) -> str:
        return str(arguments.get("text"))

    server.add_tool(Tool(name="shed", input_schema={"type": "object"}), shed)
    server.add_tool(Tool(name="echo", input_schema={"type": "object"}), echo)
    return server


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_a_tool_that_sheds_its_connection_is_answered() -> None:
    app = polling_server().streamable_http_app()
    with running_server(app) as server:
        url = server.url + "/mcp"
        with anyio.fail_after(LIMIT):
            async with Client(
                StreamableHTTPTransport(url, max_reconnect_attempts=1), era="handshake"
            ) as client:
                result = await client.call_tool("shed", {})
    assert result.content[0].text == "done"  # type: ignore[union-attr]


async def test_a_session_ended_by_someone_else_is_renewed_for_the_next_calls() -> None:
    app = polling_server().streamable_http_app()
    with running_server(app) as server:
        url = server.url + "/mcp"
        with anyio.fail_after(LIMIT):
            async with Client(
                StreamableHTTPTransport(url, reconnect_initial=0.01), era="handshake"
            ) as client:
                (old,) = app.sessions
                async with httpx.AsyncClient() as other:
                    ended = await other.delete(
                        url,
                        headers={"Mcp-Session-Id": old, "MCP-Protocol-Version": "2025-11-25"},
                    )
                assert ended.status_code == 204
                # The standalone stream ends with the session; whether the client learns
                # of the 404 there or on the next POST, both calls are answered.
                for text in ("one", "two"):
                    result = await client.call_tool("echo", {"text": text})
                    assert result.content[0].text == text  # type: ignore[union-attr]
                (new,) = app.sessions
                assert new != old


# -- the handshake's notification within the client's timeout ---------------------------


async def test_an_unanswered_initialized_notification_is_bounded_by_the_client_timeout(
    peer: tuple[FakeMCPServer, str],
) -> None:
    """The server takes notifications/initialized and never answers: connecting fails
    after the client's timeout (it waited for the transport's own 30 s)."""
    fake, url = peer

    async def hold(ex: Exchange) -> None:
        await ex.wait_disconnect()

    fake.script("notifications/initialized", hold)
    with anyio.fail_after(LIMIT):
        with pytest.raises(RequestTimeoutError, match="notifications/initialized"):
            async with Client(url, era="handshake", timeout=0.3):
                pytest.fail("connected although notifications/initialized was never answered")
