"""The runnable Examples sections of mixeval.meta are part of the tests."""

from __future__ import annotations

import doctest
import importlib

import matplotlib
import pytest

matplotlib.use("Agg")

MODULES = [
    "mixeval.meta._selective",
    "mixeval.meta._local",
    "mixeval.meta._pairs",
    "mixeval.meta._hypotheses",
    "mixeval.meta._perturb",
    "mixeval.meta._text_metrics",
    "mixeval.meta._example_data",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
