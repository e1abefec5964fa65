"""The small result type shared by every hypothesis test in mixeval.

Field names follow :mod:`scipy.stats` (``statistic``, ``pvalue``, ``df``,
``null_distribution``), so results can be used where scipy results are.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

__all__ = ["TestResult", "ConfidenceInterval"]


@dataclass(frozen=True)
class ConfidenceInterval:
    """A two-sided (or one-sided, with an infinite end) confidence interval."""

    low: float
    high: float
    level: float = 0.95
    method: str = ""

    def __iter__(self):
        yield self.low
        yield self.high


@dataclass(frozen=True)
class TestResult:
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
    """

    __test__ = False  # not a pytest test class

    statistic: float
    pvalue: float
    df: float | None = None
    null_distribution: np.ndarray | None = field(default=None, repr=False)
    alternative: str = "two-sided"
    method: str = ""
    estimate: float | None = None
    confidence_interval: ConfidenceInterval | None = None
    details: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-friendly dictionary of the result (no null distribution)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "null_distribution":
                continue
            if isinstance(value, ConfidenceInterval):
                value = [value.low, value.high]
            out[f.name] = _plain(value)
        return out

    def summary(self) -> str:
        """A short human-readable description."""
        parts = [f"{self.method or 'test'}: statistic = {self.statistic:.6g}"]
        if self.df is not None:
            parts.append(f"df = {self.df:.6g}")
        parts.append(f"p-value = {self.pvalue:.4g} ({self.alternative})")
        if self.estimate is not None:
            parts.append(f"estimate = {self.estimate:.6g}")
        if self.confidence_interval is not None:
            ci = self.confidence_interval
            parts.append(f"{100 * ci.level:g}% CI [{ci.low:.6g}, {ci.high:.6g}]")
        return ", ".join(parts)

    def _repr_html_(self) -> str:
        return "<p>" + self.summary() + "</p>"


def _plain(value: Any) -> Any:
    """Convert numpy scalars/arrays and nested containers to plain Python."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value
