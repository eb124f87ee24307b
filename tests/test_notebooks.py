"""The teaching notebooks run top to bottom, at small sizes, without an error.

Each notebook states its results in prose and checks each one with an
``assert`` on the numbers of its own run, so executing it is the test: a claim
that the numbers contradict fails here. The sizes are made small the way
papermill does it: a cell setting ``SMALL = True`` is inserted right after the
cell tagged ``parameters``.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
EXPECTED = ["01_duality_and_sdca", "02_faceoff", "03_acceleration", "04_unregularizing",
            "05_choosing_a_sampling"]
OVERRIDES = "SMALL = True"


def inject_parameters(nb, overrides: str = OVERRIDES):
    """Insert ``overrides`` as a code cell right after the cell tagged "parameters"."""
    tagged = [k for k, cell in enumerate(nb.cells) if "parameters" in cell.metadata.get("tags", [])]
    if len(tagged) != 1:
        raise ValueError(f"expected exactly one cell tagged 'parameters', found {len(tagged)}")
    cell = nbformat.v4.new_code_cell(overrides)
    cell.metadata["tags"] = ["injected-parameters"]
    nb.cells.insert(tagged[0] + 1, cell)
    return nb


def test_every_notebook_is_there_and_built_from_its_source():
    assert sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")) == EXPECTED
    assert sorted(p.stem for p in (NOTEBOOKS / "src").glob("*.py")) == EXPECTED
    out = subprocess.run([sys.executable, str(NOTEBOOKS / "build.py"), "--check"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("name", EXPECTED)
def test_committed_notebook_has_no_outputs(name):
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


def test_inject_parameters_needs_one_tagged_cell():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("SMALL = False")])
    with pytest.raises(ValueError, match="exactly one cell tagged 'parameters'"):
        inject_parameters(nb)


@pytest.mark.slow
@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_runs_top_to_bottom(name, monkeypatch):
    # one BLAS thread in the kernel: the machine's cores are shared (see conftest.py)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(var, "1")
    nb = inject_parameters(nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4))
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()  # raises CellExecutionError (with the failing cell and traceback) on any error
    errors = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs
              if out.output_type == "error"]
    assert not errors
