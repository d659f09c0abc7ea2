"""The conformance client (``examples/conformance_client.py``), run the way the harness runs
it (``MCP_CONFORMANCE_SCENARIO`` set, the server as the last argument), against
``mcpkit run examples/everything.py`` over stdio and over Streamable HTTP; the everything
server serves what the harness's mock servers serve for the handshake-era client scenarios.
The client runs on asyncio and on trio (``MCPKIT_BACKEND``), and its scenario functions also
run in memory: only the transport differs. ``test_conformance_harness.py`` runs it against
the harness itself.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Iterator, Mapping
from types import ModuleType

import anyio
import pytest

from mcpkit.testing import connect_memory
from mcpkit.types import ElicitRequestParams

from .conftest import EXAMPLES, load_module
from .test_conformance_harness import ServerProcess

CLIENT = EXAMPLES / "conformance_client.py"
EVERYTHING = EXAMPLES / "everything.py"
SERVER_ARGV = [sys.executable, "-m", "mcpkit", "run", str(EVERYTHING)]
#: The in-scope client scenarios of tests/conformance/scenarios.json (checked there).
IN_SCOPE = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "json-schema-2020-12-preservation",
    "sse-retry",
]
TIMEOUT = 30.0  # the harness's own per-client bound


def client_env(scenario: str | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_CONFORMANCE_")}
    if scenario is not None:
        env["MCP_CONFORMANCE_SCENARIO"] = scenario
    return {**env, **extra}


def run_client(target: list[str], env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """Run the client to completion (bounded), capturing its output."""
    return subprocess.run(
        [sys.executable, str(CLIENT), *target],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


@pytest.fixture
def conformance_client() -> Iterator[ModuleType]:
    yield from load_module(CLIENT, "_conformance_client_example")


@pytest.fixture
def everything() -> Iterator[ModuleType]:
    yield from load_module(EVERYTHING, "_everything_for_client_tests")


@pytest.mark.anyio
async def test_every_in_scope_scenario_passes_over_stdio(anyio_backend: str) -> None:
    """Each scenario in its own client process (as the harness runs them), the five at
    once to keep the suite fast; every failure is reported with the client's stderr."""
    failures: dict[str, str] = {}

    async def run(scenario: str) -> None:
        env = client_env(scenario, MCPKIT_BACKEND=anyio_backend)
        done = await anyio.run_process(
            [sys.executable, str(CLIENT), shlex.join(SERVER_ARGV)], env=env, check=False
        )
        if done.returncode != 0:
            failures[scenario] = f"exit {done.returncode}: {done.stderr.decode()}"

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            for scenario in IN_SCOPE:
                tg.start_soon(run, scenario)
    assert failures == {}


@pytest.mark.anyio
async def test_every_in_scope_scenario_passes_over_streamable_http(anyio_backend: str) -> None:
    """The same against ``mcpkit run examples/everything.py --transport http``, the client
    given the server's URL as the harness gives it (``sse-retry``: the server closes the
    call's stream and the client resumes it with GET + ``Last-Event-ID``)."""
    server = ServerProcess()
    failures: dict[str, str] = {}
    try:
        url = await anyio.to_thread.run_sync(server.url)

        async def run(scenario: str) -> None:
            env = client_env(scenario, MCPKIT_BACKEND=anyio_backend)
            done = await anyio.run_process([sys.executable, str(CLIENT), url], env=env, check=False)
            if done.returncode != 0:
                failures[scenario] = f"exit {done.returncode}: {done.stderr.decode()}"

        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:
                for scenario in IN_SCOPE:
                    tg.start_soon(run, scenario)
    finally:
        await anyio.to_thread.run_sync(server.stop)
    assert failures == {}, f"server log:\n{server.log_tail()}"


@pytest.mark.anyio
@pytest.mark.parametrize("scenario", IN_SCOPE)
async def test_scenario_functions_run_in_memory(
    conformance_client: ModuleType, everything: ModuleType, scenario: str
) -> None:
    """The same scenario code over another transport: nothing but the channel changes."""
    spec = conformance_client.SCENARIOS[scenario]
    with anyio.fail_after(10):
        async with connect_memory(
            everything.server, era="handshake", **spec.client_options
        ) as client:
            await spec.run(client)


def test_request_metadata_runs_statelessly_against_the_everything_server() -> None:
    """At 2026-07-28 the client speaks the stateless era to the everything server over
    stdio (discover, then tools/list with per-request ``_meta``)."""
    env = client_env("request-metadata", MCP_CONFORMANCE_PROTOCOL_VERSION="2026-07-28")
    done = run_client(SERVER_ARGV, env)
    assert done.returncode == 0, done.stderr


def test_the_command_may_be_given_as_separate_words_and_a_revision_chosen() -> None:
    done = run_client(
        SERVER_ARGV, client_env("tools_call", MCP_CONFORMANCE_PROTOCOL_VERSION="2024-11-05")
    )
    assert done.returncode == 0, done.stderr


def test_a_failing_scenario_exits_1_with_the_reason() -> None:
    # SEP-1034 defaults exist from 2025-11-25; the everything server refuses them before.
    env = client_env(
        "elicitation-sep1034-client-defaults", MCP_CONFORMANCE_PROTOCOL_VERSION="2025-06-18"
    )
    done = run_client([shlex.join(SERVER_ARGV)], env)
    assert done.returncode == 1
    assert "test_client_elicitation_defaults failed" in done.stderr
    assert "2025-11-25" in done.stderr


def test_a_server_that_does_not_speak_mcp_fails_the_scenario() -> None:
    done = run_client([sys.executable, "-c", "pass"], client_env("initialize"))
    assert done.returncode == 1
    assert "scenario 'initialize' failed" in done.stderr


def test_an_unknown_scenario_exits_2() -> None:
    done = run_client([shlex.join(SERVER_ARGV)], client_env("no-such-scenario"))
    assert done.returncode == 2
    assert "unknown scenario 'no-such-scenario'" in done.stderr


@pytest.mark.parametrize(
    ("scenario", "target", "extra", "message"),
    [
        ("sep-2640-client-no-prefetch", [shlex.join(SERVER_ARGV)], {}, "skills extension"),
        ("auth/basic-cimd", [shlex.join(SERVER_ARGV)], {}, "authorization"),
        (None, [shlex.join(SERVER_ARGV)], {}, "MCP_CONFORMANCE_SCENARIO"),
        ("tools_call", [], {}, "usage"),
        ("tools_call", [""], {}, "no server given"),
        (
            "tools_call",
            [shlex.join(SERVER_ARGV)],
            {"MCP_CONFORMANCE_PROTOCOL_VERSION": "2030-01-01"},
            "'2030-01-01' is not implemented",
        ),
        ("tools_call", [shlex.join(SERVER_ARGV)], {"MCP_CONFORMANCE_CONTEXT": "{"}, "not JSON"),
        (
            "tools_call",
            [shlex.join(SERVER_ARGV)],
            {"MCP_CONFORMANCE_CONTEXT": "[1]"},
            "not a JSON object",
        ),
        (
            "tools_call",
            ["http://localhost:3000/mcp", "--extra"],
            {},
            "a URL takes no further arguments",
        ),
    ],
)
def test_usage_problems_exit_2_before_anything_is_started(
    conformance_client: ModuleType,
    capsys: pytest.CaptureFixture[str],
    scenario: str | None,
    target: list[str],
    extra: dict[str, str],
    message: str,
) -> None:
    """Out-of-scope scenarios, a missing scenario or server, an unknown revision and a
    URL followed by more words are refused (``main`` in this process: nothing is spawned
    or connected for them)."""
    assert conformance_client.main(target, client_env(scenario, **extra)) == 2
    assert message in capsys.readouterr().err


@pytest.mark.anyio
async def test_defaults_callback(conformance_client: ModuleType) -> None:
    accept = conformance_client.accept_with_defaults
    form = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "tags": {"type": "array", "items": {"type": "string"}, "default": ["a"]},
            "note": {"type": "string"},
        },
    }
    answer = await accept(ElicitRequestParams(message="m", requested_schema=form))
    assert answer.action == "accept"
    assert answer.content == {"name": "John Doe", "tags": ["a"]}
    # A required property without a default cannot be answered without a user.
    required = {**form, "required": ["note"]}
    answer = await accept(ElicitRequestParams(message="m", requested_schema=required))
    assert answer.action == "decline"
    url = ElicitRequestParams(
        message="m", mode="url", url="https://example.com", elicitation_id="e"
    )
    assert (await accept(url)).action == "decline"
