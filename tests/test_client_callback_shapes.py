"""The client's callbacks: one that cannot take what it will be given is refused when the
client is made (not when the server first calls it, mid-request), and sampling and
elicitation callbacks may be plain functions, run in a worker thread (they may block on a
model or a person), in both eras."""

from __future__ import annotations

import threading
from typing import Any, Final

import anyio
import pytest

from mcpkit.client import Client
from mcpkit.exceptions import LocalProtocolError
from mcpkit.server import RequestContext, Server
from mcpkit.testing import connect_memory
from mcpkit.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitResult,
    TextContent,
)

from .test_elicitation_answers import build

pytestmark = pytest.mark.anyio

LIMIT: Final = 10.0


async def two_args(ctx: Any, params: Any) -> Any:
    return None


def no_args() -> Any:
    return None


async def one_arg(params: Any) -> Any:
    return None


BAD: list[tuple[str, Any, str]] = [
    ("sampling", two_args, "sampling= is called with one argument (the request's params); "),
    ("elicitation", two_args, "elicitation= is called with one argument"),
    ("elicitation", no_args, "no_args takes ()"),
    ("roots", one_arg, "roots= is called with no arguments; one_arg takes (params: 'Any')"),
    ("on_list_changed", no_args, "on_list_changed= is called with one argument; "),
    ("on_log", two_args, "on_log= is called with one argument"),
    ("elicitation", "not callable", "elicitation= must be callable, not str"),
]


@pytest.mark.parametrize(("name", "callback", "message"), BAD, ids=[f"{n}-{m}" for n, _, m in BAD])
async def test_a_callback_of_the_wrong_shape_is_refused_at_once(
    name: str, callback: Any, message: str
) -> None:
    with pytest.raises(LocalProtocolError) as refused:
        Client(Server("x"), **{name: callback})
    assert message in str(refused.value)


GOOD: list[tuple[str, Any]] = [
    ("sampling", one_arg),
    ("elicitation", lambda params, extra=None: None),  # a default does no harm
    ("on_log", lambda *args: None),
    ("roots", no_args),
    ("roots", []),  # a fixed list
    ("on_resource_updated", print),  # a builtin
]


@pytest.mark.parametrize(("name", "callback"), GOOD, ids=[n for n, _ in GOOD])
async def test_callbacks_that_fit_are_taken(name: str, callback: Any) -> None:
    Client(Server("x"), **{name: callback})


def asking() -> Server:
    """test_elicitation_answers' server (its ``typed`` tool asks for a Person), and a tool
    that samples."""
    server = build()

    @server.tool()
    async def sample(ctx: RequestContext) -> str:
        reply = await ctx.sample("Say hi", max_tokens=5)
        assert isinstance(reply.content, TextContent)
        return reply.content.text

    return server


@pytest.mark.parametrize("era", ["handshake", "2026-07-28"])
async def test_plain_sampling_and_elicitation_callbacks_run_off_the_event_loop(era: str) -> None:
    loop_thread = threading.get_ident()
    seen: list[int] = []

    def elicit(params: ElicitRequestParams) -> ElicitResult:
        seen.append(threading.get_ident())
        return ElicitResult(action="accept", content={"name": "Ada"})

    def sample(params: CreateMessageRequestParams) -> CreateMessageResult:
        seen.append(threading.get_ident())
        return CreateMessageResult(role="assistant", content=TextContent(text="hi"), model="m")

    with anyio.fail_after(LIMIT):
        async with connect_memory(asking(), era=era, elicitation=elicit, sampling=sample) as c:
            asked = await c.call_tool("typed", {})
            sampled = await c.call_tool("sample", {})
    assert asked.content == [TextContent(text="accept Person(name='Ada', age=0)")]
    assert sampled.content == [TextContent(text="hi")]
    assert len(seen) == 2
    assert loop_thread not in seen
