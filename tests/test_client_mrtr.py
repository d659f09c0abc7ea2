"""The client on the 2026-07-28 era against a scripted server: era negotiation
(``server/discover``, -32022 retry, fallback to ``initialize``), per-request ``_meta``,
``resultType`` handling, multi round-trip requests (``basic/patterns/mrtr.mdx``: new id per
retry, ``requestState`` echoed verbatim and never invented, bounded rounds, undeclared
capabilities refused), errors of older servers, and the deprecation warnings."""

from __future__ import annotations

import warnings
from typing import Any

import anyio
import pytest

from mcpkit.exceptions import (
    CapabilityError,
    MCPDeprecationWarning,
    RemoteProtocolError,
    RequestTimeoutError,
    RPCError,
)
from mcpkit.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    Root,
    TextContent,
)

from ._fakemodern import (
    MODERN,
    SERVER_INFO,
    FakeServer,
    Handler,
    discover_result,
    fake_client,
    modern,
    tool_result,
)
from .test_spec_schema import validate

pytestmark = pytest.mark.anyio
LIMIT = 10.0
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"
LEVEL = "io.modelcontextprotocol/logLevel"

FORM = {
    "method": "elicitation/create",
    "params": {
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}
SAMPLE = {
    "method": "sampling/createMessage",
    "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
        "maxTokens": 5,
    },
}
ROOTS = {"method": "roots/list", "params": {}}


async def fill(params: ElicitRequestParams) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": "Ada"})


async def model(params: CreateMessageRequestParams) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", content=TextContent(text="4"), model="m")


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


# -- era negotiation ------------------------------------------------------------------------


async def test_discover_selects_the_stateless_era_and_every_request_carries_meta() -> None:
    handler = modern({"tools/call": lambda p: tool_result("ok")})
    info = Implementation(name="tester", version="1.0")
    with anyio.fail_after(LIMIT):
        async with fake_client(handler, client_info=info, elicitation=fill) as (client, fake):
            assert client.era == MODERN
            assert client.protocol_version == MODERN
            assert client.server_info.name == SERVER_INFO["name"]
            assert client.server_capabilities.tools is not None
            assert text(await client.call_tool("t", {"x": 1})) == "ok"
    assert [r["method"] for r in fake.requests] == ["server/discover", "tools/call"]
    for request in fake.requests:
        meta = request["params"]["_meta"]
        assert meta[PV] == MODERN
        assert meta[INFO] == {"name": "tester", "version": "1.0"}
        assert "elicitation" in meta[CAPS]
        assert LEVEL not in meta  # no level chosen: no logs (basic/index.mdx)
    assert fake.calls("tools/call")[0]["params"]["arguments"] == {"x": 1}


async def test_server_info_at_the_top_level_of_discover_is_accepted() -> None:
    async def handle(fake: FakeServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
        result = discover_result(serverInfo={"name": "top", "version": "2"}, instructions="Hi")
        del result["_meta"]
        return result

    with anyio.fail_after(LIMIT):
        async with fake_client(handle) as (client, _):
            assert client.server_info == Implementation(name="top", version="2")
            assert client.instructions == "Hi"


async def test_unsupported_version_error_is_retried_with_a_listed_version() -> None:
    async def handle(fake: FakeServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if len(fake.requests) == 1:
            data = {"supported": [MODERN], "requested": params["_meta"][PV]}
            raise RPCError(-32022, "Unsupported protocol version", data)
        return discover_result()

    with anyio.fail_after(LIMIT):
        async with fake_client(handle) as (client, fake):
            assert client.era == MODERN
    assert [r["method"] for r in fake.requests] == ["server/discover", "server/discover"]
    assert fake.requests[0]["id"] != fake.requests[1]["id"]


def legacy(first_error: RPCError | None) -> Handler:
    """A handshake-era server: refuses discover (or answers it oddly), serves initialize."""

    async def handle(fake: FakeServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "server/discover":
            if first_error is None:
                return {"something": "else"}  # not a discover result
            raise first_error
        if method == "initialize":
            return {
                "protocolVersion": params["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "old", "version": "1"},
            }
        if method == "ping":
            return {}
        raise RPCError(-32601, "Method not found")

    return handle


@pytest.mark.parametrize(
    "answer",
    [
        RPCError(-32601, "Method not found"),
        RPCError(-32602, "Invalid params"),
        RPCError(-32600, "Server not initialized"),
        RPCError(-32022, "Unsupported", {"supported": ["2025-11-25"], "requested": MODERN}),
        None,
    ],
    ids=["-32601", "-32602", "-32600", "-32022-handshake-only", "odd-result"],
)
async def test_any_other_answer_falls_back_to_initialize(answer: RPCError | None) -> None:
    with anyio.fail_after(LIMIT):
        async with fake_client(legacy(answer)) as (client, fake):
            assert client.era == "handshake"
            assert client.protocol_version == "2025-11-25"
            assert client.server_info.name == "old"
            await client.ping()
    assert [r["method"] for r in fake.requests] == ["server/discover", "initialize", "ping"]
    assert "_meta" not in fake.requests[1]["params"]


async def test_no_answer_to_the_probe_falls_back_after_its_bound() -> None:
    async def handle(fake: FakeServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "server/discover":
            await anyio.sleep_forever()
        return await legacy(None)(fake, method, params)

    with anyio.fail_after(LIMIT):
        async with fake_client(handle, timeout=0.2) as (client, fake):
            assert client.era == "handshake"
    assert fake.notifications[0]["method"] == "notifications/cancelled"


@pytest.mark.parametrize("answer", [RPCError(-32601, "Method not found"), None])
async def test_the_stateless_era_only_refuses_a_legacy_server(answer: RPCError | None) -> None:
    with anyio.fail_after(LIMIT), pytest.raises(RemoteProtocolError, match="2026-07-28"):
        async with fake_client(legacy(answer), era="2026-07-28"):
            pass


async def test_handshake_only_never_probes() -> None:
    with anyio.fail_after(LIMIT):
        async with fake_client(legacy(None), era="handshake") as (client, fake):
            assert client.era == "handshake"
    assert [r["method"] for r in fake.requests] == ["initialize"]


async def test_a_modern_error_on_the_probe_is_reported_not_a_fallback() -> None:
    error = RPCError(-32021, "Missing capability", {"requiredCapabilities": {"x": {}}})
    with anyio.fail_after(LIMIT), pytest.raises(RPCError) as raised:
        async with fake_client(legacy(error)):
            pass
    assert raised.value.code == -32021


# -- results --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("result", "outcome"),
    [
        ({"content": [{"type": "text", "text": "legacy"}]}, "legacy"),
        ({"resultType": "complete", "content": [{"type": "text", "text": "c"}]}, "c"),
        ({"resultType": "task", "content": []}, "unknown resultType 'task'"),
        ({"resultType": 7, "content": []}, "unknown resultType 7"),
        ({"resultType": "input_required"}, "neither inputRequests nor requestState"),
        ({"resultType": "input_required", "inputRequests": []}, "not an object"),
        ({"resultType": "input_required", "requestState": 5}, "not a string"),
    ],
)
async def test_result_type(result: dict[str, Any], outcome: str) -> None:
    handler = modern({"tools/call": lambda p: result})
    with anyio.fail_after(LIMIT):
        async with fake_client(handler) as (client, _):
            if " " not in outcome:
                assert text(await client.call_tool("t")) == outcome
                return
            with pytest.raises(RemoteProtocolError, match=outcome):
                await client.call_tool("t")


async def test_input_required_on_a_method_that_may_not_return_it() -> None:
    handler = modern(
        {"tools/list": lambda p: {"resultType": "input_required", "requestState": "s"}}
    )
    with anyio.fail_after(LIMIT), pytest.raises(RemoteProtocolError, match="tools/list"):
        async with fake_client(handler) as (client, _):
            await client.list_tools()


@pytest.mark.parametrize(("code", "data"), [(-32002, {"uri": "x://y"}), (-32042, {"e": []})])
async def test_older_servers_error_codes_reach_the_caller(code: int, data: Any) -> None:
    def refuse(params: dict[str, Any]) -> dict[str, Any]:
        raise RPCError(code, "refused", data)

    handler = modern({"resources/read": refuse, "tools/call": refuse})
    with anyio.fail_after(LIMIT):
        async with fake_client(handler) as (client, _):
            with pytest.raises(RPCError) as read:
                await client.read_resource("x://y")
            with pytest.raises(RPCError) as call:
                await client.call_tool("t")
    assert (read.value.code, read.value.data) == (code, data)
    assert call.value.code == code


async def test_removed_methods_on_the_stateless_era() -> None:
    with anyio.fail_after(LIMIT):
        async with fake_client(modern({})) as (client, fake):
            await client.ping()  # server/discover, past any cache
            with pytest.raises(CapabilityError, match="subscriptions/listen"):
                await client.subscribe_resource("x://y")
            with pytest.raises(CapabilityError):
                await client.unsubscribe_resource("x://y")
    assert [r["method"] for r in fake.requests] == ["server/discover", "server/discover"]


# -- multi round-trip requests ----------------------------------------------------------------


async def test_rounds_echo_state_verbatim_with_a_new_id_each_time() -> None:
    state = '{"nonce": "ä\\u00e9 \\"quoted\\"", "n": 1}'

    def call(params: dict[str, Any]) -> dict[str, Any]:
        round_ = len(seen)
        seen.append(params)
        if round_ == 0:
            return {
                "resultType": "input_required",
                "inputRequests": {"who": FORM, "calc": SAMPLE},
                "requestState": state,
            }
        if round_ == 1:
            # No requestState this time: the next retry must carry none.
            return {"resultType": "input_required", "inputRequests": {"where": ROOTS}}
        return tool_result("done")

    seen: list[dict[str, Any]] = []
    options: dict[str, Any] = {
        "elicitation": fill,
        "sampling": model,
        "roots": [Root(uri="file:///w")],
    }
    with anyio.fail_after(LIMIT), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with fake_client(modern({"tools/call": call}), **options) as (client, fake):
            assert text(await client.call_tool("t", {"a": 1})) == "done"
    calls = fake.calls("tools/call")
    assert len({c["id"] for c in calls}) == 3
    first, second, third = (c["params"] for c in calls)
    assert "inputResponses" not in first
    assert "requestState" not in first
    assert second["requestState"] == state
    assert second["inputResponses"] == {
        "who": {"action": "accept", "content": {"name": "Ada"}},
        "calc": {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"},
    }
    assert "requestState" not in third
    assert third["inputResponses"] == {"where": {"roots": [{"uri": "file:///w"}]}}
    for params in (first, second, third):
        assert params["name"] == "t"
        assert params["arguments"] == {"a": 1}
        assert params["_meta"][PV] == MODERN
    kinds = sorted(str(w.message).split(" ")[0] for w in caught)
    assert kinds == ["Roots", "Sampling"]
    assert all(w.category is MCPDeprecationWarning for w in caught)


async def test_state_only_results_are_retried_at_once() -> None:
    def read(params: dict[str, Any]) -> dict[str, Any]:
        if "requestState" not in params:
            return {"resultType": "input_required", "requestState": "wait"}
        return {"resultType": "complete", "contents": [{"uri": "x://y", "text": "ready"}]}

    with anyio.fail_after(LIMIT):
        async with fake_client(modern({"resources/read": read})) as (client, fake):
            result = await client.read_resource("x://y")
    assert result.contents[0].text == "ready"
    retry = fake.calls("resources/read")[1]["params"]
    assert retry["requestState"] == "wait"
    assert "inputResponses" not in retry


async def test_rounds_are_bounded() -> None:
    def forever(params: dict[str, Any]) -> dict[str, Any]:
        return {"resultType": "input_required", "requestState": "again"}

    handler = modern({"prompts/get": forever})
    with anyio.fail_after(LIMIT):
        async with fake_client(handler, max_input_rounds=3) as (client, fake):
            with pytest.raises(RemoteProtocolError, match="after 3 rounds"):
                await client.get_prompt("p")
    assert len(fake.calls("prompts/get")) == 4


async def test_without_an_overall_deadline_rounds_are_still_bounded() -> None:
    def forever(params: dict[str, Any]) -> dict[str, Any]:
        return {"resultType": "input_required", "requestState": "again"}

    handler = modern({"prompts/get": forever})
    with anyio.fail_after(LIMIT):
        async with fake_client(handler, max_input_rounds=2, input_deadline=None) as (client, f):
            with pytest.raises(RemoteProtocolError, match="after 2 rounds"):
                await client.get_prompt("p")
    assert len(f.calls("prompts/get")) == 3


async def test_rounds_have_an_overall_deadline() -> None:
    never = anyio.Event()

    async def slow_user(params: ElicitRequestParams) -> ElicitResult:
        await never.wait()
        raise AssertionError("unreachable")

    def ask(params: dict[str, Any]) -> dict[str, Any]:
        return {"resultType": "input_required", "inputRequests": {"who": FORM}}

    handler = modern({"tools/call": ask})
    with anyio.fail_after(LIMIT):
        async with fake_client(handler, elicitation=slow_user, input_deadline=0.1) as (client, _):
            with pytest.raises(RequestTimeoutError, match="needed input"):
                await client.call_tool("t")


async def test_the_deadline_starts_with_the_first_input_request() -> None:
    """A long request that asks for nothing is bounded by its own timeouts, as in the
    handshake era (it was cut off at input_deadline, "needed input")."""
    release = anyio.Event()

    async def slow(fake: FakeServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "server/discover":
            return discover_result()
        await release.wait()
        return {"resultType": "complete", "content": [{"type": "text", "text": "done"}]}

    with anyio.fail_after(LIMIT):
        async with fake_client(slow, input_deadline=0.05) as (client, _):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "t")
                await anyio.sleep(0.2)  # four deadlines pass: the passing time is the test
                release.set()
            result = await client.call_tool("t")
    assert result.content[0].text == "done"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("entry", "options", "capability"),
    [
        (FORM, {}, "elicitation"),
        (SAMPLE, {}, "sampling"),
        (ROOTS, {}, "roots"),
        (
            {
                "method": "elicitation/create",
                "params": {"mode": "url", "message": "m", "url": "https://x"},
            },
            {"elicitation": fill},
            "elicitation.url",
        ),
        (
            {"method": "sampling/createMessage", "params": {**SAMPLE["params"], "tools": []}},  # type: ignore[dict-item]
            {"sampling": model},
            "sampling.tools",
        ),
    ],
)
async def test_input_for_an_undeclared_capability_is_refused_without_a_retry(
    entry: dict[str, Any], options: dict[str, Any], capability: str
) -> None:
    def ask(params: dict[str, Any]) -> dict[str, Any]:
        return {"resultType": "input_required", "inputRequests": {"k": entry}}

    with anyio.fail_after(LIMIT):
        async with fake_client(modern({"tools/call": ask}), **options) as (client, fake):
            with pytest.raises(RemoteProtocolError, match=f"the {capability} capability"):
                await client.call_tool("t")
    assert len(fake.calls("tools/call")) == 1


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"method": "elicitation/create", "params": {"message": 5}}, "invalid params"),
        ({"method": "tools/list", "params": {}}, "unknown method"),
        (["not", "an", "object"], "is not a"),
    ],
)
async def test_malformed_input_requests(entry: Any, message: str) -> None:
    def ask(params: dict[str, Any]) -> dict[str, Any]:
        return {"resultType": "input_required", "inputRequests": {"k": entry}}

    with anyio.fail_after(LIMIT):
        async with fake_client(modern({"tools/call": ask}), elicitation=fill) as (client, _):
            with pytest.raises(RemoteProtocolError, match=message):
                await client.call_tool("t")


# -- deprecations ---------------------------------------------------------------------------


async def test_deprecated_features_warn_once_per_kind() -> None:
    context_sample = {
        "method": "sampling/createMessage",
        "params": {**SAMPLE["params"], "includeContext": "thisServer"},  # type: ignore[dict-item]
    }

    def ask(params: dict[str, Any]) -> dict[str, Any]:
        if "inputResponses" in params:
            return tool_result("ok")
        return {"resultType": "input_required", "inputRequests": {"a": context_sample}}

    options: dict[str, Any] = {"sampling": model, "roots": [Root(uri="file:///r")]}
    with anyio.fail_after(LIMIT), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with fake_client(modern({"tools/call": ask}), **options) as (client, fake):
            for _ in range(2):
                await client.call_tool("t")
                await client.set_logging_level("info")
                await client.set_roots([Root(uri="file:///s")])
            await client.call_tool("t")
    messages = [str(w.message) for w in caught]
    assert len(messages) == 4, messages
    assert {m.split(" ")[0] for m in messages} == {"Sampling", "includeContext", "Logging", "Roots"}
    # The level travels with every later request; roots changes send nothing on 2026.
    assert fake.calls("tools/call")[-1]["params"]["_meta"][LEVEL] == "info"
    assert fake.notifications == []


async def test_the_handshake_era_does_not_warn() -> None:
    with anyio.fail_after(LIMIT):
        async with fake_client(legacy(None)) as (client, fake):
            with pytest.raises(RPCError):
                await client.set_logging_level("info")  # the fake has no logging/setLevel
    assert fake.calls("logging/setLevel")


# -- the wire -------------------------------------------------------------------------------


async def test_every_request_validates_against_the_2026_schema() -> None:
    """Discover, the list methods, reads, calls and their MRTR retries, as sent, are valid
    ``ClientRequest`` messages of ``schema/2026-07-28/schema.json``."""

    def call(params: dict[str, Any]) -> dict[str, Any]:
        if "inputResponses" in params:
            return tool_result("ok")
        return {
            "resultType": "input_required",
            "inputRequests": {"who": FORM, "calc": SAMPLE, "where": ROOTS},
            "requestState": "s",
        }

    routes = {
        "tools/call": call,
        "tools/list": lambda p: {"resultType": "complete", "tools": []},
        "resources/read": lambda p: {"resultType": "complete", "contents": []},
    }
    options: dict[str, Any] = {
        "elicitation": fill,
        "sampling": model,
        "roots": [Root(uri="file:///w")],
        "client_info": Implementation(name="c", version="1"),
    }
    with anyio.fail_after(LIMIT), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        async with fake_client(modern(routes), **options) as (client, fake):
            await client.set_logging_level("debug")
            await client.list_tools()
            await client.read_resource("x://y")
            await client.call_tool("t", {"n": 1})
            await client.ping()
    assert len(fake.requests) == 6
    # 2026-07-28 has no roots/list_changed: the capability is an empty object.
    assert fake.requests[0]["params"]["_meta"][CAPS]["roots"] == {}
    for request in fake.requests:
        validate(MODERN, "ClientRequest", request)
        validate(MODERN, "JSONRPCRequest", request)
