"""Tests for package-manifest parsing and discovery (npm, Python, Cargo, Go)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from haystack_integrations.components.code_alias.core import manifests as manifests_module
from haystack_integrations.components.code_alias.core.manifests import (
    MANIFEST_NAMES,
    ManifestError,
    discover_packages,
    go_package_name,
    parse_manifest,
    python_normalised,
)
from haystack_integrations.components.code_alias.core.model import PackageInfo, Skipped


def write(root: Path, rel_path: str, content: str | bytes = "") -> None:
    path = root / rel_path
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


def all_files(root: Path) -> list[str]:
    return sorted(
        os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")
        for folder, _, names in os.walk(root)
        for name in names
    )


def discover(root: Path) -> tuple[list[PackageInfo], list[Skipped]]:
    return discover_packages(root, all_files(root))


def only(packages: list[PackageInfo]) -> PackageInfo:
    assert len(packages) == 1, packages
    return packages[0]


def test_manifest_names() -> None:
    assert {"package.json", "pyproject.toml", "setup.cfg", "setup.py", "Cargo.toml", "go.mod"} == MANIFEST_NAMES


# ---- npm -------------------------------------------------------------------------------------------------------
def test_scoped_npm_package_has_short_alias(tmp_path: Path) -> None:
    write(tmp_path, "packages/payments/package.json", json.dumps({"name": "@acme/payments-core", "version": "1.2.0"}))
    package = only(parse_manifest(tmp_path, "packages/payments/package.json"))
    assert package == PackageInfo(
        name="@acme/payments-core",
        ecosystem="npm",
        root="packages/payments",
        manifest="packages/payments/package.json",
        aliases=("payments-core", "payments"),  # the unscoped name, then the folder's
        import_names=("@acme/payments-core",),
        version="1.2.0",
    )


def test_unscoped_npm_package_at_root(tmp_path: Path) -> None:
    write(tmp_path, "package.json", '\ufeff{"name": "left-pad"}')  # a BOM must not break JSON parsing
    package = only(parse_manifest(tmp_path, "package.json"))
    assert (package.name, package.root, package.aliases, package.version) == ("left-pad", "", (), None)


def test_private_workspace_root_without_name_yields_members(tmp_path: Path) -> None:
    write(tmp_path, "package.json", json.dumps({"private": True, "workspaces": ["packages/*"]}))
    write(tmp_path, "packages/a/package.json", json.dumps({"name": "@acme/a"}))
    write(tmp_path, "packages/b/package.json", json.dumps({"name": "b", "version": "0.1.0"}))
    write(tmp_path, "tools/package.json", json.dumps({"private": True, "workspaces": {"packages": ["x/*"]}}))
    assert parse_manifest(tmp_path, "package.json") == []
    packages, skipped = discover(tmp_path)
    assert skipped == []
    assert [(p.name, p.root, p.aliases) for p in packages] == [
        ("@acme/a", "packages/a", ("a",)),
        ("b", "packages/b", ()),
    ]


def test_invalid_json_reports_file_line_and_column(tmp_path: Path) -> None:
    write(tmp_path, "web/package.json", '{\n  "name": "x",\n  oops\n}')
    with pytest.raises(ManifestError) as caught:
        parse_manifest(tmp_path, "web/package.json")
    message = str(caught.value)
    assert message.startswith("web/package.json: invalid JSON at line 3, column 3")
    assert caught.value.path == "web/package.json"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"name": 42}', "package.json: name must be a string, got a number (42)"),
        ('{"name": "x", "version": ["1"]}', "package.json: version must be a string, got an array (['1'])"),
        ('["not", "an", "object"]', "package.json: the top level must be an object, got an array"),
        ('{"workspaces": "packages/*"}', "package.json: workspaces must be an array of strings"),
        ('{"workspaces": {"packages": [1]}}', "package.json: workspaces.packages must be an array of strings"),
    ],
)
def test_package_json_wrong_types(tmp_path: Path, content: str, expected: str) -> None:
    write(tmp_path, "package.json", content)
    with pytest.raises(ManifestError, match="^" + expected.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        parse_manifest(tmp_path, "package.json")


# ---- pyproject.toml --------------------------------------------------------------------------------------------
def test_pyproject_src_layout_infers_import_names(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[project]\nname = "Acme-Payments"\nversion = "2.0"\n')
    write(tmp_path, "src/acme_pay/__init__.py")
    write(tmp_path, "src/acme_pay/retry.py")
    write(tmp_path, "src/acme_ns/plugin.py")  # PEP 420 namespace package: no __init__.py
    write(tmp_path, "tests/__init__.py")
    package = only(parse_manifest(tmp_path, "pyproject.toml", source_files=all_files(tmp_path)))
    assert package.name == "Acme-Payments"
    assert package.ecosystem == "python"
    assert package.version == "2.0"
    assert package.import_names == ("acme_ns", "acme_pay")
    assert package.aliases == ("acme_payments", "acme_ns", "acme_pay")


def test_pyproject_flat_layout_skips_tests_docs_and_private(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[project]\nname = "toolbox"\ndynamic = ["version"]\n')
    for rel in (
        "toolbox/__init__.py",
        "tests/__init__.py",
        "docs/conf.py",
        "_private/__init__.py",
        "no_init/mod.py",
        "single_module.py",
        "setup.py",
        "conftest.py",
        "not-an-identifier/__init__.py",
    ):
        write(tmp_path, rel)
    package = only(parse_manifest(tmp_path, "pyproject.toml", source_files=all_files(tmp_path)))
    assert package.import_names == ("toolbox", "single_module")
    assert package.version is None


def test_pyproject_without_sources_has_no_invented_import_names(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[project]\nname = "ghost-pkg"\n')
    package = only(parse_manifest(tmp_path, "pyproject.toml"))
    assert package.import_names == ()
    assert package.aliases == ("ghost_pkg",)


def test_pyproject_declared_packages_win_over_folders(tmp_path: Path) -> None:
    write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "multi"\n'
        '[tool.setuptools]\npackages = ["alpha", "alpha.sub", "beta"]\npy-modules = ["gamma"]\n',
    )
    write(tmp_path, "other/__init__.py")
    package = only(parse_manifest(tmp_path, "pyproject.toml", source_files=all_files(tmp_path)))
    assert package.import_names == ("alpha", "beta", "gamma")


def test_pyproject_setuptools_find_with_where_include_exclude(tmp_path: Path) -> None:
    write(
        tmp_path,
        "lib/pyproject.toml",
        '[project]\nname = "finder"\n'
        '[tool.setuptools.packages.find]\nwhere = ["code"]\ninclude = ["finder*"]\nexclude = ["finder_tests"]\n',
    )
    write(tmp_path, "lib/code/finder/__init__.py")
    write(tmp_path, "lib/code/finder_extra/__init__.py")
    write(tmp_path, "lib/code/finder_tests/__init__.py")
    write(tmp_path, "lib/code/unrelated/__init__.py")
    package = only(parse_manifest(tmp_path, "lib/pyproject.toml", source_files=all_files(tmp_path)))
    assert package.root == "lib"
    assert package.import_names == ("finder", "finder_extra")


def test_pyproject_hatch_wheel_packages(tmp_path: Path) -> None:
    write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "code-alias-haystack"\n'
        '[tool.hatch.build.targets.wheel]\npackages = ["components/haystack_integrations"]\n',
    )
    package = only(parse_manifest(tmp_path, "pyproject.toml"))
    assert package.import_names == ("haystack_integrations",)
    assert "code_alias_haystack" in package.aliases


def test_poetry_project(tmp_path: Path) -> None:
    write(
        tmp_path,
        "svc/pyproject.toml",
        "[tool.poetry]\n"
        'name = "billing-service"\nversion = "0.3.1"\n'
        'packages = [{include = "billing", from = "src"}, {include = "cli.py"}]\n',
    )
    package = only(parse_manifest(tmp_path, "svc/pyproject.toml"))
    assert (package.name, package.version, package.root) == ("billing-service", "0.3.1", "svc")
    assert package.import_names == ("billing", "cli")
    assert package.aliases == ("billing_service", "billing", "cli")


def test_pyproject_with_only_tool_settings_yields_nothing(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.ruff]\nline-length = 100\n[build-system]\nrequires = ["setuptools"]\n')
    assert parse_manifest(tmp_path, "pyproject.toml") == []
    assert discover(tmp_path) == ([], [])


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('[project\nname = "x"\n', "pyproject.toml: invalid TOML: "),
        ("[project]\nname = 42\n", "pyproject.toml: [project].name must be a string, got a number"),
        ('[project]\nversion = "1"\n', "pyproject.toml: [project].name is missing"),
        ('project = "x"\n', "pyproject.toml: [project] must be a table, got a string"),
        ('[tool.poetry]\nname = "x"\npackages = "x"\n', "pyproject.toml: [tool.poetry].packages must be an array"),
        ('[project]\nname = "x"\n[tool.setuptools]\npackages = "x"\n', "pyproject.toml: [tool.setuptools].packages"),
    ],
)
def test_pyproject_malformed(tmp_path: Path, content: str, expected: str) -> None:
    write(tmp_path, "pyproject.toml", content)
    with pytest.raises(ManifestError) as caught:
        parse_manifest(tmp_path, "pyproject.toml")
    assert str(caught.value).startswith(expected)


def test_invalid_toml_message_has_line(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\nname = "y"\n')
    with pytest.raises(ManifestError, match=r"^pyproject.toml: invalid TOML: .*line 3"):
        parse_manifest(tmp_path, "pyproject.toml")


# ---- setup.cfg -------------------------------------------------------------------------------------------------
def test_setup_cfg_with_find_in_src(tmp_path: Path) -> None:
    write(
        tmp_path,
        "setup.cfg",
        "[metadata]\nname = pytest\nversion = attr: _pytest.__version__\n"
        "[options]\npackages = find:\npackage_dir =\n    =src\npy_modules = py\n"
        "[options.packages.find]\nwhere = src\n",
    )
    write(tmp_path, "src/_pytest/__init__.py")
    write(tmp_path, "src/pytest/__init__.py")
    write(tmp_path, "src/py.py")
    package = only(parse_manifest(tmp_path, "setup.cfg", source_files=all_files(tmp_path)))
    assert package.name == "pytest"
    assert package.version is None  # attr: would need the code to run
    assert package.import_names == ("_pytest", "pytest", "py")


def test_setup_cfg_explicit_packages(tmp_path: Path) -> None:
    write(
        tmp_path,
        "setup.cfg",
        "[metadata]\nname = Django\nversion = 3.0\n[options]\npackages =\n  django\n  django.db\n",
    )
    package = only(parse_manifest(tmp_path, "setup.cfg"))
    assert (package.name, package.version, package.import_names) == ("Django", "3.0", ("django",))
    assert package.aliases == ("django",)


def test_setup_cfg_tool_settings_only(tmp_path: Path) -> None:
    write(tmp_path, "setup.cfg", "[flake8]\nmax-line-length = 100\n")
    assert parse_manifest(tmp_path, "setup.cfg") == []


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("name = x\n", "setup.cfg: invalid INI: File contains no section headers"),
        ("[metadata]\nname = a\nname = b\n", "setup.cfg: invalid INI: While reading from 'setup.cfg' [line  3]"),
        ("[metadata]\nname =\n", "setup.cfg: [metadata] name is empty"),
    ],
)
def test_setup_cfg_malformed(tmp_path: Path, content: str, expected: str) -> None:
    write(tmp_path, "setup.cfg", content)
    with pytest.raises(ManifestError) as caught:
        parse_manifest(tmp_path, "setup.cfg")
    assert str(caught.value).startswith(" ".join(expected.split()))


# ---- setup.py --------------------------------------------------------------------------------------------------
def test_setup_py_literal_arguments(tmp_path: Path) -> None:
    write(
        tmp_path,
        "setup.py",
        "from setuptools import setup\n"
        "modules = ['sympy.core', 'sympy.printing']\n"
        "setup(name='sympy', version='1.1', packages=['sympy'] + modules, py_modules=['isympy'])\n",
    )
    package = only(parse_manifest(tmp_path, "setup.py"))
    assert (package.name, package.version, package.import_names) == ("sympy", "1.1", ("sympy", "isympy"))


def test_sklearn_style_setup_py_maps_dist_name_to_import_folder(tmp_path: Path) -> None:
    write(
        tmp_path,
        "setup.py",
        "import os\nfrom setuptools import find_packages, setup\n"
        "DISTNAME = 'scikit-learn'\nVERSION = get_version()\n"
        "def setup_package():\n"
        "    metadata = dict(name=DISTNAME, version=VERSION, packages=find_packages())\n"
        "    setup(**metadata)\n"
        "if __name__ == '__main__':\n    setup_package()\n",
    )
    write(tmp_path, "sklearn/__init__.py")
    write(tmp_path, "sklearn/linear_model/__init__.py")
    write(tmp_path, "examples/plot.py")
    write(tmp_path, "benchmarks/bench_x.py")
    write(tmp_path, "doc/conf.py")
    packages, skipped = discover(tmp_path)
    assert skipped == []
    package = only(packages)
    assert package.name == "scikit-learn"
    assert package.version is None  # computed at run time
    assert package.import_names == ("sklearn",)
    assert set(package.aliases) == {"scikit_learn", "sklearn"}


def test_setup_py_find_packages_where_and_package_dir(tmp_path: Path) -> None:
    write(
        tmp_path,
        "setup.py",
        "from setuptools import setup, find_packages\n"
        "setup(name='srcpkg', package_dir={'': 'src'}, packages=find_packages('src', exclude=['tests']))\n",
    )
    write(tmp_path, "src/srcpkg/__init__.py")
    write(tmp_path, "src/tests/__init__.py")
    package = only(parse_manifest(tmp_path, "setup.py", source_files=all_files(tmp_path)))
    assert package.import_names == ("srcpkg",)


def test_setup_py_is_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    write(
        tmp_path,
        "setup.py",
        f"open({str(marker)!r}, 'w').write('ran')\nimport setuptools\nsetuptools.setup(name='safe')\n",
    )
    assert only(parse_manifest(tmp_path, "setup.py")).name == "safe"
    assert not marker.exists()


def test_setup_py_shim_without_name_yields_nothing(tmp_path: Path) -> None:
    write(tmp_path, "setup.py", "import setuptools\nsetuptools.setup()\n")
    assert parse_manifest(tmp_path, "setup.py") == []


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            "about = {}\nexec(open('pkg/__version__.py').read(), about)\nsetup(name=about['__title__'])\n",
            "setup.py: the package name is not a literal (about['__title__']); setup.py is never executed",
        ),
        (
            "setup(**get_metadata())\n",
            "setup.py: the package name is not a literal (setup(**get_metadata())); setup.py is never executed",
        ),
        ("print 'python 2'\nsetup(name='x')\n", "setup.py: not valid Python 3 (line 1): "),
        ("setup(name=7)\n", "setup.py: the package name is not a literal (7)"),
    ],
)
def test_setup_py_unreadable_names(tmp_path: Path, content: str, expected: str) -> None:
    write(tmp_path, "setup.py", content)
    with pytest.raises(ManifestError) as caught:
        parse_manifest(tmp_path, "setup.py")
    assert str(caught.value).startswith(expected)


def test_numpy_distutils_subpackage_setup_is_not_a_distribution(tmp_path: Path) -> None:
    write(tmp_path, "sklearn/__init__.py")
    write(tmp_path, "sklearn/cluster/__init__.py")
    write(tmp_path, "sklearn/cluster/setup.py", "def configuration():\n    pass\nsetup(**configuration().todict())\n")
    assert discover(tmp_path) == ([], [])


# ---- merging ---------------------------------------------------------------------------------------------------
def test_pyproject_and_setup_py_of_one_distribution_merge(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[project]\nname = "scikit-learn"\ndynamic = ["version"]\n')
    write(tmp_path, "setup.py", "from setuptools import setup\nsetup(name='scikit_learn', version='1.3.0')\n")
    write(tmp_path, "setup.cfg", "[metadata]\nname = Scikit.Learn\n")
    write(tmp_path, "sklearn/__init__.py")
    packages, skipped = discover(tmp_path)
    assert skipped == []
    package = only(packages)
    assert package.name == "scikit-learn"
    assert package.manifest == "pyproject.toml"
    assert package.version == "1.3.0"
    assert package.import_names == ("sklearn",)


def test_unreadable_setup_py_beside_named_pyproject_is_not_reported(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[project]\nname = "requests"\n')
    write(tmp_path, "setup.py", "about = {}\nsetup(name=about['__title__'])\n")
    write(tmp_path, "requests/__init__.py")
    packages, skipped = discover(tmp_path)
    assert [p.name for p in packages] == ["requests"]
    assert skipped == []


def test_same_name_in_two_folders_stays_two_records(tmp_path: Path) -> None:
    write(tmp_path, "package.json", json.dumps({"name": "app"}))
    write(tmp_path, "apps/copy/package.json", json.dumps({"name": "app"}))
    packages, _ = discover(tmp_path)
    assert [(p.name, p.root) for p in packages] == [("app", ""), ("app", "apps/copy")]


def test_folder_name_is_an_alias_unless_generic(tmp_path: Path) -> None:
    write(tmp_path, "packages/vue-compat/package.json", json.dumps({"name": "@vue/compat"}))
    write(tmp_path, "compat/package.json", json.dumps({"name": "preact-compat"}))
    write(tmp_path, "web/src/package.json", json.dumps({"name": "web-src"}))
    packages, _ = discover(tmp_path)
    assert {p.name: p.aliases for p in packages} == {
        "@vue/compat": ("compat", "vue-compat"),
        "preact-compat": ("compat",),
        "web-src": (),  # `src` names no package
    }


def test_package_json_in_test_fixtures_declares_no_package(tmp_path: Path) -> None:
    write(tmp_path, "package.json", json.dumps({"name": "babel", "workspaces": ["packages/*", "test/esm"]}))
    write(tmp_path, "packages/babel-core/package.json", json.dumps({"name": "@babel/core"}))
    write(tmp_path, "packages/babel-core/test/fixtures/x/package.json", json.dumps({"name": "fixture-pkg"}))
    write(tmp_path, "packages/babel-cli/test/fixtures/y/package.json", json.dumps({"name": "other-fixture"}))
    write(tmp_path, "test/esm/package.json", json.dumps({"name": "babel-test-esm"}))  # a declared member
    packages, skipped = discover(tmp_path)
    assert skipped == []
    assert [(p.name, p.root) for p in packages] == [
        ("babel", ""),
        ("@babel/core", "packages/babel-core"),
        ("babel-test-esm", "test/esm"),
    ]


def test_workspace_members_from_npm_pnpm_and_lerna(tmp_path: Path) -> None:
    write(tmp_path, "package.json", json.dumps({"private": True, "workspaces": {"packages": ["apps/*"]}}))
    write(tmp_path, "pnpm-workspace.yaml", "packages:\n  - 'packages/*'\n  - 'libs/**'\n  - '!**/test/**'\n")
    write(tmp_path, "lerna.json", json.dumps({"packages": ["tools/*"]}))
    write(tmp_path, "nested/package.json", json.dumps({"name": "nested", "workspaces": ["./mods/*"]}))
    manifests = ["package.json", "nested/package.json"]
    members = manifests_module.workspace_member_patterns(tmp_path, manifests)
    assert members.patterns == ("apps/*", "nested/mods/*", "packages/*", "libs/**", "tools/*")
    assert members.matches("packages/vue-compat")
    assert not members.matches("packages/vue-compat/src")  # `*` stays inside one folder name
    assert members.matches("libs/a/b")
    assert not members.matches("libs/a/test/c")  # pnpm's negation
    assert members.matches("tools/x") and members.matches("apps/web") and members.matches("nested/mods/m")
    assert not members.matches("docs")


def test_malformed_workspace_files_are_ignored(tmp_path: Path) -> None:
    write(tmp_path, "pnpm-workspace.yaml", "packages: [unclosed\n")
    write(tmp_path, "lerna.json", "{not json")
    members = manifests_module.workspace_member_patterns(tmp_path, [])
    assert members.patterns == () and not members.matches("packages/a")


def test_python_normalised() -> None:
    assert python_normalised("Scikit_Learn") == "scikit-learn"
    assert python_normalised("zope.interface") == "zope-interface"


# ---- Cargo -----------------------------------------------------------------------------------------------------
def test_cargo_workspace_and_members(tmp_path: Path) -> None:
    write(tmp_path, "Cargo.toml", '[workspace]\nmembers = ["crates/*"]\n[workspace.package]\nversion = "0.9.0"\n')
    write(tmp_path, "crates/pay-core/Cargo.toml", '[package]\nname = "pay-core"\nversion.workspace = true\n')
    write(
        tmp_path,
        "crates/cli/Cargo.toml",
        '[package]\nname = "acme-cli"\nversion = "1.0.0"\n[lib]\nname = "acme"\n',
    )
    packages, skipped = discover(tmp_path)
    assert skipped == []
    assert [(p.name, p.ecosystem, p.root, p.import_names, p.aliases, p.version) for p in packages] == [
        ("acme-cli", "cargo", "crates/cli", ("acme",), ("acme",), "1.0.0"),
        ("pay-core", "cargo", "crates/pay-core", ("pay_core",), ("pay_core",), "0.9.0"),
    ]


def test_cargo_crate_without_dash_has_no_redundant_alias(tmp_path: Path) -> None:
    write(tmp_path, "Cargo.toml", '[package]\nname = "serde"\nversion = "1.0.0"\n')
    package = only(parse_manifest(tmp_path, "Cargo.toml"))
    assert (package.import_names, package.aliases) == (("serde",), ())


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("[package\n", "Cargo.toml: invalid TOML: "),
        ('[package]\nversion = "1"\n', "Cargo.toml: [package].name is missing"),
        ("[package]\nname = true\n", "Cargo.toml: [package].name must be a string, got a boolean"),
        ("[workspace]\nmembers = 3\n", "Cargo.toml: [workspace].members must be an array of strings"),
        ('[dependencies]\nserde = "1"\n', "Cargo.toml: neither [package] nor [workspace] is declared"),
    ],
)
def test_cargo_malformed(tmp_path: Path, content: str, expected: str) -> None:
    write(tmp_path, "Cargo.toml", content)
    with pytest.raises(ManifestError) as caught:
        parse_manifest(tmp_path, "Cargo.toml")
    assert str(caught.value).startswith(expected)


# ---- Go --------------------------------------------------------------------------------------------------------
def test_go_mod(tmp_path: Path) -> None:
    write(tmp_path, "svc/go.mod", "// payments service\nmodule github.com/acme/pay // the module\n\ngo 1.22\n")
    package = only(parse_manifest(tmp_path, "svc/go.mod"))
    assert package == PackageInfo(
        name="github.com/acme/pay",
        ecosystem="go",
        root="svc",
        manifest="svc/go.mod",
        aliases=("pay",),
        import_names=("github.com/acme/pay",),
    )


def test_go_mod_quoted_path_and_major_version(tmp_path: Path) -> None:
    write(tmp_path, "go.mod", 'module "github.com/acme/pay/v2"\n')
    package = only(parse_manifest(tmp_path, "go.mod"))
    assert (package.name, package.aliases) == ("github.com/acme/pay/v2", ("pay",))


def test_go_package_name() -> None:
    assert go_package_name("github.com/acme/pay") == "pay"
    assert go_package_name("github.com/acme/pay/v3") == "pay"
    assert go_package_name("gopkg.in/yaml.v3") == "yaml"
    assert go_package_name("example") == "example"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("go 1.21\n", "go.mod: no module directive"),
        ("module\n", "go.mod: line 1: malformed module directive 'module'"),
        ("modules github.com/x\n", "go.mod: no module directive"),
    ],
)
def test_go_mod_malformed(tmp_path: Path, content: str, expected: str) -> None:
    write(tmp_path, "go.mod", content)
    with pytest.raises(ManifestError) as caught:
        parse_manifest(tmp_path, "go.mod")
    assert str(caught.value) == expected


# ---- discovery never raises ------------------------------------------------------------------------------------
def test_discover_turns_every_malformed_kind_into_a_skip_naming_the_file(tmp_path: Path) -> None:
    write(tmp_path, "js/package.json", "{")
    write(tmp_path, "py/pyproject.toml", "[project]\nname = 1\n")
    write(tmp_path, "cfg/setup.cfg", "no header\n")
    write(tmp_path, "old/setup.py", "print 'hi'\n")
    write(tmp_path, "rs/Cargo.toml", "[package]\n")
    write(tmp_path, "go/go.mod", "go 1.20\n")
    write(tmp_path, "bin/package.json", b"\x00\x01\x02")
    write(tmp_path, "latin/setup.cfg", "[metadata]\nname = caf\xe9\n".encode("latin-1"))
    write(tmp_path, "ok/package.json", json.dumps({"name": "fine"}))
    packages, skipped = discover(tmp_path)
    assert [p.name for p in packages] == ["fine"]
    by_path = {s.path: s.reason for s in skipped}
    assert by_path == {
        "bin/package.json": "binary (NUL byte in the first 8 KiB)",
        "cfg/setup.cfg": by_path["cfg/setup.cfg"],
        "go/go.mod": "no module directive",
        "js/package.json": by_path["js/package.json"],
        "latin/setup.cfg": "not UTF-8 text (byte 0xe9 at offset 21)",
        "old/setup.py": by_path["old/setup.py"],
        "py/pyproject.toml": "[project].name must be a string, got a number (1)",
        "rs/Cargo.toml": "[package].name is missing",
    }
    assert by_path["cfg/setup.cfg"].startswith("invalid INI: File contains no section headers")
    assert by_path["js/package.json"].startswith("invalid JSON at line 1, column 2")
    assert by_path["old/setup.py"].startswith("not valid Python 3 (line 1)")
    assert [s.path for s in skipped] == sorted(by_path)


def test_discover_survives_a_parser_bug(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "go.mod", "module example.com/x\n")

    def broken(*_: object) -> list[PackageInfo]:
        raise RuntimeError("boom")

    monkeypatch.setitem(manifests_module._PARSERS, "go.mod", broken)
    assert discover(tmp_path) == ([], [Skipped(path="go.mod", reason="unexpected error: RuntimeError: boom")])


def test_discover_ignores_non_manifest_paths_and_missing_manifest(tmp_path: Path) -> None:
    write(tmp_path, "main.py")
    packages, skipped = discover_packages(tmp_path, ["main.py", "gone/package.json"])
    assert packages == []
    assert skipped == [Skipped(path="gone/package.json", reason="file does not exist (removed, or a broken symlink)")]


def test_parse_manifest_rejects_unknown_file_and_escaping_path(tmp_path: Path) -> None:
    write(tmp_path, "README.md", "# hi\n")
    with pytest.raises(ManifestError, match=r"^README.md: not a manifest"):
        parse_manifest(tmp_path, "README.md")
    with pytest.raises(ManifestError, match=r"^../package.json: unsafe path"):
        parse_manifest(tmp_path, "../package.json")


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need a POSIX filesystem")
def test_manifest_symlink_leading_out_of_the_root_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "outside/package.json", json.dumps({"name": "stolen"}))
    (tmp_path / "repo").mkdir()
    os.symlink(tmp_path / "outside" / "package.json", tmp_path / "repo" / "package.json")
    packages, skipped = discover_packages(tmp_path / "repo", ["package.json"])
    assert packages == []
    assert len(skipped) == 1
    assert skipped[0].path == "package.json"
    assert skipped[0].reason.startswith("unsafe path")
