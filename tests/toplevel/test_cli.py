"""The `code-alias` command line as the README describes it: options in either place, runnable hints, pipes."""

from __future__ import annotations

import ast
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from haystack_integrations.components.code_alias import cli
from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder
from haystack_integrations.components.code_alias.core.model import AliasDictionary
from haystack_integrations.components.code_alias.paths import DICTIONARY_FILE
from haystack_integrations.components.code_alias.rewriting.hints import HintIndex
from tests.support.repos import ACME_REPO, ROOT

PACKAGE = ROOT / "components" / "haystack_integrations" / "components" / "code_alias"
HINT_COMMAND = re.compile(r"`(code-alias [^`]+)`")


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def dictionary_index(repo: Path, index_dir: Path) -> AliasDictionary:
    """An index folder holding only the dictionary: enough for every `dict` command."""
    dictionary, _ = DictionaryBuilder().build(repo)
    dictionary.save(index_dir / DICTIONARY_FILE)
    return dictionary


def hint_argv(command: str, **placeholders: str) -> list[str]:
    """A hint's command as argv for `cli.main`, with its placeholders (PATH, DIR) filled in."""
    words = shlex.split(command)
    assert words[0] == "code-alias", command
    return [placeholders.get(word, word) for word in words[1:]]


# ---- global options before or after the subcommand ------------------------------------------------------------------
@pytest.mark.parametrize(
    "argv",
    [
        ["--json", "--index-dir", "IDX", "--backend", "elasticsearch", "--debug", "ask", "q"],
        ["ask", "q", "--json", "--index-dir", "IDX", "--backend", "elasticsearch", "--debug"],
        ["--json", "ask", "--index-dir", "IDX", "q", "--backend", "elasticsearch", "--debug"],
    ],
)
def test_global_options_parse_in_either_position(argv: list[str]) -> None:
    args = cli._parser().parse_args(argv)
    assert (args.json, args.index_dir, args.backend, args.debug, args.question) == (
        True,
        "IDX",
        "elasticsearch",
        True,
        "q",
    )


def test_defaults_hold_when_no_global_option_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODE_ALIAS_INDEX_DIR", "from-env")
    for argv in (["index", "repo"], ["dict", "show"], ["dict", "complete", "x"], ["ask", "q"]):
        args = cli._parser().parse_args(argv)
        cli._choose_index_dir(args)  # the variable wins over finding one
        assert (args.json, args.index_dir, args.backend, args.debug) == (False, "from-env", "embedded", False), argv
    # an option given before the subcommand is not reset by the subcommand's own copy
    args = cli._parser().parse_args(["--index-dir", "X", "--json", "dict", "complete", "x"])
    assert args.index_dir == "X" and args.json is True


def test_json_and_index_dir_after_the_subcommand_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dictionary_index(ACME_REPO, tmp_path / "idx")
    for argv in (
        ["dict", "complete", "withStr", "--json", "--index-dir", str(tmp_path / "idx")],
        ["--json", "dict", "complete", "withStr", "--index-dir", str(tmp_path / "idx")],
        ["dict", "--index-dir", str(tmp_path / "idx"), "--json", "complete", "withStr"],
    ):
        code, out, err = run_cli(argv, capsys)
        assert code == 0 and err == ""
        assert json.loads(out)[0]["name"] == "withStripeBackoff"


# ---- a closed pipe is not an error ----------------------------------------------------------------------------------
class _ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_broken_pipe_is_quiet_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    dictionary_index(ACME_REPO, tmp_path / "idx")
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    code = cli.main(["--json", "dict", "complete", "with", "--index-dir", str(tmp_path / "idx")])
    monkeypatch.undo()
    assert code == cli.EXIT_BROKEN_PIPE
    assert capsys.readouterr().err == ""


def test_broken_pipe_is_quiet_through_head(tmp_path: Path) -> None:
    """`code-alias --json dict complete X | head -c 10`: the reader leaves early, nothing is printed on stderr."""
    repo = tmp_path / "repo"
    repo.mkdir()
    # enough completions that the JSON outgrows a pipe's buffer: the writer is still writing when head exits
    (repo / "many.py").write_text("".join(f"def fetch_item_{i}(x):\n    return x\n" for i in range(3000)))
    dictionary_index(repo, tmp_path / "idx")
    executable = shutil.which("code-alias", path=str(Path(sys.executable).parent))
    assert executable is not None
    command = f"{shlex.quote(executable)} --json dict complete fetch_item --limit 3000 --index-dir {tmp_path / 'idx'}"
    result = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command} | head -c 10; echo; echo status=$?"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.stdout.startswith("[\n  {")
    assert result.stderr == "", result.stderr
    assert "Traceback" not in result.stderr and "Broken pipe" not in result.stderr


# ---- the JSON rank is the printed place ------------------------------------------------------------------------------
def test_json_rank_is_the_printed_order(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from haystack_integrations.components.code_alias.app import search

    class FakeAnswer:
        # the ranker's own `rank` is the best chunk's place before test files were moved down
        files: ClassVar[list[dict[str, Any]]] = [
            {"file_path": "src/pay.py", "rank": 2, "score": 0.5, "hits": []},
            {"file_path": "src/charge.py", "rank": 5, "score": 0.4, "hits": []},
            {"file_path": "tests/test_pay.py", "rank": 1, "score": 0.9, "hits": []},
        ]
        symbols: ClassVar[list[dict[str, Any]]] = [
            {"rank": 3, "qualified_name": "pay.retry", "file_path": "src/pay.py", "start_line": 1, "end_line": 4}
            | {"why": ["bm25 #2"], "evidence": {"ranks": {"bm25": 2}, "rewrite": None, "notes": []}},
            {"rank": 1, "qualified_name": "tests.test_pay", "file_path": "tests/test_pay.py", "start_line": 1}
            | {"end_line": 9, "why": []},
        ]
        rewrite: ClassVar[dict[str, Any]] = {"used": True, "meta": {"mode": "dictionary"}, "intent": "locate_symbol"}
        rewrite |= {"rewritten": "q", "symbols": [], "packages": []}

        def to_dict(self, *, mode: str = "dictionary") -> dict[str, Any]:
            return {"question": "q", "symbols": self.symbols, "files": self.files, "rewrite": self.rewrite}

    class FakeSearch:
        retrieval = answering_with = "hybrid"

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            pass

        def vectors(self) -> None:
            return None

        def ask(self, question: str, **kwargs: Any) -> FakeAnswer:
            return FakeAnswer()

    monkeypatch.setattr(search, "CodeSearch", FakeSearch)
    monkeypatch.setenv("CODE_ALIAS_INDEX_DIR", "stands-for-an-index")  # the fake needs none to be found
    code, out, _ = run_cli(["ask", "q", "--json"], capsys)
    payload = json.loads(out)
    assert code == 0
    assert [(f["rank"], f["file_path"]) for f in payload["files"]] == [
        (1, "src/pay.py"),
        (2, "src/charge.py"),
        (3, "tests/test_pay.py"),
    ]
    assert [s["rank"] for s in payload["symbols"]] == [1, 2]
    code, text, _ = run_cli(["ask", "q"], capsys)
    numbered = [line.split() for line in text.splitlines() if re.match(r"^\s*\d+  ", line)]
    # One line per symbol, in the JSON's order: place, name (less the module its path says), path:line, reason.
    expected = [(s["rank"], f"{s['file_path']}:1") for s in payload["symbols"]]
    assert [(int(row[0]), row[2]) for row in numbered] == expected
    assert [row[1] for row in numbered] == ["pay.retry", "tests.test_pay"]
    assert "keyword search 2nd" in text.splitlines()[0]  # the evidence in words; --json keeps "bm25 #2"
    assert "files:" not in text  # the files are folded into the symbols' paths


# ---- dict show resolves a renamed name and an alias ----------------------------------------------------------------
def _touch_later(path: Path) -> None:
    later = time.time() + 5
    os.utime(path, (later, later))


def test_dict_show_resolves_a_renamed_name(acme_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    builder = DictionaryBuilder()
    first, _ = builder.build(acme_repo)
    retry = acme_repo / "packages/payments-core/src/retry.ts"
    retry.write_text(retry.read_text().replace("withStripeBackoff", "retryStripeCall"))
    _touch_later(retry)
    renamed, _ = builder.refresh(acme_repo, first)
    renamed.save(tmp_path / "idx" / DICTIONARY_FILE)
    index = ["--index-dir", str(tmp_path / "idx")]
    code, out, err = run_cli(["dict", "show", "withStripeBackoff", *index], capsys)
    assert code == 0, err
    assert out.splitlines()[0] == "withStripeBackoff was renamed to retryStripeCall"
    assert "retryStripeCall" in out and "retry.ts" in out
    code, out, _ = run_cli(["dict", "show", "withStripeBackoff", "--json", *index], capsys)
    payload = json.loads(out)
    assert payload["renamed_to"] == "retryStripeCall" and payload["symbols"][0]["name"] == "retryStripeCall"
    code, _, err = run_cli(["dict", "show", "noSuchThing", *index], capsys)
    assert code == cli.EXIT_ERROR and "'noSuchThing' is not in the dictionary" in err


def test_dict_show_resolves_a_nickname(acme_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (acme_repo / ".code-alias-nicknames.yml").write_text("the retry wrapper: [withStripeBackoff]\n")
    dictionary = dictionary_index(acme_repo, tmp_path / "idx")
    assert any("the retry wrapper" in s.aliases for s in dictionary.symbols)
    code, out, err = run_cli(["dict", "show", "the retry wrapper", "--index-dir", str(tmp_path / "idx")], capsys)
    assert code == 0, err
    assert out.splitlines()[0] == "the retry wrapper is an alias of withStripeBackoff"


# ---- fuzzy completion ------------------------------------------------------------------------------------------------
def test_fuzzy_completion_skips_one_letter_names_and_dunders_unless_typed(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text(
        "class T:\n"
        "    def __init__(self):\n        pass\n"
        "    def __iter__(self):\n        pass\n"
        "def with_stripe_retry(x):\n    return x\n"
        "def within_budget(x):\n    return x\n"
    )
    dictionary, _ = DictionaryBuilder().build(tmp_path)
    hints = HintIndex(dictionary)
    names = {s.name for s in dictionary.symbols}
    assert {"T", "__init__", "__iter__"} <= names
    for prefix in ("witx", "wthin", "tinit", "iter", "stripe"):
        offered = [h.name for h in hints.complete(prefix, limit=10)]
        assert "T" not in offered and not any(n.startswith("__") for n in offered), (prefix, offered)
    assert "within_budget" in [h.name for h in hints.complete("wthin", limit=10)]  # fuzzy still works
    assert [h.name for h in hints.complete("T")][:1] == ["T"]  # typed: the prefix match
    assert "__init__" in [h.name for h in hints.complete("__ini")]  # typed underscores: prefix
    assert "__init__" in [h.name for h in hints.complete("_init")]  # typed underscores: fuzzy allowed


# ---- every hint the CLI and the server print is a command that runs -------------------------------------------------
def _message_strings(tree: ast.AST) -> list[str]:
    """The string literals of a module that are not docstrings; an f-string's fields read as VALUE."""
    docstrings: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    texts: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            texts.append(
                "".join(v.value if isinstance(v, ast.Constant) else "VALUE" for v in node.values)  # type: ignore[misc]
            )
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            texts.append(node.value)
    return texts


def _hint_commands_in_source() -> dict[str, list[str]]:
    """Every backticked `code-alias ...` command in the messages (not the docstrings) of the package and wrappers."""
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")) + sorted((ROOT / "hayhooks").rglob("*.py")):
        for text in _message_strings(ast.parse(path.read_text(encoding="utf-8"))):
            for command in HINT_COMMAND.findall(text):
                found.setdefault(command, []).append(str(path.relative_to(ROOT)))
    return found


def test_every_hint_in_the_source_parses_as_printed() -> None:
    """Each `code-alias ...` a message can print names a real command and real options (placeholders filled)."""
    commands = _hint_commands_in_source()
    assert any("index PATH --index-dir" in command for command in commands), commands
    parser = cli._parser()
    for command, where in commands.items():
        argv = hint_argv(command, PATH="repo", DIR="idx")
        if argv[:1] == ["bench"]:
            continue  # `code-alias bench --help`: the bench sub-CLI parses its own arguments
        try:
            parser.parse_args(argv)
        except SystemExit as error:
            pytest.fail(f"hint `{command}` (in {where}) does not parse: exit {error.code}")


def _assert_hint_runs(message: str, repo: Path, index_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    commands = HINT_COMMAND.findall(message)
    assert commands, f"no runnable command in: {message}"
    for command in commands:
        code, _, err = run_cli(hint_argv(command, PATH=str(repo), DIR=str(index_dir)), capsys)
        assert code == 0, f"`{command}` failed: {err}"


@pytest.mark.slow
def test_the_no_index_hints_run_as_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI's and the server's no-index messages name a command that builds the index they want."""
    # 1. `ask` before any index
    index_dir = tmp_path / "ask-idx"
    code, _, err = run_cli(["ask", "where is the stripe retry helper?", "--index-dir", str(index_dir)], capsys)
    assert code == cli.EXIT_ERROR and "code-alias index PATH" in err
    _assert_hint_runs(err, ACME_REPO, index_dir, capsys)
    code, out, err = run_cli(["ask", "stripe retry", "--index-dir", str(index_dir)], capsys)
    assert code == 0 and "retry.ts" in out, err

    # 2. `dict` before any index
    index_dir = tmp_path / "dict-idx"
    code, _, err = run_cli(["dict", "show", "--index-dir", str(index_dir)], capsys)
    assert code == cli.EXIT_ERROR and "code-alias index PATH" in err
    _assert_hint_runs(err, ACME_REPO, index_dir, capsys)
    code, out, err = run_cli(["dict", "show", "withStripeBackoff", "--index-dir", str(index_dir)], capsys)
    assert code == 0 and "retry.ts" in out, err

    # 3. the server's 404 (its DIR is the server's CODE_ALIAS_INDEX_DIR)
    from fastapi import HTTPException

    from haystack_integrations.components.code_alias.serving import service as serving

    index_dir = tmp_path / "server-idx"
    service = serving.CodeAliasService(serving.ServiceSettings(index_dir=index_dir))
    with pytest.raises(HTTPException) as raised:
        service.autocomplete("with")
    assert raised.value.status_code == 404
    _assert_hint_runs(str(raised.value.detail), ACME_REPO, index_dir, capsys)
    assert service.autocomplete("withStr")["completions"][0]["name"] == "withStripeBackoff"


def test_index_without_a_path_needs_an_index_to_refresh(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["index", "--index-dir", str(tmp_path / "none")], capsys)
    assert code == cli.EXIT_ERROR
    assert "no repository given" in err and f"`code-alias index PATH --index-dir {tmp_path / 'none'}`" in err
    assert cli._indexed_root(str(_saved(tmp_path / "idx"))) == str(ACME_REPO.resolve())


def _saved(index_dir: Path) -> Path:
    dictionary_index(ACME_REPO, index_dir)
    return index_dir
