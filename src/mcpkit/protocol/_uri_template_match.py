"""Matching URIs against a parsed RFC 6570 URI Template (the reverse of expansion that
section 1.4 leaves to regular expressions; its semantics are documented on
:meth:`UriTemplate.match <mcpkit.protocol.UriTemplate.match>`).

It never backtracks: for every state of the template, the set of URI positions from which
the rest can match is one Python ``int`` used as a bit vector, computed right to left with a
constant number of whole-vector operations per state; one left-to-right pass then picks the
values. Work is therefore O(len(uri) * template size / word size) on any input, however
hostile. Separate from ``_uri_template.py`` (expansion and :class:`UriTemplate`) so each
reads in one sitting.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ._uri_template_syntax import _UNRESERVED, _Expr, _Op, _pct_encode, _VarSpec

__all__: list[str] = []

_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_BAD_PCT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_PCT = re.compile(r"%[0-9A-Fa-f]{2}")

_EPS, _LIT, _RUN = 0, 1, 2  # matcher edge kinds
# (kind, literal text or the characters a run excludes, target node, capture index or -1)
_Edge = tuple[int, str, int, int]


class _Builder:
    """Compiles the template into the matcher: a DAG whose edges always point to a newer
    node, so reverse creation order is topological. Out-edges are in order of preference.
    Also counts the most bit-vector operations one match can take, whatever the URI."""

    def __init__(self, parts: tuple[str | _Expr, ...]) -> None:
        self.edges: list[list[_Edge]] = [[]]
        self.captures: list[tuple[str, bool, bool]] = []  # name, raw (exploded), prefixed
        node = 0
        for part in parts:
            if isinstance(part, str):
                node = self.add(node, _LIT, part)
            elif part.op.named:
                node = self.named(node, part.op, part.specs)
            else:
                node = self.unnamed(node, part.op, part.specs)
        flat = [edge for out in self.edges for edge in out]
        literals = {arg for kind, arg, _, _ in flat if kind == _LIT}
        runs = {arg for kind, arg, _, _ in flat if kind == _RUN}
        # An edge is evaluated once right to left and tried at most once left to right; a
        # class or character mask is built once; a literal costs a step per character.
        chars = set("%").union(*literals)
        self.bound = 2 * len(flat) + len(runs) + len(chars) + sum(map(len, literals))

    def add(self, src: int, kind: int, arg: str, cap: int = -1) -> int:
        self.edges.append([])
        self.link(src, len(self.edges) - 1, kind, arg, cap)
        return len(self.edges) - 1

    def link(self, src: int, dst: int, kind: int = _EPS, arg: str = "", cap: int = -1) -> None:
        arg = _PCT.sub(_normal_pct, arg) if kind == _LIT else arg
        self.edges[src].append((kind, arg, dst, cap))

    def value(self, src: int, spec: _VarSpec, op: _Op, many: bool, may_be_empty: bool) -> int:
        # An exploded value may hold the separator; in a list of several unnamed variables
        # the separator ends the others.
        stops = op.stops.replace(op.sep, "") if spec.explode else op.stops
        stops += op.sep if many and not spec.explode and op.sep not in stops else ""
        self.captures.append((spec.name, spec.explode, bool(spec.prefix)))
        dst = self.add(src, _RUN, stops, len(self.captures) - 1)
        if may_be_empty:
            self.link(src, dst, _EPS, "", len(self.captures) - 1)
        return dst

    def unnamed(self, src: int, op: _Op, specs: tuple[_VarSpec, ...]) -> int:
        # Values fill from the left. The operator character or a separator shows that a
        # value is there even if empty; every variable undefined expands to "".
        many = len(specs) > 1
        node = self.add(src, _LIT, op.first) if op.first else src
        exits = [self.value(node, specs[0], op, many, bool(op.first))]
        for spec in specs[1:]:
            exits.append(self.value(self.add(exits[-1], _LIT, op.sep), spec, op, many, True))
        end = self.add(exits[-1], _EPS, "")
        for node in exits[:-1] + ([src] if op.first else []):
            self.link(node, end)
        return end

    def named(self, src: int, op: _Op, specs: tuple[_VarSpec, ...]) -> int:
        # Two tracks: ``none`` while no variable has matched (the next follows ``first``),
        # ``some`` afterwards (the next follows ``sep``). Each variable is optional.
        none, some = src, -1
        for spec in specs:
            ends = [self.form(none, op.first, spec, op)]
            ends += [self.form(some, op.sep, spec, op), some] if some >= 0 else []
            none, some = self.add(none, _EPS, ""), self.add(ends[0], _EPS, "")
            for node in ends[1:]:
                self.link(node, some)
        end = self.add(none, _EPS, "")
        self.link(some, end)
        return end

    def form(self, src: int, lead: str, spec: _VarSpec, op: _Op) -> int:
        if spec.explode:  # member names vary: keep the raw run, separators included
            return self.value(self.add(src, _LIT, lead), spec, op, False, False)
        if op.ifemp:  # "?x=" and "&x=" carry an empty value
            return self.value(self.add(src, _LIT, f"{lead}{spec.name}="), spec, op, False, True)
        named = self.add(src, _LIT, lead + spec.name)  # ";x" is empty, ";x=v" is not
        end = self.value(self.add(named, _LIT, "="), spec, op, False, False)
        self.link(named, end, _EPS, "", len(self.captures) - 1)
        return end


def _normal_pct(m: re.Match[str]) -> str:
    # RFC 3986 section 6.2.2: decode pct-encoded unreserved characters, upper-case the rest.
    c = chr(int(m.group()[1:], 16))
    return c if c in _UNRESERVED else m.group().upper()


@lru_cache(maxsize=512)
def _table(chars: str, member: bool) -> bytes:
    """Translates bytes in ``chars`` (all others if not ``member``) to b"1", the rest to b"0"."""
    return bytes(ord("1") if (chr(i) in chars) == member else ord("0") for i in range(256))


def _normalise(uri: str) -> str | None:
    """The URI form of an IRI (RFC 3987 section 3.1), pct-encoding normalised (RFC 3986
    section 6.2.2), or ``None`` if it is not valid Unicode or has a stray '%'."""
    if not uri.isascii():
        try:
            uri = _NON_ASCII.sub(lambda m: _pct_encode(m.group()), uri)
        except UnicodeEncodeError:  # a lone surrogate
            return None
    if "%" in uri:
        if _BAD_PCT.search(uri):
            return None
        uri = _PCT.sub(_normal_pct, uri)
    return uri


def _decode(text: str) -> str | None:
    head, *rest = text.split("%")
    if not rest:
        return text
    buf = bytearray(head, "ascii")
    for piece in rest:
        buf.append(int(piece[:2], 16))
        buf += piece[2:].encode("ascii")
    try:
        return buf.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _longest(members: int, targets: int, n: int, p: int) -> int:
    """The largest q in p+1..r with bit n-q of ``targets`` set, where uri[p:r] is the
    longest run of class members at p; -1 if there is none."""
    outside = ~members & ((1 << (n - p + 1)) - 1)  # bits n-p..0 are positions p..n
    r = n - outside.bit_length() + 1
    window = (targets >> (n - r)) & ((1 << (r - p)) - 1)
    return r - (window & -window).bit_length() + 1 if window else -1


def _run(edges: list[list[_Edge]], uri: str) -> tuple[list[tuple[int, int, int]] | None, int]:
    """Match an ASCII URI; return the captures taken as (index, start, end) and the steps.

    Position p of the URI is bit n-p of every vector; ``can[v]`` holds the positions from
    which the rest of the template, from state ``v`` on, matches the rest of the URI.
    """
    n = len(uri)
    data = uri.encode("ascii")
    full = (1 << (n + 1)) - 1
    masks: dict[tuple[str, bool], int] = {}
    occurrences: dict[str, int] = {}
    steps = 0

    def mask(chars: str, member: bool) -> int:
        nonlocal steps
        if (chars, member) not in masks:
            steps += 1
            masks[chars, member] = int(data.translate(_table(chars, member)) + b"0", 2)
        return masks[chars, member]

    def occurs(text: str) -> int:
        nonlocal steps
        if text not in occurrences:
            found = full
            for j, c in enumerate(text):
                steps += 1
                found &= mask(c, True) << j
            occurrences[text] = found
        return occurrences[text]

    boundary = full
    if "%" in uri:  # no value or literal starts or ends inside a pct-encoded triplet
        pct = mask("%", True)
        boundary &= ~((pct >> 1) | (pct >> 2))
    last = len(edges) - 1
    can = [0] * len(edges)
    can[last] = 1  # after the last state only the end of the URI is left
    for v in range(last - 1, -1, -1):
        acc = 0
        for kind, arg, dst, _ in edges[v]:
            targets = can[dst]
            if not targets:
                continue
            steps += 1
            if kind == _EPS:
                acc |= targets
            elif kind == _LIT:
                acc |= (targets << len(arg)) & occurs(arg)
            else:
                # Seeds: positions just before a target whose character is in the class.
                # Adding them to the class mask carries each one through its run of class
                # characters towards lower positions; what the carry flipped is the run
                # from its start up to the last seed in it.
                members = mask(arg, False)
                seeds = (targets << 1) & members
                acc |= (((members + seeds) ^ members) | seeds) & members
        can[v] = acc & boundary
    if not can[0] >> n & 1:
        return None, steps
    taken: list[tuple[int, int, int]] = []
    p = v = 0
    while v != last:
        for kind, arg, dst, cap in edges[v]:  # in order of preference
            steps += 1
            targets = can[dst]
            if kind == _EPS:
                q = p if targets >> (n - p) & 1 else -1
            elif kind == _LIT:
                q = p + len(arg) if uri.startswith(arg, p) else -1
                q = q if q >= 0 and targets >> (n - q) & 1 else -1
            else:
                q = _longest(mask(arg, False), targets, n, p)
            if q >= 0:
                if cap >= 0:
                    taken.append((cap, p, q))
                p, v = q, dst
                break
        else:
            raise AssertionError("unreachable: can[v] promised a way on")
    return taken, steps
