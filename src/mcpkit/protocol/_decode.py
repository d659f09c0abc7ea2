"""Decoding and classifying JSON-RPC messages, following MCP's message rules to the letter.

Decoding is two-stage (msgspec ``Raw``): the envelope is decoded and classified here, and the
``params`` / ``result`` bytes stay undecoded until the layer that knows their type asks. The
classification answers every malformed input with the precise JSON-RPC error and the right
id (JSON-RPC 2.0 sections 4, 5 and 5.1; MCP ``basic/index.mdx`` "Messages"):

* a request's ``id`` is a string or an integer; anything else is -32600 with ``"id": null``
  and the message is never treated as a notification;
* ``params``, when present, is an object: an array is -32602, any other value -32600;
* a request that also carries ``result`` or ``error``, a wrong ``jsonrpc``, an unknown or a
  duplicated envelope member is -32600;
* a notification is never answered: an invalid one is reported for logging only;
* a response carrying both ``result`` and ``error`` is an error response, one with neither
  or with a non-object ``result`` fails the pending call.

Every input is bounded before decoding: size and nesting depth (see :class:`Limits`), strict
UTF-8 without BOM, no NaN/Infinity, no lone surrogates (msgspec rejects those itself).

Speed: every envelope member decodes as ``Raw`` in one pass. A message whose length equals
the sum of its members' lengths plus the minimal punctuation is *compact*: it has no room
for whitespace, unknown or duplicated members, so it skips the duplicate check entirely.
A duplicated member takes at least 7 bytes, so a message with fewer spare bytes than that
(once proven whitespace is set aside: Python's ``json.dumps`` style) skips it too.
Everything else takes the exact path of ``_decode_exact``: cheaper proofs for messages
that are only pretty-printed, then the general classification.
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal

import msgspec
from msgspec import UNSET, Raw, UnsetType

from ..exceptions import RPCError
from ..types import ErrorCode, RequestId
from ..types._echo import one_line
from ._decode_exact import (
    EMPTY,
    ID_HIGH,
    ID_LOW,
    DecodedMessage,
    DecodedResponse,
    DecodeFailure,
    compact_but_spaces,
    decode_slow,
    failure,
    has_duplicate,
    id_fits,
    present,
)
from ._encode import is_object
from ._events import NotificationReceived, RequestReceived
from ._limits import DEFAULT_LIMITS, Limits

__all__ = ["DecodeFailure", "DecodedMessage", "DecodedResponse", "decode_message", "decode_params"]


class _Envelope(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """The fast path: every valid message decodes into this in one pass."""

    jsonrpc: Literal["2.0"]
    id: int | str | UnsetType = UNSET
    method: str | UnsetType = UNSET
    params: Raw = EMPTY
    result: Raw = EMPTY
    error: Raw = EMPTY


_ENVELOPE_DECODER: Final = msgspec.json.Decoder(_Envelope)
# Bound once: the attribute lookup costs as much as a tenth of the fast path below.
_decode_envelope: Final = _ENVELOPE_DECODER.decode
_BOM: Final = b"\xef\xbb\xbf"
_STRING_RE: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACKETS: Final = bytes.maketrans(b"[{]}", b"(())")
_NOT_BRACKETS: Final = bytes(set(range(256)) - set(b"[]{}"))


def _too_deep(data: bytes, limit: int) -> bool:
    """Whether JSON arrays/objects nest deeper than ``limit`` (strings ignored).

    Strings are removed and innermost bracket pairs are deleted one level per pass, in C;
    after ``limit`` passes anything still pairing up nests deeper than the limit. (Only
    called for messages with more opening brackets than the limit: see decode_message.)
    """
    skeleton = _STRING_RE.sub(b"", data).translate(_BRACKETS, _NOT_BRACKETS)
    for _ in range(limit):
        if not skeleton:
            return False
        reduced = skeleton.replace(b"()", b"")
        if len(reduced) == len(skeleton):
            return False  # unbalanced leftovers: a syntax error for the decoder to report
        skeleton = reduced
    return b"()" in skeleton


def _check_size_and_encoding(data: bytes, limits: Limits) -> DecodeFailure | None:
    """The size and encoding checks, run before any decoding (only needed for a message
    above the size limit or not ASCII)."""
    size = len(data)
    if size > limits.max_message_bytes:
        return failure(
            ErrorCode.PARSE_ERROR,
            f"Parse error: message of {size} bytes exceeds the limit of "
            f"{limits.max_message_bytes} bytes",
        )
    if not data.isascii():
        if data.startswith(_BOM):
            return failure(ErrorCode.PARSE_ERROR, "Parse error: a byte order mark is not allowed")
        # msgspec does not check the UTF-8 of values it skips as Raw: check it here, once.
        # (ASCII, the common case, is valid UTF-8 by definition.)
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return failure(ErrorCode.PARSE_ERROR, f"Parse error: invalid UTF-8 at byte {exc.start}")
    return None


def decode_message(
    data: bytes, limits: Limits = DEFAULT_LIMITS, *, tolerant: bool = False
) -> DecodedMessage:
    """Decode and classify one framed message.

    Never raises for bad input: every problem comes back as a :class:`DecodeFailure` (or a
    :class:`DecodedResponse` with ``problem`` set when the pending call can be identified).

    ``tolerant`` accepts ``"params": null`` as absent params, a deviation some peers have.
    """
    size = len(data)
    # One cheap test covers the common case: small ASCII input needs none of these checks.
    # (They are inlined: on a 1 KiB message a call costs more than half of their work.)
    if size > limits.trivially_within or not data.isascii():
        if size > limits.max_message_bytes or not data.isascii():
            refused = _check_size_and_encoding(data, limits)
            if refused is not None:
                return refused
        # Nesting deeper than the limit takes more opening brackets than the limit (and
        # two bytes per level). They are counted as what replace() removes: it finds a
        # single byte with memchr, several times cheaper than count() or translate()
        # (which test every byte) or a find() loop (a call per bracket) on CPython.
        # Arrays are rarer than objects: `in` with an int is a bare memchr (no copy),
        # which spares the second count when there is no "[" at all.
        limit = limits.max_depth
        if size > 2 * limit:
            braces = size - len(data.replace(b"{", b""))
            if (
                braces > limit
                or (0x5B in data and braces + size - len(data.replace(b"[", b"")) > limit)
            ) and _too_deep(data, limit):
                return failure(
                    ErrorCode.PARSE_ERROR,
                    f"Parse error: JSON nests deeper than the limit of {limit} levels",
                )
    try:
        env = _decode_envelope(data)
    except msgspec.ValidationError:
        return decode_slow(data, tolerant)  # not an object, or an unknown member
    except msgspec.DecodeError as exc:
        return failure(ErrorCode.PARSE_ERROR, f"Parse error: {exc}")
    except RecursionError:  # only reachable with a very high configured max_depth
        return failure(ErrorCode.PARSE_ERROR, "Parse error: JSON nests too deeply")

    # The fast path: a compact message needs no duplicate check. The length each member
    # would have in compact form is computed from its decoded value; escapes, whitespace
    # and non-ASCII only make the real message longer, so equality proves compactness.
    # (Literals instead of named constants: this is the hottest code in mcpkit.)
    method = env.method
    if method is not UNSET:  # then a str (an identity test: cheaper than type() is str)
        params = env.params
        # Absent members are the very default object, EMPTY (identity tests are the
        # cheapest): result and error are the same object only when both are absent
        # (decoded members are distinct objects). (jsonrpc is exactly "2.0": the
        # struct's Literal type checked it.)
        if env.result is env.error:
            rid = env.id
            # '{"jsonrpc":"2.0","method":""}' is 29 bytes; ',"params":' 10; ',"id":' 6.
            # Every term is a lower bound of the real member's length, so rest >= 0.
            if params is EMPTY:
                rest = size - 29 - len(method)
            else:
                rest = size - 39 - len(method) - len(params)
            if type(rid) is int:
                # Is the id exactly `rest - 6` digits long? id_fits, inlined (this is the
                # most common message): tables of bounds, not len(str(rid)), which costs
                # more than the rest of this test; an `if` of `and`s, not a chained
                # comparison, so that CPython specializes each comparison into an integer
                # compare-and-jump; no `compact` flag (its stores and test cost more than
                # the decode_slow call repeated below). Negative ids and "-0" fail it and
                # take the exact path below.
                if rest < 26 and ID_LOW[rest] <= rid and rid < ID_HIGH[rest]:
                    # Is params an object? Of the members left (no result, no error),
                    # only params can hold an object: a compact message ending in "}}"
                    # has params last, as an object. Otherwise find where its value
                    # starts: '"params":' cannot occur unescaped inside the other
                    # (scalar) members, so its first occurrence is the top-level member.
                    # (The "}}" test first: it also proves params present. Four positional
                    # arguments: filling in progress_token's default costs more.)
                    if data[-2] == 0x7D:
                        return RequestReceived(rid, method, params, None)
                    if params is EMPTY:
                        return RequestReceived(rid, method, None, None)
                    if data[data.find(b'"params":') + 9] == 0x7B:
                        return RequestReceived(rid, method, params, None)
                    return decode_slow(data, tolerant)  # compact, params not an object
                if (
                    data[-2] == 0x7D
                    and data[-1] == 0x7D
                    and rest < 26
                    and ID_LOW[rest - 7] <= rid
                    and rid < ID_HIGH[rest]
                    and data[-2 - len(params)] == 0x20
                ):
                    # Python's json.dumps style (4 members, ", " and ": ": exactly 7
                    # bytes more than compact), proved without counting its spaces
                    # (count() with bounds costs more than the rest of this path). The
                    # id takes between `rest - 7` and `rest` bytes: the message has at
                    # most 7 bytes more than its compact form. It ends in "}}" (no
                    # trailing whitespace), so params is last, an object ending right
                    # before the closing brace, and the byte before params' "{" lies
                    # between tokens: a space there is one of those 7 bytes. That
                    # leaves at most 6 for a duplicated member, which takes at least 7
                    # (',"id":0'; an unknown member fails the envelope struct).
                    return RequestReceived(rid, method, params, None)
                compact = False
            else:
                compact = id_fits(rest, rid)  # a notification, or a string id
                if compact:
                    if data[-2] == 0x7D:
                        return _received(rid, method, params)
                    if params is EMPTY:
                        return _received(rid, method, None)
                    if data[data.find(b'"params":') + 9] == 0x7B:
                        return _received(rid, method, params)
            # Not compact (pretty-printed, escaped, non-ASCII): valid as decoded unless a
            # member is duplicated, which the (slower) exact checks rule out. (A "}"
            # right before the closing brace ends the last member's value, an object:
            # a params, and the last one is what msgspec kept. Both bytes are tested:
            # after trailing whitespace, data[-2] is the closing brace itself.)
            if (
                not compact
                and (params is EMPTY or data[-2] == 0x7D == data[-1] or is_object(params))
                and (
                    compact_but_spaces(data, rest, rid, method, params)
                    or not has_duplicate(data, present(rid, params))
                )
            ):
                return _received(rid, method, params or None)
    elif env.result and not env.error and type(env.id) is int:
        # '{"jsonrpc":"2.0","id":,"result":}' is 33 bytes, less the 6 of ',"id":' that
        # id_fits counts.
        result = env.result
        if id_fits(size - 27 - len(result), env.id) and data[data.find(b'"result":') + 9] == 0x7B:
            return DecodedResponse(env.id, result, None)
    return decode_slow(data, tolerant)


def _received(
    rid: RequestId | UnsetType, method: str, params: Raw | None
) -> RequestReceived | NotificationReceived:
    if rid is UNSET:
        return NotificationReceived(method, params)
    return RequestReceived(rid, method, params)


def decode_params(decoder: msgspec.json.Decoder[Any], params: Raw | None, method: str) -> Any:
    """Decode a request's params (absent: ``{}``) with the method's decoder.

    Raises:
        RPCError: -32602 Invalid params, naming the field and the problem on one line.
    """
    try:
        return decoder.decode(params if params is not None else b"{}")
    except msgspec.ValidationError as exc:
        raise RPCError.invalid_params(
            f"Invalid params for {method}: {one_line(str(exc))}"
        ) from None
