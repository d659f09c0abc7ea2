"""Serving a directory: every way out of the root is refused (table-driven, in memory),
also when the tree changes between the check and the open (a directory swapped for a
link to outside was followed; a file swapped for a FIFO hung the open, and with it a
worker thread for good)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from msgspec import UNSET

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
        ("hello.txt%2F", -32602),  # other names of a file the OS would refuse
        ("sub//note.md", -32602),
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


@pytest.mark.parametrize(
    ("name", "uri"),
    [
        ("a b.txt", "files://a%20b.txt"),
        ("a%20b.txt", "files://a%2520b.txt"),  # a literal percent sign in the name
        ("a&b=c.txt", "files://a&b=c.txt"),
        ("q?.txt", "files://q%3F.txt"),
        ("é.txt", "files://%C3%A9.txt"),
    ],
)
async def test_contents_carry_a_uri_that_names_the_file_read(
    tree: Path, name: str, uri: str
) -> None:
    # It was rebuilt from the decoded path: 'files://a%2520b.txt' came back labelled
    # 'files://a%20b.txt', the URI of another file.
    (tree / name).write_text(name)
    async with connect_memory(server_for(tree)) as client:
        first = (await client.read_resource(uri)).contents[0]
        assert (first.uri, first.text) == (uri, name)
        again = (await client.read_resource(first.uri)).contents[0]
        assert again.text == name


async def test_text_that_json_inflates_is_a_blob(tree: Path) -> None:
    # 900 control characters are valid UTF-8 text, but 5,400 bytes of JSON: max_size
    # would not bound the message. As a blob they take 1,200.
    (tree / "control.txt").write_bytes(b"\x01" * 900)
    async with connect_memory(server_for(tree)) as client:
        part = (await client.read_resource("files://control.txt")).contents[0]
    assert part.text is UNSET
    assert isinstance(part.blob, str)
    assert len(part.blob) == 1200


def test_a_directory_swapped_for_a_link_after_the_check_is_not_followed(tree: Path) -> None:
    outside = tree.parent / "outside"
    outside.mkdir()
    (outside / "note.md").write_text("outside the root")

    class Swapped(DirectoryResources):
        def resolve(self, path: str) -> str:
            target = super().resolve(path)
            # Between the check and the open: "sub" becomes a link to outside the root.
            os.rename(tree / "sub", tree / "sub-was")
            os.symlink(outside, tree / "sub")
            return target

    with pytest.raises(RPCError) as info:
        Swapped(tree).read("sub/note.md")
    assert info.value.code == -32002


def test_a_file_swapped_for_a_fifo_after_the_check_is_refused_at_once(tree: Path) -> None:
    fifo = tree / "hello.txt"

    class Swapped(DirectoryResources):
        def resolve(self, path: str) -> str:
            target = super().resolve(path)
            fifo.unlink()
            os.mkfifo(fifo)
            return target

    outcome: list[BaseException | None] = []

    def read() -> None:
        try:
            Swapped(tree).read("hello.txt")
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # blocked opening the FIFO: release it before failing
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(10)
        pytest.fail("reading a FIFO blocked")
    assert isinstance(outcome[0], RPCError)
    assert outcome[0].code == -32002
