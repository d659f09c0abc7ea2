"""JSON-RPC batches, accepted only when 2025-03-26 is negotiated.

2025-03-26 added batching (``basic/index.mdx``: implementations MAY send batches and MUST
accept them; ``basic/lifecycle.mdx``: ``initialize`` MUST NOT be in a batch); 2025-06-18
removed it again, so every other revision answers an array with -32600.

JSON-RPC 2.0 section 6: an empty array is one Invalid Request error; otherwise the answer
is one array holding the responses to the batch's requests (in any order), and nothing at
all when the batch held only notifications (or every request was cancelled).
"""

from __future__ import annotations

from typing import Final

import msgspec
from msgspec import Raw

from ..types import ErrorCode, RequestId
from ._encode import encode_error

__all__ = ["BatchReply", "split_batch"]

_ELEMENTS: Final = msgspec.json.Decoder(list[Raw])


class BatchReply:
    """Collects the responses of one batch until its last request is answered."""

    __slots__ = ("held", "pending", "replies")

    def __init__(self) -> None:
        self.pending: set[RequestId] = set()
        self.replies: list[bytes] = []
        #: The ids answered so far (their answers wait here for the others').
        self.held: list[RequestId] = []

    def add(self, rid: RequestId | None, reply: bytes | None) -> bytes | None:
        """Record the answer to ``rid`` (or an immediate error when ``rid`` is None);
        return the whole array once nothing is pending, else None."""
        if rid is not None:
            self.pending.discard(rid)
        if reply is not None:
            self.replies.append(reply)
        return self.complete()

    def complete(self) -> bytes | None:
        if self.pending or not self.replies:
            return None
        return b"[" + b",".join(self.replies) + b"]"


def split_batch(data: bytes, max_items: int) -> list[bytes] | bytes:
    """Split a batch into its elements' bytes, or return the error response to send."""
    try:
        elements = _ELEMENTS.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
        return encode_error(None, ErrorCode.PARSE_ERROR, f"Parse error: {exc}")
    if not elements:
        return encode_error(None, ErrorCode.INVALID_REQUEST, "Invalid Request: empty batch")
    if len(elements) > max_items:
        return encode_error(
            None,
            ErrorCode.INVALID_REQUEST,
            f"Invalid Request: a batch may hold at most {max_items} messages",
        )
    return [bytes(element) for element in elements]
