"""What a peer gets wrong is answered every time, but logged within a bound: a peer that
sends garbage in a loop wrote one warning per message (over stdio, 220 MB of log in 20 s,
``aio/_lograte.py``). A burst is logged, then about one line per second; the count of the
lines held back is given by the next line let through, or when the connection ends."""

from __future__ import annotations

import logging
import re
import time

import anyio
import pytest

from mcpkit.aio import Endpoint, memory_channel_pair
from mcpkit.aio._lograte import PeerLogLimiter
from mcpkit.server import LowLevelServer

from ._wire import wire_to

pytestmark = pytest.mark.anyio

BAD_LINES = 500
_SUPPRESSED = re.compile(r"(\d+) similar lines")


def _held_back(records: list[logging.LogRecord]) -> int:
    found = (_SUPPRESSED.search(r.getMessage()) for r in records)
    return sum(int(m.group(1)) for m in found if m is not None)


async def test_a_flood_of_bad_messages_is_answered_in_full_and_logged_in_bounds(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.WARNING, logger="mcpkit.aio")
    async with wire_to(LowLevelServer("s")) as wire:
        for n in range(BAD_LINES):
            await wire.channel.send(b'{"jsonrpc": "2.0", "id": %d, "method": 7}' % n)
            answer = await wire.read()  # every one is still answered, with its id
            assert (answer["id"], answer["error"]["code"]) == (n, -32600)
        assert "result" in await wire.call("after", "ping")  # and the connection goes on
        warnings = [r for r in caplog.records if r.name == "mcpkit.aio"]
        assert 20 <= len(warnings) < 40  # the burst, and no more than the refill meanwhile
        # Nothing is lost from the count: the next line let through gives it.
        later = time.monotonic() + 5
        monkeypatch.setattr("mcpkit.aio._rate.time.monotonic", lambda: later)
        await wire.channel.send(b'{"jsonrpc": "2.0", "id": "last", "method": 7}')
        assert (await wire.read())["id"] == "last"
    about = [r for r in caplog.records if "method must be a string" in r.getMessage()]
    assert len(about) + _held_back(about) == BAD_LINES + 1


async def test_a_servers_connections_share_one_bound(caplog: pytest.LogCaptureFixture) -> None:
    # Each connection had a burst of its own: a client opening connections in a loop (25
    # bad frames each) wrote 10,600 lines a second.
    caplog.set_level(logging.WARNING, logger="mcpkit.aio")
    server = LowLevelServer("s")
    for _ in range(30):
        async with wire_to(server) as wire:
            for _ in range(25):
                await wire.channel.send(b"not json")
                await wire.read()
    assert 20 <= len(caplog.records) < 40


def test_the_allowance_refills_and_the_next_line_says_what_was_held_back(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]
    monkeypatch.setattr("mcpkit.aio._rate.time.monotonic", lambda: now[0])
    logger = logging.getLogger("mcpkit.test.peerlog")
    caplog.set_level(logging.WARNING, logger=logger.name)
    limiter = PeerLogLimiter(burst=3, per_second=0.5)
    for n in range(10):
        limiter.log(logger, logging.WARNING, "bad %d", n)
    assert [r.getMessage() for r in caplog.records] == ["bad 0", "bad 1", "bad 2"]
    now[0] += 1.0  # half a line's allowance: still held back
    limiter.log(logger, logging.WARNING, "bad %d", 10)
    now[0] += 1.0
    limiter.log(logger, logging.WARNING, "bad %d", 11)
    assert caplog.records[-1].getMessage() == (
        "bad 11 (8 similar lines suppressed before this one)"
    )
    limiter.flush(logger)  # nothing held back since: nothing to say
    assert len(caplog.records) == 4
    limiter.log(logger, logging.WARNING, "bad %d", 12)
    limiter.flush(logger)
    assert caplog.records[-1].getMessage() == "1 similar lines about the peer were suppressed"


def test_a_shared_bound_gives_the_count_at_an_end_only_when_it_has_room(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A server's shared bound lost the count of a flood's tail when no line came after it;
    # connections ending all at once must not write a flood of their own either.
    now = [1000.0]
    monkeypatch.setattr("mcpkit.aio._rate.time.monotonic", lambda: now[0])
    logger = logging.getLogger("mcpkit.test.peerlog.shared")
    caplog.set_level(logging.WARNING, logger=logger.name)
    limiter = PeerLogLimiter(burst=2, per_second=1.0, shared=True)
    for n in range(7):
        limiter.log(logger, logging.WARNING, "bad %d", n)
    for _ in range(50):  # fifty connections end during the flood: no room, no lines
        limiter.flush(logger)
    assert len(caplog.records) == 2
    now[0] += 1.0  # the flood is over: the next end says how many were held back
    limiter.flush(logger)
    limiter.flush(logger)
    assert [r.getMessage() for r in caplog.records[2:]] == [
        "5 similar lines about the peer were suppressed"
    ]


def test_nothing_is_counted_when_the_level_is_off(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("mcpkit.test.peerlog.off")
    caplog.set_level(logging.ERROR, logger=logger.name)
    limiter = PeerLogLimiter(burst=1)
    for _ in range(5):
        limiter.log(logger, logging.WARNING, "bad")
    limiter.flush(logger)
    assert caplog.records == []


async def test_the_client_side_is_bounded_too(caplog: pytest.LogCaptureFixture) -> None:
    """The same receive loop serves clients: a server sending garbage is bounded alike."""
    caplog.set_level(logging.WARNING, logger="mcpkit.aio")
    mine, theirs = memory_channel_pair()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(Endpoint(mine).run)  # until the peer's end of input
            for _ in range(BAD_LINES):
                await theirs.send(b"not json")
            for _ in range(BAD_LINES):  # every one is answered
                assert b"-32700" in await theirs.receive()
            await theirs.aclose()
    about = [r for r in caplog.records if "Parse error" in r.getMessage()]
    assert 20 <= len(about) < 40
    assert len(about) + _held_back(caplog.records) == BAD_LINES
