"""The application's requests (ask, rewrite, complete, the reference graph's) and every limit and rule a request
must keep, written once.

Every way in builds one of these models: the CLI (argparse, then `AskRequest`), the REST routes and the MCP tools
(the Hayhooks wrappers' `run_api` parameters are the models' own field types, so the request schema is theirs), the
search page, the chat and the benchmark. A request that breaks a rule gets the same one-line message wherever it
came from: each field type validates with a function of this module (pydantic's `PlainValidator`, whose error is the
message itself, with no "Value error," in front) and states its rule in the JSON schema (`WithJsonSchema`: the
OpenAPI page and the MCP tool descriptions show the same limits).

The limits protect a server from what any client may send. The benchmark asks with whole issue texts; it validates
with `trusted=True`, which lifts the length and top-k ceilings (never the rules that make a request mean something).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, TypeVar, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    PlainValidator,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ..core.filters import MAX_FILTER_CHARS, MAX_FILTER_VALUES
from ..core.filters import filter_names as _filter_names
from ..errors import CodeAliasError

Mode = Literal["dictionary", "llm"]
MODES: tuple[Mode, ...] = ("dictionary", "llm")
MAX_QUESTION_CHARS = 2000
MAX_PREFIX_CHARS = 200
TOP_K_RANGE = (1, 100)
DEFAULT_TOP_K = 10
LIMIT_RANGE = (1, 50)
#: Code lines per definition an ask answer may carry (`code_lines`); 6 by default: enough for an agent to see the
#: definition without opening the file.
CODE_LINES_RANGE = (0, 40)
DEFAULT_CODE_LINES = 6
#: The reference graph's requests (callers, callees, impact): a definition's name, a file path, entries, hops.
MAX_SYMBOL_NAME_CHARS = 300
MAX_PATH_CHARS = 1_000
GRAPH_LIMIT_RANGE = (1, 500)
DEPTH_RANGE = (1, 10)
DEFAULT_DEPTH = 3
#: The one rule between two fields: BM25 alone answers with the dictionary rewrite, never the LLM's.
LEXICAL_WITH_LLM = "lexical answers with the dictionary rewrite; drop mode 'llm' or lexical"
#: The error type of a rule between fields (a 400: each field is fine, the combination is not).
CONFLICT = "code_alias_conflict"
_RULE = "code_alias"


class RequestError(CodeAliasError, ValueError):
    """
    A request that breaks a rule: the one-line message every transport shows, and the HTTP status it answers with.

    :param message: What is wrong, naming the field.
    :param status: 422 (a field's value) or 400 (fields that cannot go together).
    """

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def _broken(message: str, kind: str = _RULE) -> PydanticCustomError:
    # A template with no context is shown as written; braces are doubled so that a name such as "{x}" stays itself.
    return PydanticCustomError(kind, message.replace("{", "{{").replace("}", "}}"))


def _trusted(info: ValidationInfo | None) -> bool:
    return bool(isinstance(getattr(info, "context", None), Mapping) and info.context.get("trusted"))  # type: ignore[union-attr]


def _unicode(value: str, name: str) -> None:
    """A lone surrogate such as "\\ud800" is not text: it cannot be encoded, so it is refused here, not later."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise _broken(f"{name} is not valid Unicode text: a lone surrogate at character {error.start:,}") from None


def _text(name: str, limit: int, empty: str) -> Any:
    def check(value: Any, info: ValidationInfo) -> str:
        if not isinstance(value, str):
            raise _broken(f"{name} must be a string, got {type(value).__name__}")
        _unicode(value, name)
        if not value.strip():
            raise _broken(f"{name} is empty: {empty}")
        if len(value) > limit and not _trusted(info):
            raise _broken(f"{name} is {len(value):,} characters; the limit is {limit:,}")
        return value

    return check


def _integer(name: str, low: int, high: int, *, ceiling: bool = True) -> Any:
    def check(value: Any, info: ValidationInfo) -> int:
        if isinstance(value, bool) or not isinstance(value, int):  # booleans are not numbers here
            raise _broken(f"{name} must be an integer from {low} to {high}, got {type(value).__name__}")
        if value < low or (value > high and not (ceiling and _trusted(info))):
            raise _broken(f"{name} must be from {low} to {high}, got {value}")
        return value

    return check


def _flag(name: str) -> Any:
    def check(value: Any) -> bool:
        if not isinstance(value, bool):
            raise _broken(f"{name} must be true or false, got {type(value).__name__}")
        return value

    return check


def _one_name(name: str) -> Any:
    """One repository's name (a graph request narrows to one), by the filters' rule."""
    many = _names(name)

    def check(value: Any) -> str | None:
        if value is not None and not isinstance(value, str):
            raise _broken(f"{name} must be one repository's name (a string), got {type(value).__name__}")
        return cast("str | None", many(value))

    return check


def _optional(check: Any) -> Any:
    def optional(value: Any, info: ValidationInfo) -> Any:
        return None if value is None else check(value, info)

    return optional


def _mode(value: Any) -> Mode:
    if value not in MODES:
        raise _broken(f"mode must be 'dictionary' or 'llm', got {value!r}")
    return cast(Mode, value)


def _names(name: str) -> Any:
    def check(value: Any) -> str | list[str] | None:
        if value is None:
            return None
        if isinstance(value, list) and not value:
            raise _broken(f"{name}: a name or a non-empty list of names, got an empty list")
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, str):
                raise _broken(f"{name} must be a string or a list of strings, got {type(item).__name__}")
            _unicode(item, name)
        try:  # the filter's own rule (`core.filters.filter_names`): the names a filter can be built of
            _filter_names(value, name)
        except ValueError as error:
            raise _broken(str(error)) from None
        return cast("str | list[str]", value)

    return check


def _name_schema(what: str) -> dict[str, Any]:
    name = {"type": "string", "minLength": 1, "maxLength": MAX_FILTER_CHARS}
    names = {"type": "array", "items": name, "minItems": 1, "maxItems": MAX_FILTER_VALUES}
    return {"anyOf": [name, names, {"type": "null"}], "title": what}


def _integer_schema(low: int, high: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": low, "maximum": high}


# ---- the field types (also the Hayhooks wrappers' parameter types: the REST and MCP schemas) ----------------------
Question = Annotated[
    str,
    PlainValidator(_text("question", MAX_QUESTION_CHARS, 'ask something, e.g. "where\'s the payments retry helper?"')),
    WithJsonSchema({"type": "string", "minLength": 1, "maxLength": MAX_QUESTION_CHARS}),
]
Prefix = Annotated[
    str,
    PlainValidator(_text("prefix", MAX_PREFIX_CHARS, "type the start of a symbol or package name")),
    WithJsonSchema({"type": "string", "minLength": 1, "maxLength": MAX_PREFIX_CHARS}),
]
TopK = Annotated[int, PlainValidator(_integer("top_k", *TOP_K_RANGE)), WithJsonSchema(_integer_schema(*TOP_K_RANGE))]
Limit = Annotated[
    int, PlainValidator(_integer("limit", *LIMIT_RANGE, ceiling=False)), WithJsonSchema(_integer_schema(*LIMIT_RANGE))
]
CodeLines = Annotated[
    int,
    PlainValidator(_integer("code_lines", *CODE_LINES_RANGE, ceiling=False)),
    WithJsonSchema(_integer_schema(*CODE_LINES_RANGE)),
]
ModeField = Annotated[Mode, PlainValidator(_mode), WithJsonSchema({"type": "string", "enum": list(MODES)})]
Lexical = Annotated[bool, PlainValidator(_flag("lexical")), WithJsonSchema({"type": "boolean"})]
UseRewrite = Annotated[bool, PlainValidator(_flag("use_rewrite")), WithJsonSchema({"type": "boolean"})]
RepoFilter = Annotated[str | list[str] | None, PlainValidator(_names("repo")), WithJsonSchema(_name_schema("Repo"))]
PackageFilter = Annotated[
    str | list[str] | None, PlainValidator(_names("package")), WithJsonSchema(_name_schema("Package"))
]

_DEFINITION = "give a definition's name, e.g. withStripeBackoff or Session.request"
SymbolName = Annotated[
    str,
    PlainValidator(_text("name", MAX_SYMBOL_NAME_CHARS, _DEFINITION)),
    WithJsonSchema({"type": "string", "minLength": 1, "maxLength": MAX_SYMBOL_NAME_CHARS}),
]
FilePath = Annotated[
    str | None,
    PlainValidator(_optional(_text("file_path", MAX_PATH_CHARS, "give a path relative to the repository root"))),
    WithJsonSchema({"anyOf": [{"type": "string", "minLength": 1, "maxLength": MAX_PATH_CHARS}, {"type": "null"}]}),
]
OneRepo = Annotated[
    str | None,
    PlainValidator(_one_name("repo")),
    WithJsonSchema({"anyOf": [{"type": "string", "minLength": 1, "maxLength": MAX_FILTER_CHARS}, {"type": "null"}]}),
]
GraphLimit = Annotated[
    int,
    PlainValidator(_integer("limit", *GRAPH_LIMIT_RANGE, ceiling=False)),
    WithJsonSchema(_integer_schema(*GRAPH_LIMIT_RANGE)),
]
Depth = Annotated[
    int, PlainValidator(_integer("depth", *DEPTH_RANGE, ceiling=False)), WithJsonSchema(_integer_schema(*DEPTH_RANGE))
]
IncludeAmbiguous = Annotated[bool, PlainValidator(_flag("include_ambiguous")), WithJsonSchema({"type": "boolean"})]


def lexical_with_llm(lexical: bool | None, llm: bool) -> None:
    """
    The rule that BM25 alone cannot take the LLM rewrite, for what is not a request (a search's or a server's
    settings): the same message as a request's.

    :raises RequestError: Both asked for (400).
    """
    if lexical and llm:
        raise RequestError(LEXICAL_WITH_LLM, 400)


_Request = TypeVar("_Request", bound="Request")


class Request(BaseModel):
    """A request of the application: frozen, no field beyond its own, every rule checked when it is made."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @classmethod
    def parse(cls: type[_Request], values: Mapping[str, Any], *, trusted: bool = False) -> _Request:
        """
        The request of `values`, or the one message (and status) of what is wrong with it.

        :param trusted: The caller is this process (the benchmark): no length or top-k ceiling.
        :raises RequestError: A rule is broken (422), or two fields cannot go together (400).
        """
        try:
            return cls.model_validate(dict(values), context={"trusted": trusted})
        except ValidationError as error:
            raise request_error(error) from None


def request_error(error: ValidationError) -> RequestError:
    """The message of a failed validation, as every transport shows it (`problem_text` for each problem)."""
    problems = error.errors()
    status = 400 if any(problem.get("type") == CONFLICT for problem in problems) else 422
    return RequestError("; ".join(problem_text(problem) for problem in problems[:5]), status)


def problem_text(problem: Mapping[str, Any]) -> str:
    """One validation problem in words: this module's own message as written; pydantic's with its field's name."""
    where = ".".join(str(part) for part in problem.get("loc", ()) if part != "body")
    kind = problem.get("type")
    if kind in (_RULE, CONFLICT):
        return str(problem.get("msg", ""))
    if kind == "missing":
        return f"{where} is required"
    if kind == "extra_forbidden":
        return f"unknown field {where[:40]!r}"
    return f"{where}: {problem.get('msg', '')}" if where else str(problem.get("msg", ""))


class AskRequest(Request):
    """
    A question: what `code_alias_ask`, `code-alias ask`, the page, the chat and the benchmark all ask.

    :param question: The question in the asker's own words.
    :param top_k: Files (and definitions) to return.
    :param mode: "dictionary" or "llm" (the rewrite; "llm" only where a generator is configured).
    :param repo: Only this repository of the index, or any of these.
    :param package: Only this package, or any of these.
    :param lexical: BM25 and the dictionary rewrite only, whatever the index was built with; not with mode "llm".
    :param use_rewrite: False retrieves with the question as written (the baseline).
    :param code_lines: Lines of each definition's code to return.
    """

    question: Question
    top_k: TopK = DEFAULT_TOP_K
    mode: ModeField = "dictionary"
    repo: RepoFilter = None
    package: PackageFilter = None
    lexical: Lexical = False
    use_rewrite: UseRewrite = True
    code_lines: CodeLines = DEFAULT_CODE_LINES

    @model_validator(mode="after")
    def _lexical_answers_without_llm(self) -> AskRequest:
        if self.lexical and self.mode == "llm":
            raise _broken(LEXICAL_WITH_LLM, CONFLICT)
        return self

    @property
    def text(self) -> str:
        """The question without the white space around it (what a server answers and reports)."""
        return self.question.strip()

    def body(self) -> dict[str, Any]:
        """The request as a `code_alias_ask` body: the question and every field that is not the default."""
        return {"question": self.question, **self.model_dump(exclude_defaults=True)}


class RewriteRequest(Request):
    """The rewrite of a question (`code_alias_rewrite`): as `AskRequest` narrows and rewrites it."""

    question: Question
    mode: ModeField = "dictionary"
    repo: RepoFilter = None
    package: PackageFilter = None

    @property
    def text(self) -> str:
        """The question without the white space around it."""
        return self.question.strip()


class CompleteRequest(Request):
    """Completions of a prefix (`code_alias_autocomplete`)."""

    prefix: Prefix
    limit: Limit = 10

    @property
    def text(self) -> str:
        """The prefix without the white space around it."""
        return self.prefix.strip()


class GraphRequest(Request):
    """
    A question to the reference graph (`code_alias_callers` / `_callees` / `_impact`, `code-alias callers` ...).

    :param name: The definition's name, or its qualified name to pick one of several of that name.
    :param limit: At most this many entries (per list).
    :param depth: Hops of callers to follow (impact).
    :param file_path: Only the definition in this file (relative to the repository root).
    :param repo: Only definitions of this repository of the index.
    :param include_ambiguous: Also follow uses whose target is ambiguous (impact).
    """

    name: SymbolName
    limit: GraphLimit = 50
    depth: Depth = DEFAULT_DEPTH
    file_path: FilePath = None
    repo: OneRepo = None
    include_ambiguous: IncludeAmbiguous = False

    @property
    def text(self) -> str:
        """The name without the white space around it."""
        return self.name.strip()

    @property
    def path(self) -> str | None:
        """The file path without the white space around it."""
        return None if self.file_path is None else self.file_path.strip()


def question_text(question: Any) -> str:
    """
    A question alone (a chat's last user message), by `AskRequest`'s rule, without the white space around it.

    :raises RequestError: Not a string, empty, or over the limit (422).
    """
    return RewriteRequest.parse({"question": question}).text
