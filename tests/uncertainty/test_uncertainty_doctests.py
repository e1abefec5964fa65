"""The runnable examples in the docstrings of mixeval.uncertainty."""

from __future__ import annotations

import doctest
import importlib
import warnings

import pytest

MODULES = ["_bootstrap", "_confint", "_dense", "_glmm_model", "_interface", "_models", "_profile", "_power", "_reliability", "_study"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    mod = importlib.import_module(f"mixeval.uncertainty.{name}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
