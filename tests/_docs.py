"""The documentation's fenced code blocks and prose paragraphs, and a served subprocess,
for ``tests/test_docs_snippets.py``."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.abc
import msgspec

ROOT = Path(__file__).resolve().parent.parent
#: The documents whose code is tested.
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: Put just before a block that is deliberately not runnable on its own.
FRAGMENT = "<!-- fragment -->"
#: Bound on every wait of a served subprocess.
LIMIT = 15.0

_FENCE = re.compile(r"^(```+|~~~+)\s*([\w+-]*)")


@dataclass(frozen=True)
class Block:
    """One fenced code block: ``path`` (relative to the repository), the ``line`` of its
    opening fence, its language (``""`` if none), its text, and whether it is marked as a
    fragment."""

    path: str
    line: int
    lang: str
    code: str
    fragment: bool

    @property
    def key(self) -> tuple[str, str]:
        """What identifies the block across edits: its file and first non-blank line."""
        first = next((line for line in self.code.splitlines() if line.strip()), "")
        return self.path, first.strip()

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


def blocks(documents: Sequence[Path] = DOCUMENTS, root: Path = ROOT) -> list[Block]:
    """Every fenced code block of ``documents`` (paths under ``root``), in order."""
    found: list[Block] = []
    for document in documents:
        lines = document.read_text(encoding="utf-8").splitlines()
        relative = document.relative_to(root).as_posix()
        index = 0
        while index < len(lines):
            opening = _FENCE.match(lines[index])
            if opening is None:
                index += 1
                continue
            fence, start = opening.group(1), index
            index += 1
            while index < len(lines) and not lines[index].startswith(fence):
                index += 1
            before = [line for line in lines[:start] if line.strip()]
            found.append(
                Block(
                    relative,
                    start + 1,
                    opening.group(2),
                    "\n".join(lines[start + 1 : index]) + "\n",
                    bool(before) and before[-1].strip() == FRAGMENT,
                )
            )
            index += 1
    return found


def paragraphs_mentioning(text: str) -> list[tuple[str, str]]:
    """``(file, paragraph)`` for every blank-line-separated paragraph or block of the
    documents that contains ``text``."""
    return [
        (document.relative_to(ROOT).as_posix(), paragraph)
        for document in DOCUMENTS
        for paragraph in re.split(r"\n\s*\n", document.read_text(encoding="utf-8"))
        if text in paragraph
    ]


class Served:
    """A running subprocess: ``ready`` is the match of the line it announced itself with;
    ``stderr`` what it wrote there so far."""

    def __init__(self, process: anyio.abc.Process, ready: re.Match[bytes]) -> None:
        self.process = process
        self.ready = ready
        self.stderr = b""

    async def interrupt(self) -> int:
        """Ctrl-C, and its exit status (bounded)."""
        self.process.send_signal(signal.SIGINT)
        with anyio.fail_after(LIMIT):
            return await self.process.wait()


@asynccontextmanager
async def serving(argv: Sequence[str], cwd: Path, ready: bytes) -> AsyncIterator[Served]:
    """Run ``python argv`` in ``cwd`` until its stderr matches the regex ``ready``; kill
    it on leaving (if it still runs). Its stderr keeps being read meanwhile (never full).
    """
    process = await anyio.open_process(
        [sys.executable, *argv], cwd=cwd, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert process.stderr is not None
    pattern, buffer = re.compile(ready), b""
    try:
        with anyio.fail_after(LIMIT):
            while (match := pattern.search(buffer)) is None:
                try:
                    buffer += await process.stderr.receive()
                except anyio.EndOfStream:
                    raise AssertionError(f"{argv} ended: {buffer.decode()}") from None
        served = Served(process, match)
        served.stderr = buffer
        async with anyio.create_task_group() as tg:

            async def drain() -> None:
                assert process.stderr is not None
                async for chunk in process.stderr:
                    served.stderr += chunk

            tg.start_soon(drain)
            try:
                yield served
            finally:
                tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                process.kill()
            await process.aclose()


# -- fixtures completing blocks that use names they do not define ------------------------


class NameForm(msgspec.Struct):
    """The README's 2026-07-28 tool asks for this form."""

    name: str


class DatesForm(msgspec.Struct):
    """(ditto)"""

    dates: str


#: Defines the ``server`` of the README's own-uvicorn recipe.
HOST_FIXTURE = """\
from mcpkit import Server

server = Server("notes", "1.0.0")
"""
