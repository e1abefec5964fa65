"""The Examples sections of mixeval.validity run and give the documented output."""

from __future__ import annotations

import doctest
import importlib
import warnings

import matplotlib
import pytest

matplotlib.use("Agg")


@pytest.mark.parametrize("module", ["_gam", "_gam_basis", "_gam_design", "_gam_result", "_gam_smoothing", "_circularity", "_determinism", "_simulate", "_bias", "_invariance", "_plots"])
def test_examples(module):
    mod = importlib.import_module(f"mixeval.validity.{module}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
