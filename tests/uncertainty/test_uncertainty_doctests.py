"""The runnable examples in the docstrings of mixeval.uncertainty."""

from __future__ import annotations

import doctest
import importlib
import warnings

import pytest

MODULES = ["_power", "_reliability", "_study"]  # the intervals of fits live in mixeval.mixed (tests/test_doctests.py)


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    mod = importlib.import_module(f"mixeval.uncertainty.{name}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
