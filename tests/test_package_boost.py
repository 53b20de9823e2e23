"""The package boost: a package the rewrite is sure of (its first symbol is defined there) lifts its own chunks."""

from __future__ import annotations

from typing import Any

from haystack import Document

from haystack_integrations.components.code_alias.retrieval.search import package_prior, repository_boosted


def _hint(kind: str, name: str, package: str | None, confidence: float) -> dict[str, Any]:
    return {"kind": kind, "name": name, "package": package, "confidence": confidence}


REWRITE: dict[str, Any] = {
    "symbols": ["withStripeBackoff", "retryFailedExports"],
    "packages": ["@acme/payments-core"],
    "hints": [
        _hint("symbol", "withStripeBackoff", "@acme/payments-core", 0.92),
        _hint("symbol", "retryFailedExports", "@acme/ledger", 0.88),
        _hint("package", "@acme/payments-core", "@acme/payments-core", 0.17),
    ],
}


def test_the_package_of_the_first_symbol_is_the_one_the_rewrite_is_sure_of() -> None:
    assert package_prior(REWRITE) == {"@acme/payments-core": 0.17}


def test_a_package_the_first_symbol_is_not_in_is_not_lifted() -> None:
    # "compat" in a preact issue names preact-compat; the rewrite's best symbol is a hook: no boost
    other = {**REWRITE, "symbols": ["retryFailedExports", "withStripeBackoff"]}
    assert package_prior(other) == {}
    assert package_prior({**REWRITE, "packages": []}) == {}  # not chosen: nothing
    assert package_prior({**REWRITE, "symbols": []}) == {}
    unsure = {**REWRITE, "hints": [h for h in REWRITE["hints"] if h["kind"] == "symbol"]}
    assert package_prior(unsure) == {}  # no confidence for the package


def _chunk(name: str, file: str, package: str | None) -> Document:
    return Document(id=name, content=name, meta={"file_path": file, "package": package, "qualified_name": name})


def test_the_boost_lifts_the_package_and_keeps_the_order_inside_it() -> None:
    ranked = [
        _chunk("retryFailedExports", "ledger/exports.ts", "@acme/ledger"),
        _chunk("createCharge", "payments/stripe.ts", "@acme/payments-core"),
        _chunk("reconcile", "ledger/reconcile.ts", "@acme/ledger"),
        _chunk("withStripeBackoff", "payments/stripe.ts", "@acme/payments-core"),
    ]
    boosted = [d.id for d in repository_boosted(ranked, {"@acme/payments-core": 0.5}, field="package")]
    assert boosted[:2] == ["createCharge", "withStripeBackoff"]  # the package first, in its own order
    assert boosted[2:] == ["retryFailedExports", "reconcile"]
    # every candidate in the one package: nothing moves (a single-package repository)
    same = [_chunk(f"f{i}", f"f{i % 2}.py", "flask") for i in range(5)]
    assert [d.id for d in repository_boosted(same, {"flask": 0.9}, field="package")] == [d.id for d in same]
