"""Short, printable echoes of a peer's text for error messages and log lines.

A peer chooses its method names, ids, tool names, URIs and header values; copied whole into
an error answer or a log line they could be as long as the message size limit and carry
line breaks or terminal escapes that forge log lines. Every such echo goes through here.
Pure functions: standard library only, no I/O.
"""

from __future__ import annotations

from typing import Final

__all__ = ["ECHO_LIMIT", "one_line", "peer_text"]

#: How many characters of a peer's value an echo keeps (the start identifies it).
ECHO_LIMIT: Final = 100
#: How many characters of a peer's prose (an error message, a body) ``one_line`` keeps.
_PROSE_LIMIT: Final = 200


def peer_text(value: object, limit: int = ECHO_LIMIT) -> str:
    """``repr(value)`` for a message, kept short: a string longer than ``limit`` characters
    is cut, ``...`` and its full length marking the cut. Control characters, line breaks
    and other unprintable characters come out escaped, as ``repr`` writes them, so the echo
    is always one printable line of at most about ``limit`` characters.

    Raises:
        ValueError: ``limit`` is not positive.
    """
    if limit < 1:
        raise ValueError(f"limit must be positive, not {limit}")
    if not isinstance(value, str):
        # (an id is a number or a string; anything else is shown by its repr, cut alike)
        text = repr(value)
        return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"
    head = value[:limit]
    shown = repr(head)
    # Escapes can make the repr up to ten times longer: shrink the head until it fits.
    while len(shown) > limit + 2:
        head = head[: max(1, len(head) * limit // len(shown))]
        shown = repr(head)
        if len(head) == 1:
            break
    if len(head) == len(value):
        return shown
    return f"{shown}... ({len(value)} characters)"


def one_line(text: str, limit: int = _PROSE_LIMIT) -> str:
    """A peer's prose (an error message, a response body) for an error message: its
    whitespace runs as single spaces (control characters too) and at most ``limit``
    characters, ``...`` marking a cut."""
    cleaned = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return cleaned if len(cleaned) <= limit else cleaned[:limit] + "..."
