"""FileRanker: chunks -> files, and where test files go."""

from __future__ import annotations

import pytest
from haystack import Document, Pipeline

from haystack_integrations.components.code_alias.retrieval.results import (
    FileRanker,
    asks_about_tests,
    rank_files,
    rank_symbols,
)


def _chunk(path: str, symbol: str, score: float) -> Document:
    return Document(content=f"def {symbol}(): ...", meta={"file_path": path, "symbol": symbol}, score=score)


RANKED = [
    _chunk("tests/test_retry.py", "test_backoff", 0.9),
    _chunk("pay/retry.py", "with_backoff", 0.8),
    _chunk("pay/test_utils.py", "test_helper", 0.7),
    _chunk("pay/retry.py", "jitter", 0.6),
    _chunk("pay/client.py", "Client", 0.5),
]


def _paths(files: list[dict]) -> list[str]:
    return [f["file_path"] for f in files]


def test_files_rank_by_their_best_chunk_with_hits_best_first() -> None:
    files = rank_files(RANKED)
    assert _paths(files) == ["tests/test_retry.py", "pay/retry.py", "pay/test_utils.py", "pay/client.py"]
    assert [h["symbol"] for h in files[1]["hits"]] == ["with_backoff", "jitter"]
    assert _paths(rank_files(RANKED, top_k=2)) == ["tests/test_retry.py", "pay/retry.py"]


def test_test_files_demoted_or_dropped_unless_the_question_is_about_tests() -> None:
    demoted = rank_files(RANKED, test_files="demote", question="where is the retry backoff?")
    assert _paths(demoted) == ["pay/retry.py", "pay/client.py", "tests/test_retry.py", "pay/test_utils.py"]
    dropped = rank_files(RANKED, test_files="drop", question="where is the retry backoff?")
    assert _paths(dropped) == ["pay/retry.py", "pay/client.py"]
    about_tests = rank_files(RANKED, test_files="demote", question="which test covers the retry backoff?")
    assert _paths(about_tests)[0] == "tests/test_retry.py"
    with pytest.raises(ValueError, match="test_files"):
        rank_files(RANKED, test_files="hide")  # type: ignore[arg-type]


def test_what_counts_as_a_question_about_tests() -> None:
    assert asks_about_tests("where are the unit tests for the parser?")
    assert asks_about_tests("conftest fixture for the database")
    assert not asks_about_tests("pytest crashes when collecting a package")  # a project name, not a test word
    assert not asks_about_tests("where is the retry helper?") and not asks_about_tests(None)
    # a test written out by name asks about that test; a project name or a word that merely contains "test" does not
    assert asks_about_tests("What is the dependency chain between the TestRequests class and the exceptions?")
    assert asks_about_tests("What does test_encoding_preserved verify across transformations?")
    assert not asks_about_tests("where is pytest_collection_modifyitems called?")
    assert not asks_about_tests("how does attest_signature validate the contest_entry?")
    long_issue = "Parser drops the last token.\n" + "Details of what happens. " * 20 + "The test below fails."
    assert not asks_about_tests(long_issue)  # an issue text mentions tests in passing


def test_component_round_trips_and_takes_the_question() -> None:
    pipeline = Pipeline()
    pipeline.add_component("ranker", FileRanker(top_k=3, test_files="drop"))
    loaded = Pipeline.loads(pipeline.dumps())
    ranker = loaded.get_component("ranker")
    assert isinstance(ranker, FileRanker) and ranker.test_files == "drop" and ranker.top_k == 3
    out = loaded.run({"ranker": {"documents": RANKED, "question": "retry backoff"}})["ranker"]
    assert _paths(out["files"]) == ["pay/retry.py", "pay/client.py"] and out["documents"] == RANKED
    with pytest.raises(ValueError, match="test_files"):
        FileRanker(test_files="sometimes")  # type: ignore[arg-type]


# ---- near-duplicate copies ---------------------------------------------------------------------------------------
HEADERS = " ".join(f"set{n}(headerName: string, value?: AxiosHeaderValue): AxiosHeaders;" for n in range(30))


def _declarations(path: str, text: str, score: float, symbol: str = "AxiosHeaders") -> Document:
    return Document(content=text, meta={"file_path": path, "symbol": symbol, "qualified_name": symbol}, score=score)


COPIES = [
    _declarations("lib/core/AxiosHeaders.js", "class AxiosHeaders { normalize(format) { return utils.trim(h) } }", 0.9),
    _declarations("index.d.ts", f"export class AxiosHeaders {{ {HEADERS} }}", 0.8),
    _declarations("index.d.cts", f"declare class AxiosHeaders {{ {HEADERS} }}", 0.7),  # the CommonJS twin
    _declarations("lib/adapters/http.js", "function httpAdapter(config) { contentEncoding lower case }", 0.6, "http"),
]


def test_a_near_duplicate_copy_goes_after_the_distinct_files_and_so_do_its_symbols() -> None:
    plain = ["lib/core/AxiosHeaders.js", "index.d.ts", "index.d.cts", "lib/adapters/http.js"]
    assert _paths(rank_files(COPIES)) == plain  # off unless asked for
    moved = ["lib/core/AxiosHeaders.js", "index.d.ts", "lib/adapters/http.js", "index.d.cts"]
    assert _paths(rank_files(COPIES, near_duplicate_threshold=0.8)) == moved
    assert _paths(rank_files(COPIES, top_k=3, near_duplicate_threshold=0.8))[-1] == "lib/adapters/http.js"
    symbols = rank_symbols(COPIES, near_duplicate_threshold=0.8)
    assert [s["file_path"] for s in symbols] == moved
    out = FileRanker(top_k=4).run(documents=COPIES)  # the component's default threshold
    assert _paths(out["files"]) == moved
    assert _paths(FileRanker(near_duplicate_threshold=None).run(documents=COPIES)["files"]) == plain


def test_copies_are_judged_per_file_with_tests_still_last_and_short_chunks_never_judged() -> None:
    twin = [*COPIES, _declarations("test/typescript/axios.ts", f"const h = new AxiosHeaders(); {HEADERS}", 0.65)]
    files = _paths(rank_files(twin, test_files="demote", question="where", near_duplicate_threshold=0.8))
    assert files == ["lib/core/AxiosHeaders.js", "index.d.ts", "lib/adapters/http.js", "index.d.cts",
                     "test/typescript/axios.ts"]  # fmt: skip
    short = [_chunk("a.py", "main", 0.9), _chunk("b.py", "main", 0.8)]  # identical, but too short to judge
    assert _paths(rank_files(short, near_duplicate_threshold=0.5)) == ["a.py", "b.py"]


def test_near_duplicate_core_and_threshold_checks() -> None:
    from haystack_integrations.components.code_alias.core.near_duplicates import (
        demote_near_duplicates,
        jaccard,
        token_set,
    )

    assert token_set("a.b(c_d) $x 9") == frozenset({"a", "b", "c_d", "$x"})
    assert jaccard(frozenset("ab"), frozenset("bc")) == pytest.approx(1 / 3) and jaccard(frozenset(), frozenset()) == 0
    words = [frozenset(f"w{n}" for n in range(30)), frozenset(f"v{n}" for n in range(30))]
    near_copy = words[0] | {"extra"}
    items = [words[0], words[1], near_copy, words[1]]
    assert demote_near_duplicates(items, lambda t: t) == [words[0], words[1], near_copy, words[1]]
    shuffled = [words[0], near_copy, words[1]]
    assert demote_near_duplicates(shuffled, lambda t: t) == [words[0], words[1], near_copy]
    with pytest.raises(ValueError, match="threshold"):
        demote_near_duplicates(items, lambda t: t, threshold=0)
    with pytest.raises(ValueError, match="near_duplicate_threshold"):
        FileRanker(near_duplicate_threshold=1.5)
    ranker = FileRanker(near_duplicate_threshold=0.9)
    assert FileRanker.from_dict(ranker.to_dict()).near_duplicate_threshold == 0.9


# ---- declaration files and their implementation -----------------------------------------------------------------
def _ts(path: str, text: str, symbol: str | None = None) -> Document:
    meta = {"file_path": path, **({"symbol": symbol, "qualified_name": f"hooks.src.{symbol}"} if symbol else {})}
    return Document(content=text, meta=meta)


# preact-3739: the hooks' declarations outrank the hooks themselves; the question asks where the code is.
HOOKS = [
    _ts("hooks/src/index.d.ts", "export function useReducer<S, A>(reducer: Reducer<S, A>): [S, (action: A) => void];"),
    _ts("src/index.d.ts", "export interface Component { setState(state: object): void }", "Component"),
    _ts("hooks/src/index.d.ts", "export type PropRef<T> = { current?: T };", "PropRef"),
    _ts("src/diff/index.js", "export function diff(parentDom, newVNode) { newVNode._component }", "diff"),
    _ts("hooks/src/index.js", "export function useReducer(reducer, initialState) { hookState._value }", "useReducer"),
    _ts("hooks/src/index.js", "export function useState(initial) { return useReducer(invokeOrReturn) }", "useState"),
]


def test_an_implementation_goes_just_before_its_own_declaration_file() -> None:
    plain = ["hooks/src/index.d.ts", "src/index.d.ts", "src/diff/index.js", "hooks/src/index.js"]
    assert _paths(rank_files(HOOKS)) == plain  # off unless asked for
    moved = ["hooks/src/index.js", "hooks/src/index.d.ts", "src/index.d.ts", "src/diff/index.js"]
    assert _paths(rank_files(HOOKS, implementation_first=True)) == moved
    symbols = [s["qualified_name"] for s in rank_symbols(HOOKS, implementation_first=True)]
    assert symbols == ["hooks.src.useReducer", "hooks.src.useState", "hooks.src.Component", "hooks.src.PropRef",
                       "hooks.src.diff"]  # fmt: skip
    assert _paths(FileRanker().run(documents=HOOKS)["files"]) == moved  # the component's default
    assert _paths(FileRanker(implementation_first=False).run(documents=HOOKS)["files"]) == plain
    again = FileRanker.from_dict(FileRanker(implementation_first=False).to_dict())
    assert again.implementation_first is False


def test_only_an_implementation_of_what_the_declaration_declares_moves() -> None:
    # axios: the root index.js re-exports lib/ and defines nothing index.d.ts's retrieved chunks declare.
    axios = [
        _ts("index.d.ts", "export class AxiosHeaders { set(headerName: string): AxiosHeaders }", "AxiosHeaders"),
        _ts("lib/adapters/http.js", "export default function httpAdapter(config) {}", "httpAdapter"),
        _ts("index.js", "import axios from './lib/axios.js'; export { axios as default, AxiosError }"),
    ]
    assert _paths(rank_files(axios, implementation_first=True)) == ["index.d.ts", "lib/adapters/http.js", "index.js"]
    ahead = [HOOKS[4], *HOOKS[:4]]  # the implementation already leads: nothing moves
    assert _paths(rank_files(ahead, implementation_first=True))[:2] == ["hooks/src/index.js", "hooks/src/index.d.ts"]
