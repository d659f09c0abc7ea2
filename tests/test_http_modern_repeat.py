"""2026-07-28 POSTs of every shape (hypothesis), each sent three times to one app driven in
process: every answer is a deliberate one (a status the transport's rules give, a JSON-RPC
response to the request), and the same all three times. The second and third go through
what the app remembers of the first (its header values passed, the verdict on its
``Mcp-Method`` / ``Mcp-Name`` / ``Mcp-Param-*`` headers, ``_meta`` decoded in one pass
when well formed): what it remembers never changes an answer."""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from typing import Any, Final

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.server import Server, StreamableHTTPApp

from ._mcphttp import asgi_receive, asgi_scope
from ._wire import meta

SCHEMA: Final = {
    "type": "object",
    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "query": {}},
    "required": ["region", "query"],
}
#: Every status a 2026-07-28 POST is answered with here.
DELIBERATE: Final = {200, 202, 400, 404}
BASE: Final = [
    (b"content-type", b"application/json"),
    (b"accept", b"application/json, text/event-stream"),
]


def build() -> Server:
    server = Server("repeat", "1.0")

    @server.tool()
    async def echo(text: str) -> str:
        """Echo."""
        return text

    @server.tool(input_schema=SCHEMA)
    async def sql(**arguments: Any) -> str:
        """Mirrors ``region`` in Mcp-Param-Region."""
        return json.dumps(arguments, sort_keys=True)

    @server.resource("note://one")
    def one() -> str:
        return "first"

    return server


async def post(app: StreamableHTTPApp, headers: list[tuple[bytes, bytes]], body: bytes) -> Any:
    sent: list[MutableMapping[str, Any]] = []
    receive = asgi_receive(body, anyio.sleep_forever)  # (the client stays for its answer)

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    with anyio.fail_after(10):
        await app(asgi_scope("POST", headers), receive, send)
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


names = st.sampled_from(
    ["echo", "sql", "ekko", "", "note://one", "note://two", "=?base64?ZWNobw==?=", " echo"]
)
methods = st.sampled_from(
    ["tools/call", "tools/list", "resources/read", "prompts/get", "server/discover", "ping"]
)
well_formed = st.sampled_from(
    [
        meta(),
        meta(capabilities={"sampling": {}}),
        meta(client_info={"name": "c", "version": "1"}),
        meta(log_level="info"),
    ]
)
metas = st.one_of(
    well_formed,
    well_formed,
    st.fixed_dictionaries(
        {},
        optional={
            "io.modelcontextprotocol/protocolVersion": st.sampled_from(
                ["2026-07-28", "2025-11-25", "2099-01-01", 5]
            ),
            "io.modelcontextprotocol/clientCapabilities": st.sampled_from(
                [{}, {"sampling": {}}, [], {"sampling": 5}]
            ),
            "io.modelcontextprotocol/clientInfo": st.sampled_from(
                [{"name": "c", "version": "1"}, {"name": 1}, None]
            ),
            "io.modelcontextprotocol/logLevel": st.sampled_from(["info", "loud", None]),
        },
    ),
    st.none(),
)
params = st.fixed_dictionaries(
    {},
    optional={
        "name": names | st.integers(),
        "uri": names,
        "arguments": st.sampled_from(
            [{"text": "x"}, {"region": "eu", "query": "q"}, {"region": 5, "query": "q"}, {}, None]
        ),
    },
)
extra = st.fixed_dictionaries(
    {},
    optional={
        b"mcp-method": methods.map(str.encode) | st.just(b""),
        b"mcp-name": names.map(str.encode),
        b"mcp-param-region": st.sampled_from([b"eu", b"=?base64?ZXU=?=", b"us", b" eu "]),
        b"mcp-protocol-version": st.sampled_from([b"2026-07-28", b"2099-01-01"]),
    },
)
#: Requests whose headers agree with their body (the usual case: then ``_meta`` decides).
VALID: Final = [
    ("tools/call", {"name": "echo", "arguments": {"text": "x"}}, {b"mcp-name": b"echo"}),
    ("tools/call", {"name": "echo", "arguments": {"text": "x"}}, {b"mcp-name": b" echo"}),
    (
        "tools/call",
        {"name": "echo", "arguments": {"text": "x"}},
        {b"mcp-name": b"=?base64?ZWNobw==?="},
    ),
    (
        "tools/call",
        {"name": "sql", "arguments": {"region": "eu", "query": "q"}},
        {b"mcp-name": b"sql", b"mcp-param-region": b"eu"},
    ),
    ("resources/read", {"uri": "note://one"}, {b"mcp-name": b"note://one"}),  # (a thread)
    ("tools/list", {}, {}),
]
agreeing = st.builds(
    lambda valid, meta_: (
        valid[0],
        {**valid[1], "_meta": meta_},
        {
            b"mcp-protocol-version": b"2026-07-28",
            b"mcp-method": valid[0].encode(),
            **valid[2],
        },
    ),
    st.sampled_from(VALID),
    metas.filter(lambda m: m is not None),
)
any_shape = st.builds(
    lambda method, p, meta_, headers: (method, p | {"_meta": meta_}, headers),
    methods,
    params,
    metas,
    extra,
)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=agreeing | any_shape, rid=st.integers(1, 5) | st.text(max_size=3))
def test_a_repeated_post_gets_the_same_deliberate_answer(
    backend: str, case: tuple[str, dict[str, Any], dict[bytes, bytes]], rid: int | str
) -> None:
    method, body_params, headers = case
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": body_params})

    async def main() -> list[tuple[int, bytes]]:
        app = build().streamable_http_app(json_response=True)
        answers = []
        started, stop, stopped = anyio.Event(), anyio.Event(), anyio.Event()
        events = iter([{"type": "lifespan.startup"}])

        async def lifespan_receive() -> dict[str, Any]:
            for event in events:
                return event
            await stop.wait()
            return {"type": "lifespan.shutdown"}

        async def lifespan_send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "lifespan.startup.complete":
                started.set()
            elif message["type"] == "lifespan.shutdown.complete":
                stopped.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(app, {"type": "lifespan"}, lifespan_receive, lifespan_send)
            with anyio.fail_after(10):
                await started.wait()
                answers += [await post(app, [*BASE, *headers.items()], body.encode())]
                answers += [await post(app, [*BASE, *headers.items()], body.encode())]
                answers += [await post(app, [*BASE, *headers.items()], body.encode())]
                stop.set()
                await stopped.wait()
        return answers

    answers = anyio.run(main, backend=backend)
    status, answer = answers[0]
    assert answers == [answers[0]] * 3, (case, answers)
    assert status in DELIBERATE, (case, answers)
    if status != 202:
        # The request's answer, or the transport's refusal of the POST (id null).
        message = json.loads(answer)
        assert message["id"] in (rid, None), (case, answers)
        assert ("result" in message) != ("error" in message), (case, answers)
        assert message["id"] is not None or "error" in message, (case, answers)
