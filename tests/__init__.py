"""The test suite. Its folders mirror the package's (`components/haystack_integrations/components/code_alias/`).

A test module lives in the folder of the package folder whose code it is about: `tests/core/`, `tests/indexing/`,
`tests/rewriting/`, `tests/retrieval/`, `tests/ranking/`, `tests/serving/`, `tests/evaluation/`,
`tests/elasticsearch/`, `tests/app/` (a nested package folder gets a nested test folder). Where a module tests
several stages, the stage whose behaviour it asserts decides (the hint lookup and its evidence are the rewriting
stage's). Four folders name no package folder:

- `toplevel/`: the modules at the package's top level (`cli.py`, `terminal.py`, `answer_view.py`,
  `presentation.py`, `paths.py`, `_legacy.py`, `serialization.py`);
- `end_to_end/`: the product as a user runs it (YAML pipelines with stock components, the README's commands, the
  notebooks, one question through every surface);
- `structure/`: rules over the package's source as a whole (`test_package_structure.py`);
- `support/`: what several test modules share (fixture repositories and paths, servers, test doubles); no tests.

`fixtures/` and `snapshots/` hold data. Test modules import helpers from `tests.support` and take pytest fixtures
from `conftest.py`, never import one another; `tests/structure/test_package_structure.py` checks these rules.
"""
