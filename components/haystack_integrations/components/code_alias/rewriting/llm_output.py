"""Defensive parsing of an LLM's rewrite answer, and the JSON schema it is asked to follow.

Small local models answer with JSON wrapped in prose or code fences, leave fields out, put a string where a list
belongs, add keys, invent intents, stop mid-object when the token cap hits, or answer nothing. Everything that
can be salvaged is; what cannot raises `UnusableAnswer` with a short reason code so the rewriter can fall back
to the dictionary-only rewrite and say why.

Framework-free: no Haystack import.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import CodeAliasError
from .rewrite import INTENTS

EXPECTED_KEYS: tuple[str, ...] = ("rewritten", "symbols", "packages", "intent")
# Other names a model may use for the expected keys.
_KEY_SYNONYMS: dict[str, str] = {
    "rewrite": "rewritten",
    "rewritten_question": "rewritten",
    "rewritten_query": "rewritten",
    "query": "rewritten",
    "question": "rewritten",
    "symbol": "symbols",
    "identifiers": "symbols",
    "package": "packages",
    "intention": "intent",
}
_INTENT_SYNONYMS: dict[str, str] = {
    "locate": "locate_symbol",
    "find": "locate_symbol",
    "find_symbol": "locate_symbol",
    "location": "locate_symbol",
    "explain": "explain_behavior",
    "explain_behaviour": "explain_behavior",
    "explanation": "explain_behavior",
    "howto": "how_to",
    "how": "how_to",
    "usage": "how_to",
    "debugging": "debug",
    "bug": "debug",
    "error": "debug",
}
MAX_LIST_ITEMS = 16
MAX_NAME_LENGTH = 200
_FENCE_RE = re.compile(r"```(?:json|JSON|javascript|js)?\s*\n?(.*?)```", re.S)
_TRAILING_COMMA_RE = re.compile(r",\s*([}\]])")


class UnusableAnswer(ValueError, CodeAliasError):
    """An answer nothing can be salvaged from; `reason` is a short code for `meta.fallback`."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass
class ParsedAnswer:
    """
    What could be read from an answer. `None` fields were missing or unusable.

    :param rewritten: The rewritten question, or None.
    :param symbols: Symbol names, cleaned and de-duplicated (not yet checked against the dictionary).
    :param packages: Package names, cleaned and de-duplicated.
    :param intent: One of `INTENTS`, or None when the answer had none usable.
    :param problems: What had to be repaired or ignored, for the log.
    :param fields: The expected keys the answer had (synonyms mapped), in `EXPECTED_KEYS` order.
    """

    rewritten: str | None
    symbols: list[str] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)
    intent: str | None = None
    problems: list[str] = field(default_factory=list)
    fields: tuple[str, ...] = ()


def rewrite_json_schema(
    *,
    symbol_choices: list[str] | None = None,
    package_choices: list[str] | None = None,
    max_symbols: int = 6,
    max_packages: int = 3,
    with_rewritten: bool = True,
) -> dict[str, Any]:
    """
    The JSON schema of a rewrite answer.

    With `symbol_choices` / `package_choices` (the candidate hints) the arrays are enums of those names, so a
    generator with grammar-constrained decoding cannot even spell another identifier; an empty choice list
    allows no item. None leaves the items free (the faithfulness filter then does all the work).

    :param symbol_choices: Allowed symbol names, or None for any string.
    :param package_choices: Allowed package names, or None for any string.
    :param max_symbols: Most symbols in the answer.
    :param max_packages: Most packages in the answer.
    :param with_rewritten: Ask for the `rewritten` text; False: the answer is `{symbols, packages, intent}` (the
        caller composes the text from the chosen names, and the model writes about half as many tokens).
    """

    def array(choices: list[str] | None, most: int) -> dict[str, Any]:
        if choices is not None and not choices:
            return {"type": "array", "items": {"type": "string"}, "maxItems": 0}
        items: dict[str, Any] = {"type": "string"}
        if choices is not None:
            items["enum"] = list(dict.fromkeys(choices))
        return {"type": "array", "items": items, "maxItems": max(0, most)}

    properties: dict[str, Any] = {"rewritten": {"type": "string"}} if with_rewritten else {}
    properties["symbols"] = array(symbol_choices, max_symbols)
    properties["packages"] = array(package_choices, max_packages)
    properties["intent"] = {"type": "string", "enum": list(INTENTS)}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def parse_rewrite_answer(text: str | None, *, expect_rewritten: bool = True) -> ParsedAnswer:
    """
    Read `{rewritten, symbols, packages, intent}` out of an LLM answer.

    Accepts bare JSON, JSON inside a code fence or prose, trailing commas, an object cut off by the token cap,
    a list holding one object, synonyms of the keys, a string where a list belongs, and list items that are
    objects with a `name`. Extra keys are ignored; an intent outside `INTENTS` becomes None (the caller uses the
    rule-based intent).

    :param text: The answer's text.
    :param expect_rewritten: Whether the model was asked for `rewritten` (False: its absence is no problem).
    :returns: The parsed answer with a note per repair in `problems`.
    :raises UnusableAnswer: `empty_answer`, `no_json`, `not_an_object` or `no_expected_fields`.
    """
    if text is None or not text.strip():
        raise UnusableAnswer("empty_answer")
    problems: list[str] = []
    value = _extract_json(text.strip(), problems)
    if isinstance(value, list):
        objects = [item for item in value if isinstance(item, dict)]
        if not objects:
            raise UnusableAnswer("not_an_object", type(value).__name__)
        problems.append("object inside a list")
        value = objects[0]
    if not isinstance(value, dict):
        raise UnusableAnswer("not_an_object", type(value).__name__)

    data: dict[str, Any] = {}
    extra: list[str] = []
    for raw_key, item in value.items():
        key = str(raw_key).strip().lower()
        key = _KEY_SYNONYMS.get(key, key)
        if key in EXPECTED_KEYS and key not in data:
            data[key] = item
        else:
            extra.append(str(raw_key))
    if not data:
        raise UnusableAnswer("no_expected_fields", ", ".join(extra[:5]))
    if extra:
        problems.append(f"extra keys ignored: {', '.join(extra[:5])}")
    for key in EXPECTED_KEYS:
        if key not in data and (expect_rewritten or key != "rewritten"):
            problems.append(f"missing {key}")

    return ParsedAnswer(
        rewritten=_as_text(data.get("rewritten"), problems),
        symbols=_as_names(data.get("symbols"), "symbols", problems),
        packages=_as_names(data.get("packages"), "packages", problems),
        intent=_as_intent(data.get("intent"), problems),
        problems=problems,
        fields=tuple(key for key in EXPECTED_KEYS if key in data),
    )


# ---- JSON extraction -------------------------------------------------------------------------------------------
def _extract_json(text: str, problems: list[str]) -> Any:
    """The first JSON object (or array) in `text`, repairing what is cheap to repair."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    for block in _FENCE_RE.findall(text):
        found = _first_value(block.strip())
        if found is not None:
            problems.append("json in a code fence")
            return found
    found = _first_value(text)
    if found is not None:
        problems.append("json inside prose")
        return found
    start = text.find("{")
    if start >= 0:
        repaired = _close_truncated(text[start:])
        if repaired is not None:
            problems.append("truncated json closed")
            return repaired
    raise UnusableAnswer("no_json", text[:80])


def _first_value(text: str) -> Any:
    """The first object decodable at any `{` (or a `[` holding objects) of `text`, else None."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[{\[]", text):
        candidate = text[match.start() :]
        for attempt in (candidate, _TRAILING_COMMA_RE.sub(r"\1", candidate)):
            try:
                value, _ = decoder.raw_decode(attempt)
            except ValueError:
                continue
            if isinstance(value, dict) or (isinstance(value, list) and any(isinstance(v, dict) for v in value)):
                return value
            break
    return None


def _close_truncated(text: str) -> Any:
    """Close an object cut off mid-way (the token cap): finish the open string, drop a dangling key, close brackets."""
    stack: list[str] = []
    in_string = escaped = False
    string_start = 0
    for position, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
            string_start = position
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]":
            if not stack:
                return None
            stack.pop()
    if not stack:
        return None
    # A list item cut mid-name is not a name: drop it. A cut string value is kept and closed.
    body = text[:string_start] if in_string and stack[-1] == "]" else text + ('"' if in_string else "")
    closers = "".join(reversed(stack))
    for candidate in (
        body + closers,
        re.sub(r",\s*$", "", body) + closers,
        re.sub(r',?\s*"[^"]*"\s*:?\s*$', "", body) + closers,
        re.sub(r',?\s*"[^"]*"\s*:\s*"[^"]*"?\s*$', "", body) + closers,
    ):
        try:
            value = json.loads(_TRAILING_COMMA_RE.sub(r"\1", candidate))
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


# ---- field coercion --------------------------------------------------------------------------------------------
def _as_text(value: Any, problems: list[str]) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        text = " ".join(value.split())
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        problems.append("rewritten: list joined")
        text = " ".join(" ".join(value).split())
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        problems.append("rewritten: number")
        text = str(value)
    else:
        problems.append(f"rewritten: wrong type {type(value).__name__}")
        return None
    return text or None


def clean_name(name: str) -> str:
    """Strip what models wrap identifiers in: whitespace, backticks, quotes, a call's `()`, a trailing period."""
    cleaned = name.strip().strip("`'\"").strip()
    if cleaned.endswith("()"):
        cleaned = cleaned[:-2]
    return cleaned.rstrip(".,;:").strip()


def _as_names(value: Any, key: str, problems: list[str]) -> list[str]:
    if value is None:
        return []
    items: list[Any]
    if isinstance(value, str):
        problems.append(f"{key}: string, not a list")
        items = [part for part in re.split(r"[,\s]+", value) if part]
    elif isinstance(value, list):
        items = value
    elif isinstance(value, dict):
        problems.append(f"{key}: object, not a list")
        items = list(value)
    else:
        problems.append(f"{key}: wrong type {type(value).__name__}")
        return []
    names: list[str] = []
    skipped = 0
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            item = item["name"]
        if not isinstance(item, str):
            skipped += 1
            continue
        name = clean_name(item)
        if not name or len(name) > MAX_NAME_LENGTH or any(c.isspace() for c in name):
            skipped += 1
            continue
        if name not in names:
            names.append(name)
    if skipped:
        problems.append(f"{key}: {skipped} unusable item(s) skipped")
    if len(names) > MAX_LIST_ITEMS:
        problems.append(f"{key}: truncated to {MAX_LIST_ITEMS}")
        names = names[:MAX_LIST_ITEMS]
    return names


def _as_intent(value: Any, problems: list[str]) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        problems.append(f"intent: wrong type {type(value).__name__}")
        return None
    key = re.sub(r"[\s\-]+", "_", value.strip().lower())
    key = _INTENT_SYNONYMS.get(key, key)
    if key in INTENTS:
        return key
    problems.append(f"intent {value[:40]!r} not in {'|'.join(INTENTS)}")
    return None
