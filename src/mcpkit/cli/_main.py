"""``mcpkit`` command-line entry point (argparse; no extra dependencies)."""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._version import __version__

__all__ = ["load_server", "main"]

TRANSPORTS = ("stdio",)


class CLIError(Exception):
    """A problem the user can fix; printed without a traceback."""


def load_server(target: str) -> Any:
    """Load ``FILE.py[:OBJECT]`` and return the object (default name ``server``).

    The file's directory is put first on ``sys.path``, as ``python FILE.py`` would, so the
    file can import its sibling modules.

    Raises:
        CLIError: the file or the object does not exist, or the object cannot serve.
    """
    path_text, name = target, "server"
    if ":" in target and not target.endswith(".py"):
        path_text, _, name = target.rpartition(":")
    if not name.isidentifier():
        raise CLIError(f"cannot parse target {target!r}; expected FILE.py[:OBJECT]")
    path = Path(path_text)
    if not path.is_file():
        raise CLIError(f"no such file: {path_text}")
    module_name = f"_mcpkit_target_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise CLIError(f"cannot load {path_text} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, str(path.resolve().parent))
    spec.loader.exec_module(module)
    try:
        server = getattr(module, name)
    except AttributeError:
        raise CLIError(f"{path_text} defines no object named {name!r}") from None
    if not callable(getattr(server, "serve_stdio", None)):
        raise CLIError(f"{path_text}:{name} is not an MCP server (it has no serve_stdio())")
    return server


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcpkit", description="Model Context Protocol tools.")
    parser.add_argument("--version", action="version", version=f"mcpkit {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="serve a server defined in a Python file")
    run.add_argument("target", help="FILE.py or FILE.py:OBJECT (default object: server)")
    run.add_argument(
        "--transport",
        choices=TRANSPORTS,
        default="stdio",
        help="how to serve (stdio for now; HTTP transports come later)",
    )
    run.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    run.add_argument(
        "--max-message-bytes",
        type=int,
        default=None,
        help="largest accepted message in bytes (default: the server's limit, 16 MiB)",
    )
    run.add_argument(
        "--log-level",
        default=os.environ.get("MCPKIT_LOG_LEVEL", "WARNING"),
        help="Python logging level for the server's own log (to stderr)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    from ..transports import note_parent

    note_parent()  # record who started us before anything slow happens
    args = _build_parser().parse_args(argv)
    # Diagnostics go to stderr: on stdio, stdout belongs to the protocol.
    logging.basicConfig(
        level=args.log_level.upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        if args.transport == "stdio":
            # Before user code runs: even an import-time print() must not reach stdout.
            from ..transports import claim_stdout

            claim_stdout()
        server = load_server(args.target)
        if args.max_message_bytes is not None:
            if args.max_message_bytes < 1:
                raise CLIError("--max-message-bytes must be positive")
            server.limits = dataclasses.replace(
                server.limits, max_message_bytes=args.max_message_bytes
            )
        server.run(args.transport, backend=args.backend)
    except CLIError as exc:
        print(f"mcpkit: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0
