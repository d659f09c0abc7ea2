"""Serving a directory: every way out of the root is refused (table-driven, in memory)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcpkit.exceptions import LocalProtocolError, RPCError
from mcpkit.server import DirectoryResources, Server
from mcpkit.testing import connect_memory

pytestmark = pytest.mark.anyio


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    (root / "sub").mkdir(parents=True)
    (root / "hello.txt").write_text("hello ✓")
    (root / "sub" / "note.md").write_text("# note")
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    (root / "big.txt").write_text("x" * 2000)
    (root / "%2e%2e").write_text("a file literally named %2e%2e")
    (tmp_path / "secret.txt").write_text("secret")
    sibling = tmp_path / "data2"
    sibling.mkdir()
    (sibling / "other.txt").write_text("sibling")
    os.symlink(tmp_path / "secret.txt", root / "escape.txt")
    os.symlink(root / "hello.txt", root / "inside-link.txt")
    os.symlink(tmp_path, root / "up")
    return root


def server_for(root: Path) -> Server:
    server = Server("files")
    server.add_directory(root, uri_prefix="files://", max_size=1000)
    return server


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("hello.txt", "hello ✓"),
        ("sub/note.md", "# note"),
        ("inside-link.txt", "hello ✓"),
        ("%252e%252e", "a file literally named %2e%2e"),
    ],
)
async def test_files_inside_are_served(tree: Path, path: str, text: str) -> None:
    async with connect_memory(server_for(tree)) as client:
        result = await client.read_resource(f"files://{path}")
    assert result.contents[0].text == text


async def test_binary_files_are_blobs(tree: Path) -> None:
    async with connect_memory(server_for(tree)) as client:
        result = await client.read_resource("files://image.png")
    part = result.contents[0]
    assert part.mime_type == "image/png"
    assert part.blob == "iVBORw0KGgoA/w=="


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("../secret.txt", -32602),
        ("sub/../../secret.txt", -32602),
        ("%2e%2e/secret.txt", -32602),
        ("%2E%2E/secret.txt", -32602),
        ("sub/%2e%2e/%2e%2e/secret.txt", -32602),
        ("./hello.txt", -32602),
        ("/etc/passwd", -32602),
        ("..%2fsecret.txt", -32602),
        ("hello.txt%00.png", -32602),
        ("sub%5c..%5c..%5csecret.txt", -32602),
        ("escape.txt", -32602),
        ("up/secret.txt", -32602),
        ("up/data2/other.txt", -32602),
        ("C:/Windows/win.ini", -32602),
        ("missing.txt", -32002),
        ("sub", -32002),
        ("big.txt", -32603),
    ],
)
async def test_every_way_out_is_refused(tree: Path, path: str, code: int) -> None:
    async with connect_memory(server_for(tree), era="handshake") as client:
        with pytest.raises(RPCError) as info:
            await client.read_resource(f"files://{path}")
    assert info.value.code == code
    assert "secret" not in str(info.value.data or "")


async def test_the_template_is_listed(tree: Path) -> None:
    async with connect_memory(server_for(tree)) as client:
        templates = [t async for t in client.iter_resource_templates()]
    assert [t.uri_template for t in templates] == ["files://{+path}"]
    assert str(tree) not in repr(templates)


def test_root_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(LocalProtocolError):
        DirectoryResources(tmp_path / "missing")
    with pytest.raises(LocalProtocolError):
        DirectoryResources(tmp_path, uri_prefix="x://{y}/")
