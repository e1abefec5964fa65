"""A Report and a plot display in a Jupyter notebook (executed with nbclient and a real kernel)."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[2]

CELLS = [
    "import pandas as pd\n"
    "from mixeval import plots\n"
    "from mixeval.report import Report, Section, Table, Figure\n"
    "vc = pd.DataFrame({'component': ['item', 'Residual'], 'variance': [3.0, 1.0]})\n"
    "rep = Report('Notebook check', (Section('VC', (Table(vc, 'Table 1'),\n"
    "    Figure.from_matplotlib(plots.plot_variance_components(vc), 'Figure 1'))),))",
    "rep",
    "plots.plot_variance_components(vc)",
]


def test_report_and_figure_display_in_a_notebook():
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(ROOT)}})
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as exc:  # pragma: no cover - shows the traceback
        pytest.fail(str(exc))
    except Exception as exc:  # no kernel installed
        if "No such kernel" in str(exc) or "kernel" in type(exc).__name__.lower():
            pytest.skip(f"no python3 Jupyter kernel: {exc}")
        raise
    report_output = notebook.cells[1].outputs[0]["data"]
    html = report_output["text/html"]
    assert html.startswith('<div class="mxr">') and "data:image/png;base64," in html
    assert "<caption>Table 1</caption>" in html
    assert report_output["text/plain"] == "Report('Notebook check': 1 section(s), 1 table(s), 1 figure(s))"
    figure_output = notebook.cells[2].outputs[0]["data"]
    assert "image/png" in figure_output  # a returned Figure renders inline
