"""Members a revision does not define are left out of what is sent to its clients
(docs/design.md section 6), where the schemas, being open, cannot catch them: ``title``
in ``serverInfo`` (2025-06-18; ``description``, ``icons``, ``websiteUrl`` 2025-11-25),
``lastModified`` in a resource's annotations (2025-06-18), ``_meta`` on resource contents
read or embedded (2025-06-18), ``message`` in progress (2025-03-26), and
``notifications/elicitation/complete`` (2025-11-25 only)."""

from __future__ import annotations

from typing import Any, Final

import pytest

from mcpkit.exceptions import CapabilityError
from mcpkit.server import RequestContext, Server
from mcpkit.types import Annotations, EmbeddedResource, Icon, Implementation, ResourceContents

from ._wire import Wire, wire_to

pytestmark = pytest.mark.anyio

STAMP: Final = "2025-01-01T00:00:00Z"


def build() -> Server:
    server = Server("revisions", "1.0", title="Pretty Title")
    server.info = Implementation(
        name="revisions",
        version="1.0",
        title="Pretty Title",
        description="A server",
        website_url="https://example.com",
        icons=[Icon(src="https://example.com/i.png")],
    )

    @server.resource(
        "test://static", annotations=Annotations(audience=["user"], last_modified=STAMP)
    )
    def static() -> ResourceContents:
        return ResourceContents(uri="test://static", text="s", meta={"k": "v"})

    @server.resource("test://t/{id}", annotations=Annotations(priority=0.5, last_modified=STAMP))
    def templ(id: str) -> str:
        return id

    @server.tool()
    async def progress(ctx: RequestContext) -> str:
        """Reports progress with a message."""
        await ctx.report_progress(1, 2, "half way")
        return "ok"

    @server.tool()
    def embedded() -> EmbeddedResource:
        """An embedded resource with _meta."""
        return EmbeddedResource(resource=ResourceContents(uri="test://x", text="x", meta={"k": 1}))

    @server.tool()
    async def completed(ctx: RequestContext) -> str:
        """Completes a URL elicitation."""
        try:
            await ctx.complete_elicitation("abc")
        except CapabilityError as exc:
            return f"refused: {exc}"
        return "sent"

    return server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def start(wire: Wire, version: str) -> dict[str, Any]:
    init = await wire.call(
        0,
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    )
    await wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    result: dict[str, Any] = init["result"]
    assert result["protocolVersion"] == version
    return result


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_what_each_revision_is_sent(version: str) -> None:
    since_0618 = version >= "2025-06-18"
    since_1125 = version >= "2025-11-25"
    async with wire_to(build()) as wire:
        info = (await start(wire, version))["serverInfo"]
        assert ("title" in info) is since_0618
        for member in ("description", "websiteUrl", "icons"):
            assert (member in info) is since_1125, member

        resources = await wire.call(1, "resources/list", {})
        assert ("lastModified" in resources["result"]["resources"][0]["annotations"]) is since_0618
        templates = await wire.call(2, "resources/templates/list", {})
        annotations = templates["result"]["resourceTemplates"][0]["annotations"]
        assert ("lastModified" in annotations) is since_0618

        read = await wire.call(3, "resources/read", {"uri": "test://static"})
        assert ("_meta" in read["result"]["contents"][0]) is since_0618

        embedded = await wire.call(4, "tools/call", {"name": "embedded", "arguments": {}})
        assert ("_meta" in embedded["result"]["content"][0]["resource"]) is since_0618

        before = len(wire.seen)
        params = {"name": "progress", "arguments": {}, "_meta": {"progressToken": "p"}}
        await wire.call(5, "tools/call", params)
        [note] = [m for m in wire.seen[before:] if m.get("method") == "notifications/progress"]
        assert ("message" in note["params"]) is (version >= "2025-03-26")

        before = len(wire.seen)
        completed = await wire.call(6, "tools/call", {"name": "completed", "arguments": {}})
        text = completed["result"]["content"][0]["text"]
        sent = [m for m in wire.seen[before:] if m.get("method", "").startswith("notifications/el")]
        if since_1125:
            assert text == "sent"
            assert sent[0]["params"] == {"elicitationId": "abc"}
        else:
            assert text.startswith("refused: notifications/elicitation/complete does not exist")
            assert sent == []
