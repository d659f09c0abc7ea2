"""RFC 6570 URI Templates: parsing, level 1-4 expansion, and matching URIs back to values.

MCP servers advertise resource templates by ``uriTemplate`` (``server/resources.mdx``,
"Resource Templates"); a server matches the URI of each ``resources/read`` against them,
and completion needs the variable names. Expansion follows RFC 6570 section 3 exactly, here;
the syntax (section 2) is parsed in ``_uri_template_syntax.py``. Matching is the reverse
that section 1.4 leaves to regular expressions; its semantics are documented on
:meth:`UriTemplate.match`, its never-backtracking engine is in ``_uri_template_match.py``.
Work is O(len(uri) * template size / word size) on any input, however hostile.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..exceptions import LocalProtocolError
from ._uri_template_match import _Builder, _decode, _normalise, _run
from ._uri_template_syntax import (
    _UNRESERVED,
    _URI_CHARS,
    _Expr,
    _is_pct,
    _Op,
    _parse,
    _pct_encode,
    _VarSpec,
)

__all__ = ["UriTemplate", "is_template"]


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

    @property
    def exploded(self) -> frozenset[str]:
        """The variables with the explode modifier (``{x*}``), which :meth:`match`
        returns as one raw string ("a,b" for ``{x*}``, "a/b" for ``{/x*}``)."""
        exprs = (part for part in self._parts if isinstance(part, _Expr))
        return frozenset(s.name for expr in exprs for s in expr.specs if s.explode)

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
