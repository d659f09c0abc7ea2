"""Multi round-trip requests on the server (2026-07-28 ``basic/patterns/mrtr.mdx``): the
same ``ctx.elicit`` / ``ctx.sample`` / ``ctx.list_roots`` / ``ctx.ask`` a handshake-era
tool uses becomes an ``InputRequiredResult`` with a sealed ``requestState``, and the retry
with ``inputResponses`` completes it; the state resists tampering, replay, expiry, reuse
on another request and oversize; keys rotate and can be shared between processes."""

from __future__ import annotations

import warnings
from typing import Any

import anyio
import pytest

from mcpkit.exceptions import LocalProtocolError, MCPDeprecationWarning, RPCError
from mcpkit.server import InMemoryNonceStore, RequestContext, RequestStateSealer, Server
from mcpkit.testing import connect_memory
from mcpkit.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitResult,
    ErrorCode,
    ReadResourceResult,
    Root,
    TextContent,
)

from ._wire import Wire, meta, wire_to
from .test_spec_schema import validate

pytestmark = pytest.mark.anyio

KEY_A = b"a" * 32
KEY_B = b"b" * 32
NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
ALL_CAPS: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def build(sealer: RequestStateSealer | None = None) -> Server:
    server = Server("mrtr", request_state=sealer or RequestStateSealer([KEY_A]))

    @server.tool()
    async def greet(ctx: RequestContext, greeting: str = "Hello") -> str:
        """Asks a name."""
        answer = await ctx.elicit("Name?", NAME_FORM, key="name")
        return f"{greeting}, {(answer.data or {})['name']}!"

    @server.tool()
    async def two_rounds(ctx: RequestContext) -> str:
        """Asks twice."""
        first = await ctx.elicit("First?", NAME_FORM)
        second = await ctx.elicit("Second?", NAME_FORM)
        return f"{(first.data or {})['name']}+{(second.data or {})['name']}"

    @server.tool()
    async def batch(ctx: RequestContext) -> str:
        """Asks three things at once."""
        name, sampled, roots = await ctx.ask(
            ctx.elicitation("Name?", NAME_FORM, key="n"),
            ctx.sampling("Greet", max_tokens=5, key="s"),
            ctx.roots(key="r"),
        )
        assert isinstance(sampled.content, TextContent)
        return f"{name.data['name']}|{sampled.content.text}|{len(roots)}"

    @server.tool()
    async def swallow(ctx: RequestContext) -> str:
        """Catches every Exception around its question (the round trip still works)."""
        try:
            answer = await ctx.elicit("Name?", NAME_FORM, key="name")
        except Exception:
            return "swallowed"
        return str((answer.data or {})["name"])

    @server.tool()
    async def grouped(ctx: RequestContext) -> str:
        """Asks from inside a task group."""
        names: list[str] = []
        async with anyio.create_task_group() as tg:

            async def ask() -> None:
                names.append(str((await ctx.elicit("Name?", NAME_FORM, key="g")).data))

            tg.start_soon(ask)
        return names[0]

    @server.tool()
    async def same_key(ctx: RequestContext) -> str:
        """Uses one key twice (a programming error)."""
        await ctx.ask(ctx.roots(key="k"), ctx.roots(key="k"))
        return "unreachable"

    @server.tool()
    async def big(ctx: RequestContext) -> str:
        """Asks after receiving a large answer (the state outgrows a small bound)."""
        await ctx.elicit("Name?", NAME_FORM, key="first")
        await ctx.elicit("Again?", NAME_FORM, key="second")
        return "done"

    @server.resource("test://guarded")
    async def guarded(ctx: RequestContext) -> str:
        """A resource that asks before it is read."""
        answer = await ctx.elicit("Password?", NAME_FORM, key="pw")
        return f"secret for {(answer.data or {})['name']}"

    @server.request_handler("acme/ask")
    async def vendor(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
        await ctx.list_roots()
        return {}

    return server


def call(name: str, *, caps: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "arguments": extra.pop("arguments", {}),
        "_meta": meta(capabilities=ALL_CAPS if caps is None else caps),
        **extra,
    }


def accept(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content}


SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}


def text_of(reply: dict[str, Any]) -> str:
    result = reply["result"]
    assert result["resultType"] == "complete", reply
    return str(result["content"][0]["text"])


async def first_round(wire: Wire, id: int, name: str, **extra: Any) -> dict[str, Any]:
    reply = await wire.call(id, "tools/call", call(name, **extra))
    result: dict[str, Any] = reply["result"]
    assert result["resultType"] == "input_required", reply
    assert isinstance(result["requestState"], str)
    return result


async def test_one_question_then_the_answer() -> None:
    async with wire_to(build()) as wire:
        asked = await first_round(wire, 1, "greet", arguments={"greeting": "Hi"})
        assert asked["inputRequests"] == {
            "name": {
                "method": "elicitation/create",
                "params": {"message": "Name?", "requestedSchema": NAME_FORM},
            }
        }
        assert "io.modelcontextprotocol/serverInfo" in asked["_meta"]
        retry = call(
            "greet",
            arguments={"greeting": "Hi"},
            inputResponses={"name": accept(name="Ada"), "extra": accept(name="x")},
            requestState=asked["requestState"],
        )
        assert text_of(await wire.call(2, "tools/call", retry)) == "Hi, Ada!"
        # Never a server-to-client request on this era.
        assert not [m for m in wire.seen if "method" in m]


async def test_rounds_accumulate_answers_in_the_state() -> None:
    async with wire_to(build()) as wire:
        r1 = await first_round(wire, 1, "two_rounds")
        [k1] = r1["inputRequests"]
        retry = call(
            "two_rounds", inputResponses={k1: accept(name="a")}, requestState=r1["requestState"]
        )
        r2 = (await wire.call(2, "tools/call", retry))["result"]
        assert r2["resultType"] == "input_required"
        [k2] = r2["inputRequests"]
        assert k2 != k1
        assert r2["requestState"] != r1["requestState"]
        # Round 3 answers only the new question: the first answer travels in the state.
        retry = call(
            "two_rounds", inputResponses={k2: accept(name="b")}, requestState=r2["requestState"]
        )
        assert text_of(await wire.call(3, "tools/call", retry)) == "a+b"


async def test_several_questions_in_one_round() -> None:
    async with wire_to(build()) as wire:
        asked = await first_round(wire, 1, "batch")
        assert {k: v["method"] for k, v in asked["inputRequests"].items()} == {
            "n": "elicitation/create",
            "s": "sampling/createMessage",
            "r": "roots/list",
        }
        answers = {"n": accept(name="Ada"), "r": {"roots": [{"uri": "file:///x"}]}}
        # A partial answer re-asks only what is missing, keeping what was given.
        partial = call("batch", inputResponses=answers, requestState=asked["requestState"])
        again = (await wire.call(2, "tools/call", partial))["result"]
        assert list(again["inputRequests"]) == ["s"]
        done = call("batch", inputResponses={"s": SAMPLED}, requestState=again["requestState"])
        assert text_of(await wire.call(3, "tools/call", done)) == "Ada|hi|1"


async def test_answers_without_a_state_count_only_for_a_first_round() -> None:
    async with wire_to(build()) as wire:
        wrong = call("greet", inputResponses={"wrong_key": accept(name="x")})
        assert (await wire.call(1, "tools/call", wrong))["result"]["resultType"] == "input_required"
        direct = call("greet", inputResponses={"name": accept(name="Bo")})
        assert text_of(await wire.call(2, "tools/call", direct)) == "Hello, Bo!"
        # With a state, only answers to the questions it records are taken.
        asked = await first_round(wire, 3, "two_rounds")
        sneaky = call(
            "two_rounds",
            inputResponses={"elicitation-2": accept(name="early")},
            requestState=asked["requestState"],
        )
        again = (await wire.call(4, "tools/call", sneaky))["result"]
        assert list(again["inputRequests"]) == list(asked["inputRequests"])


async def test_handlers_cannot_swallow_the_round_trip() -> None:
    async with wire_to(build()) as wire:
        for id, tool in enumerate(["swallow", "grouped"], 1):
            asked = await first_round(wire, id, tool)
            [key] = asked["inputRequests"]
            retry = call(
                tool, inputResponses={key: accept(name="Z")}, requestState=asked["requestState"]
            )
            assert "Z" in text_of(await wire.call(10 + id, "tools/call", retry))


async def test_resources_and_prompts_ask_too_but_other_methods_cannot() -> None:
    async with wire_to(build()) as wire:
        params = {"uri": "test://guarded", "_meta": meta(capabilities=ALL_CAPS)}
        asked = (await wire.call(1, "resources/read", params))["result"]
        assert asked["resultType"] == "input_required"
        assert "ttlMs" not in asked  # an input-required result is never cacheable
        retry = {
            **params,
            "inputResponses": {"pw": accept(name="Ada")},
            "requestState": asked["requestState"],
        }
        read = (await wire.call(2, "resources/read", retry))["result"]
        assert read["resultType"] == "complete"
        assert read["contents"][0]["text"] == "secret for Ada"
        vendor = await wire.call(3, "acme/ask", {"_meta": meta(capabilities=ALL_CAPS)})
        assert vendor["error"]["code"] == -32603
        assert "only tools/call, prompts/get and resources/read" in vendor["error"]["message"]


@pytest.mark.parametrize(
    ("caps", "missing"),
    [({}, {"elicitation": {}}), ({"elicitation": {"url": {}}}, {"elicitation": {"form": {}}})],
)
async def test_an_undeclared_capability_is_minus_32021(
    caps: dict[str, Any], missing: dict[str, Any]
) -> None:
    async with wire_to(build()) as wire:
        reply = await wire.call(1, "tools/call", call("greet", caps=caps))
        assert reply["error"]["code"] == -32021
        assert reply["error"]["data"] == {"requiredCapabilities": missing}


def tampered(state: str) -> list[str]:
    prefix, kid, payload, mac = state.split(".")
    flipped = payload[:5] + ("A" if payload[5] != "A" else "B") + payload[6:]
    return [
        state + "-TAMPERED",
        f"{prefix}.{kid}.{flipped}.{mac}",
        f"{prefix}.{kid}.{payload}.{mac[:-2]}",
        f"m2.{kid}.{payload}.{mac}",
        f"{prefix}.AAAAAAAA.{payload}.{mac}",
        "not a state",
        "",
        f"{prefix}.{kid}.!!!.{mac}",
    ]


async def test_tampered_states_are_refused_and_the_connection_survives() -> None:
    async with wire_to(build()) as wire:
        asked = await first_round(wire, 1, "greet")
        for id, bad in enumerate(tampered(asked["requestState"]), 2):
            retry = call("greet", inputResponses={"name": accept(name="x")}, requestState=bad)
            reply = await wire.call(id, "tools/call", retry)
            assert reply["error"]["code"] == -32602, (bad, reply)
            assert "requestState" in reply["error"]["message"]
        # The untouched state still works: refused retries never used it up.
        good = call(
            "greet", inputResponses={"name": accept(name="Ok")}, requestState=asked["requestState"]
        )
        assert text_of(await wire.call(99, "tools/call", good)) == "Hello, Ok!"


async def test_a_state_is_used_once_and_only_for_its_request() -> None:
    async with wire_to(build()) as wire:
        asked = await first_round(wire, 1, "greet", arguments={"greeting": "Hi"})
        state = asked["requestState"]
        answers = {"name": accept(name="A")}
        other_args = call(
            "greet", arguments={"greeting": "Yo"}, inputResponses=answers, requestState=state
        )
        other_tool = call("swallow", inputResponses=answers, requestState=state)
        for id, wrong in enumerate([other_args, other_tool], 2):
            reply = await wire.call(id, "tools/call", wrong)
            assert "different request" in reply["error"]["message"]
        retry = call(
            "greet", arguments={"greeting": "Hi"}, inputResponses=answers, requestState=state
        )
        assert text_of(await wire.call(5, "tools/call", retry)) == "Hi, A!"
        replay = await wire.call(6, "tools/call", retry)
        assert replay["error"]["code"] == -32602
        assert "already used" in replay["error"]["message"]


async def test_states_expire() -> None:
    clock = Clock()
    async with wire_to(build(RequestStateSealer([KEY_A], ttl=60, clock=clock))) as wire:
        asked = await first_round(wire, 1, "greet")
        clock.now += 61
        retry = call(
            "greet", inputResponses={"name": accept(name="A")}, requestState=asked["requestState"]
        )
        reply = await wire.call(2, "tools/call", retry)
        assert "expired" in reply["error"]["message"]


async def test_state_size_is_bounded_both_ways() -> None:
    sealer = RequestStateSealer([KEY_A], max_bytes=600)
    async with wire_to(build(sealer)) as wire:
        oversized = call("greet", inputResponses={}, requestState="x" * 601)
        reply = await wire.call(1, "tools/call", oversized)
        assert reply["error"]["code"] == -32602
        assert "longer than" in reply["error"]["message"]
        # A handler whose gathered answers outgrow the bound fails with -32603.
        asked = await first_round(wire, 2, "big")
        retry = call(
            "big",
            inputResponses={"first": accept(name="x" * 1000)},
            requestState=asked["requestState"],
        )
        reply = await wire.call(3, "tools/call", retry)
        assert reply["error"]["code"] == -32603
        assert "limit of 600" in reply["error"]["message"]


@pytest.mark.parametrize(
    "answer",
    [12345, "text", {"action": "maybe"}, {"action": "accept", "content": 3}, None],
)
async def test_invalid_answers_are_minus_32602(answer: Any) -> None:
    async with wire_to(build()) as wire:
        reply = await wire.call(1, "tools/call", call("greet", inputResponses={"name": answer}))
        assert reply["error"]["code"] == -32602
        assert "inputResponses['name']" in reply["error"]["message"]
        null = await wire.call(2, "tools/call", call("greet", inputResponses=None))
        assert null["error"]["code"] == -32602


async def test_duplicate_keys_are_the_tools_failure() -> None:
    async with wire_to(build()) as wire:
        reply = await wire.call(1, "tools/call", call("same_key"))
        assert reply["result"]["isError"] is True
        assert "used twice" in reply["result"]["content"][0]["text"]


async def test_keys_rotate_and_are_shared_between_processes() -> None:
    store = InMemoryNonceStore()
    old = build(RequestStateSealer([KEY_A], nonce_store=store))
    rotated = build(RequestStateSealer([KEY_B, KEY_A], nonce_store=store))
    retired = build(RequestStateSealer([KEY_B]))
    answers = {"name": accept(name="R")}
    async with wire_to(old) as a, wire_to(rotated) as b, wire_to(retired) as c:
        state = (await first_round(a, 1, "greet"))["requestState"]
        refused = await c.call(
            1, "tools/call", call("greet", inputResponses=answers, requestState=state)
        )
        assert "key this server does not hold" in refused["error"]["message"]
        # Another process with the old key still listed opens it...
        retry = call("greet", inputResponses=answers, requestState=state)
        assert text_of(await b.call(1, "tools/call", retry)) == "Hello, R!"
        # ...and a shared nonce store stops a replay on the first process.
        replay = await a.call(2, "tools/call", retry)
        assert "already used" in replay["error"]["message"]
        # New states are sealed with the new key, which the old process cannot open.
        fresh = (await first_round(b, 2, "greet"))["requestState"]
        moved = call("greet", inputResponses=answers, requestState=fresh)
        assert (
            "key this server does not hold"
            in (await a.call(3, "tools/call", moved))["error"]["message"]
        )


@pytest.mark.parametrize(
    ("keys", "options"),
    [([], {}), ([b"short"], {}), ([KEY_A], {"ttl": 0}), ([KEY_A], {"max_bytes": 0})],
)
def test_sealer_misuse_is_refused(keys: list[bytes], options: dict[str, Any]) -> None:
    with pytest.raises(LocalProtocolError):
        RequestStateSealer(keys, **options)


def test_keys_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPKIT_REQUEST_STATE_KEYS", f"{'n' * 32},{'o' * 32}")
    first, second = RequestStateSealer(), RequestStateSealer()
    sealed = first.new_state("tools/call", "t", "a", [], {})
    assert anyio.run(second.open, sealed, "tools/call", "t", "a").pending == []


async def test_nonce_store_is_bounded() -> None:
    clock = Clock()
    store = InMemoryNonceStore(max_entries=3, clock=clock)
    for n in range(5):
        assert await store.claim(str(n), clock.now + 10)
    assert len(store) == 3
    assert not await store.claim("4", clock.now + 10)
    clock.now += 11  # everything expired: purged on the next claim
    assert await store.claim("4", clock.now + 10)
    assert len(store) == 1


async def sampled(params: CreateMessageRequestParams) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", content=TextContent(text="hi"), model="m")


async def named(params: ElicitRequestParams) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": "Ada"})


async def test_the_same_tools_push_in_the_handshake_era() -> None:
    server = build()
    async with connect_memory(
        server,
        sampling=sampled,
        elicitation=named,
        roots=[Root(uri="file:///r")],
        era="handshake",
    ) as client:
        batch = await client.call_tool("batch")
        assert batch.content == [TextContent(text="Ada|hi|1")]
        rounds = await client.call_tool("two_rounds")
        assert rounds.content == [TextContent(text="Ada+Ada")]
        read = await client.read_resource("test://guarded")
        assert isinstance(read, ReadResourceResult)
        [contents] = read.contents
        assert contents.text == "secret for Ada"


async def test_both_eras_at_once_on_one_server() -> None:
    server = build()
    async with (
        connect_memory(server, elicitation=named, era="handshake") as old,
        wire_to(server) as new,
        anyio.create_task_group() as tg,
    ):
        results: dict[str, str] = {}

        async def handshake() -> None:
            for n in range(5):
                result = await old.call_tool("greet", {"greeting": f"H{n}"})
                results[f"old{n}"] = str(result.content[0].text)  # type: ignore[union-attr]

        async def modern() -> None:
            for n in range(5):
                asked = await first_round(new, n * 2, "greet")
                retry = call(
                    "greet",
                    inputResponses={"name": accept(name="New")},
                    requestState=asked["requestState"],
                )
                results[f"new{n}"] = text_of(await new.call(n * 2 + 1, "tools/call", retry))

        tg.start_soon(handshake)
        tg.start_soon(modern)
    assert results == {
        **{f"old{n}": f"H{n}, Ada!" for n in range(5)},
        **{f"new{n}": "Hello, New!" for n in range(5)},
    }


def test_rpc_error_type_for_states() -> None:
    sealer = RequestStateSealer([KEY_A])
    with pytest.raises(RPCError) as refused:
        anyio.run(sealer.open, "m1.x.y.z", "tools/call", "t", "a")
    assert refused.value.code == -32602


async def test_deprecated_features_warn_once_per_server_on_2026() -> None:
    server = build()

    @server.tool()
    async def old_ways(ctx: RequestContext) -> str:
        """Uses everything 2026-07-28 deprecates."""
        await ctx.log("info", "logged")
        await ctx.ask(ctx.sampling("hi", include_context="thisServer", key="s"), ctx.roots(key="r"))
        return "done"

    caps: dict[str, Any] = {"sampling": {"context": {}}, "roots": {}}
    answers = {"s": SAMPLED, "r": {"roots": []}}
    async with wire_to(server) as wire:
        params = call("old_ways", caps=caps, inputResponses=answers)
        params["_meta"]["io.modelcontextprotocol/logLevel"] = "info"
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            for id in (1, 2):  # twice: each warning comes once per server
                assert text_of(await wire.call(id, "tools/call", params)) == "done"
        assert all(w.category is MCPDeprecationWarning for w in record)
        warned = sorted(str(w.message).split(" is deprecated")[0] for w in record)
        assert warned == ["includeContext other than 'none'", "logging", "roots", "sampling"]
    # The handshake era deprecates none of them.
    async with connect_memory(server, sampling=sampled, roots=[], era="handshake") as client:
        with warnings.catch_warnings():
            warnings.simplefilter("error", MCPDeprecationWarning)
            await client.call_tool("old_ways")


async def test_url_elicitation_required_becomes_a_multi_round_trip_on_2026() -> None:
    server = build()
    signed_in: list[str] = []

    @server.tool()
    async def needs_login(ctx: RequestContext) -> str:
        """Raises -32042 until the user signed in (as a handshake-era tool would)."""
        if not signed_in:
            raise RPCError(
                ErrorCode.URL_ELICITATION_REQUIRED,
                "Sign-in required",
                {
                    "elicitations": [
                        {
                            "mode": "url",
                            "elicitationId": "login",
                            "url": "https://auth.example/x",
                            "message": "Sign in",
                        }
                    ]
                },
            )
        return "welcome"

    url_caps: dict[str, Any] = {"elicitation": {"url": {}}}
    async with wire_to(server) as wire:
        asked = (await wire.call(1, "tools/call", call("needs_login", caps=url_caps)))["result"]
        assert asked["resultType"] == "input_required"
        assert asked["inputRequests"] == {
            "login": {
                "method": "elicitation/create",
                "params": {"mode": "url", "message": "Sign in", "url": "https://auth.example/x"},
            }
        }
        validate("2026-07-28", "InputRequest", asked["inputRequests"]["login"])
        signed_in.append("done")  # the user finished in the browser
        retry = call(
            "needs_login",
            caps=url_caps,
            inputResponses={"login": {"action": "accept"}},
            requestState=asked["requestState"],
        )
        assert text_of(await wire.call(2, "tools/call", retry)) == "welcome"
        signed_in.clear()
        form_only = await wire.call(3, "tools/call", call("needs_login", caps={"elicitation": {}}))
        assert form_only["error"]["code"] == -32021
    # The handshake era keeps -32042 as it is.
    async with connect_memory(
        server, era="handshake", elicitation=named, elicitation_url=True
    ) as client:
        with pytest.raises(RPCError) as refused:
            await client.call_tool("needs_login")
        assert refused.value.code == -32042
