"""The notebooks under `notebooks/` run top to bottom (embedded default, no network), and are kept without outputs.

Executed with nbclient in a fresh kernel each, from the `notebooks/` folder, as a reader would run them. The same
check with nbmake: `python -m pytest --nbmake notebooks/`.
"""

from __future__ import annotations

import pytest

from tests.support.repos import ROOT

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = ROOT / "notebooks"
NAMES = ["quickstart.ipynb", "evaluation.ipynb"]
CELL_TIMEOUT_S = 600


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_stored_without_outputs(name: str) -> None:
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code, f"{name} has no code cells"
    for cell in code:
        assert cell.outputs == [], f"{name}: a cell has outputs; strip them before committing"
        assert cell.execution_count is None, f"{name}: a cell has an execution count; strip outputs"
    assert notebook.metadata.get("kernelspec", {}).get("name") == "python3"


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_top_to_bottom(name: str) -> None:
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()  # raises CellExecutionError, with the cell and its traceback, when a cell fails
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.output_type == "error"
    ]
    assert not errors
    shown = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.output_type in ("display_data", "execute_result")
    ]
    assert shown, f"{name} displayed nothing"
