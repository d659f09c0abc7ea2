"""RE2 (google-re2), imported on the first pattern compiled and optional at run time.

google-re2 is a dependency of mcpkit, but has no wheel for some platforms (musl, glibc
older than 2.28). Installed without it, :func:`re2_compile` answers ``None`` for every
pattern, as it does for the patterns RE2 cannot run, so each takes the rules for those
(see ``_jsonschema_regex``): Python's engine where that is safe, a refusal where not.
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["re2_compile"]

_re2_module: Any = None  # the module once imported; False when it cannot be


def re2_compile(source: str) -> Any:
    """RE2's compiled form of (translated) ``source``, or ``None`` when RE2 refuses it (a
    bound over 1,000, a program past its memory budget) or is not installed. RE2 is
    imported here, on the first pattern, not with :mod:`mcpkit` (it takes a few
    milliseconds)."""
    global _re2_module
    if _re2_module is None:
        try:
            import re2
        except ImportError:
            _re2_module = False
            warnings.warn(
                "google-re2 is not installed: JSON Schema patterns run on Python's engine "
                "where that is safe and are refused where it is not",
                RuntimeWarning,
                stacklevel=2,
            )
        else:
            _re2_module = re2
    if _re2_module is False:
        return None
    options = _re2_module.Options()
    options.log_errors = False  # (a refusal is an answer here, not a log line)
    try:
        return _re2_module.compile(source, options)
    except _re2_module.error:
        return None
