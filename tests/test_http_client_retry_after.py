"""``Retry-After`` on a refusal reaches the caller as ``retry_after`` (seconds, at most a
day) on the error, from the Streamable HTTP and the legacy HTTP+SSE clients: a 503 at a
server's session cap or a gateway's 429 says when to come back."""

from __future__ import annotations

import contextlib
import email.utils
import json
import time

import anyio
import pytest

from mcpkit.aio import DeliveryFailed
from mcpkit.client import Client
from mcpkit.exceptions import MessageNotDelivered, TransportError
from mcpkit.server import LowLevelServer, SSEApp
from mcpkit.transports import SSETransport, StreamableHTTPTransport

from ._fake_mcp_http import VERSION, FakeMCPServer, reply, rpc_error, sse, stream
from ._httpserver import running_server

pytestmark = pytest.mark.anyio

LIMIT = 10.0


def in_a_minute() -> str:
    return email.utils.formatdate(time.time() + 60, usegmt=True)


@pytest.mark.parametrize(
    ("status", "header", "low", "high"),
    [
        (503, "5", 5, 5),
        (429, "0", 0, 0),
        (503, " 120 ", 120, 120),
        (503, "99999999999", 86400, 86400),  # at most a day
        (503, "in_a_minute", 55, 60),  # an HTTP date
        (503, "Wed, 21 Oct 2015 07:28:00 GMT", 0, 0),  # past: now
        (503, "soon", None, None),
        (503, "-5", None, None),
        (503, None, None, None),
    ],
    ids=["seconds", "zero", "spaces", "capped", "date", "past-date", "word", "negative", "absent"],
)
async def test_streamable_http_refusals_carry_retry_after(
    scripted_peer: tuple[FakeMCPServer, str],
    status: int,
    header: str | None,
    low: float | None,
    high: float | None,
) -> None:
    fake, url = scripted_peer
    value = in_a_minute() if header == "in_a_minute" else header
    headers = [] if value is None else [("retry-after", value)]
    fake.script("tools/list", reply(status, rpc_error(None, -32000, "busy"), headers=headers))
    with anyio.fail_after(LIMIT):
        async with Client(StreamableHTTPTransport(url), timeout=LIMIT) as client:
            with pytest.raises(MessageNotDelivered) as info:
                await client.list_tools()
            await client.ping()  # only that request failed
    assert info.value.status == status
    if low is None:
        assert info.value.retry_after is None
    else:
        assert info.value.retry_after is not None
        assert low <= info.value.retry_after <= (high if high is not None else low)


async def test_legacy_sse_refusal_at_the_session_cap_carries_retry_after() -> None:
    app = SSEApp(LowLevelServer("t", "1"), max_sessions=1)
    with running_server(app) as server, anyio.fail_after(LIMIT):
        async with Client(SSETransport(server.url + "/sse"), timeout=LIMIT) as first:
            await first.ping()
            second = Client(SSETransport(server.url + "/sse"), timeout=LIMIT)
            async with contextlib.AsyncExitStack() as stack:
                with pytest.raises(TransportError) as info:
                    await stack.enter_async_context(second)  # the stream is refused
    assert info.value.status == 503
    assert info.value.retry_after == 5


@pytest.mark.parametrize(
    ("header", "reconnect_max", "low", "high"),
    [("1", 5.0, 0.95, 4.0), ("3600", 0.2, 0.15, 2.0)],
    ids=["honoured", "capped-by-reconnect-max"],
)
async def test_the_listening_stream_waits_out_retry_after(
    scripted_peer: tuple[FakeMCPServer, str],
    header: str,
    reconnect_max: float,
    low: float,
    high: float,
) -> None:
    """A GET refused with 503 and Retry-After is tried again no sooner than asked (the
    backoff alone would be 10 ms), and never later than ``reconnect_max``."""
    fake, url = scripted_peer
    fake.script("GET", reply(503, b"", content_type=None, headers=[("retry-after", header)]))
    fake.script("GET", stream(end="hold"))
    transport = StreamableHTTPTransport(url, reconnect_initial=0.01, reconnect_max=reconnect_max)
    with anyio.fail_after(LIMIT):
        async with Client(transport, timeout=LIMIT) as client:
            first, second = await fake.wait_seen("GET", count=2)
            await client.ping()
    assert low <= second.at - first.at <= high


async def test_resuming_an_answer_waits_out_retry_after_and_reports_it(
    scripted_peer: tuple[FakeMCPServer, str],
) -> None:
    """A request's broken answer stream is resumed; the GETs refused with 503 and
    Retry-After are tried again no sooner than asked, and the request's failure says when
    the server would take it."""
    fake, url = scripted_peer
    fake.script("ping", stream(sse(event_id="e-1"), end="drop"))
    busy = reply(503, b"busy", content_type="text/plain", headers=[("retry-after", "1")])
    fake.script("GET", busy, busy)
    transport = StreamableHTTPTransport(
        url, reconnect_initial=0.01, reconnect_max=5.0, max_reconnect_attempts=2
    )
    initialize = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": VERSION,
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        }
    ).encode()
    with anyio.fail_after(LIMIT):
        async with transport.connect() as channel:  # (raw: no listening GET)
            await channel.send(initialize)
            await channel.receive()
            await channel.send(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
            item = await channel.receive()
    assert isinstance(item, DeliveryFailed)
    assert isinstance(item.error, MessageNotDelivered)
    assert item.error.status == 503
    assert item.error.retry_after == 1
    first, second = fake.requests("GET")
    assert 0.95 <= second.at - first.at <= 4.0
