"""The convention every result of mixeval follows, and the result of every hypothesis test.

:class:`Result` is the base of the result types: frozen dataclasses with unrounded numbers and

* ``summary() -> str``: the human-readable text (also ``str(result)``);
* ``_repr_html_()``: the notebook view (by default the summary in ``<pre>``; results whose heart is a
  table show the table);
* ``to_dict() -> dict``: every field as plain Python, JSON-safe (``json.dumps(..., allow_nan=False)``
  works): numbers unrounded, NaN and infinities as ``None``, arrays as lists, DataFrames as lists of
  records, a :class:`ConfidenceInterval` as ``[low, high]``; fields listed in ``_dict_exclude``
  (large resampling arrays) and private fields are left out;
* ``==`` by value (arrays and tables compared element-wise, NaN equal to NaN); results are not hashable.

:class:`TestResult`'s field names follow :mod:`scipy.stats` (``statistic``, ``pvalue``, ``df``,
``null_distribution``), so results can be used where scipy results are.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ._format import PVALUE_FLOOR, format_number, format_pvalue, is_pvalue_column, pvalue_formatters  # noqa: F401

__all__ = ["Result", "TestResult", "ConfidenceInterval", "to_plain", "format_pvalue", "is_pvalue_column",
           "pvalue_formatters"]


class Result:
    """Base of mixeval's result types (see the module docstring for the convention).

    Subclasses are ``@dataclass(frozen=True, eq=False)`` (``eq=False`` keeps this class's value
    equality) and define :meth:`summary`.
    """

    _dict_exclude: ClassVar[tuple[str, ...]] = ()

    def summary(self) -> str:
        """The human-readable text of the result."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        return "<pre>" + html.escape(self.summary()) + "</pre>"

    def to_dict(self) -> dict[str, Any]:
        """Every field (but ``_dict_exclude`` and private ones) as plain, JSON-safe Python; numbers unrounded."""
        return {f.name: to_plain(getattr(self, f.name)) for f in fields(self)  # type: ignore[arg-type]
                if f.name not in self._dict_exclude and not f.name.startswith("_")}

    def __eq__(self, other: object) -> bool:
        """Field by field (but ``compare=False`` ones); arrays and tables compare by value, NaN equal to NaN."""
        if type(other) is not type(self):
            return NotImplemented
        return all(_equal(getattr(self, f.name), getattr(other, f.name))
                   for f in fields(self) if f.compare)  # type: ignore[arg-type]

    __hash__ = None  # type: ignore[assignment]  # mutable contents (details, arrays, tables)


@dataclass(frozen=True)
class ConfidenceInterval:
    """A two-sided (or one-sided, with an infinite end) confidence interval: the one interval type of the
    package (tables carry the same names as columns: ``lower``, ``upper``, and ``level`` in their ``attrs``).

    Attributes
    ----------
    lower, upper : float
    level : float
    method : str
        How the interval was made (``"t"``, ``"basic bootstrap on the logit scale"``, ...).
    estimate, se : float
        The point estimate and its standard error where the interval has them (NaN otherwise).

    Examples
    --------
    >>> ci = ConfidenceInterval(0.26, 0.94, level=0.95, method="t")
    >>> lower, upper = ci                   # unpacks as (lower, upper)
    >>> lower, upper, ci.level
    (0.26, 0.94, 0.95)
    """

    lower: float
    upper: float
    level: float = 0.95
    method: str = ""
    estimate: float = float("nan")
    se: float = float("nan")

    def __iter__(self):
        yield self.lower
        yield self.upper


@dataclass(frozen=True, eq=False)
class TestResult(Result):
    """Outcome of a hypothesis test.

    Attributes
    ----------
    statistic : float
        The observed test statistic.
    pvalue : float
        The p-value (never rounded; resampling p-values use ``(c + 1) / (R + 1)``).
    df : float or None
        Degrees of freedom of the reference distribution, where there is one.
    null_distribution : numpy.ndarray or None
        Resampled statistics under the null hypothesis, for resampling tests.
    alternative : str
        ``"two-sided"``, ``"less"`` or ``"greater"``.
    method : str
        A short description of the test.
    estimate : float or None
        The estimated effect (e.g. a mean difference) where the test has one.
    confidence_interval : ConfidenceInterval or None
        A confidence interval for ``estimate`` where one is computed.
    details : dict
        Further numbers specific to the test (never rounded).

    Examples
    --------
    >>> from mixeval.resampling import paired_t_test
    >>> r = paired_t_test([1.0, 2.0, 3.0, 4.0], [0.5, 1.6, 2.4, 3.1])
    >>> round(r.statistic, 4), r.df, round(r.pvalue, 4), r.estimate
    (5.5549, 3.0, 0.0115, 0.6)
    >>> print(r.summary())
    paired t-test: statistic = 5.555, df = 3, p-value = 0.0115 (two-sided), estimate = 0.6, 95% CI [0.2563, 0.9437]
    """

    __test__ = False  # not a pytest test class
    _dict_exclude: ClassVar[tuple[str, ...]] = ("null_distribution",)

    statistic: float
    pvalue: float
    df: float | None = None
    null_distribution: np.ndarray | None = field(default=None, repr=False)
    alternative: str = "two-sided"
    method: str = ""
    estimate: float | None = None
    confidence_interval: ConfidenceInterval | None = None
    details: dict[str, Any] = field(default_factory=dict, repr=False)

    def summary(self) -> str:
        """A short human-readable description."""
        parts = [f"{self.method or 'test'}: statistic = {format_number(self.statistic)}"]
        if self.df is not None:
            parts.append(f"df = {format_number(self.df)}")
        side = self.alternative if self.alternative == "two-sided" else f"one-sided, {self.alternative}"
        parts.append(f"p-value {format_pvalue(self.pvalue, relation=True)} ({side})")
        if self.estimate is not None:
            parts.append(f"estimate = {format_number(self.estimate)}")
        if self.confidence_interval is not None:
            ci = self.confidence_interval
            parts.append(f"{100 * ci.level:g}% CI [{format_number(ci.lower)}, {format_number(ci.upper)}]")
        return ", ".join(parts)


def to_plain(value: Any) -> Any:
    """``value`` as plain, JSON-safe Python (the rules of :meth:`Result.to_dict`).

    Examples
    --------
    >>> to_plain({"p": np.float64(0.5), "ci": ConfidenceInterval(0.1, np.inf), "x": np.array([1, 2])})
    {'p': 0.5, 'ci': [0.1, None], 'x': [1, 2]}
    """
    if value is None or (isinstance(value, (bool, str, int)) and not isinstance(value, np.generic)):
        return value
    if isinstance(value, (float, np.floating)):
        x = float(value)
        return x if math.isfinite(x) else None
    if isinstance(value, (np.integer, np.bool_)):
        return value.item()
    if isinstance(value, ConfidenceInterval):
        return [to_plain(value.lower), to_plain(value.upper)]
    if isinstance(value, Result):
        return value.to_dict()
    if isinstance(value, pd.DataFrame):
        return [to_plain(row) for row in value.to_dict(orient="records")]
    if isinstance(value, pd.Series):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return [to_plain(v) for v in value.tolist()]
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_plain(v) for v in value]
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in fields(value)}
    return str(value)


def _equal(a: Any, b: Any) -> bool:
    """Equality of result fields: arrays and tables by value (NaN equal to NaN), containers element-wise."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.shape != b.shape:
            return False
        try:
            return bool(np.array_equal(a, b, equal_nan=True))
        except TypeError:  # object arrays
            return bool(np.array_equal(a, b))
    if isinstance(a, (pd.DataFrame, pd.Series)) or isinstance(b, (pd.DataFrame, pd.Series)):
        return type(a) is type(b) and a.equals(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return bool(a == b)
