"""Every command line of the user-facing pages' ```bash blocks runs: the `code-alias` ones here, against a fixture
repository. The pages are README.md and the docs pages that took over its command reference (PAGES).

One test per line, in page order. Lines that need what a test machine lacks (Docker, Elasticsearch, an LLM server
or model, a Hayhooks server, installing from PyPI) skip and say why. `code-alias` lines run in process
(`cli.main`) in a scratch folder, with `path/to/repo` standing for a copy of tests/fixtures/acme_repo; a `cd DIR`
line moves the following lines of its page there, as in a shell (each page starts in the scratch folder). They use
the real pipelines (the packaged embedding model), hence `slow`.
"""

from __future__ import annotations

import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from haystack_integrations.components.code_alias import cli
from haystack_integrations.components.code_alias.paths import find_index_dir
from tests.support.repos import ACME_REPO, ROOT

README = ROOT / "README.md"
# README.md and the pages its details moved to: their `bash` blocks are commands a reader copies.
PAGES = [README, ROOT / "docs" / "cli.md", ROOT / "docs" / "llm.md"]
REPO_PLACEHOLDER = "path/to/repo"


@dataclass(frozen=True)
class Line:
    """One command of a ```bash block (continuation lines joined), and where it is."""

    number: int
    text: str
    page: str = "README.md"

    @property
    def id(self) -> str:
        return f"{self.page}:L{self.number}:{self.text[:50]}"

    @property
    def where(self) -> str:
        return f"{self.page} line {self.number}"


def bash_lines(markdown: str, page: str = "README.md") -> list[Line]:
    """The commands of every ```bash block: comments cut, `\\` continuations joined, blank lines dropped."""
    lines: list[Line] = []
    in_block = False
    pending: tuple[int, str] | None = None
    for number, raw in enumerate(markdown.splitlines(), 1):
        stripped = raw.strip()
        if stripped.startswith("```"):
            in_block = stripped == "```bash" if not in_block else False
            continue
        if not in_block:
            continue
        start, text = pending if pending else (number, "")
        text = f"{text} {raw.strip()}".strip()
        if text.endswith("\\"):
            pending = (start, text[:-1].rstrip())
            continue
        pending = None
        command = _without_comment(text)
        if command:
            lines.append(Line(start, command, page))
    return lines


def _without_comment(text: str) -> str:
    """`text` without a trailing `# comment`: a `#` after whitespace and outside quotes starts one."""
    quote: str | None = None
    for position, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (position == 0 or text[position - 1].isspace()):
            return text[:position].rstrip()
    return text.rstrip()


# Why a line cannot run here; checked in order, the first match decides.
SKIPS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^bash scripts/demo\.sh"), "creates .venv and installs from PyPI (scripts/setup.sh); CI runs it"),
    (re.compile(r"^bash scripts/test\.sh"), "runs this very test suite, plus ruff and mypy"),
    # Environment assignments may come first (`CMAKE_ARGS="..." pip install ...`).
    (re.compile(r'^(?:[A-Z_][A-Z0-9_]*=(?:"[^"]*"|\S+)\s+)*pip install'), "installs from PyPI"),
    (re.compile(r"^\. \.venv/bin/activate"), "the tests already run inside the project's environment"),
    (re.compile(r"^docker "), "needs Docker"),
    (re.compile(r"^export ELASTICSEARCH"), "configures Elasticsearch, which cannot run here"),
    (
        re.compile(r"--backend elasticsearch"),
        "needs an Elasticsearch server (tests/elasticsearch/test_elasticsearch_*.py)",
    ),
    (re.compile(r"--openai-base-url|--llm\b"), "needs an LLM server or a GGUF model (tests/rewriting/test_llm_*.py)"),
    (re.compile(r"--gguf"), "needs a GGUF model file"),
    (
        re.compile(r"(^|\s)hayhooks "),
        "starts a Hayhooks server, which runs until stopped (tests/serving/test_hayhooks.py)",
    ),
    (re.compile(r"^code-alias serve\b"), "starts a server that runs until stopped (tests/serving/test_hayhooks.py)"),
    (re.compile(r"^curl "), "talks to a running server (tests/serving/test_hayhooks.py sends these requests)"),
    (re.compile(r"--server\b"), "talks to a running server (tests/serving/test_server.py asks one this way)"),
]


def skip_reason(line: Line) -> str | None:
    for pattern, reason in SKIPS:
        if pattern.search(line.text):
            return reason
    return None


LINES = [
    line for page in PAGES for line in bash_lines(page.read_text(encoding="utf-8"), page.relative_to(ROOT).as_posix())
]


def test_readme_has_commands_that_run_here() -> None:
    readme = [line for line in LINES if line.page == "README.md"]
    runnable = [line for line in readme if skip_reason(line) is None]
    assert len(runnable) >= 6, [line.text for line in readme]
    assert any(shlex.split(line.text)[1] == "index" for line in runnable)
    assert any(shlex.split(line.text)[1] == "ask" for line in runnable)


def test_bash_lines_join_continuations_and_cut_comments() -> None:
    markdown = "```bash\ncode-alias ask \"a # b\" --json   # why\ncurl -s x \\\n     -d '{}'\n```\n```python\nx\n```\n"
    assert [line.text for line in bash_lines(markdown)] == ['code-alias ask "a # b" --json', "curl -s x -d '{}'"]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch folder holding `path/to/repo` (a copy of the fixture repository), where the index goes."""
    folder = tmp_path_factory.mktemp("readme")
    shutil.copytree(ACME_REPO, folder / REPO_PLACEHOLDER, symlinks=True)
    return folder


@pytest.fixture(scope="module")
def shell_dirs() -> dict[str, Path]:
    """The folder each page's lines run in: the workspace, until a `cd` line of that page moves it."""
    return {}


@pytest.mark.slow
@pytest.mark.parametrize("line", LINES, ids=[line.id for line in LINES])
def test_readme_command_runs(
    line: Line,
    workspace: Path,
    shell_dirs: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    reason = skip_reason(line)
    if reason is not None:
        pytest.skip(f"{line.where} `{line.text}`: {reason}")
    cwd = shell_dirs.get(line.page, workspace)
    if line.text.startswith("cd "):
        target = (cwd / shlex.split(line.text)[1]).resolve()
        assert target.is_dir(), f"{line.where} `{line.text}`: no folder {target}"
        shell_dirs[line.page] = target
        return
    if not line.text.startswith("code-alias "):
        pytest.fail(f"{line.where} `{line.text}`: no way to run it here; add a rule to SKIPS or a runner")
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("CODE_ALIAS_INDEX_DIR", raising=False)
    argv = shlex.split(line.text)[1:]
    if argv[0] != "index" and find_index_dir(cwd) is None:
        assert cli.main(["index", str(workspace / REPO_PLACEHOLDER)]) == 0  # run alone (-k): the page's first step
        capsys.readouterr()
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert code == 0, f"{line.where} `{line.text}` exited {code}: {err.strip()}"
    assert out.strip(), f"{line.where} `{line.text}` printed nothing"


def test_pip_install_is_skipped_with_environment_assignments_first() -> None:
    line = Line(number=1, text='CMAKE_ARGS="-DGGML_NATIVE=OFF -DX=ON" FORCE=1 pip install --no-cache-dir -e ".[x]"')
    assert skip_reason(line) == "installs from PyPI"
    assert skip_reason(Line(number=2, text="code-alias ask pip install")) is None


def test_every_page_has_commands() -> None:
    """A page listed in PAGES whose commands moved elsewhere would silently test nothing."""
    for page in PAGES:
        assert bash_lines(page.read_text(encoding="utf-8")), f"{page.name} has no ```bash command; update PAGES"


def test_readme_reads_in_five_minutes() -> None:
    """The README is a newcomer's five minutes: at most ~150 lines and ~750 words of prose (code blocks are
    looked at, not read aloud); the details belong in docs/."""
    text = README.read_text(encoding="utf-8")
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    assert len(text.splitlines()) <= 150
    assert len(prose.split()) <= 750


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lstrip("#").strip().lower()).replace(" ", "-")


def test_links_between_pages_resolve() -> None:
    """The README's details moved to docs/: every relative link of README.md, BENCHMARKS.md and docs/*.md names a
    file that exists, and a `#anchor` into a Markdown page names one of its headings."""
    broken = []
    for page in [README, ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target) or not re.search(r"[./#]", target):
                continue  # a URL, or a word in an example of output (`[name](link)`)
            path, _, anchor = target.partition("#")
            linked = (page.parent / path) if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and linked.suffix == ".md":
                headings = [
                    _anchor(line) for line in linked.read_text(encoding="utf-8").splitlines() if line.startswith("#")
                ]
                if anchor not in headings:
                    broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken
