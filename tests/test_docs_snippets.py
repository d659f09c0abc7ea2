"""The documentation's code runs as written: every fenced block of README.md and docs/*.md
is run for real (completed by a small fixture where it needs names it does not define),
or, if marked ``<!-- fragment -->``, at least compiled. A block this test does not know
fails it. Servers are real subprocesses (``python -m mcpkit run ...``, uvicorn) on
127.0.0.1; every wait is bounded."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

import mcpkit
from mcpkit import Server
from mcpkit.client import Client, Era, StdioTransport
from mcpkit.exceptions import TransportError
from mcpkit.server import RequestContext, WebSocketApp
from mcpkit.transports import WebSocketTransport
from mcpkit.types import ElicitRequestParams, ElicitResult, ProgressNotificationParams

from ._docs import (
    HOST_FIXTURE,
    LIMIT,
    ROOT,
    Block,
    DatesForm,
    NameForm,
    blocks,
    paragraphs_mentioning,
    serving,
)
from ._httpserver import running_server
from ._rawstdio import RawStdioServer

pytestmark = pytest.mark.anyio
BLOCKS = blocks()
README_SERVER = ("README.md", "# server.py")


@pytest.fixture
def anyio_backend() -> str:
    """The snippets as a user runs them (``anyio.run``'s default); both backends are
    covered by the tests of each feature."""
    return "asyncio"


@pytest.fixture(autouse=True)
def same_mcpkit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Subprocesses run in temporary directories: they import this mcpkit, whatever the
    PYTHONPATH (a relative one would not reach it from there)."""
    here = str(Path(mcpkit.__file__).resolve().parent.parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([here, os.environ.get("PYTHONPATH", "")]))


def block(key: tuple[str, str]) -> Block:
    return next(b for b in BLOCKS if b.key == key)  # (unique: see test_every_runner...)


def text_of(result: Any) -> str:
    return str(result.content[0].text)


def write_server(directory: Path) -> Path:
    """The README's server.py, as written."""
    path = directory / "server.py"
    path.write_text(block(README_SERVER).code, encoding="utf-8")
    return path


# -- README: the server and the client ---------------------------------------------------


async def readme_server(b: Block, tmp: Path) -> None:
    """Served with ``mcpkit run server.py`` (and ``server.py:server``) over stdio, it does
    what the README's comments and prose promise, in both eras."""
    write_server(tmp)
    eras: list[tuple[str, Era]] = [("server.py", "auto"), ("server.py:server", "handshake")]
    for target, era in eras:
        transport = StdioTransport(sys.executable, ["-m", "mcpkit", "run", target], cwd=tmp)
        async with Client(transport, era=era, timeout=LIMIT) as client:
            assert client.era == ("2026-07-28" if era == "auto" else "handshake")
            assert client.instructions == "Forecasts for any city."
            [tool] = [tool async for tool in client.iter_tools()]
            schema = tool.input_schema
            assert str(tool.description).startswith("The forecast for a city")
            assert schema["required"] == ["city"]
            assert schema["properties"]["city"]["description"] == "The city's name."
            assert schema["properties"]["days"]["default"] == 3
            progress: list[ProgressNotificationParams] = []
            result = await client.call_tool(
                "forecast", {"city": "Paris", "days": 2}, on_progress=progress.append
            )
            assert result.structured_content == {"result": [21.5, 21.5]}
            assert json.loads(text_of(result)) == {"result": [21.5, 21.5]}
            assert [(p.progress, p.total) for p in progress] == [(1, 2)]
            refused = await client.call_tool("forecast", {"days": 2})
            assert refused.is_error
            assert "city" in text_of(refused)
            [template] = [t async for t in client.iter_resource_templates()]
            assert template.uri_template == "weather://{city}/today"
            read = await client.read_resource("weather://Paris/today")
            assert read.contents[0].text == "Sunny in Paris"
            assert read.contents[0].mime_type == "text/plain"
            prompt = await client.get_prompt("plan_trip", {"city": "Paris"})
            message = prompt.messages[0].content
            assert message.text == "Plan a three-day trip to Paris."  # type: ignore[union-attr]
    # "only sent if the client asked for progress": on the wire, no progress before the
    # answer of a call without a progress token; only the log message (at info, which no
    # logging/setLevel filtered out).
    async with RawStdioServer(
        [sys.executable, "-m", "mcpkit", "run", str(tmp / "server.py")]
    ) as raw:
        await raw.initialize()
        params = {"name": "forecast", "arguments": {"city": "Paris"}}
        log = await raw.request(1, "tools/call", params)
        assert log["method"] == "notifications/message"
        assert log["params"] == {"level": "info", "data": "looking up Paris"}
        reply = await raw.receive()
        assert reply["id"] == 1
        assert reply["result"]["structuredContent"]["result"] == [21.5] * 3


async def readme_client(b: Block, tmp: Path) -> None:
    """Run as a script next to server.py; only the command differs (this interpreter
    instead of the ``mcpkit`` script, which needs an installed package)."""
    write_server(tmp)
    command = 'StdioTransport("mcpkit", ["run", "server.py"])'
    assert command in b.code
    script = "import sys\n" + b.code.replace(
        command, 'StdioTransport(sys.executable, ["-m", "mcpkit", "run", "server.py"])'
    )
    (tmp / "client.py").write_text(script, encoding="utf-8")
    with anyio.fail_after(LIMIT):
        done = await anyio.run_process([sys.executable, "client.py"], cwd=tmp, check=False)
    assert done.returncode == 0, done.stderr.decode()
    names, content = done.stdout.decode().splitlines()
    assert names == "['forecast']"
    assert "TextContent(text='{\"result\":[21.5,21.5,21.5]}'" in content


async def readme_lifespan(b: Block, tmp: Path) -> None:
    """Fixture: a minimal ``open_pool``. Handlers see the pool as ``ctx.lifespan``, and it
    is closed once the serving ended."""

    class Pool:
        closed = False

        async def close(self) -> None:
            self.closed = True

    pool = Pool()

    async def open_pool() -> Pool:
        return pool

    names: dict[str, Any] = {"Server": Server, "open_pool": open_pool}
    exec(compile(b.code, str(b), "exec"), names)
    server: Server = names["server"]

    @server.tool()
    async def which(ctx: RequestContext) -> bool:
        return ctx.lifespan is pool and not pool.closed

    async with Client(server) as client:
        assert (await client.call_tool("which", {})).structured_content == {"result": True}
    assert pool.closed


async def readme_listen(b: Block, tmp: Path) -> None:
    """Fixture: a connected ``client`` (2026-07-28, in process) of a server with
    ``file:///notes.txt``; the server publishes two changes, then ends the stream."""
    server = Server("notes", "1.0.0")

    @server.resource("file:///notes.txt")
    def notes() -> str:
        return "notes"

    @server.tool()
    def add_note(text: str) -> str:
        return text

    printed: list[tuple[Any, ...]] = []
    listening, both = anyio.Event(), anyio.Event()

    def record(*args: Any) -> None:
        printed.append(args)
        if len(printed) == 2:
            both.set()

    class Listening:  # the client, telling when the stream is acknowledged
        def __init__(self, client: Client) -> None:
            self.client = client

        @asynccontextmanager
        async def listen(self, **options: Any) -> AsyncIterator[Any]:
            async with self.client.listen(**options) as stream:
                listening.set()
                yield stream

    names: dict[str, Any] = {"print": record}
    exec(
        compile("async def snippet(client):\n" + textwrap.indent(b.code, "    "), str(b), "exec"),
        names,
    )
    async with Client(server) as client:
        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(names["snippet"], Listening(client))
                await listening.wait()
                server.notify_list_changed("tools")
                await server.notify_resource_updated("file:///notes.txt")
                await both.wait()
                server.end_subscriptions()  # the snippet's loop ends
    assert [args[0] for args in printed] == [
        "notifications/tools/list_changed",
        "notifications/resources/updated",
    ]
    assert printed[1][1]["uri"] == "file:///notes.txt"


async def readme_book(b: Block, tmp: Path) -> None:
    """Fixture: ``server``, ``RequestContext`` and the two forms. The tool works in both
    eras with a client that answers forms."""
    server = Server("trips", "1.0.0")
    names: dict[str, Any] = {
        "server": server,
        "RequestContext": RequestContext,
        "NameForm": NameForm,
        "DatesForm": DatesForm,
    }
    exec(compile(b.code, str(b), "exec"), names)
    asked: list[str] = []

    async def answer(params: ElicitRequestParams) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"name": "Ada", "dates": "May"})

    for era in ("2026-07-28", "handshake"):
        async with Client(server, era=era, elicitation=answer) as client:
            result = await client.call_tool("book", {"city": "Paris"})
            assert text_of(result) == "Booked Paris for Ada"
    assert sorted(asked) == ["Which dates?", "Which dates?", "Your name?", "Your name?"]


async def readme_uvicorn_host(b: Block, tmp: Path) -> None:
    """Fixture: a ``server``; port 0 instead of 8000. Ctrl-C with a listen stream open:
    the stream gets its final result (not a cut), and the process exits."""
    assert "port=8000" in b.code
    (tmp / "host.py").write_text(HOST_FIXTURE + b.code.replace("port=8000", "port=0"))
    async with serving(["host.py"], tmp, rb"Uvicorn running on (http://127.0.0.1:\d+)") as host:
        url = host.ready.group(1).decode() + "/mcp"
        async with Client(url, timeout=LIMIT) as client, client.listen(tools=True) as stream:
            await host.interrupt()  # (exits, bounded)
            with anyio.fail_after(LIMIT):
                assert [note async for note in stream] == []
            assert stream.error is None
            assert stream.result is not None


# -- docs/websocket.md -------------------------------------------------------------------


async def ws_app(b: Block, tmp: Path) -> None:
    """Fixture: a ``server``. The app serves (``app.connections`` holds the session); its
    Origin allowlist is the whole list."""
    names: dict[str, Any] = {"server": Server("ws", "1.0.0")}
    exec(compile(b.code, str(b), "exec"), names)
    with running_server(names["app"]) as http:
        url = http.url.replace("http://", "ws://") + "/ws"
        async with Client(WebSocketTransport(url, origin="http://localhost")) as client:
            await client.ping()
            assert len(names["app"].connections) == 1
        with pytest.raises(TransportError) as refused:
            async with Client(WebSocketTransport(url, origin="http://127.0.0.1")):
                pass
        assert refused.value.status == 403


async def ws_connect(b: Block, tmp: Path) -> None:
    """Fixture: a WebSocket server on a free port; both URLs point at it."""
    server = Server("ws", "1.0.0")
    with running_server(WebSocketApp(server, path="/ws")) as http:
        url = http.url.replace("http://", "ws://") + "/ws"
        code = b.code.replace("ws://127.0.0.1:8000/ws", url)
        code = code.replace("wss://mcp.example.com/ws", url)
        flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        with anyio.fail_after(LIMIT):
            await eval(compile(code, str(b), "exec", flags=flags), {})


async def ws_command(b: Block, tmp: Path) -> None:
    """Run with the README's server.py, on a free port: it prints the documented line."""
    write_server(tmp)
    argv = b.code.split()
    assert argv[:5] == ["mcpkit", "run", "server.py", "--transport", "ws"]
    optional = dict(re.findall(r"\[(--[a-z]+) (\S+)\]", b.code))
    assert optional == {"--host": "127.0.0.1", "--port": "8000", "--path": "/ws"}
    optional["--port"] = "0"
    options = [part for pair in optional.items() for part in pair]
    line = rb"mcpkit: serving WebSocket on (ws://127\.0\.0\.1:\d+/ws)\n"
    command = ["-m", "mcpkit", *argv[1:5], *options]
    async with (
        serving(command, tmp, line) as served,
        Client(served.ready.group(1).decode()) as client,
    ):
        assert [tool.name async for tool in client.iter_tools()] == ["forecast"]


async def readme_make(b: Block, tmp: Path) -> None:
    """Not run here (it builds a venv): the targets it names exist."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in [*re.findall(r"^make (\w+)", b.code, re.MULTILINE), "bench"]:
        assert re.search(rf"^{target}:", makefile, re.MULTILINE), target


Runner = Callable[[Block, Path], Awaitable[None]]
#: Every block of the documents, by file and first line.
RUNNERS: dict[tuple[str, str], Runner] = {
    (
        "README.md",
        "make demo   # creates .venv, installs mcpkit, runs a client against examples/everything.py over stdio",
    ): readme_make,
    README_SERVER: readme_server,
    ("README.md", "from contextlib import asynccontextmanager"): readme_lifespan,
    ("README.md", "import anyio"): readme_client,
    (
        "README.md",
        'async with client.listen(tools=True, resource_uris=["file:///notes.txt"]) as stream:',
    ): readme_listen,
    ("README.md", "@server.tool()"): readme_book,
    ("README.md", "import uvicorn"): readme_uvicorn_host,
    (
        "docs/websocket.md",
        "mcpkit run server.py --transport ws [--host 127.0.0.1] [--port 8000] [--path /ws]",
    ): ws_command,
    ("docs/websocket.md", "from mcpkit.protocol import TransportSecurity"): ws_app,
    ("docs/websocket.md", "from mcpkit.client import Client"): ws_connect,
}


@pytest.mark.parametrize("b", BLOCKS, ids=str)
async def test_block(b: Block, tmp_path: Path) -> None:
    """Each block runs (or, marked as a fragment, compiles); none is unknown."""
    if b.fragment:
        compile(b.code, str(b), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        return
    runner = RUNNERS.get(b.key)
    assert runner is not None, f"{b}: a block this test does not know; run it here or mark it"
    await runner(b, tmp_path)


def test_every_runner_has_its_block() -> None:
    assert sorted(RUNNERS) == sorted(b.key for b in BLOCKS if not b.fragment)


@pytest.mark.parametrize(
    ("transport", "shown"),
    [
        ("http", r"Streamable HTTP on http"),
        ("sse", r"HTTP\+SSE \(2024-11-05\) on http"),
        ("ws", r"WebSocket on ws"),
    ],
)
async def test_readme_serve_commands(transport: str, shown: str, tmp_path: Path) -> None:
    """``mcpkit run server.py --transport http`` (also ``sse``, ``ws``) serves the README's
    server at the documented default path; ``Client(url)`` reaches it."""
    write_server(tmp_path)
    argv = ["-m", "mcpkit", "run", "server.py", "--transport", transport, "--port", "0"]
    line = (r"mcpkit: serving " + shown + r"(://127\.0\.0\.1:\d+(/\w+))\n").encode()
    async with serving(argv, tmp_path, line) as served:
        url = ("ws" if transport == "ws" else "http") + served.ready.group(1).decode()
        assert (
            served.ready.group(2).decode()
            == {"http": "/mcp", "sse": "/sse", "ws": "/ws"}[transport]
        )
        async with Client(url) as client:
            assert [tool.name async for tool in client.iter_tools()] == ["forecast"]


@pytest.mark.parametrize(
    ("path", "paragraph"), paragraphs_mentioning("mcpkit run"), ids=lambda v: v[:40]
)
def test_every_flag_mentioned_exists(path: str, paragraph: str) -> None:
    """Every ``--flag`` near a mention of ``mcpkit run`` is in ``mcpkit run --help``."""
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "run", "--help"],
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=True,
    )
    for flag in re.findall(r"(?<![\w-])--[a-z][a-z-]*", paragraph):
        assert re.search(rf"(?<![\w-]){flag}\b", done.stdout), (path, flag)
