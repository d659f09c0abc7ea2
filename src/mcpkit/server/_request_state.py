"""Sealing the ``requestState`` of multi round-trip requests (2026-07-28).

``basic/patterns/mrtr.mdx``: the server hands the client an opaque ``requestState`` with an
``InputRequiredResult`` and the client echoes it verbatim on the retry. The spec tells
servers to treat it as attacker-controlled: protect its integrity, and bind it to the
request and an expiry. mcpkit seals it with HMAC-SHA256 (the stdlib's, no extra
dependency): the state holds only what the client itself answered in earlier rounds plus
the binding, so integrity, not secrecy, is what matters. Keys rotate (the first key seals,
every key opens) and several processes share them; a nonce store makes each state usable
once, so an old state cannot be replayed to rewind a conversation.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import logging
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol

import msgspec

from ..exceptions import LocalProtocolError, RPCError
from ..types import ErrorCode

__all__ = ["InMemoryNonceStore", "NonceStore", "RequestStateSealer", "SealedState"]

logger = logging.getLogger("mcpkit.server")

#: Environment variable read when no keys are given: comma-separated secrets, the first
#: one sealing (so that every worker of a deployment opens the others' states).
KEYS_ENV: Final = "MCPKIT_REQUEST_STATE_KEYS"
_PREFIX: Final = "m1"
_MIN_KEY_BYTES: Final = 32


class NonceStore(Protocol):
    """Remembers which sealed states were already used (one implementation per
    deployment: in memory for one process, shared storage for many)."""

    async def claim(self, nonce: str, expires_at: float) -> bool:
        """Record ``nonce`` as used until ``expires_at`` (Unix time); ``False`` if it was
        already recorded."""
        ...


class InMemoryNonceStore:
    """A bounded :class:`NonceStore` for one process.

    Args:
        max_entries: most nonces remembered; beyond it the oldest is forgotten early (with
            a warning), which bounds memory at the cost of letting that one state be
            replayed until it expires.
        clock: Unix time (injectable for tests).
    """

    def __init__(
        self, max_entries: int = 100_000, *, clock: Callable[[], float] = time.time
    ) -> None:
        if max_entries < 1:
            raise LocalProtocolError("max_entries must be at least 1")
        self.max_entries = max_entries
        self._clock = clock
        # Insertion order is expiry order (one TTL per sealer), so purging pops the front.
        self._seen: OrderedDict[str, float] = OrderedDict()
        self._warned = False

    def __len__(self) -> int:
        return len(self._seen)

    async def claim(self, nonce: str, expires_at: float) -> bool:
        now = self._clock()
        while self._seen:
            oldest, expiry = next(iter(self._seen.items()))
            if expiry > now:
                break
            del self._seen[oldest]
        if nonce in self._seen:
            return False
        if len(self._seen) >= self.max_entries:
            self._seen.popitem(last=False)
            if not self._warned:
                self._warned = True
                logger.warning(
                    "request-state nonce store full (%d): forgetting the oldest early",
                    self.max_entries,
                )
        self._seen[nonce] = expires_at
        return True


class SealedState(msgspec.Struct, forbid_unknown_fields=True):
    """What a sealed ``requestState`` carries (short wire names keep it small)."""

    method: str = msgspec.field(name="m")
    target: str = msgspec.field(name="t")
    arguments: str = msgspec.field(name="a")
    expires_at: int = msgspec.field(name="e")
    nonce: str = msgspec.field(name="n")
    pending: list[str] = msgspec.field(name="p")
    answers: dict[str, Any] = msgspec.field(name="r")


_ENCODER: Final = msgspec.json.Encoder()
_DECODER: Final = msgspec.json.Decoder(SealedState)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _key_id(key: bytes) -> str:
    return _b64(hashlib.sha256(b"mcpkit request-state key id\0" + key).digest()[:6])


def _invalid(why: str) -> RPCError:
    return RPCError.invalid_params(f"Invalid params: requestState {why}")


class RequestStateSealer:
    """Seals and opens the ``requestState`` of multi round-trip requests.

    Args:
        keys: secrets of at least 32 bytes (``str`` is UTF-8 encoded). The first seals;
            all open, so a new key goes first and an old one stays until its states
            expired. Every process serving the same clients needs the same keys. Default:
            the comma-separated ``MCPKIT_REQUEST_STATE_KEYS`` environment variable, else
            a random key for this process (states then do not survive a restart).
        ttl: seconds a state stays valid.
        max_bytes: the longest state accepted or produced (a retry carrying more is
            refused before any work; a handler asking for more fails).
        nonce_store: remembers used states so each is accepted once (default: an
            :class:`InMemoryNonceStore`; share one store between processes).
        replay_guard: ``False`` accepts a state more than once (a client may then repeat
            a retry, e.g. after a lost response, at the cost of replays).
        clock: Unix time (injectable for tests).

    Raises:
        LocalProtocolError: a key shorter than 32 bytes, no keys, or a bound below 1.
    """

    def __init__(
        self,
        keys: Sequence[bytes | str] | None = None,
        *,
        ttl: float = 600.0,
        max_bytes: int = 1 << 20,
        nonce_store: NonceStore | None = None,
        replay_guard: bool = True,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if keys is None:
            configured = os.environ.get(KEYS_ENV, "")
            keys = [k for k in configured.split(",") if k] or [os.urandom(32)]
        encoded = [k.encode() if isinstance(k, str) else bytes(k) for k in keys]
        if not encoded:
            raise LocalProtocolError("RequestStateSealer needs at least one key")
        if any(len(k) < _MIN_KEY_BYTES for k in encoded):
            raise LocalProtocolError(
                f"request-state keys must be at least {_MIN_KEY_BYTES} bytes of secret"
            )
        if ttl <= 0 or max_bytes < 1:
            raise LocalProtocolError("ttl and max_bytes must be positive")
        self._keys = {_key_id(k): k for k in encoded}
        self._sealing_id = _key_id(encoded[0])
        self.ttl = ttl
        self.max_bytes = max_bytes
        self._clock = clock
        self.nonce_store: NonceStore | None = None
        if replay_guard:
            # Not ``or``: an empty store has length 0 and is falsy.
            self.nonce_store = (
                InMemoryNonceStore(clock=clock) if nonce_store is None else nonce_store
            )

    def _mac(self, key: bytes, signed: str) -> str:
        return _b64(hmac.new(key, signed.encode("ascii"), hashlib.sha256).digest())

    def new_state(
        self,
        method: str,
        target: str,
        arguments: str,
        pending: list[str],
        answers: dict[str, Any],
    ) -> str:
        """Seal a fresh state (a new nonce and expiry).

        Raises:
            RPCError: -32603, the sealed state would exceed ``max_bytes``.
        """
        state = SealedState(
            method=method,
            target=target,
            arguments=arguments,
            expires_at=int(self._clock() + self.ttl),
            nonce=_b64(os.urandom(12)),  # what secrets.token_urlsafe(12) is
            pending=pending,
            answers=answers,
        )
        signed = f"{_PREFIX}.{self._sealing_id}.{_b64(_ENCODER.encode(state))}"
        sealed = f"{signed}.{self._mac(self._keys[self._sealing_id], signed)}"
        if len(sealed) > self.max_bytes:
            raise RPCError(
                ErrorCode.INTERNAL_ERROR,
                f"the answers gathered so far need a requestState of {len(sealed)} bytes, "
                f"more than this server's limit of {self.max_bytes}",
            )
        return sealed

    async def open(self, sealed: str, method: str, target: str, arguments: str) -> SealedState:
        """Verify a state the client echoed, bound to this request, and use it up.

        Raises:
            RPCError: -32602 when the state is oversized, malformed, forged or tampered
                with, sealed with an unknown key, expired, issued for another request, or
                already used.
        """
        if len(sealed) > self.max_bytes:
            raise _invalid(f"is longer than this server's limit of {self.max_bytes} bytes")
        parts = sealed.split(".")
        if len(parts) != 4 or parts[0] != _PREFIX:
            raise _invalid("is not one this server issued")
        key = self._keys.get(parts[1])
        if key is None:
            raise _invalid("was sealed with a key this server does not hold (rotated out?)")
        expected = self._mac(key, f"{parts[0]}.{parts[1]}.{parts[2]}")
        if not hmac.compare_digest(expected.encode("ascii"), parts[3].encode("ascii", "replace")):
            raise _invalid("failed its integrity check (tampered with or forged)")
        try:
            state = _DECODER.decode(_unb64(parts[2]))
        except (binascii.Error, ValueError, msgspec.DecodeError):
            raise _invalid("failed its integrity check (tampered with or forged)") from None
        if state.expires_at < self._clock():
            raise _invalid("has expired; call again without it to start over")
        if (state.method, state.target, state.arguments) != (method, target, arguments):
            raise _invalid(
                "belongs to a different request (the retry must repeat the original "
                "method, name and arguments)"
            )
        if self.nonce_store is not None and not await self.nonce_store.claim(
            state.nonce, float(state.expires_at)
        ):
            raise _invalid("was already used; call again without it to start over")
        return state
