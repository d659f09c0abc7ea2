"""The architecture holds: imports point down, the core is free of I/O, `import mcpkit`
stays light, and every package's ``__all__`` is honest."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "mcpkit"

# Which mcpkit packages each layer may import (besides itself).
ALLOWED: dict[str, set[str]] = {
    "types": set(),
    "exceptions": {"types"},
    "protocol": {"types", "exceptions"},
    "aio": {"types", "exceptions", "protocol"},
    "transports": {"types", "exceptions", "protocol", "aio"},
    "server": {"types", "exceptions", "protocol", "aio", "transports", "_version"},
    "client": {"types", "exceptions", "protocol", "aio", "transports", "_version"},
    "testing": {"types", "exceptions", "protocol", "aio", "transports", "server", "client"},
    "cli": {"types", "exceptions", "protocol", "aio", "transports", "server", "client", "_version"},
}
NO_IO = {
    "asyncio",
    "anyio",
    "trio",
    "threading",
    "socket",
    "subprocess",
    "time",
    "select",
    "selectors",
}
THIRD_PARTY_OK = {
    "types": {"msgspec"},
    "exceptions": {"msgspec"},
    # re2 (google-re2): pure computation, JSON Schema patterns in linear time.
    "protocol": {"msgspec", "re2"},
    # trio only to start a background task that outlives a request (aio/_background.py).
    # exceptiongroup: the backport of BaseExceptionGroup (Python 3.10; aio/_groups.py).
    "aio": {"msgspec", "anyio", "trio", "exceptiongroup"},
    # Each I/O library appears in its own transport module only (httptools: the HTTP
    # client's response parser, transports/_h1_wire.py).
    "transports": {"msgspec", "anyio", "httpx", "httptools", "uvicorn", "websockets"},
    "server": {"msgspec", "anyio"},
    "client": {"msgspec", "anyio"},
    "testing": {"anyio", "exceptiongroup"},
    "cli": set(),
}
STDLIB = set(sys.stdlib_module_names)


def layer_of(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".py")


def imports(path: Path) -> list[tuple[str, int]]:
    """(absolute module, line) for every import in a source file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = ".".join(("mcpkit", *path.relative_to(SRC).parent.parts))
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.append((module, node.lineno))
    return found


SOURCES = sorted(SRC.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(SRC)))
def test_imports_point_down(path: Path) -> None:
    layer = layer_of(path)
    if layer in {"__init__", "__main__", "_version"}:
        return
    for module, line in imports(path):
        top = module.split(".")[0]
        where = f"{path.relative_to(SRC)}:{line} imports {module}"
        if top == "mcpkit":
            target = module.split(".")[1] if "." in module else ""
            assert target == layer or target in ALLOWED[layer], where
        elif top in STDLIB or top == "__future__":
            if layer in {"types", "protocol", "exceptions"}:
                assert top not in NO_IO, where
        else:
            assert top in THIRD_PARTY_OK[layer], where


def run_python(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=60
    ).stdout


@pytest.mark.parametrize(
    ("module", "forbidden"),
    [
        (
            "mcpkit",
            {
                "anyio",
                "httpx",
                "starlette",
                "uvicorn",
                "mcpkit.server",
                "mcpkit.client",
                "mcpkit.aio",
                "re2",  # imported on the first pattern compiled
            },
        ),
        ("mcpkit.types", {"anyio", "asyncio", "trio", "mcpkit.protocol"}),
        ("mcpkit.protocol", {"anyio", "asyncio", "trio", "threading", "socket", "re2"}),
        ("mcpkit.client", {"mcpkit.server", "httpx", "starlette", "uvicorn"}),
        ("mcpkit.server", {"mcpkit.client", "httpx", "starlette", "uvicorn", "re2"}),
    ],
)
def test_import_cost(module: str, forbidden: set[str]) -> None:
    # What importing the module adds to msgspec, the one dependency of its layers: on
    # Python 3.10 msgspec's own import (uuid -> platform -> subprocess) loads threading.
    code = f"import sys, msgspec; known = set(sys.modules); import {module}; "
    code += "print('\\n'.join(set(sys.modules) - known))"
    loaded = set(run_python(code).split())
    assert not (loaded & forbidden), sorted(loaded & forbidden)


def test_lazy_names_resolve() -> None:
    out = run_python(
        "import mcpkit; print(mcpkit.Client.__module__, mcpkit.LowLevelServer.__module__)"
    )
    assert out.split() == ["mcpkit.client._client", "mcpkit.server._lowlevel"]


@pytest.mark.parametrize(
    "package",
    [
        "mcpkit",
        "mcpkit.types",
        "mcpkit.protocol",
        "mcpkit.aio",
        "mcpkit.transports",
        "mcpkit.server",
        "mcpkit.client",
        "mcpkit.testing",
        "mcpkit.cli",
        "mcpkit.exceptions",
    ],
)
def test_all_is_honest(package: str) -> None:
    module = importlib.import_module(package)
    exported = module.__all__
    assert len(exported) == len(set(exported)), "duplicates in __all__"
    for name in exported:
        assert hasattr(module, name), f"{package}.__all__ names missing {name}"
    # Every public class and function defined in the package is exported.
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and value.__module__.startswith(package)
    }
    assert public <= set(exported), sorted(public - set(exported))


def test_no_pragma_no_cover_in_the_core() -> None:
    for layer in ("types", "protocol"):
        for path in (SRC / layer).rglob("*.py"):
            assert "pragma: no cover" not in path.read_text(), path
