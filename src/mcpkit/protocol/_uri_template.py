"""RFC 6570 URI Templates: parsing, level 1-4 expansion, and matching URIs back to values.

MCP servers advertise resource templates by ``uriTemplate`` (``server/resources.mdx``,
"Resource Templates"); a server matches the URI of each ``resources/read`` against them,
and completion needs the variable names. Expansion follows RFC 6570 section 3 exactly.
Matching is the reverse that section 1.4 leaves to regular expressions; its semantics are
documented on :meth:`UriTemplate.match`. It never backtracks: for every state of the
template, the set of URI positions from which the rest can match is one Python ``int`` used
as a bit vector, computed right to left with a constant number of whole-vector operations
per state; one left-to-right pass then picks the values. Work is therefore
O(len(uri) * template size / word size) on any input, however hostile.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..exceptions import LocalProtocolError

__all__ = ["UriTemplate", "is_template"]

_HEX = frozenset(string.hexdigits)
_VARCHAR = frozenset(string.ascii_letters + string.digits + "_")
_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")  # RFC 3986 2.3
_URI_CHARS = _UNRESERVED | frozenset(":/?#[]@!$&'()*+,;=")  # ... plus reserved, 2.2
# RFC 6570 section 2.1 "literals": ASCII except CTL, SP, DQUOTE, "'", "%" (only as
# pct-encoded), "<", ">", "\", "^", "`", "{", "|", "}".
_LITERAL_ASCII = frozenset(map(chr, range(0x21, 0x7F))) - frozenset("\"%'<>\\^`{|}")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_BAD_PCT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_PCT = re.compile(r"%[0-9A-Fa-f]{2}")
_PREFIX = re.compile(r"[1-9][0-9]{0,3}")  # section 2.4.1: max-length < 10000
_TOKEN = re.compile(r"\{([^{}]*)\}|[{}]|[^{}]+")  # an expression, a stray brace, a literal

_EPS, _LIT, _RUN = 0, 1, 2  # matcher edge kinds
# (kind, literal text or the characters a run excludes, target node, capture index or -1)
_Edge = tuple[int, str, int, int]


@dataclass(frozen=True, slots=True)
class _Op:
    """One column of the table in RFC 6570 Appendix A, plus ``stops``: the characters a
    value never contains when matching (the delimiters of the URI component it lands in)."""

    first: str
    sep: str
    named: bool
    ifemp: str
    reserved: bool  # allow U+R (sections 3.2.3 and 3.2.4) instead of U
    stops: str


_OPS = {
    "": _Op("", ",", False, "", False, "/?#"),
    "+": _Op("", ",", False, "", True, ""),
    "#": _Op("#", ",", False, "", True, ""),
    ".": _Op(".", ".", False, "", False, "/?#"),
    "/": _Op("/", "/", False, "", False, "/?#"),
    ";": _Op(";", ";", True, "", False, "/?#;"),
    "?": _Op("?", "&", True, "=", False, "#&"),
    "&": _Op("&", "&", True, "=", False, "#&"),
}


@dataclass(frozen=True, slots=True)
class _VarSpec:
    name: str
    prefix: int  # 0: no prefix modifier
    explode: bool


@dataclass(frozen=True, slots=True)
class _Expr:
    op: _Op
    specs: tuple[_VarSpec, ...]


def _error(template: str, pos: int, problem: str, section: str = "") -> LocalProtocolError:
    shown = template if len(template) <= 80 else template[:77] + "..."
    where = f" (RFC 6570 section {section})" if section else ""
    return LocalProtocolError(f"invalid URI template {shown!r}: {problem} at position {pos}{where}")


def _is_pct(text: str, i: int) -> bool:
    return len(text) >= i + 3 and text[i + 1] in _HEX and text[i + 2] in _HEX


def _pct_encode(text: str) -> str:
    return "".join(f"%{byte:02X}" for byte in text.encode("utf-8"))


def _is_ucschar_or_iprivate(c: str) -> bool:
    # RFC 3987 section 2.2 ``ucschar`` and ``iprivate``, which RFC 6570 section 2.1 allows.
    cp = ord(c)
    if cp < 0x10000:
        return 0xA0 <= cp <= 0xD7FF or 0xE000 <= cp <= 0xFDCF or 0xFDF0 <= cp <= 0xFFEF
    return cp & 0xFFFF <= 0xFFFD and not 0xE0000 <= cp < 0xE1000


def _parse(template: str, max_length: int, max_variables: int) -> list[str | _Expr]:
    if len(template) > max_length:
        raise _error(template, max_length, f"longer than the limit of {max_length} characters")
    parts: list[str | _Expr] = []
    count = 0
    for m in _TOKEN.finditer(template):
        i, text = m.start(), m.group()
        if m.group(1) is not None:
            parts.append(expr := _parse_expression(template, i + 1, m.group(1)))
            count += len(expr.specs)
            if count > max_variables:
                raise _error(template, i, f"more than the limit of {max_variables} variables")
        elif text == "}":
            raise _error(template, i, "'}' without a matching '{'", "2.1")
        elif text == "{":
            if template.find("}", i) < 0:
                raise _error(template, i, "'{' is never closed", "2.2")
            raise _error(template, template.find("{", i + 1), "'{' inside an expression", "2.2")
        else:
            parts.append(_literal(template, i, text))
    return parts


def _literal(template: str, start: int, text: str) -> str:
    """Check literal characters (section 2.1) and expand them (section 3.1)."""
    out = []
    for j, c in enumerate(text):
        if c in _LITERAL_ASCII or (c == "%" and _is_pct(text, j)):
            out.append(c)
        elif _is_ucschar_or_iprivate(c):
            out.append(_pct_encode(c))  # allowed in a template, not in a URI
        elif c == "%":
            raise _error(template, start + j, "'%' not followed by two hex digits", "2.1")
        else:
            raise _error(template, start + j, f"character {c!r} is not allowed", "2.1")
    return "".join(out)


def _parse_expression(template: str, start: int, body: str) -> _Expr:
    if not body:
        raise _error(template, start - 1, "empty expression", "2.2")
    op = _OPS.get(body[0])
    if op is not None:
        body, start = body[1:], start + 1
    elif body[0] in "=,!@|":
        raise _error(template, start, f"operator {body[0]!r} is reserved", "2.2")
    specs = []
    for spec in body.split(","):
        name, colon, length = spec.partition(":")
        explode = not colon and name.endswith("*")
        name = name.removesuffix("*") if explode else name
        _check_varname(template, start, name)
        if colon and not _PREFIX.fullmatch(length):
            problem = f"prefix length {length!r} is not an integer from 1 to 9999"
            raise _error(template, start + len(name) + 1, problem, "2.4.1")
        specs.append(_VarSpec(name, int(length or 0), explode))
        start += len(spec) + 1
    return _Expr(op or _OPS[""], tuple(specs))


def _check_varname(template: str, pos: int, name: str) -> None:
    # Section 2.3: varname = varchar *( ["."] varchar ); varchar = ALPHA / DIGIT / "_" /
    # pct-encoded.
    if not name:
        raise _error(template, pos, "empty variable name", "2.3")
    for j, c in enumerate(name):
        if c == "." and 0 < j < len(name) - 1 and name[j - 1] != ".":
            continue
        if c not in _VARCHAR and not (c == "%" and _is_pct(name, j)):
            problem = "misplaced '.'" if c == "." else f"character {c!r}"
            raise _error(template, pos + j, f"{problem} in variable name", "2.3")


def _encode(value: str, reserved: bool, prefix: int) -> str:
    """Section 3.2.1: pct-encode what the allowed set (U or U+R) excludes. A prefix counts
    characters, never splitting a pct-encoded triplet that U+R passes through (2.4.1)."""
    safe = _URI_CHARS if reserved else _UNRESERVED
    out: list[str] = []
    i = 0
    while i < len(value) and not (prefix and len(out) >= prefix):
        c = value[i]
        if c in safe:
            out.append(c)
        elif reserved and c == "%" and _is_pct(value, i):
            out.append(value[i : i + 3])
            i += 2
        else:
            out.append(_pct_encode(c))
        i += 1
    return "".join(out)


def _expand_var(spec: _VarSpec, op: _Op, value: object) -> str | None:
    """One varspec per Appendix A; ``None`` when the variable is undefined (section 2.3)."""
    name = spec.name
    if isinstance(value, str):
        text = _encode(value, op.reserved, spec.prefix)
    elif value is None:
        return None
    else:
        if isinstance(value, Mapping):
            pairs = list(value.items())
        elif isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
            pairs = [(name, item) for item in value]
        else:
            raise LocalProtocolError(
                f"the value of {name!r} must be a str, a sequence of str, a mapping of str"
                f" to str or None, not {type(value).__name__}"
            )
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in pairs):
            raise LocalProtocolError(f"the members of {name!r} must all be str")
        if not pairs:
            return None  # an empty list or mapping is undefined (section 2.3)
        if spec.prefix:
            raise LocalProtocolError(
                f"the prefix modifier cannot apply to the composite value of {name!r}"
                " (RFC 6570 section 2.4.1)"
            )
        is_map = isinstance(value, Mapping)
        # Pair names are encoded; a list member's name is the varname, copied as is.
        enc = [
            (_encode(k, op.reserved, 0) if is_map else k, _encode(v, op.reserved, 0))
            for k, v in pairs
        ]
        if spec.explode and op.named:
            return op.sep.join(f"{k}={v}" if v else k + op.ifemp for k, v in enc)
        if spec.explode:
            return op.sep.join(f"{k}={v}" if is_map else v for k, v in enc)
        text = ",".join(f"{k},{v}" if is_map else v for k, v in enc)
    if not op.named:
        return text
    return f"{name}={text}" if text else name + op.ifemp


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


class UriTemplate:
    """An RFC 6570 URI Template, parsed once; expands values and matches URIs.

    Args:
        template: the template text, e.g. ``"file:///{+path}"`` or ``"users/{id}{?fields}"``.
        max_length: longest accepted template, in characters.
        max_variables: most variable references (varspecs) accepted in the template.

    Raises:
        LocalProtocolError: the template is invalid (RFC 6570 section 2): a brace without
            its partner, a reserved or unknown operator, a bad variable name (2.3) or prefix
            length (2.4.1), a character that a literal must not contain (2.1), or a limit
            exceeded. The message names the problem and its position.
    """

    __slots__ = ("_matcher", "_parts", "_template", "_variables")

    def __init__(self, template: str, *, max_length: int = 8192, max_variables: int = 256) -> None:
        self._template = template
        self._parts = tuple(_parse(template, max_length, max_variables))
        names = (s.name for part in self._parts if isinstance(part, _Expr) for s in part.specs)
        self._variables = tuple(dict.fromkeys(names))
        self._matcher = _Builder(self._parts)

    @property
    def template(self) -> str:
        """The template text as given."""
        return self._template

    @property
    def variables(self) -> tuple[str, ...]:
        """The variable names in order of first appearance, each once."""
        return self._variables

    def __str__(self) -> str:
        return self._template

    def __repr__(self) -> str:
        return f"UriTemplate({self._template!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, UriTemplate):
            return NotImplemented
        return self._template == other._template

    def __hash__(self) -> int:
        return hash(self._template)

    def expand(self, values: Mapping[str, str | Sequence[str] | Mapping[str, str] | None]) -> str:
        """Expand the template (RFC 6570 section 3, levels 1 to 4).

        A variable that is missing, ``None``, an empty list or an empty mapping is undefined
        and skipped (section 2.3); a list or mapping expands as in section 2.4.2.

        Raises:
            LocalProtocolError: a value has another type, a list or mapping member is not a
                ``str``, a prefix modifier applies to a list or mapping (section 2.4.1), or
                a string holds a lone surrogate (it has no UTF-8 encoding).
        """
        out: list[str] = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
                continue
            op = part.op
            lead = op.first
            for spec in part.specs:
                try:
                    text = _expand_var(spec, op, values.get(spec.name))
                except UnicodeEncodeError:
                    raise LocalProtocolError(
                        f"the value of {spec.name!r} holds a lone surrogate"
                    ) from None
                if text is not None:
                    out += (lead, text)
                    lead = op.sep
        return "".join(out)

    def match(self, uri: str, *, max_uri_length: int = 65536) -> dict[str, str] | None:
        """The variables that expand this template to ``uri``, or ``None`` if none do.

        RFC 6570 section 1.4 leaves this reverse of expansion open; here it means:

        - Comparison is in URI form, for the URI and the template's literals alike:
          non-ASCII characters pct-encoded as UTF-8 (RFC 3987 section 3.1), pct-encoded
          unreserved characters decoded and other hex digits upper-cased (RFC 3986 section
          6.2.2). A '%' without two hex digits, or a lone surrogate, never matches.
        - A value is a run of characters without its position's delimiters: ``{x}``,
          ``{.x}`` and ``{/x}`` stop at '/', '?' and '#'; ``{;x}`` also at ';'; ``{?x}`` and
          ``{&x}`` at '&' and '#'; ``{+x}`` and ``{#x}`` take anything. With several
          variables in one expression, a value also stops at the separator (',' for
          ``{x,y}``, '.' for ``{.x,y}`` ...); ``{x}`` alone matches ``red,green,blue``.
        - Values are pct-decoded (and must then be UTF-8), except exploded ones: ``{x*}``
          gives the raw text, separators and member names included, without the operator
          character: ``{/list*}`` on ``/a/b`` gives "a/b", ``{?keys*}`` on ``?a=1&b=2``
          gives "a=1&b=2".
        - A value is never empty unless the operator character, the separator or the name
          shows it is there: ``{/x}`` on ``/``, ``{;x}`` on ``;x`` and ``{?x}`` on ``?x=``
          give ``""``; ``{x}`` and ``{+x}`` never match nothing.
        - Undefined variables are left out: ``{?x,y}`` on ``?y=1`` gives ``{"y": "1"}``,
          ``{/x}`` on "" gives ``{}``; unnamed values fill from the left (``{x,y}`` on
          ``a`` gives ``{"x": "a"}``).
        - Where several readings work, each expression from the left takes the longest
          value that lets the rest match, present before absent: ``{a}{b}`` on ``xyz``
          gives a="xy", b="z"; ``{n}.txt`` on ``a.b.txt`` gives n="a.b".
        - Prefix lengths (``{x:3}``) are not checked. A variable used twice must get the
          same value each time (a prefixed use: a prefix of it).

        Matching never backtracks: O(len(uri) * template size / word size) on any input.

        Args:
            uri: the URI to match, e.g. from a ``resources/read`` request.
            max_uri_length: longer URIs (also once pct-encoded) give ``None``.

        Raises:
            Nothing: any string, however malformed, gives a result or ``None``.
        """
        return self._match(uri, max_uri_length)[0]

    def _match(self, uri: str, max_uri_length: int) -> tuple[dict[str, str] | None, int]:
        """:meth:`match`, and the number of whole-URI bit-vector operations it took (each
        linear in the URI's length); never more than ``_step_bound()``."""
        normal = _normalise(uri) if len(uri) <= max_uri_length else None
        if normal is None or len(normal) > max_uri_length:
            return None, 0
        taken, steps = _run(self._matcher.edges, normal)
        if taken is None:
            return None, steps
        full: dict[str, str] = {}
        partial: list[tuple[str, str]] = []
        for cap, start, end in taken:
            name, raw, prefixed = self._matcher.captures[cap]
            text = normal[start:end] if raw else _decode(normal[start:end])
            if text is None:
                return None, steps
            if prefixed:
                partial.append((name, text))
            elif full.setdefault(name, text) != text:
                return None, steps
        found = dict(full)
        for name, text in partial:
            known = found.get(name)
            if known is None or (name not in full and text.startswith(known)):
                found[name] = text
            elif not known.startswith(text):
                return None, steps
        return {name: found[name] for name in self._variables if name in found}, steps

    def _step_bound(self) -> int:
        return self._matcher.bound


def is_template(text: str) -> bool:
    """Whether ``text`` is a valid URI template with at least one expression (RFC 6570
    section 2.2), as opposed to a fixed resource URI. Never raises."""
    if "{" not in text:
        return False
    try:
        return bool(UriTemplate(text).variables)
    except LocalProtocolError:
        return False
