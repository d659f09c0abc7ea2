"""The conformance client: what the official MCP conformance harness (npm
``@modelcontextprotocol/conformance``, client mode) runs against its mock servers.

Usage::

    MCP_CONFORMANCE_SCENARIO=tools_call python examples/conformance_client.py TARGET

TARGET is the server: an ``http://`` or ``https://`` URL (what the harness passes, appended
as the last argument), or a command line that starts a stdio server, e.g.
``"mcpkit run examples/everything.py"`` (one argument, split like a shell would; or the
command's words as separate arguments). The harness sets ``MCP_CONFORMANCE_SCENARIO``, and
for some scenarios ``MCP_CONFORMANCE_CONTEXT`` (JSON) and ``MCP_CONFORMANCE_PROTOCOL_VERSION``
(the revision it targets; the client asks for it when it is a handshake-era revision).
``MCPKIT_BACKEND=trio`` runs the client on trio instead of asyncio.

Exit status: 0 when the scenario ran to the end, 1 when it failed (the reason on stderr),
2 for a usage problem: no target, an unknown scenario, or a scenario that is out of scope
for now (authorization, the 2026-07-28 HTTP header scenarios, the skills extension). At
``MCP_CONFORMANCE_PROTOCOL_VERSION=2026-07-28`` the client speaks only the stateless era
(``server/discover``, then per-request ``_meta``; no ``initialize``). Only
:func:`transport_for` depends on the target (Streamable HTTP for a URL, stdio for a
command); every scenario is a function of a connected :class:`mcpkit.client.Client`.

``tests/test_conformance_harness.py`` runs the harness against this client;
``tests/conformance/scenarios.json`` says which client scenarios are in scope and why the
others are not.

Scenarios (the non-authorization client scenarios of the harness, 0.2.0-alpha.12, without
the 2026-07-28 HTTP header ones):

``initialize``
    initialize (protocol version and ``clientInfo``), then list the tools.
``tools_call``
    call ``add_numbers {"a": 5, "b": 3}``.
``elicitation-sep1034-client-defaults``
    answer the server's form by accepting every property's ``default`` (SEP-1034), while
    calling ``test_client_elicitation_defaults``.
``json-schema-2020-12-preservation``
    list the tools and pass ``json_schema_2020_12_tool``'s ``inputSchema`` back verbatim
    to ``json_schema_echo`` (SEP-1613, SEP-2106).
``sse-retry``
    call ``test_reconnection``. The scenario's checks (reconnect with GET after the
    ``retry`` delay, with ``Last-Event-ID``) are Streamable HTTP behaviour, done by the
    transport; over stdio the call simply completes.
``request-metadata`` (2026-07-28)
    list the tools: every request carries ``_meta`` (version, capabilities, client info)
    and the matching ``MCP-Protocol-Version`` header; the first request is refused with
    -32022 and retried with a supported version. The client declares elicitation,
    sampling and roots so that their capability checks apply.
``sep-2322-client-request-state`` (2026-07-28)
    call the four ``test_mrtr_*`` tools: input-required results are fulfilled with the
    elicitation callback and retried with a new id and the ``requestState`` echoed (or
    none when the server sent none); a result without ``resultType`` is complete.
``json-schema-ref-no-deref`` (2026-07-28)
    list the tools, whose ``inputSchema`` has a network ``$ref``: nothing fetches it
    (mcpkit never dereferences a ``$ref`` over the network).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import anyio

from mcpkit import __version__
from mcpkit.client import Client, ClientTransport, StdioTransport
from mcpkit.exceptions import TransportError
from mcpkit.types import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    MODERN_VERSIONS,
    CallToolResult,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    Root,
    TextContent,
)

__all__ = ["SCENARIOS", "Scenario", "ScenarioError", "main", "run_scenario", "transport_for"]

#: The harness kills a client after 30 s (``--timeout``); give up a little earlier, with a
#: message instead of a kill.
SCENARIO_TIMEOUT: Final = 25.0
CLIENT_INFO: Final = Implementation(name="mcpkit-conformance-client", version=__version__)
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2


class ScenarioError(Exception):
    """The server did not behave as the scenario needs (exit status 1)."""


class UsageError(Exception):
    """The client cannot run as asked (exit status 2)."""


ScenarioRun = Callable[[Client], Awaitable[None]]


@dataclass(frozen=True)
class Scenario:
    """A client scenario: what to do once connected, and which callbacks (and so which
    capabilities) the client declares for it (keyword arguments of :class:`Client`)."""

    run: ScenarioRun
    client_options: Mapping[str, Any] = field(default_factory=dict)


# -- helpers ----------------------------------------------------------------------------


async def tool_names(client: Client) -> list[str]:
    """The names of every tool the server lists (following pagination)."""
    return [tool.name async for tool in client.iter_tools()]


async def call_listed_tool(
    client: Client, name: str, arguments: Mapping[str, Any] | None = None
) -> CallToolResult:
    """Call a tool the server must list, and insist that it succeeds.

    Raises:
        ScenarioError: the tool is not listed, or the call returned a tool error.
    """
    names = await tool_names(client)
    if name not in names:
        raise ScenarioError(f"the server does not list the tool {name!r} (it lists {names})")
    result = await client.call_tool(name, arguments)
    if result.is_error is True:
        raise ScenarioError(f"{name} failed: {text_of(result)}")
    return result


def text_of(result: CallToolResult) -> str:
    """The text blocks of a tool result, joined."""
    return " ".join(block.text for block in result.content if isinstance(block, TextContent))


async def accept_with_defaults(params: ElicitRequestParams) -> ElicitResult:
    """Elicitation callback: accept the form with every property's ``default`` filled in
    (SEP-1034, ``client/elicitation.mdx`` 2025-11-25). A form with a required property that
    has no default cannot be answered without a user, so it is declined."""
    schema = params.requested_schema if isinstance(params.requested_schema, dict) else {}
    properties = schema.get("properties", {})
    if params.mode == "url" or not isinstance(properties, dict):
        return ElicitResult(action="decline")
    content: dict[str, Any] = {}
    for name, prop in properties.items():
        if isinstance(prop, dict) and "default" in prop:
            content[name] = prop["default"]
    required = schema.get("required", [])
    if isinstance(required, list) and any(name not in content for name in required):
        return ElicitResult(action="decline")
    return ElicitResult(action="accept", content=content)


# -- scenarios --------------------------------------------------------------------------


async def refuse_sampling(params: CreateMessageRequestParams) -> CreateMessageResult:
    """Sampling callback for scenarios that only need the capability declared: no scenario
    server samples, so being asked is a failure."""
    raise ScenarioError("the server asked for sampling, which this scenario never needs")


async def initialize(client: Client) -> None:
    """``initialize``: the handshake happened on connecting; list the tools."""
    if client.protocol_version not in HANDSHAKE_VERSIONS:
        raise ScenarioError(f"unexpected protocol version {client.protocol_version!r}")
    await tool_names(client)


async def tools_call(client: Client) -> None:
    """``tools_call``: call ``add_numbers`` with two numbers."""
    await call_listed_tool(client, "add_numbers", {"a": 5, "b": 3})


async def elicitation_defaults(client: Client) -> None:
    """``elicitation-sep1034-client-defaults``: the server elicits a form whose properties
    all have defaults; :func:`accept_with_defaults` answers it."""
    await call_listed_tool(client, "test_client_elicitation_defaults", {})


async def json_schema_preservation(client: Client) -> None:
    """``json-schema-2020-12-preservation``: echo the focal tool's input schema back
    exactly as received."""
    tools = {tool.name: tool async for tool in client.iter_tools()}
    focal = tools.get("json_schema_2020_12_tool")
    if focal is None:
        raise ScenarioError("the server does not list the tool 'json_schema_2020_12_tool'")
    await call_listed_tool(client, "json_schema_echo", {"schema": focal.input_schema})


async def sse_retry(client: Client) -> None:
    """``sse-retry``: call ``test_reconnection``; over Streamable HTTP the server closes
    the response stream mid-call and the transport must resume it (SEP-1699)."""
    await call_listed_tool(client, "test_reconnection", {})


async def request_metadata(client: Client) -> None:
    """``request-metadata``: connecting (``server/discover``, refused once with -32022 and
    retried) and listing the tools exercise the per-request metadata."""
    if client.protocol_version not in MODERN_VERSIONS:
        raise ScenarioError(f"unexpected protocol version {client.protocol_version!r}")
    await tool_names(client)


async def mrtr_request_state(client: Client) -> None:
    """``sep-2322-client-request-state``: each tool answers with an input-required result
    first (except the last two); the client's MRTR loop does the rest."""
    for name in ("test_mrtr_echo_state", "test_mrtr_no_state"):
        result = await call_listed_tool(client, name, {})
        if result.result_type != "complete":
            raise ScenarioError(f"{name} did not end with a complete result")
    await call_listed_tool(client, "test_mrtr_unrelated", {})
    await call_listed_tool(client, "test_mrtr_no_result_type", {})


async def json_schema_ref_no_deref(client: Client) -> None:
    """``json-schema-ref-no-deref``: list the tools; their schemas stay as received."""
    names = await tool_names(client)
    if "lookup_user" not in names:
        raise ScenarioError(f"the server does not list the tool 'lookup_user' (it lists {names})")


#: Callbacks that declare every client capability, for the request-metadata checks.
ALL_CAPABILITIES: Final[Mapping[str, Any]] = {
    "elicitation": accept_with_defaults,
    "sampling": refuse_sampling,
    "roots": [Root(uri="file:///conformance", name="conformance")],
}

SCENARIOS: Final[Mapping[str, Scenario]] = {
    "initialize": Scenario(initialize),
    "tools_call": Scenario(tools_call),
    "elicitation-sep1034-client-defaults": Scenario(
        elicitation_defaults, {"elicitation": accept_with_defaults}
    ),
    "json-schema-2020-12-preservation": Scenario(json_schema_preservation),
    "sse-retry": Scenario(sse_retry),
    "request-metadata": Scenario(request_metadata, ALL_CAPABILITIES),
    "sep-2322-client-request-state": Scenario(
        mrtr_request_state, {"elicitation": accept_with_defaults}
    ),
    "json-schema-ref-no-deref": Scenario(json_schema_ref_no_deref),
}

#: Harness client scenarios this client knows about but does not run yet, with the reason.
OUT_OF_SCOPE: Final[Mapping[str, str]] = {
    "http-standard-headers": "needs the SEP-2243 header scenarios driven (Mcp-Param work)",
    "http-custom-headers": "needs Mcp-Param-{Name} headers from x-mcp-header (SEP-2243)",
    "http-invalid-tool-headers": "needs x-mcp-header validation of listed tools (SEP-2243)",
}


def scenario_for(name: str) -> Scenario:
    """The scenario called ``name``.

    Raises:
        UsageError: unknown, or out of scope for now.
    """
    scenario = SCENARIOS.get(name)
    if scenario is not None:
        return scenario
    if name in OUT_OF_SCOPE:
        raise UsageError(f"scenario {name!r} is not implemented: it {OUT_OF_SCOPE[name]}")
    if name.startswith("auth/"):
        raise UsageError(f"scenario {name!r} is not implemented: authorization (OAuth)")
    if name.startswith("sep-2640-"):
        raise UsageError(f"scenario {name!r} is not implemented: the skills extension")
    known = ", ".join(sorted(SCENARIOS))
    raise UsageError(f"unknown scenario {name!r}; this client runs: {known}")


# -- transport and session --------------------------------------------------------------


def transport_for(target: Sequence[str]) -> ClientTransport:
    """The transport to the server: Streamable HTTP for an ``http(s)://`` URL, a stdio
    subprocess for a command line.

    Raises:
        UsageError: no target, or a URL with more arguments after it.
    """
    if len(target) == 1 and target[0].startswith(("http://", "https://")):
        return http_transport(target[0])
    argv = shlex.split(target[0]) if len(target) == 1 else list(target)
    if not argv:
        raise UsageError("no server given: pass a URL or a command line")
    if argv[0].startswith(("http://", "https://")):
        raise UsageError(f"a URL takes no further arguments: {shlex.join(argv)}")
    return StdioTransport(argv[0], argv[1:])


def http_transport(url: str) -> ClientTransport:
    """mcpkit's Streamable HTTP client transport to ``url`` (imported here: it needs
    httpx, which a stdio-only install does not have).

    Raises:
        UsageError: the transport is not available (httpx is not installed).
    """
    try:
        from mcpkit.client import StreamableHTTPTransport
    except ImportError:
        # TODO: drop this fallback once mcpkit.client exports the transport.
        from mcpkit.transports._http_client import StreamableHTTPTransport
    try:
        return StreamableHTTPTransport(url)
    except TransportError as exc:
        raise UsageError(str(exc)) from exc


def protocol_version(environ: Mapping[str, str]) -> str:
    """The revision to speak: the harness's target revision (a handshake one through
    ``initialize``, 2026-07-28 statelessly), the newest handshake one when none is set.

    Raises:
        UsageError: the harness targets a revision this client does not know.
    """
    wanted = environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "")
    if not wanted:
        return LATEST_HANDSHAKE_VERSION
    if wanted in HANDSHAKE_VERSIONS or wanted in MODERN_VERSIONS:
        return wanted
    raise UsageError(f"protocol version {wanted!r} is not implemented by this client")


async def run_scenario(
    scenario: Scenario, transport: ClientTransport, *, version: str = LATEST_HANDSHAKE_VERSION
) -> None:
    """Connect, run ``scenario``, disconnect: the whole client session.

    Raises:
        ScenarioError: the server did not behave as the scenario needs.
        MCPError: the protocol failed (a JSON-RPC error, a timeout, a closed connection).
    """
    async with Client(
        transport,
        client_info=CLIENT_INFO,
        protocol_version=version,
        timeout=SCENARIO_TIMEOUT,
        **scenario.client_options,
    ) as client:
        await scenario.run(client)


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Run the scenario named by ``MCP_CONFORMANCE_SCENARIO``; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    env = os.environ if environ is None else environ
    name = env.get("MCP_CONFORMANCE_SCENARIO", "")
    try:
        if not name:
            raise UsageError("set MCP_CONFORMANCE_SCENARIO to the scenario to run")
        if not args:
            raise UsageError("usage: conformance_client.py SERVER-URL-OR-COMMAND")
        scenario = scenario_for(name)
        if "MCP_CONFORMANCE_CONTEXT" in env:
            # Only authorization scenarios carry data; still refuse a malformed context.
            json.loads(env["MCP_CONFORMANCE_CONTEXT"])
        transport = transport_for(args)
        version = protocol_version(env)
    except UsageError as exc:
        print(f"conformance_client: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except json.JSONDecodeError as exc:
        print(f"conformance_client: MCP_CONFORMANCE_CONTEXT is not JSON: {exc}", file=sys.stderr)
        return EXIT_USAGE

    async def session() -> None:
        with anyio.fail_after(SCENARIO_TIMEOUT):
            await run_scenario(scenario, transport, version=version)

    try:
        anyio.run(session, backend=env.get("MCPKIT_BACKEND", "asyncio"))
    except Exception as exc:
        print(
            f"conformance_client: scenario {name!r} failed: {type(exc).__name__}: {exc}",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return 0


if __name__ == "__main__":
    sys.exit(main())
