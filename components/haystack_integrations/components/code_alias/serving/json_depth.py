"""How deep a JSON body nests, measured before anything parses it.

Python's `json` module decodes recursively: a body of some thousands of `[` raises `RecursionError` inside whatever
parses it (FastAPI, the MCP SDK, the webhook), which is not a `ValueError`, so it escapes their "bad JSON" handling
as a 500 and, where a response had already started, drops the keep-alive connection. No request this server takes
nests more than a few levels (a push payload: object, commits, commit, author), so the guard refuses anything
deeper than `MAX_JSON_DEPTH` before a parser sees it.
"""

from __future__ import annotations

import re

#: Deepest nesting accepted: a GitHub push payload nests 4 levels, a JSON-RPC tool call 3, a tool's arguments 1.
MAX_JSON_DEPTH = 64

# A string (whose brackets do not count), or one bracket. An unterminated string does not match as a string, so
# its brackets count: a conservative reading of a body that is not JSON anyway.
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


def too_deep(body: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """
    Whether `body`, read as JSON, nests arrays and objects more than `limit` levels deep.

    Linear in the body and cheap for the common case: a body with at most `limit` opening brackets cannot be too
    deep, and is not scanned.

    :param body: The raw request body (any bytes; what is not JSON is measured as if it were).
    :param limit: The deepest nesting accepted.
    """
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    depth = 0
    for match in _TOKENS.finditer(body):
        token = match.group()
        if token in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        elif token in (b"]", b"}"):
            depth = max(depth - 1, 0)
    return False
