"""The project's exceptions and warnings, in one place.

Every error raised for bad input is a :class:`MixevalError` and a subclass of the builtin it
refines (:class:`InputError` is a :class:`ValueError`, :class:`InputTypeError` a :class:`TypeError`),
so that ``except ValueError`` in user code keeps working; the message names the argument or column
at fault and what to do instead. The command line turns exactly these (and a missing or unreadable
input file) into a one-line message with exit code 2; anything else is a bug and shows its traceback.
"""

from __future__ import annotations

import re

__all__ = [
    "MixevalError",
    "InputError",
    "InputTypeError",
    "ColumnError",
    "FormulaError",
    "ModelComparisonError",
    "MixevalWarning",
    "EmptyCategoryWarning",
    "SingularFitWarning",
    "ConvergenceWarning",
    "BoundaryWarning",
    "BasisLimitWarning",
    "IdentifiabilityWarning",
    "DroppedRowsWarning",
    "SeparationWarning",
    "FamilyWarning",
    "FewLevelsWarning",
]


#: numpy scalars as ``repr`` shows them inside messages (``np.float64(1.0)``, ``np.str_('A')``, ``np.True_``)
_NUMPY_SCALAR = re.compile(r"np\.(?:float|int|uint|complex|longdouble|clongdouble)\d*\('?([^()']*)'?\)"
                           r"|np\.(?:str_|bytes_)\(('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\)|np\.(True|False)_")


def plain_message(message: str) -> str:
    """``message`` with numpy scalars written as Python writes the same values: a value formatted with ``!r`` or
    inside a list (``[np.int64(1), np.int64(2)]``) reads as numpy's repr, which means nothing to a user.

    Examples
    --------
    >>> plain_message("constant (np.float64(1.0)); levels [np.str_('A'), np.int64(2)], np.True_")
    "constant (1.0); levels ['A', 2], True"
    """
    return _NUMPY_SCALAR.sub(lambda m: next(g for g in m.groups() if g is not None), message)


def _plain_args(args: tuple) -> tuple:
    return tuple(plain_message(a) if isinstance(a, str) else a for a in args)


class MixevalError(Exception):
    """Base class of every exception mixeval raises on purpose.

    Examples
    --------
    One ``except`` catches every error of the input; each is also the builtin it refines:

    >>> import pandas as pd
    >>> from mixeval.mixed import lmer
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> try:
    ...     lmer("y ~ 1 + (1|rater)", df)
    ... except MixevalError as exc:
    ...     print(type(exc).__name__, isinstance(exc, ValueError))
    ColumnError True
    """

    def __init__(self, *args: object) -> None:
        super().__init__(*_plain_args(args))


class InputError(MixevalError, ValueError):
    """A value, array or table handed to mixeval cannot be used as given.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> lmer("y ~ 1 + (1|g)", df.assign(y=[1.0, 2, np.nan, 4, 5, 7]))
    Traceback (most recent call last):
        ...
    mixeval.errors.InputError: column 'y' has 1 missing value(s) out of 6 rows. mixeval drops nothing silently: ...
    >>> issubclass(InputError, ValueError)
    True
    """


class InputTypeError(MixevalError, TypeError):
    """An argument handed to mixeval has the wrong type (e.g. a list where a DataFrame is needed).

    Examples
    --------
    >>> from mixeval.mixed import lmer
    >>> lmer("y ~ 1 + (1|g)", [1.0, 2.0])
    Traceback (most recent call last):
        ...
    mixeval.errors.InputTypeError: `data` must be a pandas DataFrame in long format (one row per observation); got list. ...
    >>> issubclass(InputTypeError, TypeError)
    True
    """


class ColumnError(InputError):
    """A column named by the user is missing or unusable (message lists the available columns).

    Examples
    --------
    >>> import pandas as pd
    >>> from mixeval.mixed import lmer
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> lmer("y ~ 1 + (1|rater)", df)
    Traceback (most recent call last):
        ...
    mixeval.errors.ColumnError: column(s) 'rater' not found in `data`; available columns: y, g.
    """


class FormulaError(InputError):
    """A model formula mixeval cannot parse or does not support (message says what to write).

    Examples
    --------
    >>> import pandas as pd
    >>> from mixeval.mixed import lmer
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> lmer("y ~ 1 + (1|g", df)
    Traceback (most recent call last):
        ...
    mixeval.errors.FormulaError: unbalanced parentheses in formula: 'y ~ 1 + (1|g' (a '(' is not closed).
    """


class ModelComparisonError(InputError):
    """Two fitted models cannot be compared (not nested, or fitted to different rows).

    Examples
    --------
    >>> import pandas as pd
    >>> from mixeval.mixed import compare, lmer
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> compare(lmer("y ~ 1 + (1|g)", df, REML=False), lmer("y ~ 1 + (1|g)", df.iloc[:4], REML=False))
    Traceback (most recent call last):
        ...
    mixeval.errors.ModelComparisonError: the two models were fitted to different rows (6 vs 4 observations, ...
    """


class MixevalWarning(UserWarning):
    """Base class of every warning mixeval emits.

    Examples
    --------
    Silence (or turn into errors) every warning of mixeval at once:

    >>> import warnings
    >>> issubclass(SingularFitWarning, MixevalWarning), issubclass(MixevalWarning, UserWarning)
    (True, True)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", MixevalWarning)
    ...     warnings.warn("not shown", SingularFitWarning)
    """

    def __init__(self, *args: object) -> None:
        super().__init__(*_plain_args(args))


class SingularFitWarning(MixevalWarning):
    """A variance component was estimated at zero (a boundary fit): reported, not a failure.

    Examples
    --------
    The group means are equal, so the group variance is estimated as 0:

    >>> import warnings, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> df = pd.DataFrame({"y": [1.0, 2, 1.5, 1, 2, 1.5], "g": list("aabbcc")})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     fit = lmer("y ~ 1 + (1|g)", df)
    >>> [w.category.__name__ for w in caught], float(fit.varcorr.variance[0])
    (['SingularFitWarning'], 0.0)
    """


class ConvergenceWarning(MixevalWarning):
    """An optimiser stopped without meeting its convergence criteria.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warnings.warn("optimiser stopped after 1000 evaluations", ConvergenceWarning)
    >>> caught[0].category.__name__, issubclass(ConvergenceWarning, MixevalWarning)
    ('ConvergenceWarning', True)
    """


class BoundaryWarning(MixevalWarning):
    """An estimate lies on the boundary of its parameter space; tests based on it need care.

    Examples
    --------
    No false positive among 80 positive predictions: the precision is estimated as exactly 1, with variance 0:

    >>> import warnings
    >>> from mixeval.metric_model import MetricModel
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     m = MetricModel.from_confusion(tp=80, fp=0, fn=10, tn=890)
    >>> [w.category.__name__ for w in caught], m.precision
    (['BoundaryWarning'], 1.0)
    """


class BasisLimitWarning(MixevalWarning):
    """A smooth term uses (nearly) all the freedom its basis allows; enlarge the basis.

    Examples
    --------
    A step function fitted with a 5-knot spline uses all of its basis:

    >>> import warnings, numpy as np, pandas as pd
    >>> from mixeval.validity import fit_gam
    >>> df = pd.DataFrame({"x": np.random.default_rng(0).uniform(size=300)})
    >>> df["y"] = np.where(df.x > 0.5, 3.0, 1.0)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     gam = fit_gam(df, "y", ["x"], k=5)
    >>> [w.category.__name__ for w in caught]
    ['BasisLimitWarning']
    """


class IdentifiabilityWarning(MixevalWarning):
    """Parameters that the data cannot tell apart (e.g. two grouping factors with the same partition).

    Examples
    --------
    ``h`` relabels ``g`` (same partition of the rows):

    >>> import warnings, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     fit = lmer("y ~ 1 + (1|g) + (1|h)", df.assign(h=list("xxyyzz")))
    >>> sorted({w.category.__name__ for w in caught})
    ['IdentifiabilityWarning']
    """


class DroppedRowsWarning(MixevalWarning):
    """Rows were removed because the user asked for it (e.g. ``drop_missing=True``); says how many.

    Examples
    --------
    >>> import warnings, numpy as np, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     fit = lmer("y ~ 1 + (1|g)", df.assign(y=[1.0, 2, np.nan, 4, 5, 7]), drop_missing=True)
    >>> fit.nobs, str(caught[0].message)
    (5, "drop_missing=True: dropped 1 of 6 rows with missing or non-finite values (missing per column: {'y': 1}).")
    """


class SeparationWarning(MixevalWarning):
    """A binary response is perfectly predicted by fixed effects on some rows (infinite ML estimates).

    Examples
    --------
    Every answer of system B is correct and every answer of A wrong:

    >>> import warnings, numpy as np, pandas as pd
    >>> from mixeval.mixed import glmer
    >>> df = pd.DataFrame({"item": np.repeat(np.arange(10), 2), "system": np.tile(["A", "B"], 10)})
    >>> df["correct"] = (df.system == "B").astype(int)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     fit = glmer("correct ~ system + (1|item)", df, family="binomial")
    >>> "SeparationWarning" in [w.category.__name__ for w in caught]
    True
    """


class FamilyWarning(MixevalWarning):
    """A Gaussian model fitted to a response that only takes the values 0 and 1, or small counts.

    Examples
    --------
    >>> import warnings, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> df = pd.DataFrame({"correct": [0, 1, 1, 0, 1, 1, 0, 1], "item": list("aabbccdd")})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     fit = lmer("correct ~ 1 + (1|item)", df)
    >>> "FamilyWarning" in [w.category.__name__ for w in caught]
    True
    """


class EmptyCategoryWarning(MixevalWarning):
    """A category of an ordinal rating scale has no observations (:func:`mixeval.clmm`): with flexible thresholds
    its probability is estimated as 0, so the thresholds either side of it coincide (or are infinite at an end).

    Examples
    --------
    >>> issubclass(EmptyCategoryWarning, MixevalWarning)
    True
    """


class FewLevelsWarning(MixevalWarning):
    """A variance component estimated from few levels may carry most of a mean's or contrast's variance.

    The default intervals (z; Kenward-Roger's and Satterthwaite's less) then cover less than their nominal
    level: the message gives the component, its levels, the upper confidence bound of its share of the
    variance (the estimate too) and the lowest coverage of the interval in the idealised model over the shares
    up to that bound (:mod:`mixeval.significance._dominance`), and recommends more levels or, for z, the
    experimental ``df="satterthwaite-upper"``.

    Examples
    --------
    >>> issubclass(FewLevelsWarning, MixevalWarning)
    True
    """
