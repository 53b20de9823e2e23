# long: every command's parser and handler; each handler imports its modules only when it runs
"""`code-alias`: index a repository, ask it questions, inspect the dictionary, run the benchmark.

A client of `CodeSearch` and the dictionary; it implements no retrieval of its own.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .paths import DEFAULT_INDEX_DIR, DICTIONARY_FILE, INDEX_DIR_ENV, find_index_dir, git_root, index_dir_for_root
from .presentation import skipped_once, status_text, sync_words, vectors_text
from .progress import progress_disabled

EXIT_ERROR = 2
SNIPPET_LINES = 8  # `answer_view.SNIPPET_LINES`, here without its imports (the parser is built on every command)
SERVER_ENV = "CODE_ALIAS_SERVER"  # `code-alias ask` sends questions to this running `code-alias serve`
_GRAPH_COMMANDS = ("callers", "callees", "impact")
EXIT_BROKEN_PIPE = 141  # what a shell reports for a command ended by SIGPIPE (128 + 13), as `git log | head` does


def _add_global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """
    The options every command takes, before or after the subcommand (`code-alias --json ask Q` = `ask Q --json`).

    The main parser holds the defaults; the subcommands' copies default to SUPPRESS, so an option given only
    before the subcommand is not overwritten by the subcommand's default.
    """

    def default(value: Any) -> Any:
        return argparse.SUPPRESS if suppress else value

    parser.add_argument(
        "--index-dir",
        default=default(None),
        help=f"index folder (default: ${INDEX_DIR_ENV}, else found like git finds its repository: {DEFAULT_INDEX_DIR} "
        f"in this folder or a parent, or the index a parent folder was indexed into; `index PATH` writes "
        f"PATH/{DEFAULT_INDEX_DIR})",
    )
    parser.add_argument("--backend", choices=["embedded", "elasticsearch"], default=default("embedded"))
    parser.add_argument("--json", action="store_true", default=default(False), help="machine-readable output")
    parser.add_argument("--debug", action="store_true", default=default(False), help="show tracebacks")
    parser.add_argument(
        "--no-progress",
        action="store_true",
        default=default(False),
        help="no progress bars (indexing, embedding, model loading, bench); bars otherwise show only on long work",
    )


# long: the argument table of every command, one declaration per line
def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="code-alias",
        description="Constrained query rewriting and hybrid retrieval for code search (Haystack).",
    )
    _add_global_options(parser, suppress=False)
    common = argparse.ArgumentParser(add_help=False)
    _add_global_options(common, suppress=True)
    commands = parser.add_subparsers(dest="command", required=True)

    index = commands.add_parser("index", parents=[common], help="build or refresh the index of a repository")
    index.add_argument(
        "path", nargs="?", help="repository root (default: the one the index was built from, to refresh it)"
    )
    index.add_argument(
        "--lexical",
        action="store_true",
        help="BM25 only, no embedding model (seconds on a large repository); `ask` then answers lexically",
    )
    index.add_argument(
        "--semantic-hints",
        action="store_true",
        help="with --lexical: embed the symbol cards (cheap, no chunk vectors) so the rewrite's hints include the "
        "names nearest in meaning to the question; on a hybrid index they are on by default",
    )
    index.add_argument(
        "--background",
        action="store_true",
        help="return once questions can be asked (lexical + rewrite); a detached `code-alias embed` computes the "
        "chunk vectors (progress: `code-alias status`, log: INDEX_DIR/vectors.log)",
    )
    index.add_argument(
        "--repo",
        metavar="NAME",
        help="the repository's name in the index (several repositories share one index folder; default: the name "
        "the folder was indexed under before, else its git remote's owner/name, else the folder's name)",
    )
    index.add_argument(
        "--remove-repo",
        metavar="NAME",
        help="remove repository NAME (its documents and dictionary entries) from the index instead of indexing",
    )
    commands.add_parser(
        "embed",
        parents=[common],
        help="compute the chunk vectors a hybrid index still lacks (resumes an interrupted `index` or `embed`)",
    )

    ask = commands.add_parser("ask", parents=[common], help="answer a question with ranked files and symbols")
    ask.add_argument("question")
    ask.add_argument("--top-k", type=int, default=10)
    ask.add_argument("--no-rewrite", action="store_true", help="retrieve with the raw question (baseline)")
    ask.add_argument(
        "--code",
        nargs="?",
        type=int,
        const=SNIPPET_LINES,
        default=0,
        metavar="N",
        help=f"show N lines of each definition's code (default {SNIPPET_LINES}), centred on the lines that match "
        "the question, with their line numbers",
    )
    ask.add_argument(
        "--repo", action="append", metavar="NAME", help="only this repository of the index (repeat for several)"
    )
    ask.add_argument("--package", action="append", metavar="NAME", help="only this package (repeat for several)")
    ask.add_argument(
        "--lexical",
        action="store_true",
        help="BM25 (+ the rewrite's definitions) only, no model; the default on an index built with --lexical",
    )
    ask.add_argument("--llm", action="store_true", help="use the LLM rewrite pipeline")
    ask.add_argument("--gguf", metavar="PATH", help="LLM rewrite with a local GGUF model (llama.cpp; implies --llm)")
    ask.add_argument(
        "--openai-base-url",
        metavar="URL",
        help="LLM rewrite with an OpenAI-compatible server, e.g. http://localhost:11434/v1 (implies --llm; key from "
        "$CODE_ALIAS_OPENAI_API_KEY or $OPENAI_API_KEY)",
    )
    ask.add_argument("--llm-model", metavar="NAME", help="model name on the OpenAI-compatible server")
    ask.add_argument(
        "--llm-timeout",
        metavar="S",
        type=float,
        help="seconds before the dictionary-only fallback (default: the pipeline's 20; 120 with --gguf)",
    )
    ask.add_argument(
        "--server",
        metavar="URL",
        default=os.environ.get(SERVER_ENV) or None,
        help=f"ask a running `code-alias serve` (its index and loaded model: no start-up cost here), e.g. "
        f"http://127.0.0.1:1416 (default: ${SERVER_ENV}); token from $CODE_ALIAS_API_TOKEN",
    )
    ask.add_argument("--server-timeout", metavar="S", type=float, default=60.0, help="seconds to wait for --server")
    ask.add_argument(
        "--no-daemon",
        action="store_true",
        help="answer in this process: neither start nor use a warm server (also: $CODE_ALIAS_NO_DAEMON=1). By default "
        "the first ask leaves a private warm server of the index behind (exits after 5 idle minutes) and later asks "
        "answer through it",
    )

    dictionary = commands.add_parser("dict", parents=[common], help="inspect the alias dictionary")
    dict_commands = dictionary.add_subparsers(dest="dict_command", required=True)
    lookup = dict_commands.add_parser("lookup", parents=[common], help="candidate hints for a question")
    lookup.add_argument("question")
    lookup.add_argument("--limit", type=int, default=10)
    lookup.add_argument("--repo", action="append", metavar="NAME", help="only names of this repository (as `ask`)")
    lookup.add_argument("--package", action="append", metavar="NAME", help="only names of this package (as `ask`)")
    show = dict_commands.add_parser("show", parents=[common], help="summary, or the entries of one name")
    show.add_argument("name", nargs="?")
    complete = dict_commands.add_parser("complete", parents=[common], help="autocomplete a prefix")
    complete.add_argument("prefix")
    complete.add_argument("--limit", type=int, default=10)

    from .graph_cli import add_graph_commands  # the reference graph's commands (`graph_cli.py`)

    add_graph_commands(commands, common)

    sync = commands.add_parser(
        "sync", parents=[common], help="refresh the index from the working tree (for cron; as a push webhook does)"
    )
    sync.add_argument("path", nargs="?", help="repository root (default: the one the index was built from)")
    sync.add_argument("--lock-timeout", type=float, metavar="S", help="give up after S seconds behind another writer")
    sync.add_argument(
        "--repo", metavar="NAME", help="the repository to refresh, in an index of several (default: all of them)"
    )
    commands.add_parser("status", parents=[common], help="the index and its last sync (time, version, error)")

    bench = commands.add_parser("bench", help="run the evaluation harness (see `code-alias bench --help`)")
    bench.add_argument("args", nargs=argparse.REMAINDER)

    serve = commands.add_parser(
        "serve", parents=[common], help="serve ask/rewrite/autocomplete/status over REST (and MCP)"
    )
    serve.add_argument("--host", help="address to bind (default: $CODE_ALIAS_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: $CODE_ALIAS_PORT or 1416)")
    serve.add_argument("--mcp", action="store_true", help="also serve MCP (streamable HTTP) at /mcp")
    serve.add_argument(
        "--allow-remote", action="store_true", help="bind a non-loopback address without CODE_ALIAS_API_TOKEN"
    )
    return parser


def _choose_index_dir(args: argparse.Namespace) -> str | None:
    """
    Set `args.index_dir` when it was not given: `index PATH` writes at PATH (`paths.index_dir_for_root`), every
    other command finds the index from the current folder upwards (`paths.find_index_dir`), and a bare `index`
    inside a git working tree indexes that tree.

    :returns: A sentence to show when the index is not where the user would look first (else None).
    :raises ValueError: A command that needs an index, and none was found.
    """
    explicit = getattr(args, "index_dir", None) or os.environ.get(INDEX_DIR_ENV)
    if explicit or args.command == "bench":
        args.index_dir = explicit or DEFAULT_INDEX_DIR
        return None
    here = Path.cwd()
    if args.command == "index" and args.path and not args.remove_repo:
        folder, note = index_dir_for_root(Path(args.path).expanduser().resolve())
        args.index_dir = str(folder)
        return note
    found = find_index_dir(here)
    if found is not None:
        args.index_dir = str(found)
        return None
    if args.command == "index" and not args.remove_repo and (root := git_root(here)) is not None:
        args.path = str(root)  # `code-alias index` inside a repository indexes the repository
        folder, note = index_dir_for_root(root)
        args.index_dir = str(folder)
        return note
    args.index_dir = DEFAULT_INDEX_DIR
    asks_a_server = args.command == "ask" and bool(args.server)  # the server has its own index
    if args.command in ("ask", "dict", "status", "sync", "embed", *_GRAPH_COMMANDS) and not asks_a_server:
        raise ValueError(
            f"no index found in {here} or its parent folders; build one with `code-alias index PATH` (it is written "
            f"to PATH/{DEFAULT_INDEX_DIR} and found from anywhere inside PATH), or give --index-dir / ${INDEX_DIR_ENV}"
        )
    return None


def _emit(args: argparse.Namespace, payload: Any, text: str) -> None:
    print(json.dumps(payload, indent=2, default=str) if args.json else text)


def _cmd_index(args: argparse.Namespace) -> int:
    from .app.search import CodeSearch

    if args.background and args.lexical:
        raise ValueError("--background computes vectors, which a --lexical index has none of; drop one of them")
    search = CodeSearch(
        args.index_dir,
        backend=args.backend,
        lexical=True if args.lexical else None,
        semantic_hints=True if args.semantic_hints else None,
    )
    if args.remove_repo:
        if args.path or args.repo:
            raise ValueError("--remove-repo takes no PATH and no --repo")
        removed = search.remove_repository(args.remove_repo)
        left = ", ".join(removed["repositories"]) or "none"
        _emit(args, removed, f"Removed {removed['repo']} ({removed['deleted']} chunks); repositories left: {left}")
        return 0
    bar = _VectorBar()

    def answerable(stats: dict[str, Any]) -> None:
        _lower_priority()  # the vector fill that follows yields the CPU to questions asked meanwhile
        vectors = stats.get("vectors") or {}
        if not args.json and vectors and vectors["embedded"] < vectors["total"]:
            print(
                f"Answerable now ({stats['seconds']} s): questions use BM25 + the rewrite, and fuse the chunk "
                f"vectors as they arrive ({vectors_text(vectors)})",
                flush=True,
            )

    try:
        stats = search.index(
            args.path or _repository_root(args.index_dir, args.repo),
            repo=args.repo,
            vectors=not args.background,
            on_answerable=answerable,
            on_progress=bar.update,
        )
    except KeyboardInterrupt:
        bar.close()
        return _interrupted(search)
    finally:
        bar.close()
    vectors_left = bool(stats.get("vectors")) and stats["vectors"]["embedded"] < stats["vectors"]["total"]
    if args.background and (vectors_left or stats.get("cards_deferred")):  # the vectors, and the symbol cards
        stats["vector_worker"] = _start_vector_worker(args)
    _remember_index(Path(stats["root"]), Path(stats["index_dir"]))
    dictionary = stats["dictionary"]
    retrieval = " (lexical: BM25 only, no embeddings)" if stats.get("retrieval") == "lexical" else ""
    lines = [
        f"Indexed {stats['root']} -> {stats['index_dir']}{retrieval} in {stats['seconds']} s",
        f"  dictionary: {dictionary.get('symbols')} symbols, {dictionary.get('packages')} packages "
        f"({dictionary.get('files_parsed')} files parsed, {dictionary.get('files_reused')} reused)",
        f"  documents: {stats['files']} files ({stats['files_changed']} changed, {stats['files_removed']} removed)"
        f"{sync_words(stats['sync'])}",
    ]
    if stats.get("cards"):
        cards = stats["cards"]
        lines.append(
            f"  symbol cards: {cards['cards']} ({cards['embedded']} embedded, {cards['reused']} reused) "
            f"for semantic hints"
        )
    lines.append(f"  ask from anywhere inside {stats['root']} (the index is found from there), or give --index-dir")
    if stats.get("vectors"):
        lines.append(f"  vectors: {vectors_text(stats['vectors'])}")
    if stats.get("vector_worker"):
        worker = stats["vector_worker"]
        lines.append(
            f"  computing the rest in the background (pid {worker['pid']}, log {worker['log']}); "
            f"`code-alias status` shows how far"
        )
    skipped = skipped_once(stats["skipped"])
    if skipped:
        lines.append(f"  skipped {len(skipped)}:")
        lines += [f"    {s['path']}: {s['reason']}" for s in skipped[:20]]
        if len(skipped) > 20:
            lines.append(f"    ... and {len(skipped) - 20} more (use --json)")
    _emit(args, stats, "\n".join(lines))
    return 0


def _remember_index(root: Path, index_dir: Path) -> None:
    """Record where `root` is indexed (asking from inside it finds the index), and keep git from tracking the index."""
    from .paths import register_index

    register_index(root.resolve(), index_dir.resolve())
    ignore = index_dir / ".gitignore"
    if index_dir.is_dir() and not ignore.exists():
        with contextlib.suppress(OSError):
            ignore.write_text("# written by code-alias: the index is rebuilt, never committed\n*\n", encoding="utf-8")


class _VectorBar:
    """One progress bar over a vector fill, opened on its first report."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._at = 0

    def update(self, embedded: int, total: int) -> None:
        from .progress import progress_bar

        if self._bar is None:
            self._bar = progress_bar(total=total, desc="Chunk vectors", unit="chunk", initial=embedded)
            self._at = embedded
        self._bar.update(max(0, embedded - self._at))
        self._at = embedded

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _lower_priority() -> None:
    """Run the rest of this process (a vector fill) at a lower CPU priority, so that questions go first."""
    with contextlib.suppress(AttributeError, OSError):  # not on this platform, or not allowed: usual priority
        os.nice(10)


def _interrupted(search: Any) -> int:
    """After Ctrl-C during a vector fill: what is kept, and how to go on."""
    count = search.vectors()
    kept = f"vectors {count.text()} saved; " if count is not None else ""
    print(f"code-alias: interrupted; {kept}`code-alias embed --index-dir {search.index_dir}` resumes", file=sys.stderr)
    return 130


def _start_vector_worker(args: argparse.Namespace) -> dict[str, Any]:
    """A detached `code-alias embed` that fills the vectors after this command returns (its output: vectors.log)."""
    from .indexing.vector_fill import LOG_FILE, record_fill_started

    folder = Path(args.index_dir).expanduser().resolve()
    log = folder / LOG_FILE
    command = [sys.executable, "-m", "haystack_integrations.components.code_alias.cli", "embed"]
    command += ["--index-dir", str(folder), "--backend", args.backend, "--no-progress"]
    with log.open("ab") as output:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=output, stderr=output, start_new_session=True, close_fds=True
        )
    record_fill_started(folder, process.pid)
    return {"pid": process.pid, "log": str(log)}


def _cmd_embed(args: argparse.Namespace) -> int:
    from .app.search import CodeSearch

    search = CodeSearch(args.index_dir, backend=args.backend)
    bar = _VectorBar()
    _lower_priority()
    try:
        result = search.fill_vectors(on_progress=bar.update, cards=True)  # the cards `index --background` left
    except KeyboardInterrupt:
        bar.close()
        return _interrupted(search)
    finally:
        bar.close()
    text = (
        f"Vectors of {search.index_dir}: {vectors_text(result['vectors'])}; {result['embedded']} computed or taken "
        f"from the vector cache in {result['seconds']} s"
    )
    _emit(args, result, text)
    return 0


def _repository_root(index_dir: str, repo: str | None) -> str:
    """The folder repository `repo` was indexed from (its record in the index), or the index's only root."""
    from .indexing.repositories import read_repositories

    records = read_repositories(Path(index_dir).expanduser().resolve())
    if repo is not None and repo in records and records[repo].get("root"):
        return str(records[repo]["root"])
    if repo is None and len(records) > 1:
        raise ValueError(
            f"the index in {index_dir} holds several repositories ({', '.join(sorted(records))}); give PATH or --repo"
        )
    return _indexed_root(index_dir)


def _indexed_root(index_dir: str) -> str:
    """The repository an existing index was built from (`code-alias index` without PATH refreshes it)."""
    try:
        root = _load_dictionary(index_dir).root
    except Exception as error:
        raise ValueError(
            f"no repository given and none recorded in {index_dir} ({str(error).splitlines()[0]}); "
            f"give it: `code-alias index PATH --index-dir {index_dir}`"
        ) from error
    if not root or not Path(root).is_dir():
        raise ValueError(
            f"the index in {index_dir} was built from {root or 'an unknown folder'}, which is not a folder here; "
            f"give the repository: `code-alias index PATH --index-dir {index_dir}`"
        )
    return root


def ask_request(args: argparse.Namespace) -> Any:
    """
    The `AskRequest` of `code-alias ask`'s options (`app.requests`: the rules and their words are a server's too).

    :raises RequestError: The options break a rule (said as the server says it).
    """
    from .app.requests import AskRequest

    llm = bool(args.llm or args.gguf or args.openai_base_url)
    values = {"question": args.question, "top_k": args.top_k, "mode": "llm" if llm else "dictionary"}
    values.update(repo=args.repo, package=args.package, lexical=args.lexical, use_rewrite=not args.no_rewrite)
    return AskRequest.parse({**values, "code_lines": args.code})


def _cmd_ask(args: argparse.Namespace) -> int:
    request = ask_request(args)
    if args.gguf and args.openai_base_url:
        raise ValueError("give --gguf or --openai-base-url, not both")
    if args.server:
        payload = _ask_server(args, request)
    else:
        payload = _ask_local_server(args, request) or _ask_here(args, request)
    # `rank` is the place in this answer, as printed: the ranker's own field is its best chunk's place before
    # test files were moved down.
    for key in ("files", "symbols"):
        if isinstance(payload.get(key), list):
            payload[key] = [{**item, "rank": place} for place, item in enumerate(payload[key], 1)]
    from .graph_cli import with_usage
    from .presentation import add_locations

    payload = with_usage(payload, args.index_dir) if not args.server else payload
    add_locations(payload, Path(args.index_dir).expanduser().resolve())
    if args.json:
        _emit(args, payload, "")
        return 0
    from .terminal import console_for, render_answer

    render_answer(payload, console_for(sys.stdout), code=bool(args.code))  # with `usage`: the graph's part
    return 0


def _llm_overrides(args: argparse.Namespace) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The ChatGenerator and the rewriter settings that `--gguf`, `--openai-base-url` and `--llm-timeout` ask for."""
    chat_generator: dict[str, Any] | None = None
    timeout: float | None = args.llm_timeout
    if args.gguf or args.openai_base_url:
        from .rewriting.generators import default_rewrite_timeout, usable_chat_generator_spec

        chat_generator = usable_chat_generator_spec(
            gguf=args.gguf, openai_base_url=args.openai_base_url, model=args.llm_model, timeout=args.llm_timeout
        )
        timeout = timeout or default_rewrite_timeout(gguf=args.gguf)
    return chat_generator, ({"timeout": timeout} if timeout else None)


def _ask_here(args: argparse.Namespace, request: Any) -> dict[str, Any]:
    """Answer in this process: load the index (and the model, for a hybrid index) and run the query pipeline."""
    from .app.search import CodeSearch

    llm = request.mode == "llm"
    chat_generator, rewriter_params = _llm_overrides(args)
    search = CodeSearch(
        args.index_dir,
        backend=args.backend,
        llm=llm,
        lexical=True if request.lexical else None,
        # `--lexical` promises no model: not even the question embedder of semantic hints (a hybrid index has them).
        semantic_hints=False if request.lexical else None,
        chat_generator=chat_generator,
        rewriter_params=rewriter_params,
    )
    answer = search.ask(
        request.question,
        top_k=request.top_k,
        use_rewrite=request.use_rewrite,
        repo=request.repo,
        package=request.package,
    )
    from .answer_view import attach_code, match_terms

    # The JSON a server answers with (`AskResult.to_dict`): `--json` is the same whoever answered.
    payload = {**answer.to_dict(mode=request.mode), "retrieval": search.answering_with}
    if request.code_lines:
        used = answer.rewrite.get("symbols") or [] if answer.rewrite.get("used", True) else []
        attach_code(payload["symbols"], answer.documents, match_terms(request.question, used), lines=request.code_lines)
    count = search.vectors() if search.retrieval == "hybrid" and not llm else None
    if count is not None and not count.complete:
        payload["vectors"] = count.to_dict()
    return payload


def _ask_local_server(args: argparse.Namespace, request: Any) -> dict[str, Any] | None:
    """
    Answer through a server of the same index on this machine: the warm one (started now when there is none, see
    `serving/warm.py`) or a hand-started `code-alias serve`. It answers in milliseconds what this process would need
    seconds of imports and loading for (`--lexical`, `--no-rewrite` and `--code` too: the request carries them). None
    when the question needs this process (an LLM, another backend, `--no-daemon`), when no server can be had, or when
    the one announced does not prove itself (`server_discovery`: nothing but a nonce reaches it, and it is said on
    stderr).
    """
    if request.mode == "llm" or args.no_daemon or args.backend != "embedded":
        return None
    from .serving.client import ServerAnswerError, call_peer
    from .serving.server_discovery import UnsafeLinkError, discover
    from .serving.warm import daemon_allowed, ensure_warm_server

    folder = Path(args.index_dir).expanduser()
    built = (folder / "manifest.json").is_file() or (folder / DICTIONARY_FILE).is_file()
    peer = ensure_warm_server(folder) if built and daemon_allowed() else discover(folder)
    if peer is None:
        return None
    try:
        result = call_peer(peer, "/code_alias_ask/run", _ask_body(request), timeout=args.server_timeout)
    except UnsafeLinkError as refused:
        print(f"code-alias: warning: not using the announced server: {refused}; answering here", file=sys.stderr)
        return None
    except OSError:  # it stopped meanwhile, or is stuck: this process answers
        return None
    except ServerAnswerError as error:
        if error.status >= 500:
            print(f"code-alias: warning: the local server failed ({error.detail}); answering here", file=sys.stderr)
            return None
        raise RuntimeError(error.detail) from None
    return {**result, "server": peer.address, "server_kind": peer.kind, "server_pid": peer.pid}


def _ask_body(request: Any) -> dict[str, Any]:
    """The request as a server's `code_alias_ask` body: the fields that are not the default, and always `code_lines`."""
    # The server's default carries a few lines of code: none unless `--code` asks.
    return {**request.body(), "mode": request.mode, "top_k": request.top_k, "code_lines": request.code_lines}


def _ask_server(args: argparse.Namespace, request: Any) -> dict[str, Any]:
    """
    Answer through a running `code-alias serve` (its index, its loaded model): no import of the pipelines here,
    so a hybrid question costs the request instead of the model's start-up.
    """
    from .serving.client import ServerAnswerError, ServerUnreachableError, call_url
    from .serving.server_discovery import TOKEN_ENV

    if args.gguf or args.openai_base_url:
        raise ValueError("--server answers with the server's own pipeline; drop --gguf/--openai-base-url")
    if not args.server.startswith(("http://", "https://")):
        raise ValueError(f"--server must be an http:// or https:// URL, got {args.server!r}")
    body = _ask_body(request)
    try:
        result = call_url(
            args.server, "/code_alias_ask/run", body, token=os.environ.get(TOKEN_ENV), timeout=args.server_timeout
        )
    except ServerAnswerError as error:
        raise RuntimeError(f"the code-alias server at {args.server} answered {error.status}: {error.detail}") from error
    except ServerUnreachableError as error:
        raise ServerUnreachableError(f"{error}; start one with `code-alias serve` or ask without --server") from error
    return {**result, "server": args.server}


def _load_dictionary(index_dir: str) -> Any:
    from .indexing.index_delta import load_index_dictionary

    return load_index_dictionary(Path(index_dir) / DICTIONARY_FILE)


def _entries_named(
    dictionary: Any, name: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str | None, list[str]]:
    """
    The symbol and package entries a name stands for: its own, else those of the name a rename gave it, else
    those it is an alias (nickname) of.

    :returns: Symbol entries, package entries, the new name when `name` was retired by a rename, and the names
        `name` is an alias of.
    """
    symbols = [s for s in dictionary.symbols if name in (s.name, s.qualified_name)]
    packages = [p for p in dictionary.packages if name in (p.name, *p.aliases, *p.import_names)]
    renamed_to: str | None = None
    alias_of: list[str] = []
    if not symbols and not packages:
        renamed_to = dictionary.renamed.get(name)
        if renamed_to is not None:
            symbols = [s for s in dictionary.symbols if renamed_to in (s.name, s.qualified_name)]
        else:
            symbols = [s for s in dictionary.symbols if name in s.aliases]
            alias_of = list(dict.fromkeys(s.name for s in symbols))
    return [s.model_dump() for s in symbols], [p.model_dump() for p in packages], renamed_to, alias_of


def _cmd_dict(args: argparse.Namespace) -> int:
    from .rewriting.hints import HintIndex

    dictionary = _load_dictionary(args.index_dir)
    if args.dict_command == "show":
        if args.name:
            symbols, packages, renamed_to, alias_of = _entries_named(dictionary, args.name)
            if not symbols and not packages and not renamed_to:
                raise LookupError(f"{args.name!r} is not in the dictionary")
            payload: Any = {"symbols": symbols, "packages": packages, "renamed_to": renamed_to, "alias_of": alias_of}
            notes = [f"{args.name} was renamed to {renamed_to}"] if renamed_to else []
            notes += [f"{args.name} is an alias of {', '.join(alias_of)}"] if alias_of else []
            text = "\n".join(
                notes
                + [
                    f"{s['qualified_name']}  {s['kind']}  {s['file_path']}:{s['start_line']}"
                    f"  aliases={list(s['aliases'])}"
                    f"  words={list(s['words'])} doc={list(s['doc_words'])[:8]}"
                    for s in symbols
                ]
                + [
                    f"package {p['name']} ({p['ecosystem']}) root={p['root'] or '.'} aliases={list(p['aliases'])}"
                    for p in packages
                ]
            )
        else:
            payload = {
                "root": dictionary.root,
                "version": dictionary.version,
                "symbols": len(dictionary.symbols),
                "packages": [p.name for p in dictionary.packages],
                "files": dictionary.file_count(),
                "nicknames": len(dictionary.nicknames),
                "renamed": dictionary.renamed,
                "skipped": len(dictionary.skipped),
            }
            text = "\n".join(f"{k}: {v}" for k, v in payload.items())
        _emit(args, payload, text)
        return 0
    hints = HintIndex(dictionary)
    if args.dict_command == "lookup":
        found = hints.lookup(args.question, limit=args.limit, scope=_lookup_scope(dictionary, args))
    else:
        found = hints.complete(args.prefix, limit=args.limit)
    definitions, root = _definition_locations(dictionary, Path(args.index_dir).expanduser().resolve())
    payload = []
    rows = [f"{'score':>7}  {'kind':<7} {'name':<40} {'evidence':<28} definition"]
    for hint in found:
        where = next((definitions[q] for q in hint.qualified_names if q in definitions), None)
        where = where or (str(Path(root or "") / hint.files[0]) if hint.files else "-")
        payload.append({**hint.to_dict(), "location": where if where != "-" else None})
        rows.append(f"{hint.score:7.2f}  {hint.kind:<7} {hint.name:<40} {','.join(hint.reasons):<28} {where}")
    _emit(args, payload, "\n".join(rows) if found else "no hints")
    return 0


def _lookup_scope(dictionary: Any, args: argparse.Namespace) -> Any:
    """`dict lookup --repo/--package` as the hint scope `ask` gives its rewrite (the names checked as there)."""
    from .indexing import repositories
    from .rewriting.hints.scope import scope_from_filters

    if not args.repo and not args.package:
        return None
    repo = repositories.resolve_filter_names(args.repo, "repo", list(dictionary.repositories))
    package = repositories.resolve_filter_names(
        args.package,
        "package",
        sorted({p.name for p in dictionary.packages}),
        {p.name: (*p.aliases, *p.import_names) for p in dictionary.packages},
    )
    return scope_from_filters(repositories.repository_filters(repo, package))


def _definition_locations(dictionary: Any, index_dir: Path) -> tuple[dict[str, str], str | None]:
    """
    Qualified name -> the absolute `path:line` of its definition (the relative path when no root is known), and
    the root that other relative paths of the dictionary (a package's manifest) are under.
    """
    from .presentation import repository_roots

    roots = repository_roots(index_dir)
    fallback = roots.get(None) or dictionary.root
    located: dict[str, str] = {}
    for symbol in dictionary.symbols:
        root = roots.get(symbol.repo) or fallback
        path = str(Path(root) / symbol.file_path) if root else symbol.file_path
        located.setdefault(symbol.qualified_name, f"{path}:{symbol.start_line}")
    return located, fallback or None


def _cmd_sync(args: argparse.Namespace) -> int:
    from .app.refresh import run_sync

    record = run_sync(args.index_dir, args.path, backend=args.backend, lock_timeout=args.lock_timeout, repo=args.repo)
    ok = record["state"] == "ok"
    text = (
        f"Synced {record['root']} in {record['last_seconds']} s: {record['files_changed']} files changed, "
        f"{record['files_removed']} removed; dictionary {record['dictionary_version']}, {record['documents']} chunks"
        if ok
        else f"code-alias: sync failed, the previous index keeps serving: {record['last_error']}"
    )
    if ok or args.json:
        _emit(args, record, text)
    else:
        print(text, file=sys.stderr)
    return 0 if ok else EXIT_ERROR


def _cmd_status(args: argparse.Namespace) -> int:
    from .app.refresh import read_status
    from .indexing.vector_fill import vector_status

    folder = Path(args.index_dir).expanduser().resolve()
    record: dict[str, Any] = dict(read_status(folder))
    vectors = vector_status(folder)
    record["vectors"] = vectors["vectors"]
    record["vector_fill"] = vectors["fill"]
    record["index_dir"] = str(folder)
    record["warm_server"] = _warm_server_record(folder)
    _emit(args, record, status_text(record, vectors))
    return 0


def _warm_server_record(folder: Path) -> dict[str, Any] | None:
    """The server announced for this index (pid, kind, address), or None; the token is never shown."""
    from .serving.server_discovery import discover

    peer = discover(folder, warn=False)
    return None if peer is None else {"pid": peer.pid, "kind": peer.kind, "address": peer.address}


def _cmd_graph(args: argparse.Namespace) -> int:
    from .graph_cli import run_graph_command

    return run_graph_command(args)


def _cmd_bench(args: argparse.Namespace) -> int:
    from .evaluation.cli import bench_main

    return bench_main(args.args)


def _cmd_serve(args: argparse.Namespace) -> int:
    from .serving.server import serve_from_cli

    return serve_from_cli(
        index_dir=args.index_dir,
        backend=args.backend,
        host=args.host,
        port=args.port,
        mcp=args.mcp,
        allow_remote=args.allow_remote,
    )


def _quiet_stdout() -> None:
    """After a broken pipe: point stdout at the null device, so the interpreter's last flush raises nothing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout is not a real file (a test's capture): nothing to flush
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `code-alias` console script."""
    # A command-line run on a closed network should not stall on telemetry; users can still opt in.
    os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
    parser = _parser()
    args = parser.parse_args(argv)
    handlers = {"index": _cmd_index, "ask": _cmd_ask, "dict": _cmd_dict, "bench": _cmd_bench, "serve": _cmd_serve}
    handlers.update(sync=_cmd_sync, status=_cmd_status, embed=_cmd_embed)
    handlers.update(dict.fromkeys(_GRAPH_COMMANDS, _cmd_graph))
    try:
        note = _choose_index_dir(args)
        if note:
            print(f"code-alias: {note}", file=sys.stderr)
        with progress_disabled(args.no_progress):
            code = handlers[args.command](args)
        sys.stdout.flush()  # a reader that went away (`| head`) shows up here, inside this try
        return code
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        print("code-alias: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # one clear line; --debug for the traceback
        if args.debug:
            raise
        # A component's error reaches us wrapped by the pipeline; the component's own message is the clear one.
        while type(error).__name__ == "PipelineRuntimeError" and error.__cause__ is not None:
            error = error.__cause__  # type: ignore[assignment]
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"code-alias: error: {message}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
