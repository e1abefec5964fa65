"""The project's exceptions and warnings, in one place.

Every error raised for bad input is a :class:`MixevalError` and a subclass of the builtin it
refines (:class:`InputError` is a :class:`ValueError`, :class:`InputTypeError` a :class:`TypeError`),
so that ``except ValueError`` in user code keeps working; the message names the argument or column
at fault and what to do instead. The command line turns exactly these (and a missing or unreadable
input file) into a one-line message with exit code 2; anything else is a bug and shows its traceback.

Every warning of the package is issued with ``stacklevel=caller_stacklevel()``, so that Python shows the
user's line that led to it (the file and line number of the user's call, then the warning's class and
message), never a line inside mixeval. A
message that advises an argument writes it with :func:`as_flag`, giving the Python form and the command
line's (``family='binomial'`` / ``--family binomial``): ``str()`` shows the former, ``.cli_message`` the latter.
:func:`recorded_warnings` collects the warnings of a block (for a report to show them) and passes them on.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
import types
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

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
    "RankDeficientWarning",
    "IdentifiabilityWarning",
    "DroppedRowsWarning",
    "SeparationWarning",
    "FamilyWarning",
    "FewLevelsWarning",
    "caller_stacklevel",
    "as_flag",
    "cli_words",
    "recorded_warnings",
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


#: an argument written twice in a message: ``\x1e<Python form>\x1f<command-line form>\x1e`` (see :func:`as_flag`)
_BOTH_FORMS = re.compile("\x1e([^\x1e\x1f]*)\x1f([^\x1e\x1f]*)\x1e")


def as_flag(python: str, flag: str) -> str:
    """An argument a message advises, in Python's words and the command line's.

    A warning or error built from the text says ``python`` (``str(warning)``) and keeps ``flag`` for the command
    line (``warning.cli_message``), so the same message advises ``family='binomial'`` in a script and
    ``--family binomial`` in a terminal.

    Examples
    --------
    >>> advice = as_flag("family='binomial'", "--family binomial")
    >>> w = FamilyWarning("fit a binomial model: pass " + advice + ".")
    >>> str(w), w.cli_message
    ("fit a binomial model: pass family='binomial'.", 'fit a binomial model: pass --family binomial.')
    """
    return f"\x1e{python}\x1f{flag}\x1e"


def _python_words(message: str) -> str:
    return _BOTH_FORMS.sub(r"\1", message)


def cli_words(message: object) -> str:
    """The text of a warning or error for the command line: the flags :func:`as_flag` gave, else ``str()``.

    Examples
    --------
    >>> cli_words(InputError(f"pass {as_flag('level=0.9', '--level 0.9')}")), cli_words("plain text")
    ('pass --level 0.9', 'plain text')
    """
    text = getattr(message, "cli_message", None)
    return text if isinstance(text, str) else _BOTH_FORMS.sub(r"\2", plain_message(str(message)))


def _plain_args(args: tuple) -> tuple:
    return tuple(_python_words(plain_message(a)) if isinstance(a, str) else a for a in args)


def _cli_message(args: tuple) -> str:
    text = args[0] if len(args) == 1 and isinstance(args[0], str) else None
    return _BOTH_FORMS.sub(r"\2", plain_message(text)) if text is not None else str(_plain_args(args))


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_INSIDE: dict[str, bool] = {}
#: the standard library's decorator machinery (``functools.cached_property``, ``contextlib``) that runs the package's
#: code on the user's behalf
_PLUMBING = frozenset(m.__file__ for m in (functools, contextlib) if m.__file__)


def _inside_package(filename: str) -> bool:
    inside = _INSIDE.get(filename)
    if inside is None:
        inside = _INSIDE[filename] = os.path.abspath(filename).startswith(_PACKAGE)
    return inside


def caller_stacklevel() -> int:
    """The ``stacklevel`` of :func:`warnings.warn` that names the user's line: the frame that called into mixeval.

    Called in the argument list of ``warnings.warn`` (``warnings.warn(text, SingularFitWarning,
    stacklevel=caller_stacklevel())``); however deep inside the package the warning arises, and whatever lies
    between (``functools.cached_property``, pandas calling back), Python then shows the line of the script or
    notebook cell that called mixeval, as R's warnings name the user's call: the frame just outside the
    outermost frame of the package.

    Examples
    --------
    >>> def fit():  # stands for a function of mixeval called by this (doctest) frame
    ...     return caller_stacklevel()
    >>> fit()  # no frame of the package on the stack: the warning names the caller of warnings.warn
    1
    """
    frame: types.FrameType | None = sys._getframe(1)
    level, outermost = 1, 0
    while frame is not None:
        filename = frame.f_code.co_filename
        if _inside_package(filename) or (outermost == level - 1 and filename in _PLUMBING):
            outermost = level  # a decorator's frame (cached_property.__get__) right above the package is its part
        frame = frame.f_back
        level += 1
    return outermost + 1


@contextmanager
def recorded_warnings() -> Iterator[list[str]]:
    """Collect the texts of the warnings raised in the block (each once, in order) and, when the block ends, issue
    them again to the caller's filters and display, each with the file and line it named.

    A report built in the block shows the texts (as notes); the user still sees (or filters) the warnings as
    without the block.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as shown:
    ...     warnings.simplefilter("always")
    ...     with recorded_warnings() as texts:
    ...         warnings.warn("first", MixevalWarning)
    ...         warnings.warn("first", MixevalWarning)
    >>> texts, [str(w.message) for w in shown]
    (['first'], ['first'])
    """
    texts: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield texts
        finally:
            seen: set[tuple[type, str]] = set()
            kept = []
            for w in caught:
                key = (w.category, str(w.message))
                if key not in seen:
                    seen.add(key)
                    kept.append(w)
            texts.extend(dict.fromkeys(str(w.message) for w in kept))
    for w in kept:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)


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
        self.cli_message = _cli_message(args)


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
        self.cli_message = _cli_message(args)


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


class RankDeficientWarning(IdentifiabilityWarning):
    """The fixed-effects model matrix is rank deficient, so the columns lme4 drops were dropped (named), and the
    kept coefficients fitted (lme4's ``fixed-effect model matrix is rank deficient so dropping ...``).

    Examples
    --------
    Every row with ``b = "v"`` has ``a = "p"``, so ``aq:bv`` is an empty cell:

    >>> import warnings, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7, 6, 2], "g": list("aabbccdd"), "a": list("pqpqpqpp"),
    ...                    "b": list("uuuuuuvv")})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     fit = lmer("y ~ a * b + (1|g)", df)
    >>> [w.category.__name__ for w in caught], fit.dropped_columns
    (['RankDeficientWarning'], ('aq:bv',))
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
