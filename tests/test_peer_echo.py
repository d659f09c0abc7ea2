"""A peer's text echoed in an error answer or a log line stays short and on one line.

Method names, ids, tool and prompt names, argument names and version strings are chosen
by the peer: copied whole, a 100 kB method name made a 100 kB error message, and a line
break or a terminal escape in it could forge log lines. The response ``id`` member is
still the request's id exactly (JSON-RPC 2.0 section 5); only message texts are cut.
"""

from __future__ import annotations

import json
from typing import Any, Final

import pytest

from mcpkit.protocol import Connection, MessageRejected
from mcpkit.server import Server
from mcpkit.types._echo import ECHO_LIMIT, peer_text

from ._wire import meta, wire_to

#: A generous bound on an error message that echoes a peer's text once or twice.
MESSAGE_BOUND: Final = 2 * ECHO_LIMIT + 200
LONG: Final = "a" * 100_000
#: Line breaks, a forged log line, a terminal escape, NUL, NEL and LINE SEPARATOR.
NASTY: Final = "x\r\n2026-01-01 ERROR forged\x1b[31m\x00\x85\u2028\t" * 50


def assert_one_short_line(text: str, start: str) -> None:
    assert text.startswith(start), text[:200]
    assert len(text) <= MESSAGE_BOUND, len(text)
    assert text.isprintable(), repr(text[:200])  # no line breaks or control characters


# -- the helper ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("tools/call", "'tools/call'"),
        (7, "7"),
        (None, "None"),
        ("a\nb", "'a\\nb'"),
        ("\x1b[31m", "'\\x1b[31m'"),
        ("a" * ECHO_LIMIT, repr("a" * ECHO_LIMIT)),
        ("a" * (ECHO_LIMIT + 1), repr("a" * ECHO_LIMIT) + f"... ({ECHO_LIMIT + 1} characters)"),
    ],
)
def test_peer_text(value: object, expected: str) -> None:
    assert peer_text(value) == expected


@pytest.mark.parametrize(
    "value", [LONG, NASTY, "\x00" * 5000, "\U0001f600" * 5000, 10**4000, ["x\n"] * 5000]
)
def test_peer_text_is_one_short_line(value: object) -> None:
    shown = peer_text(value)
    assert len(shown) <= ECHO_LIMIT + 40
    assert shown.isprintable()


# -- over a connection ----------------------------------------------------------------------


def build() -> Server:
    server = Server("echo-test", "1.0")

    @server.tool()
    async def add(a: int, b: int) -> int:
        """Adds."""
        return a + b

    @server.prompt()
    def hello(name: str) -> str:
        """Greets."""
        return f"Hello {name}"

    return server


def error_text(reply: dict[str, Any]) -> str:
    """The error message of a JSON-RPC error or of a tool's error result."""
    if "error" in reply:
        text: str = reply["error"]["message"]
        return text
    assert reply["result"]["isError"] is True
    text = reply["result"]["content"][0]["text"]
    return text


CASES: Final[list[tuple[str, str, Any, str]]] = [
    # (case, method, params, start of the error message)
    ("long method", "x/" + LONG, {"_meta": meta()}, "Method not found: 'x/aaa"),
    ("nasty method", "x/" + NASTY, {"_meta": meta()}, "Method not found: 'x/x\\r\\n"),
    ("long rpc. method", "rpc." + LONG, None, "Method not found: 'rpc.aaa"),
    ("nasty rpc. method", "rpc." + NASTY, None, "Method not found: 'rpc.x\\r\\n"),
    (
        "long tool",
        "tools/call",
        {"_meta": meta(), "name": LONG, "arguments": {}},
        "Unknown tool: 'aaa",
    ),
    (
        "nasty tool",
        "tools/call",
        {"_meta": meta(), "name": NASTY, "arguments": {}},
        "Unknown tool: 'x\\r\\n",
    ),
    (
        "nasty argument name",
        "tools/call",
        {"_meta": meta(), "name": "add", "arguments": {"a": 1, "b": 2, NASTY: 3}},
        "Invalid arguments: unexpected argument 'x\\r\\n",
    ),
    (
        "long prompt",
        "prompts/get",
        {"_meta": meta(), "name": LONG, "arguments": {}},
        "Unknown prompt: 'aaa",
    ),
    (
        "nasty prompt",
        "prompts/get",
        {"_meta": meta(), "name": NASTY},
        "Unknown prompt: 'x\\r\\n",
    ),
    (
        "nasty value quoted by the decoder",
        "completion/complete",
        {
            "_meta": meta(),
            "ref": {"type": NASTY, "name": "hello"},
            "argument": {"name": "name", "value": "x"},
        },
        "Invalid params for completion/complete: Invalid value 'x ",
    ),
    (
        "long protocol version",
        "tools/list",
        {"_meta": meta(version=LONG)},
        "Unsupported protocol version 'aaa",
    ),
    (
        "nasty log level",
        "tools/list",
        {"_meta": meta(log_level=NASTY)},
        "Invalid params",
    ),
]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("method", "params", "start"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
@pytest.mark.parametrize("rid", [1, "id-" + LONG, "id-" + NASTY], ids=["int", "long", "nasty"])
async def test_error_messages_echo_briefly_and_the_connection_lives_on(
    method: str, params: dict[str, Any] | None, start: str, rid: int | str
) -> None:
    async with wire_to(build()) as wire:
        reply = await wire.call(rid, method, params)
        assert reply["id"] == rid  # the id member itself is the request's, exactly
        assert_one_short_line(error_text(reply), start)
        again = await wire.call(
            2, "tools/call", {"_meta": meta(), "name": "add", "arguments": {"a": 1, "b": 2}}
        )
        assert again["result"]["structuredContent"] == {"result": 3}


# -- what the connection logs ------------------------------------------------------------


def message(**members: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **members}).encode()


@pytest.mark.parametrize("rid", ["id-" + LONG, "id-" + NASTY])
@pytest.mark.parametrize(
    ("name", "build_message", "start"),
    [
        ("unknown response id", lambda rid: message(id=rid, result={}), "response for unknown"),
        (
            "cancel of unknown id",
            lambda rid: message(method="notifications/cancelled", params={"requestId": rid}),
            "cancellation of unknown",
        ),
        (
            "progress for unknown token",
            lambda rid: message(
                method="notifications/progress", params={"progressToken": rid, "progress": 1}
            ),
            "progress for unknown token",
        ),
    ],
)
def test_rejection_reasons_for_the_log_are_one_short_line(
    rid: str, name: str, build_message: Any, start: str
) -> None:
    conn = Connection()
    event = conn.receive_message(build_message(rid))
    assert isinstance(event, MessageRejected), name
    assert_one_short_line(event.reason, start)


def test_a_duplicate_in_flight_id_is_echoed_briefly() -> None:
    conn = Connection()
    rid = "id-" + NASTY
    conn.receive_message(message(id=rid, method="tools/call"))
    event = conn.receive_message(message(id=rid, method="ping"))
    assert isinstance(event, MessageRejected)
    assert event.reply is not None
    reply = json.loads(event.reply)
    assert reply["id"] == rid
    assert_one_short_line(reply["error"]["message"], "Invalid Request: request id 'id-x")
