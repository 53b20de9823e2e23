"""Which paths are tests and which are test fixtures: one rule for the whole project.

The evaluation harness leaves test files out of the gold files, the file ranking demotes them, the hint
selection only offers a test's symbols on an exact mention, and the dictionary leaves fixtures (test input
data: babel's ``packages/*/test/fixtures``, jest's ``__fixtures__`` / ``__mocks__``) out of its symbol entries
altogether, so they never feed the rewrite, while their chunks stay searchable.

The rule is a :class:`TestFileRule`; :data:`DEFAULT_TEST_RULE` is what every caller uses unless it passes its
own (``TestFileRule.from_dict`` reads one from configuration).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import PurePosixPath
from typing import Any

__all__ = [
    "DEFAULT_TEST_RULE",
    "FIXTURE_DIRS",
    "SUPPORT_DIRS_AT_ROOT",
    "SUPPORT_FILE_PATTERNS",
    "TEST_DIRS_ANYWHERE",
    "TEST_DIRS_AT_ROOT",
    "TEST_FILE_PATTERNS",
    "TestFileRule",
    "is_fixture_file",
    "is_test_file",
]

#: Directory names that hold tests wherever they appear.
TEST_DIRS_ANYWHERE = frozenset({"tests", "__tests__", "e2e", "__mocks__", "__snapshots__", "__benchmarks__"})
#: Directory names that hold tests at the repository root for every file, and at any depth for files that are
#: not Python: a nested Python ``test`` / ``testing`` package is usually library code (``django/test/``,
#: ``numpy/testing/``, ``sympy/testing/``), while a nested ``test/`` folder of a JavaScript package
#: (``packages/babel-parser/test/``, ``compat/test/``) is its test suite.
TEST_DIRS_AT_ROOT = frozenset({"test", "testing", "spec"})
#: Directory names that hold test input data (at any depth); everything under them is also a test file.
FIXTURE_DIRS = frozenset({"fixtures", "__fixtures__", "fixture", "testdata", "test-data", "test_data"})
#: File-name patterns (regular expressions matched against the whole name) of test files.
TEST_FILE_PATTERNS: tuple[str, ...] = (
    r"test_.*\.py|.*_tests?\.py|tests\.py|conftest\.py",  # Python
    r".*\.(test|spec|test-d|spec-d|e2e|bench)\.[cm]?[jt]sx?",  # JavaScript / TypeScript (vitest type tests, benches)
    r".*\.(test|spec)\.vue",  # Vue single-file components written as tests
    r".*_test\.go",  # Go
    r".*Tests?\.java",  # Java
)
#: Top-level folder names of code that ships beside the project but is not it: examples, demos, benchmarks,
#: sandboxes. Their files answer questions about the project no better than its tests do (preact's ``demo/``,
#: ``benches/``; axios's ``examples/``, ``sandbox/``), so they get the test files' treatment. Only at the root:
#: a nested ``examples`` / ``benchmarks`` folder can be part of a package (``sympy/benchmarks`` is tests, but
#: ``doc/.../examples`` is documentation a question may be about).
SUPPORT_DIRS_AT_ROOT = frozenset(
    {"examples", "example", "demo", "demos", "benches", "benchmark", "benchmarks", "sandbox", "playground"}
)
#: File-name patterns of build and tool configuration written as code (``rollup.config.js``,
#: ``karma.conf.js``, ``Gruntfile.js``, ``.eslintrc.js``): configuration, not the project's code.
SUPPORT_FILE_PATTERNS: tuple[str, ...] = (
    r"[^/]*\.(config|conf)\.[cm]?[jt]s",
    r"\.[a-z]+rc\.[cm]?[jt]s",
    r"([Gg]runtfile|[Gg]ulpfile|[Jj]akefile)\.[cm]?[jt]s",
)
_PYTHON_SUFFIXES = frozenset({".py", ".pyi", ".pyx"})


@dataclass(frozen=True)
class TestFileRule:
    """
    A convention for test files and fixtures, matched on the path alone (no file is read).

    :param dirs_anywhere: Folder names that make everything below them a test file, at any depth.
    :param dirs_at_root: Folder names that make everything below them a test file at the repository root, and
        at any depth for files that are not Python (a nested Python ``test`` package is library code).
    :param fixture_dirs: Folder names of test input data, at any depth: test files that are also fixtures.
    :param file_patterns: Regular expressions matched against the whole file name.
    :param support_dirs_at_root: Top-level folder names of examples, demos and benchmarks: treated as tests.
    :param support_file_patterns: File-name patterns of tool configuration written as code: treated as tests.
    """

    __test__ = False  # not a pytest test class, whatever its name says

    dirs_anywhere: frozenset[str] = TEST_DIRS_ANYWHERE
    dirs_at_root: frozenset[str] = TEST_DIRS_AT_ROOT
    fixture_dirs: frozenset[str] = FIXTURE_DIRS
    file_patterns: tuple[str, ...] = field(default=TEST_FILE_PATTERNS)
    support_dirs_at_root: frozenset[str] = SUPPORT_DIRS_AT_ROOT
    support_file_patterns: tuple[str, ...] = field(default=SUPPORT_FILE_PATTERNS)

    @cached_property
    def _file_re(self) -> re.Pattern[str] | None:
        for key in ("file_patterns", "support_file_patterns"):
            for pattern in getattr(self, key):
                try:
                    re.compile(pattern)
                except re.error as error:
                    raise ValueError(f"TestFileRule.{key}: invalid regular expression: {error}") from error
        patterns = (*self.file_patterns, *self.support_file_patterns)
        return re.compile("|".join(f"(?:{pattern})" for pattern in patterns)) if patterns else None

    def is_fixture(self, path: str) -> bool:
        """
        Whether a repository path is test input data: a folder on its path is one of ``fixture_dirs``.

        :param path: POSIX path relative to the repository root.
        """
        directories = PurePosixPath(path).parts[:-1]
        return any(part in self.fixture_dirs for part in directories)

    def is_test(self, path: str) -> bool:
        """
        Whether a repository path is a test file (fixtures included).

        :param path: POSIX path relative to the repository root.
        """
        parts = PurePosixPath(path).parts
        if not parts:
            return False
        file_re = self._file_re
        if file_re is not None and file_re.fullmatch(parts[-1]):
            return True
        directories = parts[:-1]
        if not directories:
            return False
        for part in directories:
            if part in self.dirs_anywhere or part in self.fixture_dirs:
                return True
        if directories[0] in self.dirs_at_root or directories[0] in self.support_dirs_at_root:
            return True
        if PurePosixPath(parts[-1]).suffix.lower() in _PYTHON_SUFFIXES:
            return False
        return any(part in self.dirs_at_root for part in directories)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (sorted lists), for configuration files and component serialisation."""
        return {
            "dirs_anywhere": sorted(self.dirs_anywhere),
            "dirs_at_root": sorted(self.dirs_at_root),
            "fixture_dirs": sorted(self.fixture_dirs),
            "file_patterns": list(self.file_patterns),
            "support_dirs_at_root": sorted(self.support_dirs_at_root),
            "support_file_patterns": list(self.support_file_patterns),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TestFileRule:
        """
        The rule a configuration describes; a missing key keeps the default.

        :raises ValueError: an unknown key, a value that is not a list of strings, or an invalid pattern.
        """
        known = {
            "dirs_anywhere",
            "dirs_at_root",
            "fixture_dirs",
            "file_patterns",
            "support_dirs_at_root",
            "support_file_patterns",
        }
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"TestFileRule: unknown keys {sorted(unknown)} (known: {sorted(known)})")
        values: dict[str, Any] = {}
        for key, value in data.items():
            if not isinstance(value, (list, tuple, set, frozenset)) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"TestFileRule.{key}: expected a list of strings, got {value!r}")
            values[key] = tuple(value) if key.endswith("file_patterns") else frozenset(value)
        rule = cls(**values)
        _ = rule._file_re  # fail now, naming the field, rather than at the first path
        return rule


#: The convention every caller uses by default.
DEFAULT_TEST_RULE = TestFileRule()


def is_test_file(path: str, rule: TestFileRule | None = None) -> bool:
    """
    Whether a repository path is a test file.

    The default rule: the file name is ``conftest.py``, ``tests.py``, ``test_*.py``, ``*_test.py`` or
    ``*_tests.py`` (or ``*.test.ts`` / ``*.spec.js`` / ``*.test-d.tsx`` / ``*.bench.ts``, ``*_test.go``,
    ``*Test.java``); or a folder on its path is ``tests``, ``__tests__``, ``e2e``, ``__mocks__``,
    ``__snapshots__``, ``__benchmarks__`` or a fixture folder (``fixtures``, ``__fixtures__``, ``testdata``...)
    at any depth; or its top-level folder is ``test``, ``testing`` or ``spec``; or, for a file that is not
    Python, such a folder sits at any depth (``packages/babel-parser/test/``). A nested Python ``test`` /
    ``testing`` package (``django/test/``) is library code. Examples, demos and benchmarks at the root
    (``examples/``, ``demo/``, ``benches/``...) and tool configuration written as code (``rollup.config.js``,
    ``karma.conf.js``, ``.eslintrc.js``) are treated as tests too: they ship beside the project but are not
    its code.

    :param path: POSIX path relative to the repository root.
    :param rule: Another convention than :data:`DEFAULT_TEST_RULE`.
    """
    return _is_test_by_default(path) if rule is None else rule.is_test(path)


@lru_cache(maxsize=1 << 16)
def _is_test_by_default(path: str) -> bool:
    # Asked for every retrieved chunk of every question (file and symbol ranking): the same paths again and again.
    return DEFAULT_TEST_RULE.is_test(path)


def is_fixture_file(path: str, rule: TestFileRule | None = None) -> bool:
    """
    Whether a repository path is test input data (under ``fixtures/``, ``__fixtures__/``, ``testdata/``...).

    Fixtures stay searchable, but their symbols never feed the rewrite's hints.

    :param path: POSIX path relative to the repository root.
    :param rule: Another convention than :data:`DEFAULT_TEST_RULE`.
    """
    return (rule or DEFAULT_TEST_RULE).is_fixture(path)
