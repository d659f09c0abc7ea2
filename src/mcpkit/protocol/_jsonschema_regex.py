"""``pattern`` and ``patternProperties`` regular expressions: ECMA-262 read by RE2 (linear
time) where it can be, by Python's :mod:`re` where it cannot.

JSON Schema patterns are ECMA-262 regular expressions, unanchored. RE2 and Python's
:mod:`re` read most of them the same way, but not all, and the differences let strings
through that a pattern meant to keep out, so each pattern is translated for its engine:

* ``$`` matches before a final newline in Python, only at the very end in ECMA-262 (so
  ``^[a-z]+$`` accepted ``"rm\\n"``): it becomes ``\\Z`` (Python) or ``\\z`` (RE2);
* ``.`` matches ``\\r``, U+2028 and U+2029 in Python and RE2, not in ECMA-262;
* ``\\d``, ``\\w`` and ``\\b`` are ASCII in ECMA-262 (Python: Unicode); ``\\s`` is ECMA-262's
  own set of white space and line terminators (Python's and RE2's differ from it and from
  each other), spelled out;
* ``[^]`` (any character) and ``[]`` (none), ``(?<name>...)``, ``\\k<name>``, ``\\uXXXX`` and
  ``[\\b]`` are ECMA-262 syntax spelled otherwise;
* an unescaped ``[`` inside a class is literal in ECMA-262 (Python warns of set syntax).

Python's engine backtracks, and cannot be given a time limit: a repeated group
(``(a+)+``, ``(a|aa)+``) can take exponential time on a crafted string, two long
repetitions that can match the same text polynomial time (``a*a*b``: 6 s on 4,096
characters), and even one repetition searches in quadratic time (``a+b``: 250 s on a
million characters). RE2 runs in time linear in the text, so every pattern RE2 can
express runs there (a string of 200,000 digits against ``\\d+\\.\\d+``: 18 s in Python, under
a millisecond in RE2). Linear, but in the text times the size of the pattern's program when
RE2's DFA outgrows its memory and it simulates the NFA instead (``x{0,1000}x{0,1000}y``, 4,005
instructions: 64 s on a million ``x``), so text is bounded by :data:`RE2_BUDGET` over the
program size (no bound in practice for small programs). Lookaheads after a leading ``^``
(``^(?=.*[A-Z])(?=.*\\d).{8,}$``) run on RE2 as separate anchored checks (:class:`_AllOf`).
The others (back references, lookaround, a bound over 1,000) run in Python only if they
hold at most one long repetition (``*``, ``+``, a bound over 16) and repeat no group
(:class:`UnsafePattern` otherwise), and only on text of :data:`PYTHON_TEXT` characters at most.
"""

from __future__ import annotations

import re
from typing import Any, Final

from ._re2 import re2_compile

__all__ = [
    "PYTHON_TEXT",
    "RE2_BUDGET",
    "Matcher",
    "UnsafePattern",
    "compile_pattern",
    "python_pattern",
    "refusal",
]


class UnsafePattern(ValueError):
    """A pattern RE2 cannot run that Python's backtracking engine could take too long on."""


class _NotRE2(Exception):
    """The pattern needs Python's engine (back references, lookaround)."""


#: The longest text a pattern only Python's engine can run is searched in (longer text
#: fails unsearched: one repetition searches in quadratic time).
PYTHON_TEXT: Final = 8_192
#: RE2's text bound times its program size (instructions): about 16 ns each when RE2
#: falls back to the NFA, so at most a few seconds; programs of up to 32 instructions
#: (``\\d+\\.\\d+``: 9) are not bounded below 4 MiB, ``\\w{1,64}`` (259) at 518,000 chars.
RE2_BUDGET: Final = 1 << 27
#: A repetition allowing more than this many occurrences counts as long.
_LONG: Final = 16

# ECMA-262 WhiteSpace and LineTerminator (sections 12.2, 12.3), \d and \w as code point
# ranges; their complements are ranges too, so they also work inside a class.
_SPACE: Final = (
    (0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
    (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF),
)  # fmt: skip
_DIGIT: Final = ((0x30, 0x39),)
_WORD: Final = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
_LINE_END: Final = ((0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029))
_GROUP_OPENINGS: Final = ("(?:", "(?=", "(?!", "(?<=", "(?<!")
_LOOKAROUND: Final = _GROUP_OPENINGS[1:]


def _complement(ranges: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    out, low = [], 0
    for first, last in ranges:
        if first > low:
            out.append((low, first - 1))
        low = last + 1
    return (*out, (low, 0x10FFFF))


def _spell(ranges: tuple[tuple[int, int], ...], for_re2: bool) -> str:
    """Class ranges in the engine's escapes (RE2 has no ``\\u``, Python no ``\\x{...}``)."""

    def one(code: int) -> str:
        if for_re2:
            return f"\\x{{{code:X}}}"
        return f"\\x{code:02x}" if code < 0x100 else f"\\U{code:08x}"

    return "".join(one(a) if a == b else f"{one(a)}-{one(b)}" for a, b in ranges)


def _tables(for_re2: bool) -> tuple[dict[str, str], dict[str, str]]:
    """The escapes ``\\d \\D \\w \\W \\s \\S`` outside and inside a class."""
    inside = {}
    for char, ranges in (("d", _DIGIT), ("w", _WORD), ("s", _SPACE)):
        inside[char] = _spell(ranges, for_re2)
        inside[char.upper()] = _spell(_complement(ranges), for_re2)
    return {k: f"[{v}]" for k, v in inside.items()}, inside


_PYTHON: Final = (*_tables(False), f"[^{_spell(_LINE_END, False)}]", "\\Z", "(?!)")
_RE2: Final = (*_tables(True), f"[^{_spell(_LINE_END, True)}]", "\\z", "[^\\x00-\\x{10FFFF}]")
_HEX4: Final = re.compile("[0-9a-fA-F]{4}")
_Engine = tuple[dict[str, str], dict[str, str], str, str, str]  # the forms above


def _escape(source: str, i: int, inside: bool, engine: _Engine) -> tuple[str, int]:
    """The engine's form of the escape at ``source[i]`` (a backslash) and where it ends."""
    if i + 1 >= len(source):
        raise ValueError("the pattern ends with a lone backslash")
    char, re2 = source[i + 1], engine is _RE2
    table = engine[1] if inside else engine[0]
    if char in table:
        return table[char], i + 2
    if inside and char == "b":  # ECMA-262: [\b] is a backspace
        return "\\x08", i + 2
    if not inside and char == "k" and source.startswith("<", i + 2):
        end = source.find(">", i + 3)
        if end < 0:
            raise ValueError("an unterminated \\k<name> back reference")
        if re2:
            raise _NotRE2
        return f"(?P={source[i + 3 : end]})", end + 1
    if re2 and char.isdigit() and char != "0":  # a back reference
        raise _NotRE2
    if re2 and char == "u":
        digits = source[i + 2 : i + 6]
        if not _HEX4.fullmatch(digits) or 0xD800 <= int(digits, 16) <= 0xDFFF:
            raise _NotRE2  # (Python reads it, or refuses it)
        return f"\\x{{{digits}}}", i + 6
    return source[i : i + 2], i + 2


def _char_class(source: str, i: int, engine: _Engine) -> tuple[str, int]:
    """The engine's form of the class starting at ``source[i]`` (``[``) and where it ends."""
    j = i + 1
    negated = source.startswith("^", j)
    if negated:
        j += 1
    if source.startswith("]", j):  # ECMA-262: [] matches nothing, [^] anything
        return ("[\\s\\S]" if negated else engine[4]), j + 1
    body: list[str] = []
    while j < len(source) and source[j] != "]":
        if source[j] == "\\":
            text, j = _escape(source, j, True, engine)
            body.append(text)
        else:
            body.append("\\[" if source[j] == "[" else source[j])
            j += 1
    if j >= len(source):
        raise ValueError("an unterminated character class")
    return "[" + ("^" if negated else "") + "".join(body) + "]", j + 1


def _quantifier(source: str, i: int) -> tuple[str, int, bool, bool] | None:
    """The quantifier at ``source[i]``, where it ends, whether it repeats (allows more
    than one) and whether it is long (allows more than ``_LONG``); ``None`` when there is
    none (a ``{`` that is not one is a literal)."""
    char = source[i]
    if char in "*+?":
        end, repeats, long = i + 1, char != "?", char != "?"
    elif char == "{":
        close = source.find("}", i)
        inner = source[i + 1 : close] if close > 0 else ""
        low, comma, high = inner.partition(",")
        if not low.isdigit() or not (high.isdigit() or high == "") or (high and not comma):
            return None
        end = close + 1
        most = int(low) if not comma else (None if high == "" else int(high))
        repeats = most is None or most > 1
        long = most is None or most > _LONG
    else:
        return None
    if source.startswith("?", end):  # lazy
        end += 1
    return source[i:end], end, repeats, long


def python_pattern(source: str, *, refuse_nested: bool = False) -> str:
    """The Python :mod:`re` source (compiled with ``re.ASCII``, for ``\\b``) matching what
    the ECMA-262 ``source`` matches.

    Raises:
        UnsafePattern: (``refuse_nested``) a repetition applies to a group, or the pattern
            holds more than one long repetition.
        ValueError: the pattern is malformed.
    """
    return _translate(source, _PYTHON, refuse_nested)


def _translate(source: str, engine: _Engine, refuse_nested: bool = False) -> str:
    out: list[str] = []
    # Per open group: does it hold a repetition? The last atom: was it a group?
    holds = [False]
    last_is_group = False
    long_ones = 0
    i = 0
    while i < len(source):
        char = source[i]
        quantified = _quantifier(source, i) if out else None
        if quantified is not None:
            text, i, repeats, long = quantified
            if repeats:
                if last_is_group and refuse_nested:
                    raise UnsafePattern(
                        "a repeated group can take exponential time on Python's regular "
                        "expressions (ReDoS)"
                    )
                holds[-1] = True
            long_ones += long
            if long_ones > 1 and refuse_nested:
                raise UnsafePattern(
                    "two long repetitions can take polynomial time on Python's regular "
                    "expressions (ReDoS)"
                )
            out.append(text)
            last_is_group = False
            continue
        last_is_group = False
        if char == "\\":
            text, i = _escape(source, i, False, engine)
        elif char == "[":
            text, i = _char_class(source, i, engine)
        elif char == "(":
            opening = next((o for o in _GROUP_OPENINGS if source.startswith(o, i)), None)
            if opening in _LOOKAROUND and engine is _RE2:
                raise _NotRE2
            if opening is None and source.startswith("(?<", i):
                opening, text = "(?<", "(?P<"  # a named group
            else:
                text = opening or "("
            i += len(opening or "(")
            holds.append(False)
        elif char == ")":
            if len(holds) == 1:
                raise ValueError("an unbalanced ')'")
            inner = holds.pop()
            holds[-1] = holds[-1] or inner
            last_is_group = True
            text, i = ")", i + 1
        elif char == "$":
            text, i = engine[3], i + 1
        elif char == "{":  # not a quantifier (that was tried first): a literal in ECMA-262
            text, i = "\\{", i + 1
        elif char == ".":
            text, i = engine[2], i + 1
        else:
            text, i = char, i + 1
        out.append(text)
    return "".join(out)


class Matcher:
    """A compiled pattern: :meth:`search` is ECMA-262 ``RegExp.test``; ``longest`` (0: no
    bound) is the longest text it may be run on; ``source`` is the pattern as written."""

    __slots__ = ("_regex", "longest", "re2", "source")

    def __init__(self, source: str, regex: Any, re2: bool) -> None:
        self.source = source
        self._regex = regex
        self.re2 = re2
        self.longest = RE2_BUDGET // max(1, regex.programsize) if re2 else PYTHON_TEXT

    def search(self, text: str) -> bool:
        """Whether the pattern matches somewhere in ``text`` (which must not be longer than
        ``longest``, when that is set: the caller checks). Raises nothing."""
        if self.re2:
            # Bytes, so that a lone surrogate (never in decoded JSON) cannot raise.
            return self._regex.search(text.encode("utf-8", "surrogatepass")) is not None
        return self._regex.search(text) is not None


def refusal(source: str, exc: Exception) -> str:
    """Why :func:`compile_pattern` refused ``source`` (``exc``: what it raised)."""
    if isinstance(exc, UnsafePattern):
        why = f"only Python's engine can run it (no RE2: lookaround?), where {exc}"
        return f"the pattern {source!r} is refused: {why}"
    return f"invalid pattern {source!r} ({exc})"


def compile_pattern(source: str) -> Matcher:
    """Compile the ECMA-262 ``source`` for RE2 if it can run it, else for Python's engine.

    Raises:
        UnsafePattern: only Python's engine can run it, and it could take too long there
            (a repeated group, or more than one long repetition).
        ValueError, re.error, OverflowError: the pattern is malformed.
    """
    # Python's reading decides what is malformed, as it always has.
    python = re.compile(python_pattern(source), re.ASCII)
    try:
        compiled = re2_compile(_translate(source, _RE2))
    except _NotRE2:
        split = _lookaheads_on_re2(source)
        if split is not None:
            return split
        compiled = None
    if compiled is not None:
        return Matcher(source, compiled, re2=True)
    python_pattern(source, refuse_nested=True)
    return Matcher(source, python, re2=False)


class _AllOf(Matcher):
    """``^(?=A)(?!B)C`` as RE2 runs it: at the start, the lookaheads test and consume
    nothing, so the pattern matches exactly when ``^(?:A)`` and ``^C`` do and ``^(?:B)``
    does not (the common way of writing "contains an upper-case letter and a digit",
    "never two dashes": linear on RE2, where Python's engine would backtrack)."""

    __slots__ = ("_must", "_must_not")

    def __init__(self, source: str, must: list[Any], must_not: list[Any]) -> None:
        super().__init__(source, must[0], re2=True)
        self._must = must
        self._must_not = must_not
        self.longest = RE2_BUDGET // max(1, *(r.programsize for r in must + must_not))

    def search(self, text: str) -> bool:
        data = text.encode("utf-8", "surrogatepass")
        return all(r.search(data) is not None for r in self._must) and not any(
            r.search(data) is not None for r in self._must_not
        )


def _atom_end(source: str, i: int) -> int:
    """Where the atom at ``source[i]`` ends: a whole group (-1: it never closes), a class,
    an escape or one character."""
    depth = 0
    while i < len(source):
        char = source[i]
        i = _char_class(source, i, _RE2)[1] if char == "[" else i + (2 if char == "\\" else 1)
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if depth <= 0:
            return i
    return -1


def _lookaheads_on_re2(source: str) -> Matcher | None:
    """``source`` as :class:`_AllOf` if it is ``^``, lookaheads, then a rest, with nothing
    RE2 cannot run inside any of them and no alternative outside them; else ``None``."""
    if not source.startswith("^(?"):
        return None
    must: list[Any] = []
    must_not: list[Any] = []
    i = 1
    try:
        while source.startswith(("(?=", "(?!"), i):
            end = _atom_end(source, i)
            if end < 0:
                return None
            inner = re2_compile("^(?:" + _translate(source[i + 3 : end - 1], _RE2) + ")")
            if inner is None:
                return None
            (must if source[i + 2] == "=" else must_not).append(inner)
            i = end
        rest = source[i:]
        # An alternative at the top would not be anchored by the leading ^.
        j = 0
        while 0 <= j < len(rest) and rest[j] != "|":
            j = _atom_end(rest, j)
        if j != len(rest):
            return None
        compiled = re2_compile("^" + _translate(rest, _RE2))
    except (_NotRE2, ValueError):
        return None
    ok = compiled is not None and must + must_not
    return _AllOf(source, [compiled, *must], must_not) if ok else None
