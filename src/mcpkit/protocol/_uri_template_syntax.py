"""RFC 6570 URI Template syntax (section 2): the character sets, the operators of
Appendix A, and parsing a template into literals and expressions, with precise errors.

Separate from ``_uri_template.py`` (expansion and :class:`UriTemplate`) and
``_uri_template_match.py`` (matching URIs back to values), which both build on it.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

from ..exceptions import LocalProtocolError

__all__: list[str] = []

_HEX = frozenset(string.hexdigits)
_VARCHAR = frozenset(string.ascii_letters + string.digits + "_")
_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")  # RFC 3986 2.3
_URI_CHARS = _UNRESERVED | frozenset(":/?#[]@!$&'()*+,;=")  # ... plus reserved, 2.2
# RFC 6570 section 2.1 "literals": ASCII except CTL, SP, DQUOTE, "'", "%" (only as
# pct-encoded), "<", ">", "\", "^", "`", "{", "|", "}".
_LITERAL_ASCII = frozenset(map(chr, range(0x21, 0x7F))) - frozenset("\"%'<>\\^`{|}")
_PREFIX = re.compile(r"[1-9][0-9]{0,3}")  # section 2.4.1: max-length < 10000
_TOKEN = re.compile(r"\{([^{}]*)\}|[{}]|[^{}]+")  # an expression, a stray brace, a literal


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
