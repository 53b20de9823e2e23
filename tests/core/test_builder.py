"""The alias dictionary: contents, persistence, incremental refresh and rename aliasing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from haystack_integrations.components.code_alias.core.builder import (
    ConfigFileError,
    DictionaryBuilder,
    load_mapping_file,
)
from haystack_integrations.components.code_alias.core.model import AliasDictionary, DictionaryError


def _touch_later(path: Path) -> None:
    """Make sure a rewrite changes the mtime even on coarse-grained filesystems."""
    stamp = path.stat().st_mtime_ns + 2_000_000_000
    os.utime(path, ns=(stamp, stamp))


def test_build_collects_symbols_packages_aliases(acme_repo: Path) -> None:
    dictionary, stats = DictionaryBuilder().build(acme_repo)
    by_name = {s.name: s for s in dictionary.symbols}
    backoff = by_name["withStripeBackoff"]
    assert backoff.package == "@acme/payments-core"
    assert backoff.language == "typescript"
    assert backoff.words == ("with", "stripe", "backoff")
    assert "retry" in backoff.doc_words and "exponential" in backoff.doc_words
    assert by_name["AccessGate"].aliases == ("the bouncer",)
    assert by_name["PostJournal"].package == "github.com/acme/ledger"
    assert by_name["mint_session_jwt"].package == "acme-auth"
    assert not by_name["_parse_header"].exported
    # languages: ts, jsx, python, go, rust, java
    assert {s.language for s in dictionary.symbols} >= {"typescript", "javascript", "python", "go", "rust", "java"}
    packages = {p.name: p for p in dictionary.packages}
    assert "payments-core" in packages["@acme/payments-core"].aliases
    assert "acme_auth" in packages["acme-auth"].import_names
    assert "fx" in packages["fx-rates"].aliases  # nickname for a package
    # vendored code never enters
    assert "leftPadVendored" not in by_name
    assert any(s.path == "node_modules" for s in dictionary.skipped)
    assert stats.files_parsed == stats.files_read > 0


def test_dictionary_round_trips_through_json(acme_repo: Path, tmp_path: Path) -> None:
    dictionary, _ = DictionaryBuilder().build(acme_repo)
    path = dictionary.save(tmp_path / "d" / "dictionary.json")
    loaded = AliasDictionary.load(path)
    assert loaded.version == dictionary.version == loaded.compute_version()
    assert loaded.symbols == dictionary.symbols
    assert loaded.resolve_symbol("withstripebackoff") == "withStripeBackoff"
    assert loaded.resolve_symbol("noSuchThing") is None
    assert loaded.resolve_package("payments-core") == "@acme/payments-core"


def test_damaged_dictionary_file_names_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "dictionary.json"
    bad.write_text(json.dumps({"symbols": [{"name": 3}]}))
    with pytest.raises(DictionaryError, match=r"dictionary\.json: invalid alias dictionary at symbols\.0"):
        AliasDictionary.load(bad)
    with pytest.raises(DictionaryError, match="code-alias index"):
        AliasDictionary.load(tmp_path / "missing.json")


def test_version_is_deterministic_and_content_sensitive(acme_repo: Path) -> None:
    first, _ = DictionaryBuilder().build(acme_repo)
    second, _ = DictionaryBuilder().build(acme_repo)
    assert first.version == second.version
    retry = acme_repo / "packages/payments-core/src/retry.ts"
    retry.write_text(retry.read_text() + "\nexport function jitterDelay() { return 1; }\n")
    third, _ = DictionaryBuilder().build(acme_repo)
    assert third.version != first.version


def test_refresh_rereads_only_changed_files_and_equals_full_build(acme_repo: Path) -> None:
    builder = DictionaryBuilder()
    first, _ = builder.build(acme_repo)
    unchanged, stats = builder.refresh(acme_repo, first)
    assert stats.files_read == 0 and stats.files_parsed == 0
    assert unchanged.version == first.version

    tokens = acme_repo / "services/auth/acme_auth/tokens.py"
    tokens.write_text(tokens.read_text() + "\n\ndef revoke_session(token: str) -> None:\n    pass\n")
    _touch_later(tokens)
    refreshed, stats = builder.refresh(acme_repo, first)
    assert stats.files_read == 1 and stats.files_parsed == 1
    full, _ = builder.build(acme_repo)
    assert refreshed.symbols == full.symbols
    assert refreshed.packages == full.packages
    assert refreshed.version == full.version
    assert "revoke_session" in {s.name for s in refreshed.symbols}


def test_touch_without_change_reads_but_does_not_parse(acme_repo: Path) -> None:
    builder = DictionaryBuilder()
    first, _ = builder.build(acme_repo)
    _touch_later(acme_repo / "services/ledger/ledger.go")
    _, stats = builder.refresh(acme_repo, first)
    assert stats.files_read == 1 and stats.files_parsed == 0


def test_rename_keeps_old_name_as_alias(acme_repo: Path) -> None:
    builder = DictionaryBuilder()
    first, _ = builder.build(acme_repo)
    retry = acme_repo / "packages/payments-core/src/retry.ts"
    retry.write_text(retry.read_text().replace("withStripeBackoff", "retryStripeCall"))
    _touch_later(retry)
    renamed, stats = builder.refresh(acme_repo, first)
    assert stats.renamed == {"withStripeBackoff": "retryStripeCall"}
    assert renamed.renamed == {"withStripeBackoff": "retryStripeCall"}
    entry = next(s for s in renamed.symbols if s.name == "retryStripeCall")
    assert "withStripeBackoff" in entry.aliases
    assert renamed.resolve_symbol("withStripeBackoff") == "retryStripeCall"
    # a second rename chains back to the newest name
    retry.write_text(retry.read_text().replace("retryStripeCall", "callStripeWithRetry"))
    _touch_later(retry)
    again, _ = builder.refresh(acme_repo, renamed)
    assert again.renamed == {"retryStripeCall": "callStripeWithRetry", "withStripeBackoff": "callStripeWithRetry"}


def test_body_change_with_new_name_is_not_a_rename(acme_repo: Path) -> None:
    builder = DictionaryBuilder()
    first, _ = builder.build(acme_repo)
    ledger = acme_repo / "services/ledger/ledger.go"
    ledger.write_text(
        ledger.read_text().replace(
            "func PostJournal(entries []Entry) error {\n\treturn nil\n}",
            "func WriteJournal(entries []Entry) error {\n\tif len(entries) == 0 {\n\t\treturn nil\n\t}\n"
            "\treturn nil\n}",
        )
    )
    _touch_later(ledger)
    refreshed, stats = builder.refresh(acme_repo, first)
    assert "WriteJournal" in {s.name for s in refreshed.symbols}
    assert stats.renamed == {}


def test_malformed_manifest_is_reported_not_fatal(acme_repo: Path) -> None:
    (acme_repo / "packages/web-ui/package.json").write_text('{"name": "@acme/web-ui",,}')
    dictionary, _ = DictionaryBuilder().build(acme_repo)
    reasons = {s.path: s.reason for s in dictionary.skipped}
    assert "packages/web-ui/package.json" in reasons
    assert reasons["packages/web-ui/package.json"].startswith("invalid JSON at line 1")
    assert "CheckoutButton" in {s.name for s in dictionary.symbols}


def test_bad_source_files_are_skipped_with_reasons(acme_repo: Path) -> None:
    (acme_repo / "blob.py").write_bytes(b"\x00\x01\x02binary")
    (acme_repo / "latin1.py").write_bytes("x = 'caf\xe9'\n".encode("latin-1"))
    (acme_repo / "huge.py").write_text("x = 1\n" * 300_000)
    (acme_repo / "loop").symlink_to(acme_repo, target_is_directory=True)
    (acme_repo / "escape.py").symlink_to("/etc/hostname")
    dictionary, _ = DictionaryBuilder().build(acme_repo)
    reasons = {s.path: s.reason.lower() for s in dictionary.skipped}
    assert "binary" in reasons["blob.py"]
    assert "utf-8" in reasons["latin1.py"]
    assert "too large" in reasons["huge.py"]
    assert "escape" in reasons["escape.py"]
    assert any("loop" in r for p, r in reasons.items() if p.startswith("loop"))
    assert "withStripeBackoff" in {s.name for s in dictionary.symbols}


def test_mapping_files_validate(tmp_path: Path) -> None:
    good = tmp_path / "nick.yml"
    good.write_text("the bouncer: AccessGate\nmoney: [PostJournal, Entry]\n")
    assert load_mapping_file(good) == {"the bouncer": ["AccessGate"], "money": ["PostJournal", "Entry"]}
    bad = tmp_path / "bad.yml"
    bad.write_text("- just\n- a list\n")
    with pytest.raises(ConfigFileError, match=r"bad\.yml"):
        load_mapping_file(bad)
    broken = tmp_path / "broken.yml"
    broken.write_text("a: [unclosed\n")
    with pytest.raises(ConfigFileError, match=r"broken\.yml: not valid YAML"):
        load_mapping_file(broken)


def test_build_from_texts_matches_disk_build_symbols(acme_repo: Path) -> None:
    from haystack_integrations.components.code_alias.core.builder import SourceText

    disk, _ = DictionaryBuilder().build(acme_repo)
    texts = [SourceText(rel_path=path, text=(acme_repo / path).read_text()) for path in disk.files] + [
        SourceText(
            rel_path="packages/payments-core/package.json",
            text=(acme_repo / "packages/payments-core/package.json").read_text(),
        )
    ]
    memory, _ = DictionaryBuilder().build_from_texts(texts)
    assert {s.qualified_name for s in memory.symbols} == {s.qualified_name for s in disk.symbols}
    assert {p.name for p in memory.packages} == {"@acme/payments-core"}
    assert memory.package_for_file("packages/payments-core/src/retry.ts") == "@acme/payments-core"


def test_files_parsed_by_an_older_extractor_are_parsed_again(acme_repo: Path) -> None:
    """A dictionary saved by an older release (records without `extractor`) is not reused for unchanged files."""
    from haystack_integrations.components.code_alias.core.model import AliasDictionary

    builder = DictionaryBuilder()
    first, _ = builder.build(acme_repo)
    raw = first.model_dump(mode="json")
    for record in raw["files"].values():
        del record["extractor"]  # what a dictionary written before the field looks like
    older = AliasDictionary.model_validate(raw)
    assert not any(record.current for record in older.files.values())
    refreshed, stats = builder.refresh(acme_repo, older)
    assert stats.files_parsed == len(first.files) - sum(r.error is not None for r in first.files.values())
    assert all(record.current for record in refreshed.files.values())
    assert refreshed.symbols == first.symbols
    assert builder.refresh_paths(acme_repo, older, ["services/auth/acme_auth/tokens.py"]) is None  # walks instead
    _, again = builder.refresh(acme_repo, refreshed)
    assert again.files_parsed == 0
