"""How answers and the index are said to a person: *why* in words, names beside their paths, what an answer's
footer says, absolute locations for `--json`, and the status in words.

The JSON keeps the raw evidence (`why` as the ranker wrote it, and its record `evidence`) and gains
`absolute_path` and `location`; the text says the same in words ("the question names it; keyword search 2nd"),
from the record (`ranking.answer.Evidence`: the ranks, the rewrite's hint and its reasons, notes), never by reading
the `why` strings back. The terminal (`terminal.py`), the page and the chat take their words from here: one
vocabulary. Standard library only: this runs on the warm server's fast path, after the answer came back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPOSITORIES_FILE = "repositories.json"  # `indexing.repositories.REPOSITORIES_FILE`, read here without its imports

#: Each retriever's list, in words: the long form (`why_in_words`) and the short one (`short_reason`).
_RETRIEVERS = {"bm25": "found by keyword search", "embedding": "found by meaning (embeddings)"}
_RETRIEVERS_SHORT = {"bm25": "keyword search", "embedding": "meaning"}


def ordinal(number: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 21st."""
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def _evidence_words(kind: str, detail: str | None) -> str | None:
    """One piece of the rewrite's evidence for a symbol (`rewriting.hints` reasons), in words."""
    if kind == "retrieved":
        place = detail.lstrip("#") if detail else ""
        return f"defined in the {ordinal(int(place))} search hit" if place.isdigit() else "defined in a search hit"
    words = {
        "exact": "the question names it",
        "fuzzy": "the question nearly names it",
        "nickname": f"your nickname {detail!r} for it" if detail else "a nickname of yours",
        "alias": f"its alias {detail!r} is in the question" if detail else "one of its aliases is in the question",
        "package": "the question names its package",
        "words": f"its name has the question's words ({detail})" if detail else "its name has the question's words",
        "abbreviation": "the question abbreviates its name",
        "doc": f"its doc mentions {detail}" if detail else "its doc has the question's words",
        "all-words": "its name has all the question's words",
        "described": "its description matches the question",
        # detail: its card's cosine similarity to the question (`core.cards`)
        "semantic": f"its card is near the question's meaning ({detail})" if detail else "its card is near in meaning",
    }
    return words.get(kind)


def _record(evidence: Mapping[str, Any] | None) -> tuple[dict[str, int], Mapping[str, Any] | None, list[str]]:
    """The parts of a symbol's `evidence` record (`ranking.answer.Evidence`); nothing for a symbol without one."""
    if not isinstance(evidence, Mapping):
        return {}, None, []
    ranks = {str(name): int(rank) for name, rank in (evidence.get("ranks") or {}).items()}
    rewrite = evidence.get("rewrite")
    return ranks, rewrite if isinstance(rewrite, Mapping) else None, [str(note) for note in evidence.get("notes") or []]


def _reasons(rewrite: Mapping[str, Any]) -> list[str | None]:
    """The rewrite's reasons for a symbol, in words (None: a kind this vocabulary has no words for)."""
    said: list[str | None] = []
    for reason in rewrite.get("reasons") or []:
        kind, _, detail = str(reason).partition(":")  # `core.hints`: "kind" or "kind:detail"
        said.append(_evidence_words(kind, detail or None))
    return said


def why_in_words(evidence: Mapping[str, Any] | None) -> str:
    """A symbol's `evidence` record (`ranking.answer.Evidence`) in words, every part of it."""
    ranks, rewrite, notes = _record(evidence)
    said = [f"{_RETRIEVERS.get(name, f'in the {name} list')}, {ordinal(rank)}" for name, rank in ranks.items()]
    if rewrite is not None:
        words = [
            said or str(reason) for said, reason in zip(_reasons(rewrite), rewrite.get("reasons") or [], strict=True)
        ]
        said.append("the question's rewrite asks for it" + (f": {', '.join(words)}" if words else ""))
    return "; ".join([*said, *notes])


def repository_roots(index_dir: Path) -> dict[str | None, str]:
    """Repository name -> the folder it was indexed from (None -> the only one, for chunks without a name)."""
    try:
        records = json.loads((index_dir / REPOSITORIES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(records, dict):
        return {}
    roots: dict[str | None, str] = {
        str(name): str(record["root"])
        for name, record in records.items()
        if isinstance(record, dict) and record.get("root")
    }
    if len(roots) == 1:
        roots[None] = next(iter(roots.values()))
    return roots


def _absolute(item: dict[str, Any], roots: dict[str | None, str]) -> str | None:
    root = roots.get(item.get("repo")) or roots.get(None)
    path = item.get("file_path")
    return str(Path(root) / path) if root and path else None


def add_locations(payload: dict[str, Any], index_dir: Path) -> None:
    """Give each symbol and file of an answer `absolute_path` and `location` ("/abs/file.py:LINE"), in place."""
    roots = repository_roots(index_dir)
    for symbol in payload.get("symbols") or []:
        absolute = _absolute(symbol, roots)
        if absolute:
            symbol["absolute_path"] = absolute
            symbol["location"] = f"{absolute}:{symbol.get('start_line') or 1}"
    for item in payload.get("files") or []:
        absolute = _absolute(item, roots)
        if absolute:
            first = next((h.get("start_line") for h in item.get("hits") or [] if h.get("start_line")), 1)
            item["absolute_path"] = absolute
            item["location"] = f"{absolute}:{first}"


def short_reason(evidence: Mapping[str, Any] | None, *, reasons: int = 2) -> str:
    """
    A symbol's `evidence` record in a few words, the rewrite's reason first: "the question names it; keyword search
    1st, meaning 3rd" (what the terminal's one line per symbol and the chat's first line say).

    :param reasons: At most this many of the rewrite's reasons (a follow-up's notes count among them).
    """
    ranks, rewrite, notes = _record(evidence)
    said: list[str] = []
    if rewrite is not None:
        said = [words for words in dict.fromkeys(_reasons(rewrite)) if words]  # a kind without words is left out
        said = said or ["the question's rewrite asks for it"]
    said += notes
    found = ", ".join(f"{_RETRIEVERS_SHORT.get(name, f'{name} list')} {ordinal(rank)}" for name, rank in ranks.items())
    return "; ".join(part for part in ("; ".join(said[:reasons]), found) if part) or "ranked by the fused search"


def display_name(symbol: dict[str, Any]) -> str:
    """
    A ranked symbol's name as a person reads it beside its path: the qualified name less the module part the path
    already says (`services.shop.fields.Field.clean` in `services/shop/fields.py` -> `Field.clean`).
    """
    qualified = str(symbol.get("qualified_name") or symbol.get("symbol") or "")
    path = str(symbol.get("file_path") or "")
    module = path.rsplit(".", 1)[0].replace("/", ".")
    if module and qualified.startswith(module + "."):
        return qualified[len(module) + 1 :]
    return qualified or "(module)"


def footer_parts(payload: dict[str, Any]) -> list[str]:
    """
    What an answer says after its results: the rewrite used (the symbols it asked for), how it retrieved, and who
    answered (a server, not this process).
    """
    rewrite = payload.get("rewrite") or {}
    meta = rewrite.get("meta") or {}
    used = rewrite.get("used", meta.get("used", True))
    parts: list[str] = []
    if not used:
        parts.append("rewrite: off (the question as written)")
    else:
        names = ", ".join(rewrite.get("symbols") or []) or "no names"
        packages = ", ".join(rewrite.get("packages") or [])
        packages = f"; packages {packages}" if packages else ""
        parts.append(f"rewrite ({meta.get('mode', 'dictionary')}): {names}{packages}")
    if rewrite.get("dropped"):
        parts.append(f"dropped (not in the dictionary): {', '.join(str(d.get('name', d)) for d in rewrite['dropped'])}")
    if meta.get("fallback"):
        parts.append(f"LLM fallback to the dictionary rewrite: {meta['fallback']}")
    vectors = payload.get("vectors")
    if payload.get("retrieval") == "lexical" and vectors:
        parts.append("retrieval: lexical for now (no chunk vectors yet; `code-alias status` shows how far they are)")
    elif payload.get("retrieval") == "lexical":
        parts.append("retrieval: lexical")
    elif vectors:
        parts.append(f"retrieval: hybrid, with the chunk vectors computed so far: {vectors_text(vectors)}")
    if payload.get("server_kind") == "warm":
        pid = payload["server_pid"]
        parts.append(f"answered by the warm code-alias server (pid {pid}; `--no-daemon` answers here)")
    elif payload.get("server"):
        parts.append(f"answered by the code-alias server at {payload['server']}")
    return parts


def status_text(record: dict[str, Any], vectors: dict[str, Any]) -> str:
    """
    What a user asks first, first: is it ready, how far are the vectors, is a fill running (its pid); then where
    the index is, its repositories and the last sync. The raw record is `--json`.
    """
    fill = vectors.get("fill") or {}
    filling = fill.get("state") == "running"
    count = vectors.get("vectors")
    if not record.get("documents"):
        ready = f"no: no index built in {record['index_dir']} (`code-alias index PATH` builds one)"
    elif vectors.get("retrieval") == "lexical":
        ready = "yes, lexical (BM25 + the rewrite; built with --lexical)"
    elif count and count["embedded"] >= count["total"]:
        ready = "yes, hybrid (BM25 + the rewrite + chunk vectors)"
    elif count and count["embedded"]:
        ready = "yes, hybrid with the vectors computed so far"
    else:
        ready = "yes, lexical for now (no chunk vectors yet)"
    lines = [f"ready: {ready}"]
    if vectors.get("retrieval") != "lexical":
        fill_text = f"; a fill is running (pid {fill.get('pid')})" if filling else ""
        if not filling and count and count["embedded"] < count["total"]:
            fill_text = f"; no fill running ({fill.get('state') or 'none started'}): `code-alias embed` resumes"
        shown = vectors_text(count) if count else vectors.get("text", "-")
        lines.append(f"vectors: {shown}{fill_text}")
    built = f"dictionary {record['dictionary_version']}, " if record.get("dictionary_version") else ""
    chunks = f"{record['documents']:,} chunks" if record.get("documents") else "empty"
    lines.append(f"index: {record['index_dir']} ({built}{chunks})")
    for name, repo in sorted((record.get("repositories") or {}).items()):
        lines.append(
            f"repository {name}: {repo.get('root', '-')}, last indexed {repo.get('last_sync') or '-'}, "
            f"{'-' if repo.get('documents') is None else repo['documents']} chunks, "
            f"{'-' if repo.get('symbols') is None else repo['symbols']} symbols"
            + (f", last error: {repo['last_error']}" if repo.get("last_error") else "")
        )
    state = record.get("state")
    if state == "never":
        lines.append("last sync: none since `code-alias index` (`code-alias sync` refreshes from the working tree)")
    else:
        took = f" in {record['last_seconds']} s" if record.get("last_seconds") is not None else ""
        error = f": {record['last_error']}" if record.get("last_error") else ""
        lines.append(
            f"last sync: {state} at {record.get('last_finished_at') or record.get('last_started_at')}{took}{error}"
        )
    refused = record.get("last_refused")
    if refused:  # a push the server could not act on (a tree that is gone...): said until the next one
        lines.append(
            f"last refused refresh: {refused.get('status')} at {refused.get('at')}: {refused.get('reason')} "
            f"({record.get('refusals') or 1} refused in all)"
        )
    warning = record.get("last_warning")
    if warning:
        lines.append(f"last refresh warning ({warning.get('what')}) at {warning.get('at')}: {warning.get('reason')}")
    server = record.get("warm_server")
    if server:
        lines.append(f"server: {'warm' if server['kind'] == 'warm' else 'code-alias serve'} (pid {server['pid']})")
    return "\n".join(lines)


def sync_words(sync: Any) -> str:
    """What the write to the store did, in words (the raw record stays in --json)."""
    if not isinstance(sync, dict):
        return ""
    if {"documents", "written", "deleted"} <= set(sync):
        return f"; {sync['documents']:,} chunks in all, {sync['written']:,} written, {sync['deleted']:,} deleted"
    return "; " + ", ".join(f"{str(key).replace('_', ' ')} {value}" for key, value in sync.items())


def skipped_once(skipped: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """
    Each skipped path once: the file reader and the dictionary builder both report an excluded folder, the
    builder as `<repository>:<path>`.
    """
    paths = {str(s.get("path")) for s in skipped}
    once: list[dict[str, Any]] = []
    seen: set[str] = set()
    for item in skipped:
        path = str(item.get("path"))
        prefix, _, rest = path.partition(":")
        if rest and "/" not in prefix and rest in paths:
            path = rest  # the same folder, named with its repository
        if path not in seen:
            seen.add(path)
            once.append(item)
    return once


def vectors_text(vectors: dict[str, Any]) -> str:
    from .indexing.vector_fill import VectorCount  # only when there are vectors to tell of

    return VectorCount(embedded=vectors["embedded"], total=vectors["total"]).text()
