"""What the client sends is what the negotiated revision defines: ``clientInfo`` and its
capabilities in ``initialize``, ``completion/complete`` context, and the answers of its
callbacks (sampling: one block before 2025-11-25, no audio before 2025-03-26, no block
``_meta`` before 2025-06-18; elicitation: no string arrays before 2025-11-25; roots: no
``_meta`` before 2025-06-18). Each is read back from what an mcpkit server decoded."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec import UNSET

from mcpkit.server import LowLevelServer, RequestContext
from mcpkit.server._peer import create_message, elicit, list_roots
from mcpkit.testing import connect_memory
from mcpkit.types import (
    AudioContent,
    ClientCapabilities,
    CompleteRequestParams,
    CompleteResult,
    Completion,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitResult,
    Icon,
    ImageContent,
    Implementation,
    PromptReference,
    Root,
    SamplingMessage,
    TextContent,
    Tool,
)

pytestmark = pytest.mark.anyio

OLD, MIDDLE, NEW = "2024-11-05", "2025-06-18", "2025-11-25"


class Seen:
    """A low-level server that keeps what the client sent."""

    def __init__(self) -> None:
        self.server = LowLevelServer("seen")
        self.values: list[Any] = []
        tools = {"sample": self._sample, "ask": self._ask, "roots": self._roots}
        for name, fn in tools.items():
            self.server.add_tool(Tool(name=name, input_schema={"type": "object"}), fn)
        self.server.set_request_handler("completion/complete", self._complete)

    async def _sample(self, ctx: RequestContext, args: dict[str, Any]) -> str:
        message = SamplingMessage(role="user", content=TextContent(text="hi"))
        params = CreateMessageRequestParams(messages=[message], max_tokens=5)
        self.values.append(await create_message(ctx.session, params, timeout=5))
        return "ok"

    async def _ask(self, ctx: RequestContext, args: dict[str, Any]) -> str:
        picks = {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}
        schema = {"type": "object", "properties": {"pick": picks}}
        params = ElicitRequestParams(message="?", requested_schema=schema)
        self.values.append(await elicit(ctx.session, params, timeout=5))
        return "ok"

    async def _roots(self, ctx: RequestContext, args: dict[str, Any]) -> str:
        self.values.append((await list_roots(ctx.session, timeout=5)).roots)
        return "ok"

    async def _complete(self, ctx: RequestContext, params: CompleteRequestParams) -> Any:
        self.values.append(params.context)
        return CompleteResult(completion=Completion(values=[]))


@pytest.mark.parametrize("version", [OLD, MIDDLE, NEW])
async def test_initialize_carries_only_what_the_revision_defines(version: str) -> None:
    seen = Seen()
    info = Implementation(
        name="c", version="1", title="C", description="d", icons=[Icon(src="https://x/i.png")]
    )
    caps = ClientCapabilities(extensions={"io.example/x": {}})
    async with connect_memory(
        seen.server, client_info=info, capabilities=caps, protocol_version=version
    ):
        (session,) = seen.server.sessions
        sent, declared = session.client_info, session.client_capabilities
    assert sent is not None
    assert sent.title == (UNSET if version == OLD else "C")
    assert sent.description == ("d" if version == NEW else UNSET)
    assert declared.extensions is UNSET  # (2026-07-28 only)


@pytest.mark.parametrize(("version", "sent"), [(OLD, False), (MIDDLE, True)])
async def test_completion_context_from_2025_06_18(version: str, sent: bool) -> None:
    seen = Seen()
    async with connect_memory(seen.server, protocol_version=version) as client:
        await client.complete(PromptReference(name="p"), "a", "x", context={"b": "y"})
    (context,) = seen.values
    assert (context is not UNSET) is sent


def answering(content: Any) -> Any:
    async def model(params: CreateMessageRequestParams) -> CreateMessageResult:
        return CreateMessageResult(role="assistant", content=content, model="m")

    return model


async def test_sampling_answers_are_adapted() -> None:
    image = ImageContent(data="AAAA", mime_type="image/png", meta={"k": 1})
    for version, content in [(OLD, [image]), (MIDDLE, image), (NEW, [image])]:
        seen = Seen()
        async with connect_memory(
            seen.server, sampling=answering(content), protocol_version=version
        ) as client:
            assert (await client.call_tool("sample")).is_error is not True
        (result,) = seen.values
        if version == NEW:
            assert result.content == [image]
        else:  # one block, without the _meta 2025-06-18 added
            assert isinstance(result.content, ImageContent)
            assert result.content.meta == (UNSET if version == OLD else {"k": 1})


@pytest.mark.parametrize(
    ("version", "content", "why"),
    [
        (MIDDLE, [TextContent(text="a"), TextContent(text="b")], "2 content blocks"),
        (OLD, AudioContent(data="AAAA", mime_type="audio/wav"), "audio"),
    ],
)
async def test_sampling_answers_the_revision_cannot_hold_are_refused(
    version: str, content: Any, why: str
) -> None:
    seen = Seen()
    async with connect_memory(
        seen.server, sampling=answering(content), protocol_version=version
    ) as client:
        result = await client.call_tool("sample")
    assert result.is_error is True
    assert "Internal error" in result.content[0].text  # type: ignore[union-attr]
    assert why in result.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize(("version", "refused"), [(MIDDLE, True), (NEW, False)])
async def test_elicitation_lists_only_from_2025_11_25(version: str, refused: bool) -> None:
    async def fill(params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(action="accept", content={"pick": ["a", "b"]})

    seen = Seen()
    async with connect_memory(seen.server, elicitation=fill, protocol_version=version) as client:
        result = await client.call_tool("ask")
    assert (result.is_error is True) is refused


@pytest.mark.parametrize(("version", "meta"), [(OLD, UNSET), (MIDDLE, {"k": 1})])
async def test_roots_meta_from_2025_06_18(version: str, meta: Any) -> None:
    seen = Seen()
    roots = [Root(uri="file:///a", meta={"k": 1})]
    async with connect_memory(seen.server, roots=roots, protocol_version=version) as client:
        await client.call_tool("roots")
    ((root,),) = seen.values
    assert root.meta == meta
