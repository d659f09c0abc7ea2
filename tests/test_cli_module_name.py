"""``mcpkit run FILE.py`` imports the file under its own name when that name finds it, so
what it defines pickles by reference: a tool may hand work to a process pool started with
"spawn" (the default on macOS and Windows) or "forkserver" (Linux from Python 3.14), whose
children import the file by that name. Under a private name, every such call failed with
``BrokenProcessPool``. A name that is taken or shadowed keeps the private one."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final

import anyio
import pytest

from mcpkit.client import Client, StdioTransport
from mcpkit.types import TextContent

pytestmark = pytest.mark.anyio

SERVER: Final = """
from mcpkit import Server

server = Server("named", "1.0.0")


@server.tool()
def module_name() -> str:
    \"\"\"The name this file was imported under.\"\"\"
    return __name__
"""
POOL_SERVER: Final = """
import asyncio
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

from mcpkit import Server

server = Server("pool", "1.0.0")


def square(n: int) -> int:
    return n * n


@server.tool()
async def squared(n: int) -> int:
    \"\"\"Square n in a worker process started with "spawn".\"\"\"
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=context) as pool:
        return await asyncio.get_running_loop().run_in_executor(pool, square, n)
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server is a subprocess


async def imported_as(tmp_path: Path, filename: str, *, shadow: str | None = None) -> str:
    """Serve ``filename`` (holding SERVER) with ``mcpkit run`` over stdio; the name it was
    imported under."""
    # In a directory of its own: `python -m` puts the working directory first on
    # sys.path, where a msgspec.py would shadow the real one before mcpkit is imported.
    folder = tmp_path / "served"
    folder.mkdir()
    (folder / filename).write_text(SERVER)
    if shadow is not None:  # a package of the same name next to it wins the lookup
        (folder / shadow).mkdir()
        (folder / shadow / "__init__.py").write_text("")
    argv = ["-m", "mcpkit", "run", f"served/{filename}"]
    with anyio.fail_after(60):
        async with Client(StdioTransport(sys.executable, argv, cwd=str(tmp_path))) as client:
            result = await client.call_tool("module_name", {}, timeout=30)
    assert not result.is_error, result.content
    block = result.content[0]
    assert isinstance(block, TextContent)
    name = block.text
    return name


@pytest.mark.parametrize(
    ("filename", "shadow", "expected"),
    [
        ("weather.py", None, "weather"),  # its own name
        ("json.py", None, "_mcpkit_target_json"),  # a standard module's name
        ("msgspec.py", None, "_mcpkit_target_msgspec"),  # taken (imported by mcpkit)
        ("my-server.py", None, "_mcpkit_target_my-server"),  # not an identifier
        ("tools.py", "tools", "_mcpkit_target_tools"),  # a package of that name wins
    ],
)
async def test_the_name_the_file_is_imported_under(
    tmp_path: Path, filename: str, shadow: str | None, expected: str
) -> None:
    assert await imported_as(tmp_path, filename, shadow=shadow) == expected


async def test_a_tool_can_use_a_spawned_process_pool(tmp_path: Path) -> None:
    (tmp_path / "poolserver.py").write_text(POOL_SERVER)
    transport = StdioTransport(
        sys.executable, ["-m", "mcpkit", "run", "poolserver.py"], cwd=str(tmp_path)
    )
    with anyio.fail_after(60):
        async with Client(transport) as client:
            result = await client.call_tool("squared", {"n": 7}, timeout=50)
    assert not result.is_error, result.content
    assert result.structured_content == {"result": 49}
