"""The repositories and packages a question is narrowed to, as the rewrite must honour them. Framework-free.

A question narrowed to `repo: ["acme/web"]` retrieves only that repository's chunks; its rewrite must not name
`acme/payments`' `stripe_retry` either (the user would see a rewrite that contradicts the answer). The filter reaches
the rewriter as the retrievers get it, a Haystack filter dict (`repositories.repository_filters`); `HintScope` is
what of it concerns names: the repositories and packages a symbol or package must belong to.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["HintScope", "scope_from_filters"]

_FIELDS = {"meta.repo": "repos", "repo": "repos", "meta.package": "packages", "package": "packages"}


@dataclass(frozen=True)
class HintScope:
    """
    Names a rewrite may use: those defined in one of `repos` (None: any repository) and one of `packages` (None:
    any package), both at once for the same definition.
    """

    repos: frozenset[str] | None = None
    packages: frozenset[str] | None = None

    def admits(self, repo: str | None, package: str | None) -> bool:
        """Whether a definition of repository `repo` and package `package` is inside the scope."""
        if self.repos is not None and repo not in self.repos:
            return False
        return self.packages is None or package in self.packages

    def key(self) -> str:
        """A stable text for cache keys (the same scope, the same key)."""
        repos = "*" if self.repos is None else ",".join(sorted(self.repos))
        packages = "*" if self.packages is None else ",".join(sorted(self.packages))
        return f"repos={repos};packages={packages}"

    def to_dict(self) -> dict[str, list[str] | None]:
        return {
            "repo": None if self.repos is None else sorted(self.repos),
            "package": None if self.packages is None else sorted(self.packages),
        }


def scope_from_filters(filters: Mapping[str, Any] | None) -> HintScope | None:
    """
    The scope of a Haystack filter: its `meta.repo` and `meta.package` conditions (`==` or `in`), alone or joined
    by AND (what `repositories.repository_filters` writes). Conditions on other fields do not narrow names. A
    repository or package condition that cannot be read as such (under OR or NOT, another operator) makes the
    whole filter narrow nothing: the rewrite is then as without a filter, never narrower than the retrieval.

    :returns: The scope, or None when the filter does not narrow repositories or packages.
    """
    if not filters:
        return None
    narrowed: dict[str, frozenset[str]] = {}
    for condition in _and_conditions(filters):
        if "field" not in condition:  # an OR or NOT inside: unreadable only where it is about names
            if _mentions_names(condition):
                return None
            continue
        kind = _FIELDS.get(str(condition.get("field", "")))
        if kind is None:
            continue
        values = _values(condition)
        if values is None:
            return None
        narrowed[kind] = narrowed[kind] & values if kind in narrowed else values
    if not narrowed:
        return None
    return HintScope(repos=narrowed.get("repos"), packages=narrowed.get("packages"))


def _and_conditions(filters: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The members of a filter that must all hold: itself, or the members of an AND (nested ANDs flattened)."""
    if "field" in filters or str(filters.get("operator", "")).upper() != "AND":
        return [filters]
    found: list[Mapping[str, Any]] = []
    for member in filters.get("conditions") or []:
        if isinstance(member, Mapping):
            found.extend(_and_conditions(member))
    return found


def _mentions_names(filters: Mapping[str, Any]) -> bool:
    """Whether a (logical) filter has a repository or package condition anywhere inside."""
    if "field" in filters:
        return str(filters.get("field", "")) in _FIELDS
    members = filters.get("conditions") or []
    return any(isinstance(member, Mapping) and _mentions_names(member) for member in members)


def _values(condition: Mapping[str, Any]) -> frozenset[str] | None:
    operator, value = condition.get("operator"), condition.get("value")
    if operator == "==" and isinstance(value, str):
        return frozenset([value])
    if operator == "in" and isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return frozenset(value)
    return None
