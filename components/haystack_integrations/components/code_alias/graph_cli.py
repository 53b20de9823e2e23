"""`code-alias callers | callees | impact NAME`: the reference graph from the command line.

A client of the same answers as the server's routes (`core/graph_answers.py`): through a running server of the index
when one is announced (the warm server an `ask` left behind, or a `code-alias serve`, proven as `ask` proves it), else
in this process from the index's dictionary (no Haystack, no model: the dictionary is read and the graph resolved,
about a second on Django). The warm server keeps the graph resolved, so there it answers in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .app.requests import DEFAULT_DEPTH, GraphRequest
from .core.graph_text import answer_text
from .paths import DICTIONARY_FILE
from .serving.client import ServerAnswerError, call_peer
from .serving.server_discovery import UnsafeLinkError, discover

if TYPE_CHECKING:
    from .core.graph import ReferenceGraph


def add_graph_commands(commands: Any, common: argparse.ArgumentParser) -> None:
    """The `callers`, `callees` and `impact` subcommands."""
    helps = {
        "callers": "who calls a definition (calls and instantiations), file:line and caller",
        "callees": "what a definition calls: resolved, ambiguous, outside the index",
        "impact": "what a change of a definition can break: transitive callers and users, tests marked",
    }
    for name, text in helps.items():
        parser = commands.add_parser(name, parents=[common], help=text)
        parser.add_argument("name", help="the definition's name or qualified name (withStripeBackoff, Session.request)")
        parser.add_argument("--file", metavar="PATH", help="only the definition in this file (relative to the repo)")
        parser.add_argument("--repo", metavar="NAME", help="only definitions of this repository of the index")
        parser.add_argument("--limit", type=int, default=50 if name != "impact" else 100, help="most entries shown")
        if name == "impact":
            parser.add_argument("--depth", type=int, default=3, help="hops of callers to follow (default 3)")
            parser.add_argument(
                "--include-ambiguous", action="store_true", help="also follow uses whose target is ambiguous"
            )
        parser.add_argument(
            "--no-daemon", action="store_true", help="answer in this process even when a server of the index runs"
        )


def run_graph_command(args: argparse.Namespace) -> int:
    """Answer `callers` / `callees` / `impact` and print it (`--json`: the answer as the server gives it)."""
    # The same request, rules and messages as the server's routes (`GraphRequest`); a broken one is a usage error.
    request = GraphRequest.parse(
        {
            "name": args.name,
            "limit": args.limit,
            "depth": getattr(args, "depth", DEFAULT_DEPTH),
            "file_path": args.file,
            "repo": args.repo,
        }
    )
    depth = request.depth
    folder = Path(args.index_dir).expanduser()
    answer = None if args.no_daemon or args.backend != "embedded" else _from_server(args, folder, depth)
    if answer is None:
        answer = _here(args, folder, depth)
    if args.json:
        print(json.dumps(answer, indent=2))
    else:
        print(answer_text(answer, args.command), flush=True)
        if "server_pid" in answer:
            print(f"(answered by the code-alias server, pid {answer['server_pid']})", file=sys.stderr)
    return 0


def _body(args: argparse.Namespace, depth: int) -> dict[str, Any]:
    body: dict[str, Any] = {"name": args.name, "limit": args.limit}
    if args.file:
        body["file_path"] = args.file
    if args.repo:
        body["repo"] = args.repo
    if args.command == "impact":
        body["depth"] = depth
        body["include_ambiguous"] = bool(args.include_ambiguous)
    return body


def _from_server(args: argparse.Namespace, folder: Path, depth: int) -> dict[str, Any] | None:
    """The answer of a server of this index already running (None: none, or it cannot answer this)."""
    peer = discover(folder)
    if peer is None:
        return None
    try:
        result = call_peer(peer, f"/code_alias_{args.command}/run", _body(args, depth), timeout=60.0)
    except UnsafeLinkError as refused:
        print(f"code-alias: warning: not using the announced server: {refused}; answering here", file=sys.stderr)
        return None
    except OSError:
        return None
    except ServerAnswerError as error:
        if error.status == 404 and "no definition" in error.detail:
            raise LookupError(error.detail) from None
        if error.status >= 500 or error.status == 404:  # an older server without the route answers here
            return None
        raise RuntimeError(error.detail) from None
    return {**result, "server_pid": peer.pid}


def _graph(folder: Path) -> ReferenceGraph:
    """The index's graph, resolved in this process (the dictionary, the parser's module: imported only here, so that
    an answer from a server costs this process no more than the discovery module)."""
    from .core.graph import ReferenceGraph
    from .indexing.index_delta import load_index_dictionary

    return ReferenceGraph(load_index_dictionary(folder / DICTIONARY_FILE))


def _here(args: argparse.Namespace, folder: Path, depth: int) -> dict[str, Any]:
    from .core.graph_answers import callees_answer, callers_answer, impact_answer

    graph = _graph(folder)
    options: dict[str, Any] = {"limit": args.limit, "file_path": args.file, "repo": args.repo}
    if args.command == "callers":
        return callers_answer(graph, args.name, **options)
    if args.command == "callees":
        return callees_answer(graph, args.name, **options)
    return impact_answer(graph, args.name, depth=depth, include_ambiguous=args.include_ambiguous, **options)


def with_usage(payload: dict[str, Any], index_dir: str) -> dict[str, Any]:
    """
    An `ask` answer given in this process, with `usage` (the graph's callers or impact of the symbol asked about)
    when the rewrite's intent is `usage`, as a server's answer has it. Left as it is otherwise, or when the
    index's graph cannot be read (the search's answer stands).
    """
    rewrite = payload.get("rewrite") or {}
    if rewrite.get("intent") != "usage" or "usage" in payload:
        return payload
    from .core.graph_answers import usage_answer

    try:
        graph = _graph(Path(index_dir).expanduser())
    except Exception as error:  # an ask answer must not fail for its graph part
        print(f"code-alias: warning: no graph answer ({error})", file=sys.stderr)
        return payload
    question, named = str(payload.get("question", "")), list(rewrite.get("symbols") or [])
    usage = usage_answer(graph, question, named, list(payload.get("symbols") or []))
    return payload if usage is None else {**payload, "usage": usage}
