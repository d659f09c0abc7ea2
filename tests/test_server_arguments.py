"""Tool arguments as deep as the server's limits let through are bound or refused like
any others: the integral-float retry (3.0 is an integer) walks them without recursion
(about 335 levels gave RecursionError, answered -32603; ``server/_argvalues.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.protocol import Limits
from mcpkit.server import Server
from mcpkit.testing import connect_memory

pytestmark = pytest.mark.anyio


def nested(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(("n", "refused"), [(1, False), (1.0, False), ("x", True)])
async def test_deep_arguments_are_bound_or_refused_as_arguments(n: Any, refused: bool) -> None:
    server = Server("deep", limits=Limits(max_depth=512))

    @server.tool()
    def nest(x: Any, n: int) -> str:
        return "ok"

    async with connect_memory(server, era="handshake") as client:
        result = await client.call_tool("nest", {"x": nested(400), "n": n})
    text = result.content[0].text  # type: ignore[union-attr]
    assert (result.is_error is True) is refused, text
    assert ("'n'" in text) if refused else text == "ok"
