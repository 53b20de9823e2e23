"""Unified-diff parsing, test-file detection, and changed lines -> changed definitions."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from haystack_integrations.components.code_alias.core.symbols import extract_symbols
from haystack_integrations.components.code_alias.evaluation.golden import gold_files_from_patch
from haystack_integrations.components.code_alias.evaluation.patches import (
    changed_definitions,
    is_test_file,
    locate_hunk,
    parse_unified_diff,
    touched_old_lines,
)
from tests.support.repos import FIXTURES

FIXTURE_REPO = FIXTURES / "evaluation" / "minirepo"

MULTI_FILE_DIFF = """\
diff --git a/pkg/core.py b/pkg/core.py
index 1111111..2222222 100644
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -10,6 +10,7 @@ def alpha():
     one = 1
     two = 2
-    three = 3
+    three = 33
+    four = 4
     five = 5
     six = 6
     seven = 7
@@ -40,3 +41,2 @@ class Beta:
     def gamma(self):
-        return None
         pass
diff --git a/pkg/new_module.py b/pkg/new_module.py
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/pkg/new_module.py
@@ -0,0 +1,2 @@
+def fresh():
+    return 1
diff --git a/pkg/old_module.py b/pkg/old_module.py
deleted file mode 100644
index 4444444..0000000
--- a/pkg/old_module.py
+++ /dev/null
@@ -1,2 +0,0 @@
-def stale():
-    return 0
diff --git a/pkg/before.py b/pkg/after.py
similarity index 90%
rename from pkg/before.py
rename to pkg/after.py
index 5555555..6666666 100644
--- a/pkg/before.py
+++ b/pkg/after.py
@@ -1,2 +1,2 @@
 def moved():
-    return "before"
+    return "after"
\\ No newline at end of file
diff --git a/pkg/pure.py b/pkg/renamed_pure.py
similarity index 100%
rename from pkg/pure.py
rename to pkg/renamed_pure.py
diff --git a/tests/test_core.py b/tests/test_core.py
--- a/tests/test_core.py
+++ b/tests/test_core.py
@@ -1 +1 @@
-assert alpha() == 3
+assert alpha() == 33
"""


def test_parse_modified_file_hunks_and_ranges() -> None:
    diffs = parse_unified_diff(MULTI_FILE_DIFF)
    assert [d.path for d in diffs] == [
        "pkg/core.py",
        "pkg/new_module.py",
        "pkg/old_module.py",
        "pkg/before.py",
        "pkg/pure.py",
        "tests/test_core.py",
    ]
    core = diffs[0]
    assert (core.old_path, core.new_path) == ("pkg/core.py", "pkg/core.py")
    assert not (core.is_new or core.is_deleted or core.is_rename)
    first, second = core.hunks
    assert (first.old_start, first.old_count, first.new_start, first.new_count) == (10, 6, 10, 7)
    assert first.section == "def alpha():"
    assert [line.kind for line in first.lines] == [" ", " ", "-", "+", "+", " ", " ", " "]
    assert first.old_range == (10, 15)
    assert first.old_lines[2] == "    three = 3"
    assert first.new_lines[2:4] == ["    three = 33", "    four = 4"]
    assert (second.old_start, second.old_count) == (40, 3)
    assert [line.kind for line in second.lines] == [" ", "-", " "]


def test_parse_new_deleted_and_renamed_files() -> None:
    diffs = {d.path: d for d in parse_unified_diff(MULTI_FILE_DIFF)}
    new = diffs["pkg/new_module.py"]
    assert new.is_new and new.old_path is None and new.new_path == "pkg/new_module.py"
    assert new.hunks[0].old_range == (1, 0)  # "-0,0": nothing on the old side
    deleted = diffs["pkg/old_module.py"]
    assert deleted.is_deleted and deleted.new_path is None
    assert [line.kind for line in deleted.hunks[0].lines] == ["-", "-"]
    renamed = diffs["pkg/before.py"]
    assert renamed.is_rename and renamed.new_path == "pkg/after.py"
    # the "\ No newline" marker is not a body line
    assert [line.text for line in renamed.hunks[0].lines] == [
        "def moved():",
        '    return "before"',
        '    return "after"',
    ]
    pure = diffs["pkg/pure.py"]
    assert pure.is_rename and pure.new_path == "pkg/renamed_pure.py" and pure.hunks == []


def test_parse_plain_diff_without_git_header() -> None:
    text = "--- a/x.py\t2024-01-01\n+++ b/x.py\t2024-01-02\n@@ -3 +3 @@\n-a = 1\n+a = 2\n"
    (diff,) = parse_unified_diff(text)
    assert diff.path == "x.py"
    assert (diff.hunks[0].old_start, diff.hunks[0].old_count, diff.hunks[0].new_count) == (3, 1, 1)


def test_parse_new_file_via_dev_null_only() -> None:
    text = "--- /dev/null\n+++ b/added.py\n@@ -0,0 +1 @@\n+x = 1\n"
    (diff,) = parse_unified_diff(text)
    assert diff.is_new and diff.path == "added.py"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("tests/test_core.py", True),
        ("pkg/tests/helpers.py", True),
        ("pkg/sub/tests/data/x.py", True),
        ("test_something.py", True),
        ("pkg/test_something.py", True),
        ("pkg/thing_test.py", True),
        ("pkg/thing_tests.py", True),
        ("pkg/tests.py", True),
        ("conftest.py", True),
        ("src/pkg/conftest.py", True),
        ("testing/python/collect.py", True),  # pytest's suite at the repository root
        ("test/unit/x.py", True),
        ("django/test/client.py", False),  # library code: django.test
        ("numpy/testing/utils.py", False),
        ("sympy/testing/runtests.py", False),
        ("src/_pytest/pytester.py", False),
        ("pkg/contest.py", False),
        ("pkg/latest.py", False),
        ("README.md", False),
    ],
)
def test_is_test_file(path: str, expected: bool) -> None:
    assert is_test_file(path) is expected


def test_gold_files_leave_out_tests_and_new_files() -> None:
    assert gold_files_from_patch(MULTI_FILE_DIFF) == [
        "pkg/core.py",
        "pkg/old_module.py",
        "pkg/before.py",
        "pkg/pure.py",
    ]


def test_touched_old_lines_replacement_insertion_deletion() -> None:
    first, second = parse_unified_diff(MULTI_FILE_DIFF)[0].hunks
    touched = touched_old_lines(first)
    # line 10 one, 11 two, 12 three (removed), then two added lines replace it
    assert touched.removed == (12,)
    assert touched.insertions == ()  # an insertion right after a removed line is a replacement
    touched = touched_old_lines(second, offset=5)
    assert touched.removed == (46,)
    text = "@@ -4,2 +4,3 @@\n a\n+b\n c\n"
    (hunk,) = parse_unified_diff("--- a/f\n+++ b/f\n" + text)[0].hunks
    assert touched_old_lines(hunk).insertions == ((4, "b"),)  # inserted after old line 4
    empty = parse_unified_diff("--- a/f\n+++ b/f\n@@ -7,0 +8,1 @@\n+new\n")[0].hunks[0]
    assert touched_old_lines(empty).insertions == ((7, "new"),)  # "-7,0": after line 7


@dataclass(frozen=True)
class Def:
    name: str
    qualified_name: str
    kind: str
    start_line: int
    end_line: int


SOURCE = """\
import os


def alpha(x):
    y = x + 1
    return y


class Beta:
    flag = True

    def gamma(self):
        return 1

    def delta(self):
        return 2
"""
DEFS = [
    Def("alpha", "m.alpha", "function", 4, 6),
    Def("Beta", "m.Beta", "class", 9, 16),
    Def("gamma", "m.Beta.gamma", "method", 12, 13),
    Def("delta", "m.Beta.delta", "method", 15, 16),
]


def _hunks(body: str) -> list:
    return parse_unified_diff("--- a/m.py\n+++ b/m.py\n" + body)[0].hunks


def test_changed_line_maps_to_innermost_definition() -> None:
    hunks = _hunks("@@ -12,2 +12,2 @@\n     def gamma(self):\n-        return 1\n+        return 11\n")
    changed, unresolved = changed_definitions(hunks, DEFS, SOURCE.splitlines())
    assert [d.qualified_name for d in changed] == ["m.Beta.gamma"]  # not the class too
    assert unresolved == 0


def test_class_body_change_maps_to_class_and_module_change_to_nothing() -> None:
    hunks = _hunks("@@ -10 +10 @@\n-    flag = True\n+    flag = False\n@@ -1 +1 @@\n-import os\n+import sys\n")
    changed, unresolved = changed_definitions(hunks, DEFS, SOURCE.splitlines())
    assert [d.qualified_name for d in changed] == ["m.Beta"]
    assert unresolved == 0


def test_insertions_inside_at_end_and_between_definitions() -> None:
    lines = SOURCE.splitlines()
    # inside alpha's body (after line 5, which is inside 4..6)
    inside = _hunks("@@ -5,2 +5,3 @@\n     y = x + 1\n+    y *= 2\n     return y\n")
    assert [d.qualified_name for d in changed_definitions(inside, DEFS, lines)[0]] == ["m.alpha"]
    # appended after gamma's last line (13), indented deeper than its header: gamma's body grows
    at_end = _hunks("@@ -13,2 +13,3 @@\n         return 1\n+        # unreachable\n \n")
    assert [d.qualified_name for d in changed_definitions(at_end, DEFS, lines)[0]] == ["m.Beta.gamma"]
    # a new method between gamma and delta: at the method level, so it belongs to the class only
    between = _hunks("@@ -13,2 +13,5 @@\n         return 1\n+\n+    def epsilon(self):\n+        return 3\n \n")
    assert [d.qualified_name for d in changed_definitions(between, DEFS, lines)[0]] == ["m.Beta"]
    # a new top-level function after alpha: nothing existing changed
    after_alpha = _hunks("@@ -6,2 +6,5 @@\n     return y\n+\n+def omega():\n+    pass\n \n")
    assert changed_definitions(after_alpha, DEFS, lines)[0] == []


def test_hunks_are_located_by_text_when_the_file_moved_on() -> None:
    shifted_source = "# header\n# more header\n# and more\n" + SOURCE
    shifted_defs = [Def(d.name, d.qualified_name, d.kind, d.start_line + 3, d.end_line + 3) for d in DEFS]
    hunks = _hunks("@@ -15,2 +15,2 @@\n     def delta(self):\n-        return 2\n+        return 22\n")
    assert locate_hunk(hunks[0], shifted_source.splitlines()) == 3
    changed, unresolved = changed_definitions(hunks, shifted_defs, shifted_source.splitlines())
    assert [d.qualified_name for d in changed] == ["m.Beta.delta"]
    assert unresolved == 0
    # trusting line numbers instead lands on the wrong lines (15..16 are inside gamma after the shift)
    wrong, _ = changed_definitions(hunks, shifted_defs)
    assert [d.qualified_name for d in wrong] == ["m.Beta.gamma"]


def test_file_that_already_holds_the_fix_is_matched_by_the_new_side() -> None:
    fixed = SOURCE.replace("        return 2", "        return 22")
    hunks = _hunks("@@ -15,2 +15,2 @@\n     def delta(self):\n-        return 2\n+        return 22\n")
    assert locate_hunk(hunks[0], fixed.splitlines()) is None  # the old side is gone
    changed, unresolved = changed_definitions(hunks, DEFS, fixed.splitlines())
    assert [d.qualified_name for d in changed] == ["m.Beta.delta"]
    assert unresolved == 0


def test_hunk_found_nowhere_is_unresolved() -> None:
    hunks = _hunks("@@ -3,2 +3,2 @@\n def nowhere_to_be_found():\n-    return 'gone'\n+    return 'still gone'\n")
    changed, unresolved = changed_definitions(hunks, DEFS, SOURCE.splitlines())
    assert changed == [] and unresolved == 1


def test_mapping_with_real_symbol_extraction() -> None:
    text = (FIXTURE_REPO / "src" / "payments" / "retry.py").read_text()
    definitions = extract_symbols(text, "python", "src/payments/retry.py")
    patch = (
        "--- a/src/payments/retry.py\n+++ b/src/payments/retry.py\n"
        "@@ -14,6 +14,6 @@ def with_stripe_backoff(call, attempts=MAX_ATTEMPTS):\n"
        "         except TimeoutError:\n"
        "             time.sleep(delay)\n"
        "-            delay *= 2\n"
        "+            delay = min(delay * 2, 5.0)\n"
        "     return call()\n"
        " \n"
        " \n"
        "@@ -29,4 +29,4 @@ class RetryPolicy:\n"
        "         return [0.1 * 2**n for n in range(self.retries)]\n"
        " \n"
        "     def should_retry(self, error):\n"
        "-        return isinstance(error, TimeoutError)\n"
        "+        return isinstance(error, (TimeoutError, ConnectionError))\n"
    )
    (diff,) = parse_unified_diff(patch)
    changed, unresolved = changed_definitions(diff.hunks, definitions, text.splitlines())
    assert unresolved == 0
    assert [d.qualified_name for d in changed] == [
        "payments.retry.with_stripe_backoff",
        "payments.retry.RetryPolicy.should_retry",
    ]
