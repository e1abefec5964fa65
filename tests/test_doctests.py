"""Every Examples section of the package runs as a doctest and prints what it shows.

One test per module of ``mixeval`` (private modules included: their docstrings are rendered in the API
reference through the public names). Examples are corrected when they fail, never skipped.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import warnings

import matplotlib
import pytest

import mixeval

matplotlib.use("Agg")

MODULES = sorted(info.name for info in pkgutil.walk_packages(mixeval.__path__, "mixeval."))
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def test_the_package_has_examples():
    finder = doctest.DocTestFinder()
    examples = sum(len(t.examples) for name in MODULES for t in finder.find(importlib.import_module(name)))
    assert examples > 300


@pytest.mark.parametrize("name", ["mixeval", *MODULES])
def test_docstring_examples(name):
    module = importlib.import_module(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # examples that show a warning say so in their text
        result = doctest.testmod(module, optionflags=FLAGS, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed (see the output)"
