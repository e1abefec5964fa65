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
