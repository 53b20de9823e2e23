"""Which paths are tests: gold files leave them out, and the rewrite does not offer their symbols.

One rule for the whole project (the evaluation harness and the hint selection share it).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

#: Directory names that hold tests wherever they appear.
TEST_DIRS_ANYWHERE = frozenset({"tests", "__tests__"})
#: Directory names that hold tests only at the repository root; nested, they are usually library code
#: (``django/test/``, ``numpy/testing/``, ``sympy/testing/``), while ``testing/`` at the root is pytest's suite.
TEST_DIRS_AT_ROOT = frozenset({"test", "testing"})
_TEST_FILE_RE = re.compile(
    r"^(test_.*\.py|.*_tests?\.py|tests\.py|conftest\.py"  # Python
    r"|.*\.(test|spec)\.[cm]?[jt]sx?"  # JavaScript / TypeScript
    r"|.*_test\.go"  # Go
    r"|.*Tests?\.java)$"  # Java
)


def is_test_file(path: str) -> bool:
    """
    Whether a repository path is a test file.

    The rule: the file name is ``conftest.py``, ``tests.py``, ``test_*.py``, ``*_test.py`` or ``*_tests.py``
    (or ``*.test.ts``/``*.spec.js``, ``*_test.go``, ``*Test.java``);
    or a directory on its path is ``tests`` / ``__tests__`` (at any depth); or its top-level directory is
    ``test`` or ``testing``. A nested ``test``/``testing`` package (``django/test/``) is library code.

    :param path: POSIX path relative to the repository root.
    """
    parts = PurePosixPath(path).parts
    if not parts:
        return False
    if _TEST_FILE_RE.match(parts[-1]):
        return True
    directories = parts[:-1]
    if any(part in TEST_DIRS_ANYWHERE for part in directories):
        return True
    return bool(directories) and directories[0] in TEST_DIRS_AT_ROOT
