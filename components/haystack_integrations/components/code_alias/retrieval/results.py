"""`FileRanker`: ranked chunks -> ranked symbols (what the question asks for) and ranked files."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

from haystack import Document, component, default_from_dict, default_to_dict
from typing_extensions import NotRequired, TypedDict  # pydantic (Hayhooks' schemas) needs this one before 3.12

from .._legacy import with_current_type
from ..core.fusion import RRF_K
from ..core.identifiers import find_identifiers, split_identifier
from ..core.near_duplicates import DEFAULT_THRESHOLD, near_duplicate_positions, token_set
from ..core.reexports import declaration_stem
from ..core.testfiles import is_test_file

TestFiles = Literal["keep", "demote", "drop"]
TEST_FILE_POLICIES: tuple[str, ...] = ("keep", "demote", "drop")

# A short question that says "test" asks about tests; a long issue text mentions them in passing ("the test
# below fails") while the answer is still the code. "pytest" (a project name) is not a test word here.
_TEST_WORDS = re.compile(r"\b(tests?|testing|unit ?tests?|test ?cases?|conftest|fixtures?|specs?)\b", re.IGNORECASE)
_SHORT_QUESTION = 300


class Hit(TypedDict):
    """Where one retrieved chunk is: its definition, lines and score."""

    symbol: str | None
    qualified_name: str | None
    kind: str | None
    start_line: int | None
    end_line: int | None
    score: float | None


def chunk_hit(document: Document) -> Hit:
    """The `Hit` of a chunk (what the file ranking lists under each file, and the server returns)."""
    meta = document.meta
    return {
        "symbol": meta.get("symbol"),
        "qualified_name": meta.get("qualified_name"),
        "kind": meta.get("kind"),
        "start_line": meta.get("start_line"),
        "end_line": meta.get("end_line"),
        "score": document.score,
    }


class RankedSymbol(TypedDict):
    """One definition in the answer: where it is, and why it ranks where it does."""

    rank: int
    qualified_name: str
    symbol: str | None
    kind: str | None
    file_path: str
    start_line: int | None
    end_line: int | None
    package: str | None
    score: float | None
    why: list[str]
    repo: NotRequired[str]  # in an index of several repositories: the one the definition is in


def why_ranked(document: Document) -> list[str]:
    """
    The evidence that put a chunk where it is, from the fusion's `meta["fusion"]` (`RankFusion`): its rank in
    each retriever's list, and for a definition of a rewrite symbol, the symbol, its evidence and confidence.
    """
    provenance = document.meta.get("fusion")
    if not isinstance(provenance, dict):
        return []
    why = [f"{name} #{rank}" for name, rank in provenance.get("ranks", {}).items() if name != "definitions"]
    symbol = provenance.get("symbol")
    if symbol:
        evidence = ", ".join(str(e) for e in provenance.get("evidence", []))
        confidence = provenance.get("confidence")
        sure = f", confidence {confidence:.2f}" if isinstance(confidence, (int, float)) else ""
        why.append(f"rewrite: {symbol} ({evidence}{sure})" if evidence else f"rewrite: {symbol}{sure}")
    return why


FileKey = tuple[Any, str]


def near_duplicate_files(documents: list[Document], threshold: float | None) -> set[FileKey]:
    """
    The files of a chunk ranking that copy a better-ranked one (`core.near_duplicates`), judged on the tokens of
    each file's chunks in the ranking: what the question retrieved of both. None: no file is a copy.
    """
    if threshold is None:
        return set()
    tokens: dict[FileKey, set[str]] = {}
    for document in documents:
        path = document.meta.get("file_path")
        if path:
            tokens.setdefault((document.meta.get("repo"), path), set()).update(token_set(document.content or ""))
    files = list(tokens)
    copies = near_duplicate_positions(files, lambda key: frozenset(tokens[key]), threshold=threshold)
    return {files[i] for i in copies}


def rank_symbols(
    documents: list[Document],
    top_k: int | None = None,
    *,
    test_files: TestFiles = "keep",
    question: str | None = None,
    near_duplicate_threshold: float | None = None,
    implementation_first: bool = False,
) -> list[RankedSymbol]:
    """
    The definitions of a chunk ranking, best first, each once (by file and qualified name); module remainders
    (chunks that define nothing) are left out. Test files, near-duplicate copies and declaration files follow the
    same policies as in `rank_files`.
    """
    if implementation_first:
        documents = implementations_first(documents)
    copies = near_duplicate_files(documents, near_duplicate_threshold)
    return _rank_symbols(documents, top_k, test_files=test_files, question=question, copies=copies)


def _rank_symbols(
    documents: list[Document], top_k: int | None, *, test_files: TestFiles, question: str | None, copies: set[FileKey]
) -> list[RankedSymbol]:
    if test_files not in TEST_FILE_POLICIES:
        raise ValueError(f"test_files must be one of {TEST_FILE_POLICIES}, got {test_files!r}")
    seen: set[tuple[Any, str, str]] = set()
    code: list[Document] = []
    tests: list[Document] = []
    move_tests = test_files != "keep" and not asks_about_tests(question)
    for document in documents:
        meta = document.meta
        path, name = meta.get("file_path"), meta.get("qualified_name") or meta.get("symbol")
        if not path or not name or (meta.get("repo"), path, name) in seen:
            continue
        seen.add((meta.get("repo"), path, name))
        if move_tests and is_test_file(path):
            if test_files == "demote":
                tests.append(document)
            continue
        code.append(document)
    ranked: list[RankedSymbol] = []
    in_order = question_best_first(_copies_last(code, copies, _document_file)) + _copies_last(
        tests, copies, _document_file
    )
    for rank, document in enumerate(in_order, 1):
        meta = document.meta
        symbol: RankedSymbol = {
            "rank": rank,
            "qualified_name": str(meta.get("qualified_name") or meta.get("symbol")),
            "symbol": meta.get("symbol"),
            "kind": meta.get("kind"),
            "file_path": str(meta["file_path"]),
            "start_line": meta.get("start_line"),
            "end_line": meta.get("end_line"),
            "package": meta.get("package"),
            "score": document.score,
            "why": why_ranked(document),
        }
        if meta.get("repo") is not None:
            symbol["repo"] = str(meta["repo"])
        ranked.append(symbol)
    return ranked[:top_k] if top_k else ranked


def _may_lead(document: Document) -> bool:
    """Whether a chunk may be the first symbol: the question's own lists placed it, or `RankFusion` let it lead."""
    provenance = document.meta.get("fusion")
    if not isinstance(provenance, dict) or "definitions" not in (provenance.get("ranks") or {}):
        return True
    return bool(provenance.get("may_lead", True))


def _question_score(document: Document) -> float:
    """The chunk's plain reciprocal-rank score in the question's own lists (BM25, embedding), 0 if in neither."""
    ranks = (document.meta.get("fusion") or {}).get("ranks") or {}
    return sum(1.0 / (RRF_K + rank) for name, rank in ranks.items() if name != "definitions")


def question_best_first(symbols: list[Document]) -> list[Document]:
    """
    The first symbol stays the question's own best of its file against a word-overlap guess.

    `RankFusion` guards the first definition of the fused list, but the files move after it (tests demoted,
    copies last, an implementation before its `.d.ts`): on preact-3739 `hooks/src/index.js` moves up and its
    first chunk, `useState`, is there by a guess's small boost over `useReducer`, the one BM25 ranked higher
    (and the gold). So where the first symbol is a definition the fusion did not let lead (`may_lead` false), the
    definition of the same file the question's own lists rank best goes first; nothing else moves.
    """
    if not symbols or _may_lead(symbols[0]):
        return symbols
    file = _document_file(symbols[0])
    scores = [(_question_score(d), -i) for i, d in enumerate(symbols) if _document_file(d) == file]
    best_score, best = max(scores)
    if best == 0 or best_score <= _question_score(symbols[0]):
        return symbols
    index = -best
    return [symbols[index], *symbols[:index], *symbols[index + 1 :]]


def asks_about_tests(question: str | None) -> bool:
    """
    Whether a question is about tests (then test files keep their place): a short question that says "test", or
    writes out a test by name (`TestRequests`, `test_encoding_preserved`: the user wants that test, not the code).
    """
    if not question or len(question) > _SHORT_QUESTION:
        return False
    return bool(_TEST_WORDS.search(question)) or any(_names_a_test(token) for token in find_identifiers(question))


def _names_a_test(identifier: str) -> bool:
    """An identifier whose first word is "test" and that has more (`TestRequests`, `test_min`; not `Test`, `tests`)."""
    words = split_identifier(identifier.rsplit(".", 1)[-1])
    return len(words) > 1 and words[0] in ("test", "tests")


def rank_files(
    documents: list[Document],
    top_k: int | None = None,
    *,
    test_files: TestFiles = "keep",
    question: str | None = None,
    near_duplicate_threshold: float | None = None,
    implementation_first: bool = False,
) -> list[dict[str, Any]]:
    """
    Group ranked chunks by file: a file ranks by its best chunk; its chunks are listed best first.

    :param documents: Chunks, best first, with `meta.file_path`.
    :param top_k: Most files to return.
    :param test_files: "demote" puts test files after the code files, "drop" leaves them out, "keep" (default)
        ranks them like any file; a question about tests (`asks_about_tests`) always keeps them.
    :param question: The question, for that exception.
    :param near_duplicate_threshold: A file whose retrieved chunks share at least this share of their tokens
        (Jaccard) with a better-ranked file's goes after the distinct files (`near_duplicate_files`); None: off.
    :param implementation_first: A retrieved implementation goes just before its own declaration file
        (`implementations_first`: `index.js` before `index.d.ts`).
    """
    if implementation_first:
        documents = implementations_first(documents)
    copies = near_duplicate_files(documents, near_duplicate_threshold)
    return _rank_files(documents, top_k, test_files=test_files, question=question, copies=copies)


def rank_symbols_and_files(
    documents: list[Document],
    top_k: int | None = None,
    *,
    test_files: TestFiles = "keep",
    question: str | None = None,
    near_duplicate_threshold: float | None = None,
    implementation_first: bool = False,
) -> tuple[list[RankedSymbol], list[dict[str, Any]]]:
    """`rank_symbols` and `rank_files` of one chunk ranking, its near-duplicate files judged once for both."""
    if implementation_first:
        documents = implementations_first(documents)
    copies = near_duplicate_files(documents, near_duplicate_threshold)
    policy: dict[str, Any] = {"test_files": test_files, "question": question, "copies": copies}
    return _rank_symbols(documents, top_k, **policy), _rank_files(documents, top_k, **policy)


def _rank_files(
    documents: list[Document], top_k: int | None, *, test_files: TestFiles, question: str | None, copies: set[FileKey]
) -> list[dict[str, Any]]:
    if test_files not in TEST_FILE_POLICIES:
        raise ValueError(f"test_files must be one of {TEST_FILE_POLICIES}, got {test_files!r}")
    files: dict[tuple[Any, str], dict[str, Any]] = {}
    for rank, document in enumerate(documents, 1):
        meta = document.meta
        path = meta.get("file_path")
        if not path:
            continue
        repo = meta.get("repo")  # an index of several repositories: a path is a file of one of them
        first = {"file_path": path, "score": document.score or 0.0, "rank": rank, "hits": []}
        entry = files.setdefault((repo, path), {**first, "repo": repo} if repo is not None else first)
        entry["hits"].append(chunk_hit(document))
    ranked = sorted(files.values(), key=lambda f: f["rank"])
    ranked = _copies_last(ranked, copies, _entry_file)
    if test_files != "keep" and not asks_about_tests(question):
        code = [f for f in ranked if not is_test_file(f["file_path"])]
        tests = [f for f in ranked if is_test_file(f["file_path"])] if test_files == "demote" else []
        ranked = code + tests
    return ranked[:top_k] if top_k else ranked


def _document_file(document: Document) -> FileKey:
    return document.meta.get("repo"), str(document.meta.get("file_path"))


def _entry_file(entry: dict[str, Any]) -> FileKey:
    return entry.get("repo"), str(entry["file_path"])


def _copies_last(items: list[Any], copies: set[FileKey], file_of: Callable[[Any], FileKey]) -> list[Any]:
    """`items` with those of the copy files after the others, both in their order."""
    if not copies:
        return items
    return [i for i in items if file_of(i) not in copies] + [i for i in items if file_of(i) in copies]


#: The extensions a TypeScript declaration file's implementation may have beside it.
_IMPLEMENTATION_SUFFIXES = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")


def _declares(documents: list[Document], declaration: FileKey, names: set[str]) -> bool:
    """Whether one of `names` is written in the retrieved chunks of the declaration file."""
    if not names:
        return False
    return any(
        names & token_set(document.content or "") for document in documents if _document_file(document) == declaration
    )


def implementations_first(documents: list[Document]) -> list[Document]:
    """
    The chunk ranking with each retrieved implementation ahead of its own declaration file: where the ranking
    holds both `hooks/src/index.d.ts` and `hooks/src/index.js`, and a name that `index.js`'s retrieved chunks
    define is written in the retrieved chunks of `index.d.ts` (`useReducer`), the chunks of `index.js` move (in
    their order) to just before the first chunk of `index.d.ts`. The declaration's rank is evidence for the
    module, and "where is the code that..." is answered by the code; the declaration follows at once. Nothing
    else moves.
    """
    position: dict[FileKey, int] = {}
    defined: dict[FileKey, set[str]] = {}  # what each file's retrieved chunks define
    for index, document in enumerate(documents):
        file = _document_file(document)
        position.setdefault(file, index)
        name = document.meta.get("symbol") or str(document.meta.get("qualified_name") or "").rsplit(".", 1)[-1]
        if name:
            defined.setdefault(file, set()).add(str(name))
    lead: dict[FileKey, FileKey] = {}  # implementation -> the declaration it goes before
    for repo, path in position:
        stem = declaration_stem(path)
        if stem is None:
            continue
        for suffix in _IMPLEMENTATION_SUFFIXES:
            implementation = (repo, stem + suffix)
            if implementation not in position:
                continue
            # Only an implementation of what the declaration's retrieved chunks declare (a name it defines is
            # written there): a package's `index.js` that re-exports `lib/` is no implementation of its `index.d.ts`.
            if position[implementation] > position[(repo, path)] and _declares(
                documents, (repo, path), defined.get(implementation, set())
            ):
                lead[implementation] = (repo, path)
            break
    if not lead:
        return documents
    moved = {file: [d for d in documents if _document_file(d) == file] for file in lead}
    before: dict[FileKey, list[Document]] = {}
    for implementation, declaration in lead.items():
        before.setdefault(declaration, []).extend(moved[implementation])
    reordered: list[Document] = []
    placed: set[FileKey] = set()
    for document in documents:
        file = _document_file(document)
        if file in lead:
            continue
        if file in before and file not in placed:
            placed.add(file)
            reordered.extend(before[file])
        reordered.append(document)
    return reordered


@component
class FileRanker:
    """
    Turns a chunk ranking into the answer: ranked symbols (each definition once, with why it is there) and
    ranked files.

    Test files can go after the code (`test_files="demote"`, the shipped pipelines' setting: "where is X" is
    rarely answered by a test) unless the question itself is about tests. A near-duplicate copy of a better-ranked
    file (`index.d.cts` after `index.d.ts`, a `_py39` twin) goes after the distinct files, and so do its symbols.
    A TypeScript declaration file yields its place to its own implementation when the ranking retrieved both
    (`hooks/src/index.js` just before `hooks/src/index.d.ts`): the question asks where the code is.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias import FileRanker

    ranker = FileRanker(top_k=5, test_files="demote")
    answer = ranker.run(documents=retrieved_documents, question="retry helper")
    for s in answer["symbols"]:
        print(s["qualified_name"], f'{s["file_path"]}:{s["start_line"]}-{s["end_line"]}', s["why"])
    for f in answer["files"]:
        print(f["file_path"], [h["symbol"] for h in f["hits"]])
    ```

    :param top_k: Most files to return.
    :param test_files: "keep" (default), "demote" (after the code files) or "drop" test files.
    :param near_duplicate_threshold: Token overlap (Jaccard, of what the ranking retrieved of each file) from which
        a file counts as a copy of a better-ranked one and goes after the distinct files; None keeps copies in
        place.
    :param implementation_first: A retrieved implementation goes just before its own declaration file (`.d.ts`);
        False keeps the declaration in place.
    """

    def __init__(
        self,
        *,
        top_k: int = 10,
        test_files: TestFiles = "keep",
        near_duplicate_threshold: float | None = DEFAULT_THRESHOLD,
        implementation_first: bool = True,
    ) -> None:
        if test_files not in TEST_FILE_POLICIES:
            raise ValueError(f"test_files must be one of {TEST_FILE_POLICIES}, got {test_files!r}")
        if near_duplicate_threshold is not None and not 0.0 < near_duplicate_threshold <= 1.0:
            raise ValueError(f"near_duplicate_threshold must be in (0, 1] or None, got {near_duplicate_threshold}")
        self.top_k = top_k
        self.test_files = test_files
        self.near_duplicate_threshold = near_duplicate_threshold
        self.implementation_first = implementation_first

    @component.output_types(symbols=list[RankedSymbol], files=list[dict[str, Any]], documents=list[Document])
    def run(self, documents: list[Document], top_k: int | None = None, question: str | None = None) -> dict[str, Any]:
        """
        :param documents: Ranked chunks.
        :param top_k: Overrides the init `top_k` (for both lists).
        :param question: The question; one about tests keeps test files in place.
        :returns: `symbols` (qualified name, kind, file, lines, package, score and *why*: the evidence behind its
            place), `files` (file_path, score, rank, hits with symbol and lines) and the `documents` unchanged.
        """
        symbols, files = rank_symbols_and_files(
            documents,
            top_k or self.top_k,
            test_files=self.test_files,
            question=question,
            near_duplicate_threshold=self.near_duplicate_threshold,
            implementation_first=self.implementation_first,
        )
        return {"symbols": symbols, "files": files, "documents": documents}

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            top_k=self.top_k,
            test_files=self.test_files,
            near_duplicate_threshold=self.near_duplicate_threshold,
            implementation_first=self.implementation_first,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FileRanker:
        return default_from_dict(cls, with_current_type(data))
