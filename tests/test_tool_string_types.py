"""Tool parameters and results typed with file system paths (``pathlib``) and IP addresses
(``ipaddress``): JSON strings on the wire, as pydantic (so FastMCP) has them, with a
``format`` in the schema; the function gets the Python type. Registration refused them
("has no JSON Schema") and a returned path could not be encoded."""

from __future__ import annotations

import dataclasses
import ipaddress
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import pytest
from msgspec import UNSET

from mcpkit.server import Server
from mcpkit.types import CallToolResult, Tool

from ._toolcalls import call_once, listed_tools, text

pytestmark = pytest.mark.anyio


@dataclasses.dataclass
class Copy:
    source: Path
    targets: list[PurePosixPath]


def build() -> Server:
    server = Server("string-types", "1.0")

    @server.tool()
    def kind(p: Path) -> str:
        return f"{type(p).__name__}:{p}"

    @server.tool()
    def maybe(p: Path | None = None, where: Path = Path("/tmp")) -> str:
        return f"{p!r} {where!r}"

    @server.tool()
    def many(copy: Copy, windows: PureWindowsPath) -> str:
        targets = [type(t).__name__ for t in copy.targets]
        return f"{type(copy.source).__name__} {targets} {windows.drive}"

    @server.tool()
    def home() -> Path:
        return Path("/home/someone")

    @server.tool()
    def unannotated():  # type: ignore[no-untyped-def]  # (no return annotation on purpose)
        return [Path("/a"), ipaddress.ip_address("::1")]

    @server.tool()
    def address(a: ipaddress.IPv4Address, net: ipaddress.IPv6Network) -> str:
        return f"{a.is_private} {net.num_addresses}"

    @server.tool()
    def interface() -> ipaddress.IPv4Interface:
        return ipaddress.IPv4Interface("10.0.0.1/8")

    return server


async def schemas() -> dict[str, Tool]:
    return await listed_tools(build())


async def call(name: str, arguments: dict[str, Any]) -> CallToolResult:
    return await call_once(build(), name, arguments)


async def test_the_schema_says_string_with_a_format() -> None:
    tools = await schemas()
    path = {"type": "string", "format": "path"}
    assert tools["kind"].input_schema["properties"] == {"p": path}
    maybe = tools["maybe"].input_schema["properties"]
    assert maybe["p"] == {"anyOf": [path, {"type": "null"}], "default": None}
    assert maybe["where"] == {**path, "default": "/tmp"}
    assert tools["home"].output_schema == {
        "type": "object",
        "properties": {"result": path},
        "required": ["result"],
    }
    address = tools["address"].input_schema["properties"]
    assert address == {
        "a": {"type": "string", "format": "ipv4"},
        "net": {"type": "string", "format": "ipv6network"},
    }


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("kind", {"p": "/etc/hosts"}, "PosixPath:/etc/hosts"),
        ("maybe", {}, "None PosixPath('/tmp')"),
        ("maybe", {"p": "a/b", "where": "c"}, "PosixPath('a/b') PosixPath('c')"),
        (
            "many",
            {"copy": {"source": "s", "targets": ["t1", "t2"]}, "windows": "C:\\x"},
            "PosixPath ['PurePosixPath', 'PurePosixPath'] C:",
        ),
        ("address", {"a": "192.168.0.1", "net": "2001:db8::/64"}, "True 18446744073709551616"),
    ],
)
async def test_the_function_gets_the_python_type(
    name: str, arguments: dict[str, Any], expected: str
) -> None:
    result = await call(name, arguments)
    assert result.is_error is UNSET, result
    assert text(result) == expected


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("kind", {"p": 3}, "Invalid arguments: 'p' must be a string, got an integer"),
        (
            "many",
            {"copy": {"source": "s", "targets": ["t", None]}, "windows": "w"},
            "Invalid arguments: 'copy.targets[1]' must be a string, got null",
        ),
        (
            "address",
            {"a": "1.2.3", "net": "::/0"},
            "Invalid arguments: 'a' is invalid: not a valid IPv4Address",
        ),
        (
            # The address module's own message quotes the text, at any length: not sent.
            "address",
            {"a": "1.1.1.1", "net": "\x1b[31m" + "9" * 5000},
            "Invalid arguments: 'net' is invalid: not a valid IPv6Network",
        ),
    ],
)
async def test_a_wrong_value_is_a_tool_error_naming_the_field(
    name: str, arguments: dict[str, Any], expected: str
) -> None:
    result = await call(name, arguments)
    assert result.is_error is True
    assert text(result) == expected


async def test_results_travel_as_strings() -> None:
    home = await call("home", {})
    assert home.structured_content == {"result": "/home/someone"}
    assert text(home) == '{"result":"/home/someone"}'
    assert text(await call("unannotated", {})) == '["/a","::1"]'
    interface = await call("interface", {})
    assert interface.structured_content == {"result": "10.0.0.1/8"}
