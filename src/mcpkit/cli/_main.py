"""``mcpkit`` command-line entry point (argparse; no extra dependencies)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.util
import logging
import os
import sys
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .._version import __version__

__all__ = ["load_server", "main"]

TRANSPORTS = ("stdio", "http", "sse", "ws")


class CLIError(Exception):
    """A problem the user can fix; printed without a traceback."""


class TargetFailed(Exception):
    """The served file raised while it was imported; ``report`` is its traceback, from
    the file's own frames on (mcpkit's and importlib's are of no use to its author)."""

    def __init__(self, report: str) -> None:
        super().__init__(report)
        self.report = report


def load_server(target: str) -> Any:
    """Load ``FILE.py[:OBJECT]`` and return the object (default name ``server``).

    The file's directory is put first on ``sys.path``, as ``python FILE.py`` would, so the
    file can import its sibling modules.

    Raises:
        CLIError: the file or the object does not exist, or the object cannot serve.
        TargetFailed: the file raised an exception while it was imported.
    """
    path_text, name = _split_target(target)
    if not name.isidentifier():
        raise CLIError(f"cannot parse target {target!r}; expected FILE.py[:OBJECT]")
    path = Path(path_text)
    if not path.is_file():
        raise CLIError(f"no such file: {path_text}")
    sys.path.insert(0, str(path.resolve().parent))
    module_name = _module_name(path)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise CLIError(f"cannot load {path_text} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[module_name]  # (as a failed import statement leaves it)
        raise TargetFailed(_user_traceback(exc, path)) from exc
    try:
        server = getattr(module, name)
    except AttributeError:
        raise CLIError(
            f"{path_text} defines no object named {name!r}{_others(module, path_text)}"
        ) from None
    if isinstance(server, type):
        raise CLIError(
            f"{path_text}:{name} is a class, not a server: create one, e.g. "
            f"{name} = {server.__name__}(...)"
        )
    if not _is_server(server):
        raise CLIError(
            f"{path_text}:{name} is of type {type(server).__name__}, not an mcpkit server "
            f"(mcpkit.Server or LowLevelServer){_others(module, path_text)}"
        )
    return server


def _others(module: Any, path_text: str) -> str:
    """The servers the file does define, as a hint: '; did you mean app.py:mcp?'."""
    found = [
        f"{path_text}:{attr}"
        for attr, value in vars(module).items()
        if not attr.startswith("_") and not isinstance(value, type) and _is_server(value)
    ]
    return f"; did you mean {' or '.join(found[:3])}?" if found else ""


def _is_server(value: Any) -> bool:
    """Whether ``value`` can be served (an mcpkit server, or anything that serves alike)."""
    return callable(getattr(value, "serve_stdio", None))


def _split_target(target: str) -> tuple[str, str]:
    """``FILE.py[:OBJECT]`` as (file, object name)."""
    if ":" in target and not target.endswith(".py"):
        path_text, _, name = target.rpartition(":")
        return path_text, name
    return target, "server"


def _user_traceback(exc: BaseException, path: Path) -> str:
    """``exc``'s traceback from the first frame in ``path`` on (all of it if none is:
    a syntax error is raised before the file runs, and shows its place itself)."""
    target = os.path.normcase(path.resolve())
    tb = exc.__traceback__
    while tb is not None and os.path.normcase(tb.tb_frame.f_code.co_filename) != target:
        tb = tb.tb_next
    if tb is None and not isinstance(exc, SyntaxError):
        tb = exc.__traceback__
    return "".join(traceback.TracebackException(type(exc), exc, tb).format())


def _module_name(path: Path) -> str:
    """The name the served file is imported under: its own (``server`` for server.py)
    when that name, looked up on ``sys.path``, finds this very file, so that what it
    defines can be pickled by reference (a ``ProcessPoolExecutor`` or multiprocessing
    child started with "spawn" or "forkserver" imports it by that name; its sibling
    modules importing it get the same module, not a second copy). Otherwise (the name
    is taken or shadowed, or names a standard module: a file called json.py must not
    become everyone's ``json``) a private one."""
    stem = path.stem
    private = f"_mcpkit_target_{stem}"
    if not stem.isidentifier() or stem in sys.modules or stem in sys.stdlib_module_names:
        return private
    try:
        found = importlib.util.find_spec(stem)
        origin = found.origin if found is not None else None
        return stem if origin is not None and Path(origin).samefile(path) else private
    except (ImportError, ValueError, OSError):
        return private


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
        help="stdio, http (Streamable HTTP), sse (the 2024-11-05 HTTP+SSE transport) "
        "or ws (WebSocket)",
    )
    run.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    http = run.add_argument_group("HTTP transports (http, sse, ws)")
    http.add_argument("--host", default=None, help="address to bind (default: 127.0.0.1)")
    http.add_argument("--port", type=int, default=None, help="port (default 8000; 0: any free)")
    http.add_argument(
        "--path", default=None, help="the endpoint's path (default /mcp; sse: /sse; ws: /ws)"
    )
    http.add_argument(
        "--stateless", action="store_true", help="http: no sessions, every POST stands alone"
    )
    http.add_argument(
        "--json-response", action="store_true", help="http: answer with JSON, not SSE streams"
    )
    http.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="also accept this Host (DNS-rebinding protection; repeatable; '*' for any)",
    )
    http.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="also accept this Origin, e.g. https://app.example.com (repeatable)",
    )
    http.add_argument(
        "--ssl-certfile",
        metavar="FILE",
        help="serve TLS only (https, wss) with this PEM certificate chain",
    )
    http.add_argument(
        "--ssl-keyfile",
        metavar="FILE",
        help="its PEM private key, if not in the certificate file (the password of an "
        "encrypted one: $MCPKIT_SSL_KEYFILE_PASSWORD)",
    )
    run.add_argument(
        "--max-message-bytes",
        type=int,
        default=None,
        help="largest accepted message in bytes (default: 16 MiB over stdio; 4 MiB, the "
        "body or message limit of the HTTP and WebSocket apps, over the others)",
    )
    run.add_argument(
        "--log-level",
        default=None,
        help="Python logging level for the server's own log (to stderr; default: "
        "$MCPKIT_LOG_LEVEL, else WARNING). A served file that configures logging itself "
        "keeps its configuration; this level then applies to mcpkit's loggers",
    )
    return parser


def _http_options(args: argparse.Namespace) -> dict[str, Any]:
    from ..protocol import TransportSecurity, wildcard_bind

    if args.backend != "asyncio":
        raise CLIError("the HTTP transports run on asyncio (uvicorn); drop --backend trio")
    args.host = args.host or "127.0.0.1"
    args.port = 8000 if args.port is None else args.port
    if not 0 <= args.port <= 65535:
        raise CLIError(f"--port must be 0..65535, not {args.port}")
    if args.path is not None and not args.path.startswith("/"):
        raise CLIError(f"--path must start with '/': {args.path!r}")
    from ..server._running import serving_line

    def announce(server: Any) -> None:
        line = serving_line(args.transport, server.url, args.path)
        print(line, file=sys.stderr, flush=True)
        if wildcard_bind(args.host) and not args.allow_host:
            # Reachable from elsewhere, but every request naming this machine by another
            # name or address is refused (421, DNS-rebinding protection): say so now,
            # rather than leave the operator to find out from clients.
            print(
                "mcpkit: bound to all interfaces, but only requests for localhost, "
                "127.0.0.1 or [::1] are accepted; add --allow-host NAME for each name "
                "or address clients use (--allow-host '*' for any)",
                file=sys.stderr,
                flush=True,
            )

    options: dict[str, Any] = {"host": args.host, "port": args.port, "ready": announce}
    try:
        options["security"] = TransportSecurity.for_bind(
            args.host,
            args.port,
            allowed_hosts=args.allow_host or None,
            allowed_origins=args.allow_origin or None,
        )
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if args.path is not None:
        options["path"] = args.path
    if args.ssl_keyfile is not None and args.ssl_certfile is None:
        raise CLIError("--ssl-keyfile needs --ssl-certfile")
    if args.ssl_certfile is not None:
        options["ssl_certfile"] = args.ssl_certfile
        options["ssl_keyfile"] = args.ssl_keyfile
        options["ssl_keyfile_password"] = os.environ.get("MCPKIT_SSL_KEYFILE_PASSWORD")
    if args.max_message_bytes is not None:
        # The app's own limit too: it applies first (a body, or a WebSocket message).
        limit = "max_message_bytes" if args.transport == "ws" else "max_body_bytes"
        options[limit] = args.max_message_bytes
    if args.transport == "http":
        options["stateless"] = args.stateless
        options["json_response"] = args.json_response
    elif args.stateless or args.json_response:
        raise CLIError("--stateless and --json-response apply to --transport http only")
    return options


#: The options that only mean something to the HTTP transports.
_HTTP_ONLY = (
    ("host", "--host"),
    ("port", "--port"),
    ("path", "--path"),
    ("stateless", "--stateless"),
    ("json_response", "--json-response"),
    ("allow_host", "--allow-host"),
    ("allow_origin", "--allow-origin"),
    ("ssl_certfile", "--ssl-certfile"),
    ("ssl_keyfile", "--ssl-keyfile"),
)


def _check_stdio(args: argparse.Namespace) -> None:
    # Left at its default: None, False or []; `is not False`, so that --port 0 counts.
    given = [
        flag
        for name, flag in _HTTP_ONLY
        if (value := getattr(args, name)) not in (None, []) and value is not False
    ]
    if given:
        raise CLIError(
            f"{', '.join(given)}: for the HTTP transports only (add --transport http, sse or ws)"
        )


_LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


@contextlib.contextmanager
def _logging_for(level: str, *, explicit: bool) -> Iterator[None]:
    """Send diagnostics to stderr (on stdio, stdout belongs to the protocol), around the
    import of the served file.

    A logging configuration of the file's own (say ``logging.basicConfig(level=...)`` at
    import) stays in force, as under ``python FILE.py``: configuring the root logger
    first made it a silent no-op. So the root logger gets no handler until the file is
    imported; meanwhile the handler of last resort writes in our format at our level (for
    what the file logs at import), and afterwards our handler is added only if the file
    added none. A level asked for explicitly then still applies to mcpkit's loggers.
    """
    root = logging.getLogger()
    root.setLevel(level)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(_LOG_FORMAT))
    handler.setLevel(level)
    last_resort, logging.lastResort = logging.lastResort, handler
    try:
        yield
    finally:
        logging.lastResort = last_resort
    if not root.handlers:
        root.addHandler(handler)
    elif explicit:
        logging.getLogger("mcpkit").setLevel(level)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    from ..exceptions import LocalProtocolError, TransportError
    from ..transports import note_parent

    note_parent()  # record who started us before anything slow happens
    args = _build_parser().parse_args(argv)
    chosen = args.log_level or os.environ.get("MCPKIT_LOG_LEVEL")
    level = (chosen or "WARNING").upper()
    if not isinstance(logging.getLevelName(level), int):
        print(f"mcpkit: unknown --log-level {chosen!r}", file=sys.stderr)
        return 2
    try:
        if args.transport == "stdio":
            _check_stdio(args)
            # Before user code runs: even an import-time print() must not reach stdout,
            # nor a child process started at import time inherit the protocol's stdin.
            from ..transports import claim_stdin, claim_stdout

            claim_stdout()
            claim_stdin()
        with _logging_for(level, explicit=chosen is not None):
            server = load_server(args.target)
        if args.max_message_bytes is not None:
            if args.max_message_bytes < 1:
                raise CLIError("--max-message-bytes must be positive")
            server.limits = dataclasses.replace(
                server.limits, max_message_bytes=args.max_message_bytes
            )
        options = {} if args.transport == "stdio" else _http_options(args)
        try:
            server.run(args.transport, backend=args.backend, **options)
        except OSError as exc:  # binding: a port in use, an address not ours
            if args.transport == "stdio":
                raise
            why = exc.strerror or str(exc)
            print(f"mcpkit: cannot listen on {args.host}:{args.port}: {why}", file=sys.stderr)
            return 2
        except TransportError as exc:  # e.g. the HTTP app's startup failed (logged)
            print(f"mcpkit: {exc}", file=sys.stderr)
            return 1
        except LocalProtocolError:
            raise  # a setting the server refused (a certificate, say): said below
        except Exception as exc:
            # Say, the server's lifespan raised: the served file's frames tell its author
            # why; mcpkit's, anyio's and asyncio's around them do not (all of it, when
            # none is the file's).
            print("mcpkit: the server stopped on an error:", file=sys.stderr)
            path = Path(_split_target(args.target)[0])
            print(_user_traceback(exc, path), end="", file=sys.stderr)
            return 1
    except (CLIError, LocalProtocolError) as exc:
        print(f"mcpkit: {exc}", file=sys.stderr)
        return 2
    except TargetFailed as exc:
        print(f"mcpkit: {args.target} raised while being imported:", file=sys.stderr)
        print(exc.report, end="", file=sys.stderr)
        return 1
    except BaseException as exc:
        from ..aio import interrupted  # (Server.run's Interrupted is one too)

        if interrupted(exc):
            return 130
        raise
    return 0
