"""The hint lookup: question -> ranked candidate hints (symbols and packages) from the alias dictionary.

Deterministic, dictionary-only, and fast enough for autocomplete: everything is precomputed into inverted
indexes when the `HintIndex` is built (`index`), and a lookup only touches the postings of the question's words.

Evidence, strongest first (one function each in `kinds`): an identifier written in the question (exactly or with a
typo), a nickname, all words of a symbol's name split (`with stripe backoff`), some of them, words of its
docstring, words reached through the abbreviation table, *retrieved*: defined in the chunks a first retrieval pass
ranks highest for the raw question, and *semantic*: among the symbol cards nearest to the question's vector
(`core.cards`), which bridges a vocabulary gap no word overlap can ("payments retry helper" -> `withStripeBackoff`).
Rare words weigh more than common ones (IDF over the dictionary's symbols).

Each hint carries two numbers (`evidence.Hint`):

- ``score`` orders the hint list: the sum of the evidence weights (`weights.HintWeights`; name words weighted by
  IDF). It is relative: comparable between the hints of one question, not across questions.
- ``confidence`` (0..1) says how sure the hint is on an absolute scale (the rewrite chooses by it, and the fitted
  ranking stage, `ranking/`, reads it with every kind's own value as features): each kind of evidence has a
  confidence of its own (`weights.EVIDENCE_CONFIDENCE`, scaled down for names defined in many places and for
  partial word matches), and independent kinds combine by noisy-OR, ``1 - prod(1 - c)``. Two weak signals that
  agree (the name's words *and* a retrieval pass that found its definition) thus beat either alone. Where the
  index has symbol cards, the fitted models of `calibration` (`config/hint_calibration.json`) weigh them instead.

Which names get the capped list's places is `places`' policy; which repositories and packages a question is
narrowed to, `scope`. `place_pool` is the places model's training data (the fitting code calls it).
"""

from ...core.hint_evidence import CardSimilarity, Hint, HintEvidence, SymbolEvidence, combine_confidence, evidence_kinds
from .calibration import HintCalibration
from .index import HintIndex, place_pool
from .scope import HintScope, scope_from_filters
from .weights import DEFAULT_WEIGHTS, EVIDENCE_CONFIDENCE, RETRIEVED_DEPTH, SEMANTIC_DEPTH, HintWeights

__all__ = [
    "DEFAULT_WEIGHTS",
    "EVIDENCE_CONFIDENCE",
    "RETRIEVED_DEPTH",
    "SEMANTIC_DEPTH",
    "CardSimilarity",
    "Hint",
    "HintCalibration",
    "HintEvidence",
    "HintIndex",
    "HintScope",
    "HintWeights",
    "SymbolEvidence",
    "combine_confidence",
    "evidence_kinds",
    "place_pool",
    "scope_from_filters",
]
