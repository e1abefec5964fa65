"""The project's exceptions and warnings, in one place.

Every error raised for bad input is a :class:`MixevalError` and a subclass of the builtin it
refines (:class:`InputError` is a :class:`ValueError`, :class:`InputTypeError` a :class:`TypeError`),
so that ``except ValueError`` in user code keeps working; the message names the argument or column
at fault and what to do instead. The command line turns exactly these (and a missing or unreadable
input file) into a one-line message with exit code 2; anything else is a bug and shows its traceback.
"""

from __future__ import annotations

__all__ = [
    "MixevalError",
    "InputError",
    "InputTypeError",
    "ColumnError",
    "FormulaError",
    "ModelComparisonError",
    "MixevalWarning",
    "SingularFitWarning",
    "ConvergenceWarning",
    "BoundaryWarning",
    "BasisLimitWarning",
    "IdentifiabilityWarning",
    "DroppedRowsWarning",
    "SeparationWarning",
    "FamilyWarning",
]


class MixevalError(Exception):
    """Base class of every exception mixeval raises on purpose."""


class InputError(MixevalError, ValueError):
    """A value, array or table handed to mixeval cannot be used as given."""


class InputTypeError(MixevalError, TypeError):
    """An argument handed to mixeval has the wrong type (e.g. a list where a DataFrame is needed)."""


class ColumnError(InputError):
    """A column named by the user is missing or unusable (message lists the available columns)."""


class FormulaError(InputError):
    """A model formula mixeval cannot parse or does not support (message says what to write)."""


class ModelComparisonError(InputError):
    """Two fitted models cannot be compared (not nested, or fitted to different rows)."""


class MixevalWarning(UserWarning):
    """Base class of every warning mixeval emits."""


class SingularFitWarning(MixevalWarning):
    """A variance component was estimated at zero (a boundary fit): reported, not a failure."""


class ConvergenceWarning(MixevalWarning):
    """An optimiser stopped without meeting its convergence criteria."""


class BoundaryWarning(MixevalWarning):
    """An estimate lies on the boundary of its parameter space; tests based on it need care."""


class BasisLimitWarning(MixevalWarning):
    """A smooth term uses (nearly) all the freedom its basis allows; enlarge the basis."""


class IdentifiabilityWarning(MixevalWarning):
    """Parameters that the data cannot tell apart (e.g. two grouping factors with the same partition)."""


class DroppedRowsWarning(MixevalWarning):
    """Rows were removed because the user asked for it (e.g. ``drop_missing=True``); says how many."""


class SeparationWarning(MixevalWarning):
    """A binary response is perfectly predicted by fixed effects on some rows (infinite ML estimates)."""


class FamilyWarning(MixevalWarning):
    """A Gaussian model fitted to a response that only takes the values 0 and 1, or small counts."""
