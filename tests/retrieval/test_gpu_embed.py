"""benchmarks/gpu_embed.py end to end on this CPU: export -> embed -> import -> verify against our embedder."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from haystack_integrations.components.code_alias.app.search import CodeSearch
from tests.support.repos import ACME_REPO, ROOT

SCRIPT = ROOT / "benchmarks" / "gpu_embed.py"


def _run(*args: str) -> str:
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.slow
def test_vectors_made_elsewhere_fill_the_cache_and_match_the_embedder(tmp_path: Path) -> None:

    repo = tmp_path / "acme"
    shutil.copytree(ACME_REPO, repo, symlinks=True)
    indexes = tmp_path / "indexes"
    CodeSearch(indexes / "acme", lexical=True).index(repo)
    cache = tmp_path / "vectors.sqlite"
    work, vectors = tmp_path / "work", tmp_path / "vectors"
    vectors.mkdir()

    exported = _run("export", "--indexes", str(indexes), "--cache", str(cache), "--out", str(work))
    assert "distinct chunks missing from the cache" in exported and (work / "shard-0.npz").is_file()
    assert (work / "model" / "model.safetensors").stat().st_size < 50_000_000  # float16: small enough to travel
    _run("embed", "--work", str(work), "--out", str(vectors), "--device", "cpu", "--batch-size", "8")
    assert "imported" in _run("import", "--vectors", str(vectors), "--cache", str(cache))
    verified = _run(
        "verify", "--indexes", str(indexes), "--cache", str(cache), "--indexes-sampled", "1", "--sample", "5"
    )
    assert '"found_in_cache": 5' in verified
    # nothing is missing any more
    assert " 0 distinct chunks missing" in _run(
        "export", "--indexes", str(indexes), "--cache", str(cache), "--out", str(work)
    )
