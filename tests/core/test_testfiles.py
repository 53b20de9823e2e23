"""The one test / fixture rule (core/testfiles.py) shared by the dictionary, the ranking and the harness."""

from __future__ import annotations

import pytest

from haystack_integrations.components.code_alias.core.testfiles import (
    DEFAULT_TEST_RULE,
    TestFileRule,
    is_fixture_file,
    is_test_file,
)


@pytest.mark.parametrize(
    ("path", "test", "fixture"),
    [
        # JavaScript / TypeScript conventions at any depth
        ("packages/babel-parser/test/fixtures/es2015/yield/input.js", True, True),
        ("packages/babel-parser/test/helpers/runFixtureTests.js", True, False),
        ("compat/test/ts/memo.tsx", True, False),
        ("packages/runtime-core/__tests__/rendererChildren.spec.ts", True, False),
        ("packages/dts-test/defineComponent.test-d.tsx", True, False),
        ("packages/vue/src/apiWatch.test-d.ts", True, False),
        ("src/button.spec.jsx", True, False),
        ("src/__fixtures__/data.js", True, True),
        ("src/__mocks__/fs.js", True, False),
        ("app/e2e/login.ts", True, False),
        ("src/__snapshots__/x.js.snap", True, False),
        ("test/esm/index.mjs", True, False),
        ("spec/models/user_spec.rb", True, False),
        ("pkg/testdata/input.go", True, True),
        ("src/main/java/com/acme/Pay.java", False, False),
        ("src/test/java/com/acme/PayTest.java", True, False),
        # library code that only looks like tests
        ("packages/runtime-test/src/index.ts", False, False),
        ("packages/babel-parser/src/parser/expression.js", False, False),
        ("src/testing-library.ts", False, False),
        ("lib/latest.js", False, False),
        # Python keeps its own rule: a nested test package is library code
        ("django/test/client.py", False, False),
        ("numpy/testing/utils.py", False, False),
        ("sphinx/testing/fixtures.py", False, False),
        ("tests/fixtures/app/models.py", True, True),
        ("testing/python/collect.py", True, False),
        ("pkg/sub/tests/data/x.py", True, False),
        ("README.md", False, False),
        ("", False, False),
        # examples, demos, benchmarks at the root, and tool configuration written as code: not the project
        ("demo/contenteditable.js", True, False),
        ("benches/src/util.js", True, False),
        ("examples/server.js", True, False),
        ("sandbox/client.js", True, False),
        ("benchmark/babel-parser/many-empty-statements/bench.mjs", True, False),
        ("karma.conf.js", True, False),
        ("rollup.config.mjs", True, False),
        ("packages/babel-core/babel.config.ts", True, False),
        (".eslintrc.cjs", True, False),
        ("Gruntfile.js", True, False),
        ("Gulpfile.mjs", True, False),
        ("packages/reactivity/__benchmarks__/reactiveMap.bench.ts", True, False),
        ("src/parse.bench.mjs", True, False),
        # ... but nested folders of those names, and files that only contain the words, stay code
        ("doc/development/tutorials/examples/helloworld.py", False, False),
        ("packages/compiler-core/src/compat/compatConfig.ts", False, False),
        ("src/config.js", False, False),
        ("lib/demo.js", False, False),
    ],
)
def test_default_rule(path: str, test: bool, fixture: bool) -> None:
    assert (is_test_file(path), is_fixture_file(path)) == (test, fixture)


def test_every_fixture_is_a_test_file() -> None:
    for path in ("a/fixtures/b.js", "a/__fixtures__/b.ts", "x/testdata/y.go", "x/test_data/y.py"):
        assert is_fixture_file(path) and is_test_file(path)


def test_rule_is_configurable_and_round_trips() -> None:
    rule = TestFileRule.from_dict({"dirs_anywhere": ["qa"], "file_patterns": [r".*\.check\.js"]})
    assert rule.is_test("src/qa/x.ts") and rule.is_test("src/a.check.js")
    assert not rule.is_test("src/__tests__/x.ts")  # replaced, not added to
    assert rule.is_fixture("src/fixtures/x.js")  # a key left out keeps its default
    assert TestFileRule.from_dict(rule.to_dict()) == rule
    assert is_test_file("src/qa/x.ts", rule) and not is_test_file("src/qa/x.ts")
    assert TestFileRule.from_dict(DEFAULT_TEST_RULE.to_dict()) == DEFAULT_TEST_RULE
    plain = TestFileRule.from_dict({"support_dirs_at_root": [], "support_file_patterns": []})
    assert not plain.is_test("demo/app.js") and not plain.is_test("karma.conf.js")
    assert plain.is_test("test/app.js")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"dirs": ["x"]}, "unknown keys ['dirs']"),
        ({"fixture_dirs": "fixtures"}, "TestFileRule.fixture_dirs: expected a list of strings"),
        ({"file_patterns": ["(unclosed"]}, "TestFileRule.file_patterns: invalid regular expression"),
        ({"support_file_patterns": ["[x"]}, "TestFileRule.support_file_patterns: invalid regular expression"),
    ],
)
def test_bad_configuration_names_the_field(data: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("(", r"\(")):
        TestFileRule.from_dict(data)
