"""``subscriptions/listen`` end to end over stdio: a real ``mcpkit run
examples/everything.py`` subprocess, several listens sharing the pipe, cancellation with
``notifications/cancelled``, and graceful closure when the client closes stdin.
2026-07-28 ``basic/patterns/subscriptions.mdx``, ``basic/transports/stdio.mdx``."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Final

import anyio
import pytest

from ._rawstdio import RawStdioServer
from ._wire import (
    ACK,
    PROMPTS,
    SUB,
    TOOLS,
    UPDATED,
    call_params,
    listen_params,
    subscription_of,
)
from .conftest import EXAMPLES

pytestmark = pytest.mark.anyio

LIMIT: Final = 15.0
EVERYTHING: Final = EXAMPLES / "everything.py"
WATCHED: Final = "test://watched-resource"


# -- stdio ------------------------------------------------------------------------------------


class Transcript:
    """Everything a stdio server sent, read until what a test waits for has arrived."""

    def __init__(self, server: RawStdioServer) -> None:
        self.server = server
        self.messages: list[dict[str, Any]] = []

    async def until(self, done: Callable[[list[dict[str, Any]]], bool]) -> None:
        with anyio.fail_after(LIMIT):
            while not done(self.messages):
                self.messages.append(await self.server.receive())

    def of(self, listen: Any) -> list[str]:
        """The methods delivered on one listen stream, in order."""
        return [m["method"] for m in self.messages if subscription_of(m) == listen]

    def answered(self, rid: Any) -> bool:
        return any(m.get("id") == rid and "method" not in m for m in self.messages)


async def test_listen_over_a_stdio_subprocess() -> None:
    argv = [sys.executable, "-m", "mcpkit", "run", str(EVERYTHING)]
    async with RawStdioServer(argv, timeout=LIMIT) as server:
        seen = Transcript(server)
        tools_and_watched = listen_params(toolsListChanged=True, resourceSubscriptions=[WATCHED])
        await server.send(id=1, method="subscriptions/listen", params=tools_and_watched)
        await server.send(
            id=2, method="subscriptions/listen", params=listen_params(promptsListChanged=True)
        )
        await seen.until(lambda _: seen.of(1) == [ACK] and seen.of(2) == [ACK])
        ack = next(m for m in seen.messages if subscription_of(m) == 1)
        assert ack["params"]["notifications"] == {
            "toolsListChanged": True,
            "resourceSubscriptions": [WATCHED],
        }

        await server.send(id=3, method="tools/call", params=call_params("test_trigger_tool_change"))
        await seen.until(lambda _: seen.answered(3) and TOOLS in seen.of(1))
        await server.send(
            id=4, method="tools/call", params=call_params("test_trigger_prompt_change")
        )
        await seen.until(lambda _: seen.answered(4) and PROMPTS in seen.of(2))
        await server.send(
            id=5, method="tools/call", params=call_params("test_watched_resource_update")
        )
        await seen.until(lambda _: seen.answered(5) and UPDATED in seen.of(1))
        update = next(m for m in seen.messages if m.get("method") == UPDATED)
        assert update["params"] == {"uri": WATCHED, "_meta": {SUB: 1}}
        assert seen.of(1) == [ACK, TOOLS, UPDATED]
        assert seen.of(2) == [ACK, PROMPTS]  # the tools change was not for it

        # Cancelling listen 1 (stdio: notifications/cancelled) ends it without a response.
        await server.send(method="notifications/cancelled", params={"requestId": 1})
        await server.send(
            id=6, method="subscriptions/listen", params=listen_params(toolsListChanged=True)
        )
        await seen.until(lambda _: seen.of(6) == [ACK])
        await server.send(id=7, method="tools/call", params=call_params("test_trigger_tool_change"))
        await seen.until(lambda _: seen.answered(7) and TOOLS in seen.of(6))

        # Closing stdin: the open listens end gracefully with their results, then the
        # server exits.
        assert server.process is not None
        assert server.process.stdin is not None
        await server.process.stdin.aclose()
        await seen.until(lambda _: seen.answered(2) and seen.answered(6))
        with anyio.fail_after(LIMIT):
            assert await server.process.wait() == 0
    assert seen.of(1) == [ACK, TOOLS, UPDATED]
    assert not seen.answered(1)
    finals = [m for m in seen.messages if m.get("id") in (2, 6)]
    for final in finals:
        assert final["result"]["resultType"] == "complete"
        assert final["result"]["_meta"][SUB] == final["id"]
