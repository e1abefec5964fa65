"""The project's exceptions and warnings write numpy scalars as Python values."""

from __future__ import annotations

import warnings

import numpy as np

from mixeval.errors import ColumnError, InputError, MixevalWarning, plain_message


def test_numpy_scalars_in_messages_read_as_python_values():
    exc = InputError(f"constant ({np.float64(1.0)!r}); levels {sorted({np.int64(2), np.int64(1)})}, "
                     f"{[np.str_('A')]}, {np.True_!r}, {np.float32(0.5)!r}")
    assert str(exc) == "constant (1.0); levels [1, 2], ['A'], True, 0.5"
    assert isinstance(ColumnError(repr(np.int64(3))), ValueError) and str(ColumnError(repr(np.int64(3)))) == "3"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn(f"sd {np.float64(0.0)!r}", MixevalWarning)
    assert str(caught[0].message) == "sd 0.0"


def test_text_that_only_looks_like_numpy_is_kept():
    assert plain_message("np.mean(x) and numpy.float64") == "np.mean(x) and numpy.float64"
