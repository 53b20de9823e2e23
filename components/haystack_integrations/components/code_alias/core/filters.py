"""The names a `repo` / `package` filter may hold: the rule filters are built by and requests are checked by.

Framework-free and light: `indexing.repositories` builds retrieval filters with it, and `app.requests` (imported by
the CLI's fast path, so nothing heavy here) checks a request's filters with the same words.
"""

from __future__ import annotations

from collections.abc import Sequence

#: The most names one `repo` / `package` filter may list, and the longest name.
MAX_FILTER_VALUES = 50
MAX_FILTER_CHARS = 200


def filter_names(value: str | Sequence[str] | None, what: str) -> list[str]:
    """
    The names of a `repo` / `package` filter (one name, or a list of them), stripped; the rule every filter is built
    by (`indexing.repositories.repository_filters`) and every request is checked by (`app.requests`).

    :raises ValueError: Not a name or a list of names, more than `MAX_FILTER_VALUES`, or a name that is empty or
        longer than `MAX_FILTER_CHARS` (the message starts with `what`).
    """
    if value is None:
        return []
    if not isinstance(value, str | list | tuple):
        raise ValueError(f"{what}: a name or a list of names, got {type(value).__name__}")
    values = [value] if isinstance(value, str) else list(value)
    if len(values) > MAX_FILTER_VALUES:
        raise ValueError(f"{what}: at most {MAX_FILTER_VALUES} names, got {len(values)}")
    for item in values:
        if not isinstance(item, str) or not item.strip() or len(item) > MAX_FILTER_CHARS:
            raise ValueError(
                f"{what}: each name must be a non-empty string of at most {MAX_FILTER_CHARS} characters, got {item!r}"
            )
    return [item.strip() for item in values]
