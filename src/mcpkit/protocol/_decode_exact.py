"""The exact path of message classification: what the codec's fast path hands over.

``_decode.decode_message`` settles the common messages with a length proof (a compact
message has no room for a duplicated member). Everything else comes here: messages that
are pretty-printed (a cheaper proof by counting whitespace, then the exact duplicate
check), or not shaped like a valid message at all (every member decoded on its own and
classified into the precise JSON-RPC error with the right id). The rules themselves are
listed in ``_decode``'s docstring.
"""

from __future__ import annotations

import json
import re
from typing import Final

import msgspec
from msgspec import UNSET, Raw, UnsetType

from ..types import JSONRPC_VERSION, ErrorCode, ErrorObject, RequestId
from ..types._echo import peer_text
from ._encode import is_object
from ._events import NotificationReceived, RequestReceived

__all__ = [
    "DecodeFailure",
    "DecodedMessage",
    "DecodedResponse",
    "EMPTY",
    "ID_HIGH",
    "ID_LOW",
    "compact_but_spaces",
    "decode_slow",
    "failure",
    "has_duplicate",
    "id_fits",
    "present",
]


class DecodedResponse(msgspec.Struct, frozen=True, gc=False):
    """A response: exactly one of ``result`` / ``error`` is set, or ``problem`` says why the
    message cannot be a valid response for ``id`` (the pending call then fails)."""

    id: RequestId
    result: Raw | None
    error: ErrorObject | None
    problem: str | None = None


class DecodeFailure(msgspec.Struct, frozen=True, gc=False):
    """A message that cannot be processed.

    Attributes:
        error: the JSON-RPC error describing the problem.
        id: the id to answer with (``None`` when it could not be read: ``"id": null``).
        reply: whether an error response must be sent; ``False`` for notifications and
            responses, which are never answered (they are only logged).
    """

    error: ErrorObject
    id: RequestId | None
    reply: bool


DecodedMessage = RequestReceived | NotificationReceived | DecodedResponse | DecodeFailure

#: An absent member: the Raw default the envelope structs share (tested by identity).
EMPTY: Final = Raw()
_V2: Final = Raw(b'"2.0"')
_NULL: Final = Raw(b"null")
_MEMBERS_DECODER: Final = msgspec.json.Decoder(dict[str, Raw])
_ID_DECODER: Final = msgspec.json.Decoder(int | str)
_STR_DECODER: Final = msgspec.json.Decoder(str)
_ERROR_DECODER: Final = msgspec.json.Decoder(ErrorObject)
_MEMBERS: Final = ("jsonrpc", "id", "method", "params", "result", "error")
_QUOTED: Final = {name: f'"{name}"'.encode() for name in _MEMBERS}
_KEY_RE: Final = re.compile(rb'"((?:[^"\\]|\\.)*)"\s*:')
_WHITESPACE: Final = b" \t\r\n"
#: How many first bytes of a structured member's value are searched for to find it.
_HEAD: Final = 64
_OPENERS: Final = frozenset(b"{[")
#: ID_LOW[n] <= id < ID_HIGH[n]: the non-negative integers written with exactly n - 6
#: digits (n counts ',"id":' too); none below 7. Two comparisons against bounds, not a
#: range: `in range` also computes a remainder for the step (twice the cost).
ID_LOW: Final = (*(1 for _ in range(7)), 0, *(10**d for d in range(1, 19)))
ID_HIGH: Final = (*(0 for _ in range(7)), *(10 ** (d + 1) for d in range(19)))
_KINDS: Final = {
    0x5B: "an array",
    0x7B: "an object",
    0x22: "a string",
    0x6E: "null",
    0x74: "a boolean",
    0x66: "a boolean",
}


def failure(
    code: int, message: str, id: RequestId | None = None, reply: bool = True
) -> DecodeFailure:
    return DecodeFailure(ErrorObject(code=code, message=message), id, reply)


def _describe(raw: Raw) -> str:
    return _KINDS.get(memoryview(raw)[0], "a number")


def has_duplicate(data: bytes, members: dict[str, Raw]) -> bool:
    """Whether an envelope member occurs twice (a parser-differential risk msgspec hides by
    keeping the last occurrence). ``members`` are the decoded (deduplicated) members, and
    there are no others: an unknown member's value would stay in the skeleton read below
    (see ``_reread_has_duplicate`` for those messages)."""
    if b"\\u" not in data and all(data.count(_QUOTED[name]) == 1 for name in members):
        return False
    # Cut the structured values out, leaving only the top-level keys and scalar values,
    # then compare the (unescaped) keys. A value is cut where it is, found by its first
    # bytes (searching for all of a long value costs more than the rest), which tells
    # where only when they occur once: the first of several occurrences may be elsewhere
    # (params '{}' also occurs in a method "{}"), and cutting it there would break the
    # keys around it. Otherwise the whole message is read again.
    cuts = []
    for raw in members.values():
        # Objects and arrays (any member can hold one, if only to be refused); scalars
        # hold no keys and stay.
        if raw and memoryview(raw)[0] in _OPENERS:
            value = bytes(raw)
            head = value[:_HEAD]
            start = data.find(head)
            if data.find(head, start + 1) >= 0:
                return _reread_has_duplicate(data)
            cuts.append((start, start + len(value)))
    skeleton = data
    for start, end in sorted(cuts, reverse=True):
        skeleton = skeleton[:start] + skeleton[end:]
    keys = []
    for token in _KEY_RE.findall(skeleton):
        try:
            keys.append(_STR_DECODER.decode(b'"' + token + b'"'))
        except msgspec.DecodeError:
            return True
    return len(keys) != len(set(keys))


def _reread_has_duplicate(data: bytes) -> bool:
    """has_duplicate by reading the whole message with the stdlib's JSON decoder (in C,
    keeping every object's members in order; numbers are not converted). Rarely needed,
    and linear in the message's size. ``data`` is JSON msgspec has read, within the
    depth limit."""
    try:
        pairs = json.loads(data, object_pairs_hook=list, parse_int=str, parse_float=str)
    except (ValueError, RecursionError):
        return True  # (not expected) what cannot be read twice the same way is refused
    keys = [key for key, _ in pairs if key in _QUOTED]
    return len(keys) != len(set(keys))


def compact_but_spaces(
    data: bytes, rest: int, rid: RequestId | UnsetType, method: str, params: Raw
) -> bool:
    """Whether the message is compact except for whitespace between its tokens (what
    pretty-printers add), which proves, as the compact test does, that no member is
    duplicated: ``rest`` is what the compact test left for the id.

    Whitespace is counted in the whole message and subtracted inside ``params``. A raw
    tab, CR or LF cannot occur inside a JSON string, but a space can: the scalar strings
    (``jsonrpc`` is exactly "2.0" here) must hold none, or counting could let a
    duplicate's extra bytes cancel out. Counting only some of the whitespace is still a
    proof (what is left uncounted is excess, and any excess fails it): spaces alone,
    counted with memchr by replace(), settle Python's ``json.dumps`` style; other
    whitespace takes the translate() that deletes all four.
    """
    if " " in method or (type(rid) is str and " " in rid):
        return False
    size = len(data)
    inner: bytes | None = None  # params' bytes, copied only when needed
    if params is not EMPTY and data[-2] == 0x7D == data[-1]:
        # params is last and ends right before the closing brace (no trailing
        # whitespace): count the spaces in front of it only (count() with bounds: no
        # copy of the head).
        spaces = data.count(b" ", 0, size - 1 - len(params))
    else:
        inner = bytes(params)
        spaces = size - len(data.replace(b" ", b"")) - len(inner) + len(inner.replace(b" ", b""))
    if id_fits(rest - spaces, rid):
        return True
    if inner is None:
        inner = bytes(params)
    rest -= size - len(data.translate(None, _WHITESPACE))
    rest += len(inner) - len(inner.translate(None, _WHITESPACE))
    return id_fits(rest, rid)


def id_fits(rest: int, rid: RequestId | UnsetType) -> bool:
    """Whether ``rest`` bytes are exactly what ``rid`` takes in compact form, counting
    ``,"id":`` (6 bytes; a string id's quotes make it 8); 0 for no id."""
    if rid is UNSET:
        return rest == 0
    if type(rid) is int:
        return 0 <= rest < 26 and ID_LOW[rest] <= rid < ID_HIGH[rest]
    assert isinstance(rid, str)
    return rest == 8 + len(rid)


def present(rid: object, params: Raw) -> dict[str, Raw]:
    """The members of a request as has_duplicate wants them (only params' bytes matter)."""
    members = {"jsonrpc": EMPTY, "method": EMPTY}
    if rid is not UNSET:
        members["id"] = EMPTY
    if params:
        members["params"] = params
    return members


def decode_slow(data: bytes, tolerant: bool = False) -> DecodedMessage:
    """Classification of a message the envelope struct could not take."""
    try:
        members = _MEMBERS_DECODER.decode(data)
    except msgspec.ValidationError:
        # Not an object: first make sure it is JSON at all (msgspec stopped at the first byte).
        try:
            msgspec.json.decode(data)
        except msgspec.DecodeError as exc:
            return failure(ErrorCode.PARSE_ERROR, f"Parse error: {exc}")
        except RecursionError:
            return failure(ErrorCode.PARSE_ERROR, "Parse error: JSON nests too deeply")
        if data.lstrip()[:1] == b"[":
            return failure(ErrorCode.INVALID_REQUEST, "Invalid Request: batches are not supported")
        return failure(
            ErrorCode.INVALID_REQUEST, "Invalid Request: a message must be a JSON object"
        )
    except msgspec.DecodeError as exc:  # the fast path stopped before the syntax error
        return failure(ErrorCode.PARSE_ERROR, f"Parse error: {exc}")
    except RecursionError:
        return failure(ErrorCode.PARSE_ERROR, "Parse error: JSON nests too deeply")
    unknown = sorted(name for name in members if name not in _MEMBERS)
    known = {k: v for k, v in members.items() if k in _MEMBERS}
    if tolerant and known.get("params") == _NULL:
        del known["params"]  # only as a member of the object; the duplicate check still sees it
    return _classify(data, known, unknown)


def _classify(
    data: bytes, members: dict[str, Raw], unknown: list[str] | tuple[()]
) -> DecodedMessage:
    """The general path: exact classification of any object-shaped message."""
    raw_jsonrpc = members.get("jsonrpc", EMPTY)
    jsonrpc_ok = raw_jsonrpc == _V2
    if not jsonrpc_ok and raw_jsonrpc:
        try:
            jsonrpc_ok = _STR_DECODER.decode(raw_jsonrpc) == JSONRPC_VERSION
        except msgspec.ValidationError:
            pass
    has_id = "id" in members
    rid: RequestId | None = None
    id_problem = None
    if has_id:
        try:
            rid = _ID_DECODER.decode(members["id"])
        except msgspec.ValidationError:
            kind = _describe(members["id"])
            if kind == "a number":
                kind = "a fractional number"
            id_problem = f"id must be a string or an integer, not {kind}"
    # With an unknown member the message is refused whatever this says (the check only
    # decides which id the error echoes), so it is re-read whole: has_duplicate's
    # skeleton keeps an unknown member's value, whose inner keys would count.
    duplicate = _reread_has_duplicate(data) if unknown else has_duplicate(data, members)
    params = members.get("params", EMPTY)
    result = members.get("result", EMPTY)
    error = members.get("error", EMPTY)

    if "method" in members:
        # A request (has an id member) or a notification (has none).
        method: str | None = None
        try:
            method = _STR_DECODER.decode(members["method"])
        except msgspec.ValidationError:
            pass
        problem = None
        if duplicate:
            problem = "an envelope member appears more than once"
            rid = None
        elif id_problem is not None:
            problem = id_problem
        elif not jsonrpc_ok:
            problem = 'jsonrpc must be exactly "2.0"'
        elif unknown:
            problem = f"unknown envelope member {peer_text(unknown[0])}"
        elif result or error:
            problem = "a request must not carry `result` or `error`"
        elif method is None:
            problem = "method must be a string"
        elif params and not is_object(params):
            if has_id and memoryview(params)[0] == 0x5B:  # "["
                return failure(
                    ErrorCode.INVALID_PARAMS,
                    "Invalid params: params must be an object, not an array",
                    rid,
                )
            problem = f"params must be an object, not {_describe(params)}"
        if problem is not None:
            return failure(ErrorCode.INVALID_REQUEST, f"Invalid Request: {problem}", rid, has_id)
        assert method is not None
        if not has_id:
            return NotificationReceived(method, params or None)
        assert rid is not None
        return RequestReceived(rid, method, params or None)

    if has_id or result or error:
        # A response. Without a usable id it cannot be matched to a call: report only.
        if rid is None:
            why = id_problem or "it has no id"
            return failure(ErrorCode.INVALID_REQUEST, f"Response dropped: {why}", None, False)
        response_problem = None
        if duplicate:
            response_problem = "an envelope member appears more than once"
        elif not jsonrpc_ok:
            response_problem = 'jsonrpc must be exactly "2.0"'
        elif unknown:
            response_problem = f"unknown envelope member {peer_text(unknown[0])}"
        if error:
            # The error is authoritative, even next to a result.
            try:
                err = _ERROR_DECODER.decode(error)
            except msgspec.ValidationError as exc:
                return DecodedResponse(rid, None, None, f"malformed error object: {exc}")
            return DecodedResponse(rid, None, err, response_problem)
        if not result:
            return DecodedResponse(rid, None, None, "a response needs `result` or `error`")
        if not is_object(result):
            return DecodedResponse(
                rid, None, None, f"result must be an object, not {_describe(result)}"
            )
        if response_problem is not None:
            return DecodedResponse(rid, None, None, response_problem)
        return DecodedResponse(rid, result, None)

    return failure(
        ErrorCode.INVALID_REQUEST,
        "Invalid Request: a message needs a `method` (request, notification) or an `id` (response)",
    )
