"""pytest fixtures for every test (a fresh copy of the fixture repository), and the environment the suite runs in.

Only fixtures live here; the helpers test modules import are in `tests.support`."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.support.repos import ACME_REPO

# No network here, and none needed: keep Haystack's telemetry from trying.
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# Query-time caches (saved BM25 indexes) go to a throw-away folder, not the user's cache.
os.environ.setdefault("CODE_ALIAS_CACHE_DIR", tempfile.mkdtemp(prefix="code-alias-test-cache-"))


@pytest.fixture
def acme_repo(tmp_path: Path) -> Path:
    """A writable copy of tests/fixtures/acme_repo (tests may edit it)."""
    target = tmp_path / "acme_repo"
    shutil.copytree(ACME_REPO, target, symlinks=True)
    return target
