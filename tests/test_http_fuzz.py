"""Streamable HTTP and WebSocket under arbitrary messages (hypothesis): whatever arrives,
the answer is a deliberate one (a status from the transport's rules, an error that is a
JSON-RPC error), never a 500 or a dropped connection, and the session or connection keeps
working afterwards."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.sync.client import ClientConnection, connect

from mcpkit.server import Server, WebSocketApp

from ._httpserver import running_server
from ._mcphttp import JSON_HEADERS, initialize, notification, request

#: An id no strategy below generates (their integers stay within 2**70, their text is short).
PROBE: Final = 2**100

#: Every status the transport answers a POST with in a live session.
DELIBERATE: Final = {200, 202, 400, 404, 413}


def fuzz_server() -> Server:
    server = Server("fuzz", "1.0")

    @server.tool()
    async def echo(text: str) -> str:
        """Echo the text."""
        return text

    return server


@pytest.fixture(scope="module")
def live() -> Iterator[tuple[httpx.Client, dict[str, str]]]:
    app = fuzz_server().streamable_http_app(max_body_bytes=64 * 1024)
    with running_server(app) as http, httpx.Client(base_url=http.url, timeout=10) as client:
        opened = client.post("/mcp", content=initialize(), headers=JSON_HEADERS)
        assert opened.status_code == 200
        headers = {
            **JSON_HEADERS,
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        ready = client.post(
            "/mcp", content=notification("notifications/initialized"), headers=headers
        )
        assert ready.status_code == 202
        yield client, headers
        assert_alive(client, headers)


def assert_alive(client: httpx.Client, headers: dict[str, str]) -> None:
    answer = client.post("/mcp", content=request(PROBE, "ping"), headers=headers)
    assert answer.status_code == 200, answer.text
    assert f'"id":{PROBE}' in answer.text.replace(" ", ""), answer.text


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
methods = st.sampled_from(
    [
        "ping",
        "tools/list",
        "tools/call",
        "initialize",
        "logging/setLevel",
        "resources/list",
        "notifications/cancelled",
        "notifications/progress",
        "acme/op",
        "rpc.x",
        "",
        "Tools/List",
    ]
)
envelopes = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", 2.0]) | json_values,
        "id": st.integers(-5, 5) | st.text(max_size=5) | json_values,
        "method": methods | json_values,
        "params": st.dictionaries(
            st.sampled_from(["name", "arguments", "_meta", "level"]), json_values, max_size=3
        )
        | json_values,
        "result": json_values,
        "error": json_values,
    },
)
params = st.dictionaries(
    st.sampled_from(["name", "arguments", "_meta", "level", "cursor", "requestId"]),
    json_values | st.sampled_from(["echo", "debug", {"text": "t"}, {"progressToken": 1}]),
    max_size=3,
)
ids = st.integers(-(2**64), 2**64) | st.text(max_size=5)
well_formed = st.one_of(
    st.builds(
        lambda i, m, p: {"jsonrpc": "2.0", "id": i, "method": m, "params": p}, ids, methods, params
    ),
    st.builds(lambda i, m: {"jsonrpc": "2.0", "id": i, "method": m}, ids, methods),
    st.builds(lambda m, p: {"jsonrpc": "2.0", "method": m, "params": p}, methods, params),
    st.builds(lambda i, r: {"jsonrpc": "2.0", "id": i, "result": r}, ids, json_values),
)
bodies = st.one_of(
    st.binary(max_size=64),
    well_formed.map(lambda m: json.dumps(m).encode()),
    well_formed.map(lambda m: json.dumps(m).encode()),
    envelopes.map(lambda m: json.dumps(m).encode()),
    st.lists(envelopes, max_size=3).map(lambda ms: json.dumps(ms).encode()),
    json_values.map(lambda v: json.dumps(v).encode()),
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=bodies)
def test_any_body_gets_a_deliberate_answer(
    live: tuple[httpx.Client, dict[str, str]], body: bytes
) -> None:
    client, headers = live
    answer = client.post("/mcp", content=body, headers=headers)
    assert answer.status_code in DELIBERATE, (body, answer.status_code, answer.text)
    if answer.status_code == 400 and answer.content:
        error: Any = answer.json()
        assert isinstance(error, dict), answer.text
        assert error.get("jsonrpc") == "2.0", answer.text
        assert isinstance(error["error"]["code"], int), answer.text
        assert isinstance(error["error"]["message"], str), answer.text


@pytest.fixture(scope="module")
def socket() -> Iterator[ClientConnection]:
    app = WebSocketApp(fuzz_server(), max_message_bytes=64 * 1024)
    with running_server(app) as http:
        url = http.url.replace("http", "ws", 1) + "/ws"
        with connect(url, subprotocols=["mcp"], open_timeout=10) as ws:  # type: ignore[list-item]
            ws.send(initialize().decode())
            assert json.loads(ws.recv(timeout=10))["id"] == 1
            ws.send(notification("notifications/initialized").decode())
            # (websockets 16, on Python 3.10, calls it Connection)
            yield ws  # type: ignore[misc, unused-ignore]
            ws.send(request(PROBE, "ping").decode())
            alive = {"jsonrpc": "2.0", "id": PROBE, "result": {}}
            while (reply := json.loads(ws.recv(timeout=10))) != alive:
                assert isinstance(reply, (dict, list)), reply  # a late answer from before


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=bodies.filter(lambda b: _is_text(b)))
def test_any_websocket_message_gets_a_deliberate_answer(
    socket: ClientConnection, body: bytes
) -> None:
    socket.send(body.decode())
    # Requests and refused messages are answered; notifications and responses are not.
    # A ping right behind proves the connection still works; every message before its
    # answer is checked (an answer may also arrive after it, and is checked next time).
    socket.send(request(PROBE, "ping").decode())
    while True:
        reply: Any = json.loads(socket.recv(timeout=10))
        assert isinstance(reply, (dict, list)), reply
        if isinstance(reply, dict) and reply.get("id") == PROBE:
            assert reply.get("result") == {}, reply
            break
        for message in reply if isinstance(reply, list) else [reply]:
            assert message.get("jsonrpc") == "2.0", message
            assert ("result" in message) != ("error" in message), message
            if "error" in message:
                assert isinstance(message["error"]["code"], int), message


def _is_text(body: bytes) -> bool:
    try:
        body.decode()
    except UnicodeDecodeError:
        return False
    return True
