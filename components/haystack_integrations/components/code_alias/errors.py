"""The root of every exception this package raises.

`except CodeAliasError` catches any failure of the package and nothing else. Each error keeps the built-in or
Haystack base it had before the root existed (`ValueError`, `FileNotFoundError`, `DocumentStoreError`, ...), listed
first so that base's constructor and message stay what they were, so callers that catch those keep working.
"""

from __future__ import annotations


class CodeAliasError(Exception):
    """Base class of the package's exceptions (see the module docstring)."""
