"""Shared fixtures: the multi-language fixture repository and a fresh copy of it per test."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

# No network here, and none needed: keep Haystack's telemetry from trying.
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# Query-time caches (saved BM25 indexes) go to a throw-away folder, not the user's cache.
os.environ.setdefault("CODE_ALIAS_CACHE_DIR", tempfile.mkdtemp(prefix="code-alias-test-cache-"))

FIXTURES = Path(__file__).parent / "fixtures"
ACME_REPO = FIXTURES / "acme_repo"


def write_tree(folder: Path, files: dict[str, str]) -> Path:
    """Write `files` (relative path -> text) under `folder`; returns `folder`."""
    for rel_path, text in files.items():
        target = folder / rel_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def acme_repo(tmp_path: Path) -> Path:
    """A writable copy of tests/fixtures/acme_repo (tests may edit it)."""
    target = tmp_path / "acme_repo"
    shutil.copytree(ACME_REPO, target, symlinks=True)
    return target
