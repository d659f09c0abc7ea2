"""The ``echo`` tool of ``bench/official_echo_server.py`` served by the official MCP Python
SDK over Streamable HTTP.

The SDK's own way: ``Server.streamable_http_app()`` (a Starlette app whose lifespan runs the
SDK's ``StreamableHTTPSessionManager``; DNS-rebinding protection on, as the SDK sets it up
for 127.0.0.1). It is served by the same uvicorn set-up as mcpkit's (``serve_http``:
uvicorn + httptools on the asyncio loop, TCP_NODELAY, the same limits), so the HTTP server
under each contender is identical and only the ASGI app differs.

Run: ``python bench/official_http_server.py [--stateless] [--json-response] [--port N]``.
``--stateless`` is the SDK's ``stateless_http=True`` (every request gets a fresh transport
and server). Prints ``official: serving Streamable HTTP on <url>`` on stderr once it
listens.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from mcpkit.transports import serve_http
from official_echo_server import server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--stateless", action="store_true")
    parser.add_argument("--json-response", action="store_true")
    args = parser.parse_args()
    app = server.streamable_http_app(
        json_response=args.json_response, stateless_http=args.stateless, host="127.0.0.1"
    )

    def announce(http: Any) -> None:
        print(f"official: serving Streamable HTTP on {http.url}/mcp", file=sys.stderr, flush=True)

    asyncio.run(serve_http(app, host="127.0.0.1", port=args.port, ready=announce))


if __name__ == "__main__":
    main()
