"""`mcpkit run` refuses what it cannot serve with a one-line message on stderr and exit
status 2: no traceback, nothing on stdout (on stdio, stdout belongs to the protocol)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ECHO = str(Path(__file__).resolve().parent.parent / "examples" / "echo.py")


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", "run", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        cwd=cwd,
        timeout=30,
        check=False,
    )


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "noserver.py").write_text("other = 1\n")
    (tmp_path / "notaserver.py").write_text("server = 42\n")
    (tmp_path / "data.txt").write_text("not python\n")
    (tmp_path / "aclass.py").write_text("from mcpkit import Server\nserver = Server\n")
    # The server under another name: the message names it.
    (tmp_path / "named.py").write_text("from mcpkit import Server\nmcp = Server('x')\n")
    (tmp_path / "shadowed.py").write_text(
        "from mcpkit import Server\nmcp = Server('x')\nserver = 1\n"
    )
    return tmp_path


CASES: list[tuple[list[str], str]] = [
    (["missing.py"], "no such file: missing.py"),
    (["noserver.py"], "noserver.py defines no object named 'server'"),
    (["noserver.py:app"], "noserver.py defines no object named 'app'"),
    (["noserver.py:1bad"], "cannot parse target 'noserver.py:1bad'"),
    (["notaserver.py"], "notaserver.py:server is of type int, not an mcpkit server"),
    (["named.py"], "named.py defines no object named 'server'; did you mean named.py:mcp?"),
    (
        ["shadowed.py"],
        "shadowed.py:server is of type int, not an mcpkit server (mcpkit.Server or "
        "LowLevelServer); did you mean shadowed.py:mcp?",
    ),
    (["data.txt"], "cannot load data.txt as a Python module"),
    ([ECHO, "--max-message-bytes", "0"], "--max-message-bytes must be positive"),
    ([ECHO, "--transport", "http", "--port", "70000"], "--port must be 0..65535, not 70000"),
    ([ECHO, "--transport", "http", "--backend", "trio"], "drop --backend trio"),
    ([ECHO, "--transport", "sse", "--stateless"], "apply to --transport http only"),
    ([ECHO, "--transport", "ws", "--json-response"], "apply to --transport http only"),
    (["aclass.py"], "aclass.py:server is a class, not a server"),
    ([ECHO, "--log-level", "nonsense"], "unknown --log-level 'nonsense'"),
    ([ECHO, "--stateless"], "--stateless: for the HTTP transports only"),
    ([ECHO, "--port", "9000", "--json-response"], "--port, --json-response: for the HTTP"),
    ([ECHO, "--host", "0.0.0.0"], "--host: for the HTTP transports only"),
    ([ECHO, "--transport", "http", "--path", "mcp"], "--path must start with '/': 'mcp'"),
    ([ECHO, "--transport", "sse", "--path", "sse"], "--path must start with '/': 'sse'"),
    (
        [ECHO, "--transport", "http", "--host", "no-such-host.invalid", "--port", "0"],
        "cannot listen on no-such-host.invalid:0",
    ),
    (
        [ECHO, "--transport", "ws", "--host", "192.0.2.1", "--port", "0"],
        "cannot listen on 192.0.2.1:0",
    ),
]


def test_a_port_in_use_is_one_line_and_status_2(files: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = str(taken.getsockname()[1])
        done = run_cli(ECHO, "--transport", "http", "--port", port, cwd=files)
    stderr = done.stderr.decode()
    assert done.returncode == 2, stderr
    assert stderr == f"mcpkit: cannot listen on 127.0.0.1:{port}: Address already in use\n"


@pytest.mark.parametrize(("args", "message"), CASES, ids=[" ".join(a[-2:]) for a, _ in CASES])
def test_cli_refuses_with_a_message_and_status_2(
    files: Path, args: list[str], message: str
) -> None:
    done = run_cli(*args, cwd=files)
    stderr = done.stderr.decode()
    assert done.returncode == 2, stderr
    assert done.stdout == b""
    assert stderr.startswith("mcpkit: "), stderr
    assert message in stderr, stderr
    assert "Traceback" not in stderr


#: A served file that raises while imported: (source, what the report must show).
IMPORT_FAILURES: list[tuple[str, list[str]]] = [
    (
        "from mcpkit import Server\nserver = Server('x')\ndef f():\n    return 1 / 0\nf()\n",
        ['broken.py", line 5, in <module>', 'broken.py", line 4, in f', "ZeroDivisionError"],
    ),
    ("import no_such_module_for_mcpkit\n", ["ModuleNotFoundError", "no_such_module_for_mcpkit"]),
    ("x = (\n", ['broken.py", line 1', "SyntaxError"]),
    (
        "def g():\n    try:\n        {}['k']\n    except KeyError as e:\n"
        "        raise RuntimeError('config broken') from e\ng()\n",
        ["KeyError: 'k'", "direct cause", "RuntimeError: config broken"],
    ),
]


@pytest.mark.parametrize(("source", "shown"), IMPORT_FAILURES, ids=lambda v: str(v)[:24])
def test_an_import_failure_shows_only_the_files_own_frames(
    tmp_path: Path, source: str, shown: list[str]
) -> None:
    """The traceback starts in the served file: mcpkit's and importlib's frames, which
    come first otherwise, tell its author nothing."""
    (tmp_path / "broken.py").write_text(source)
    done = run_cli("broken.py", cwd=tmp_path)
    stderr = done.stderr.decode()
    assert done.returncode == 1, stderr
    assert done.stdout == b""
    assert stderr.startswith("mcpkit: broken.py raised while being imported:\n"), stderr
    for text in shown:
        assert text in stderr, stderr
    assert "mcpkit/cli" not in stderr, stderr
    assert "importlib" not in stderr, stderr


FAILING_LIFESPAN = """\
from contextlib import asynccontextmanager
from mcpkit import Server

@asynccontextmanager
async def lifespan(server):
    raise RuntimeError("database unreachable")
    yield

server = Server("x", lifespan=lifespan)
"""


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_failing_lifespan_is_reported_without_mcpkits_frames(
    tmp_path: Path, transport: str
) -> None:
    """Status 1, the file's own frames (on stdio, where nothing else reports it) or the
    log's report and one line (over HTTP), never the CLI's traceback through anyio."""
    (tmp_path / "life.py").write_text(FAILING_LIFESPAN)
    args = ["--transport", "http", "--port", "0"] if transport == "http" else []
    done = run_cli("life.py", *args, cwd=tmp_path)
    stderr = done.stderr.decode()
    assert done.returncode == 1, stderr
    assert done.stdout == b""
    assert 'life.py", line 6, in lifespan' in stderr, stderr
    assert "RuntimeError: database unreachable" in stderr, stderr
    assert "mcpkit/cli" not in stderr, stderr
    if transport == "stdio":
        assert stderr.startswith("mcpkit: the server stopped on an error:\n"), stderr
        assert "anyio" not in stderr, stderr
    else:
        assert stderr.endswith(
            "mcpkit: the application's lifespan startup failed, so the server did not start "
            "(the log says why)\n"
        ), stderr
        # It never said it was serving: that line comes once the startup has completed.
        assert "serving" not in stderr, stderr
