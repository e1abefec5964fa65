"""Every row of the "Coming from R" table (docs/coming_from_r.py) runs, and the page shows every row."""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

DOCS = Path(__file__).resolve().parents[2] / "docs"
_spec = importlib.util.spec_from_file_location("coming_from_r", DOCS / "coming_from_r.py")
table = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = table  # dataclasses look their module up
_spec.loader.exec_module(table)


@pytest.fixture(scope="module")
def setup_namespace() -> dict:
    namespace: dict = {}
    exec(compile(table.SETUP, "coming_from_r.SETUP", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("row", table.ROWS, ids=[r.anchor for r in table.ROWS])
def test_row_example_runs(row, setup_namespace):
    namespace = dict(setup_namespace)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        exec(compile(row.example, row.anchor, "exec"), namespace)


def test_rows_are_complete_and_anchors_unique():
    anchors = [r.anchor for r in table.ROWS]
    assert len(set(anchors)) == len(anchors)
    for row in table.ROWS:
        assert row.package and row.r_call and row.mixeval_call and row.example.strip() and row.differs


def test_page_links_every_row_to_its_example():
    page = table.render()
    for row in table.ROWS:
        assert f"](#{row.anchor})" in page and f"({row.anchor})=" in page


def test_the_table_covers_the_r_packages_a_user_switches_from():
    packages = {r.package for r in table.ROWS}
    assert {"lme4", "lmerTest", "emmeans", "mgcv", "irr"} <= packages


_capture_spec = importlib.util.spec_from_file_location("coming_from_r_capture", DOCS / "coming_from_r_capture.py")
capture = importlib.util.module_from_spec(_capture_spec)
_capture_spec.loader.exec_module(capture)


def test_r_outputs_are_captured_and_current():
    """Every row with R code shows R's output, captured from the row as it is now (else: rerun the capture)."""
    import json

    manifest = json.loads((DOCS / "r_output" / "manifest.json").read_text())
    stale = [row.anchor for row in table.ROWS
             if row.r_code is not None and manifest["rows"].get(row.anchor) != capture.row_hash(table, row)]
    assert not stale, f"rerun `python3 docs/coming_from_r_capture.py`: R output missing or stale for {stale}"
    for row in table.ROWS:
        if row.r_code is not None:
            text = table.r_output(row)
            assert text and not text.startswith("Error:"), row.anchor
    assert {"lme4", "lmerTest", "emmeans"} <= set(manifest["versions"])


def test_every_row_has_r_output():
    """Every row shows R's output: its package's, or an installed route's named by ``r_route``."""
    assert [row.anchor for row in table.ROWS if row.r_code is None] == []


def test_rows_computed_by_another_r_route_say_so():
    """A row whose package was not installed where R's outputs were captured (not among the manifest's versions)
    names the installed route its R code takes above R's output, so that the output is never read as the
    package's; a row whose package was installed takes no other route."""
    import json

    installed = set(json.loads((DOCS / "r_output" / "manifest.json").read_text())["versions"]) | {"stats"}
    page = table.render()
    for row in table.ROWS:
        if row.r_code is None:
            continue
        assert bool(row.r_route) == (row.package not in installed), row.anchor
        if row.r_route:
            assert f"**R** ({row.r_route})" in page
