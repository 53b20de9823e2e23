"""The root of every exception this package raises.

`except CodeAliasError` catches any failure of the package and nothing else. Each error keeps the built-in or
Haystack base it had before the root existed (`ValueError`, `FileNotFoundError`, `DocumentStoreError`, ...), listed
first so that base's constructor and message stay what they were, so callers that catch those keep working.
"""

from __future__ import annotations

import re


class CodeAliasError(Exception):
    """Base class of the package's exceptions (see the module docstring)."""


# An absolute POSIX path (or a Windows drive path) after a start, a space, a quote, `=` or `(`; URLs do not match.
_PATH_RE = re.compile(r"""(?:(?<=^)|(?<=[\s'"=(\[]))(?:[A-Za-z]:\\|/)(?:[^\s'"()\[\]]*[/\\])?([^\s'"()\[\]/\\]*)""")


def hide_paths(message: str) -> str:
    """`message` with every absolute file path cut to `.../last-part`, so an error shows no server directories."""
    return _PATH_RE.sub(lambda match: f".../{match.group(1)}" if match.group(1) else "...", message)
