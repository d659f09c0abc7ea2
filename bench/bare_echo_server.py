"""The floor: the least a Python process can do to answer MCP over stdio.

Reads NDJSON lines from stdin, decodes each into a tiny msgspec struct (``id`` and
``method`` only) and answers:

* ``initialize`` with a fixed, well-formed result (protocol 2025-11-25, ``tools``);
* ``tools/call`` with a fixed, well-formed one-text-block result;
* ``tools/list`` with the one ``echo`` tool; ``ping`` with ``{}``;
* any other request with -32601; notifications are ignored.

Every answer carries the request's id. No validation, no concurrency, no event loop: one
blocking read loop and one ``os.write`` per answer. Stdlib + msgspec only.

Run: ``python bench/bare_echo_server.py``.
"""

from __future__ import annotations

import os
import sys
from typing import Final

import msgspec

_INITIALIZE: Final = (
    b'{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},'
    b'"serverInfo":{"name":"bare-echo","version":"1.0.0"}}'
)
_CALL: Final = b'{"content":[{"type":"text","text":"hello, world"}]}'
_LIST: Final = (
    b'{"tools":[{"name":"echo","description":"Return the given text unchanged.",'
    b'"inputSchema":{"type":"object","properties":{"text":{"type":"string"}},'
    b'"required":["text"],"additionalProperties":false}}]}'
)
_RESULTS: Final = {
    "tools/call": _CALL,
    "initialize": _INITIALIZE,
    "tools/list": _LIST,
    "ping": b"{}",
}
_NOT_FOUND: Final = b'{"code":-32601,"message":"Method not found"}'


class _Message(msgspec.Struct):
    id: int | str | None = None
    method: str | None = None


def main() -> None:
    decode = msgspec.json.Decoder(_Message).decode
    encode_id = msgspec.json.Encoder().encode
    out = sys.stdout.fileno()
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        try:
            message = decode(line)
        except msgspec.DecodeError:
            continue
        if message.id is None or message.method is None:
            continue  # a notification (or a stray response)
        head = b'{"jsonrpc":"2.0","id":' + encode_id(message.id)
        result = _RESULTS.get(message.method)
        if result is None:
            data = head + b',"error":' + _NOT_FOUND + b"}\n"
        else:
            data = head + b',"result":' + result + b"}\n"
        view = memoryview(data)
        while view:
            view = view[os.write(out, view) :]


if __name__ == "__main__":
    main()
