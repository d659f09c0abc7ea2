"""Configurable limits on what the codec accepts."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DEFAULT_LIMITS", "Limits"]


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on incoming messages, checked before any decoding work is done.

    Attributes:
        max_message_bytes: largest accepted message (one NDJSON line, one HTTP body or one
            SSE event). Larger messages are answered with -32700 and never buffered beyond
            this size. Default 16 MiB (images and audio travel base64-encoded).
        max_depth: deepest accepted nesting of JSON arrays and objects. Deeper messages are
            answered with -32700; decoding never reaches Python's recursion limit. Default 128.
        max_batch: most messages in one JSON-RPC batch (2025-03-26 only); a longer batch is
            answered with one -32600 error. Default 100.

    Raises:
        ValueError: a limit is not positive, or ``max_depth`` exceeds 512 (deeper nesting
            could exhaust the decoder's stack).
    """

    max_message_bytes: int = 16 * 1024 * 1024
    max_depth: int = 128
    max_batch: int = 100
    #: Messages up to this size can neither exceed the size limit nor nest too deeply (it
    #: takes two bytes per level), so the codec skips those checks for them.
    trivially_within: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.max_message_bytes <= 0:
            raise ValueError("max_message_bytes must be positive")
        if not 0 < self.max_depth <= 512:
            raise ValueError("max_depth must be between 1 and 512")
        if self.max_batch < 1:
            raise ValueError("max_batch must be positive")
        object.__setattr__(
            self, "trivially_within", min(self.max_message_bytes, 2 * self.max_depth)
        )


DEFAULT_LIMITS = Limits()
