"""The tests whose power is simulated, and their p-values from the numbers of each refit.

Stages: :func:`check_tests` validates what was asked (tests, margin, side); :func:`glrt_pvalues` turns the ML
deviances of the full and null refits into likelihood-ratio p-values; :func:`wald_pvalues` turns a contrast's
estimate, standard error and degrees of freedom into the p-values of the Wald test and of the equivalence
(TOST) and non-inferiority tests, as emmeans' ``test(..., delta, side)`` computes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..errors import InputError

__all__ = ["TESTS", "WALD_TESTS", "TestPlan", "check_tests", "glrt_pvalues", "wald_pvalues"]

#: The tests whose power :func:`mixeval.uncertainty.power_from_components` and ``Study.power`` simulate.
TESTS = ("glrt", "pairwise", "equivalence", "noninferiority")

#: The tests computed from a contrast's estimate, standard error and degrees of freedom.
WALD_TESTS = ("pairwise", "equivalence", "noninferiority")


@dataclass(frozen=True)
class TestPlan:
    """What is tested in every simulated data set.

    Attributes
    ----------
    tests : tuple of str
        Names from :data:`TESTS`.
    alpha : float
        The level: a test rejects when its p-value is below ``alpha``.
    margin : float or None
        The equivalence or non-inferiority margin (emmeans' ``delta``), on the scale of the contrast.
    lower_is_better : bool
        Non-inferiority when smaller is better (emmeans' ``side = "<"``).
    """

    tests: tuple[str, ...]
    alpha: float
    margin: float | None = None
    lower_is_better: bool = False

    @property
    def glrt(self) -> bool:
        return "glrt" in self.tests

    @property
    def wald(self) -> bool:
        return any(t in WALD_TESTS for t in self.tests)

    def hypothesis(self, test: str, contrast: str) -> str:
        """The null hypothesis of ``test`` in words, for the result's notes."""
        m = self.margin
        if test == "glrt":
            return "glrt: the system effect is 0 (likelihood-ratio chi-square of ML fits with and without it)"
        if test == "pairwise":
            return f"pairwise: {contrast} = 0 (two-sided Wald test)"
        if test == "equivalence":
            return f"equivalence: |{contrast}| >= {m:g} (TOST, p = the larger one-sided p-value)"
        if self.lower_is_better:
            return f"noninferiority: {contrast} >= {m:g} (smaller is better; one-sided)"
        return f"noninferiority: {contrast} <= -{m:g} (larger is better; one-sided)"


def check_tests(test: str | Sequence[str], alpha: float, margin: float | None, lower_is_better: bool) -> TestPlan:
    """The :class:`TestPlan` of ``test`` (a name or several), refusing margins and sides that no test uses.

    Examples
    --------
    >>> check_tests(["glrt", "equivalence"], 0.05, 0.5, False).tests
    ('glrt', 'equivalence')
    >>> check_tests("pairwise", 0.05, 0.5, False)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    mixeval.errors.InputError: margin=0.5 is the margin of test='equivalence' or test='noninferiority';
    test='pairwise' does not use it: drop margin= or add one of those tests.
    """
    names = (test,) if isinstance(test, str) else tuple(test)
    if not names:
        raise InputError(f"test= names no test; use one or more of {', '.join(TESTS)}.")
    for name in names:
        if not isinstance(name, str) or name not in TESTS:
            raise InputError(f"test must be one of {', '.join(TESTS)} (or a list of them); got {name!r}.")
    if len(set(names)) != len(names):
        raise InputError(f"test= names a test twice: {list(names)}.")
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise InputError(f"alpha must be a number in (0, 1); got {alpha!r}.") from None
    if not 0.0 < a < 1.0:
        raise InputError(f"alpha must lie in (0, 1); got {alpha!r}.")
    needs = [t for t in names if t in ("equivalence", "noninferiority")]
    if needs and margin is None:
        raise InputError(f"test={needs[0]!r} needs margin= (emmeans' delta): the largest difference that counts as "
                         "no difference, on the scale of the contrast (e.g. margin=0.2 on the log-odds scale).")
    if margin is not None:
        if not needs:
            shown = names[0] if len(names) == 1 else list(names)
            raise InputError(f"margin={margin!r} is the margin of test='equivalence' or test='noninferiority'; "
                             f"test={shown!r} does not use it: drop margin= or add one of those tests.")
        try:
            m = float(margin)
        except (TypeError, ValueError):
            raise InputError(f"margin must be a positive number; got {margin!r}.") from None
        if not (np.isfinite(m) and m > 0):
            raise InputError(f"margin must be a positive, finite number (the margin on either side of 0); got {margin!r}.")
        margin = m
    if not isinstance(lower_is_better, (bool, np.bool_)):
        raise InputError(f"lower_is_better must be True or False; got {lower_is_better!r}.")
    if lower_is_better and "noninferiority" not in names:
        raise InputError("lower_is_better=True says which side a non-inferiority test takes; add "
                         "test='noninferiority' or drop it.")
    return TestPlan(tests=names, alpha=a, margin=margin, lower_is_better=bool(lower_is_better))


def glrt_pvalues(null_deviance: np.ndarray, full_deviance: np.ndarray, df: int) -> np.ndarray:
    """``P(chi2_df >= W)`` with ``W = max(D_null - D_full, 0)`` (Wilks; NaN where a refit failed).

    Examples
    --------
    >>> glrt_pvalues(np.array([103.84, 100.0]), np.array([100.0, 100.0]), 1).round(4).tolist()
    [0.05, 1.0]
    """
    w = np.maximum(np.asarray(null_deviance, dtype=float) - np.asarray(full_deviance, dtype=float), 0.0)
    return stats.chi2.sf(w, df)


def _upper(x: np.ndarray, df: np.ndarray) -> np.ndarray:
    """``P(T_df >= x)``, the standard normal where ``df`` is infinite."""
    finite = np.isfinite(df)
    return np.where(finite, stats.t.sf(x, np.where(finite, df, 1.0)), stats.norm.sf(x))


def wald_pvalues(plan: TestPlan, estimate: np.ndarray, se: np.ndarray, df: np.ndarray) -> dict[str, np.ndarray]:
    """p-values of the plan's contrast tests from each refit's ``estimate``, ``se`` and ``df`` (``inf``: z).

    Notes
    -----
    ``pairwise``: ``2 P(T >= |est| / se)``. ``equivalence`` (TOST, Schuirmann 1987; emmeans' ``side =
    "equivalence"``): ``P(T <= (|est| - delta) / se)``, the larger of the two one-sided p-values. ``noninferiority``
    (emmeans' ``side = ">"``): ``P(T >= (est + delta) / se)``; smaller is better (``side = "<"``):
    ``P(T <= (est - delta) / se)``.

    Examples
    --------
    >>> plan = TestPlan(("pairwise", "equivalence"), 0.05, margin=1.0)
    >>> p = wald_pvalues(plan, np.array([0.2]), np.array([0.5]), np.array([np.inf]))
    >>> round(float(p["pairwise"][0]), 4), round(float(p["equivalence"][0]), 4)
    (0.6892, 0.0548)
    """
    est, se, df = (np.asarray(v, dtype=float) for v in (estimate, se, df))
    m = plan.margin
    out = {}
    for test in plan.tests:
        if test == "pairwise":
            out[test] = np.minimum(2.0 * _upper(np.abs(est) / se, df), 1.0)
        elif test == "equivalence":
            out[test] = _upper(-(np.abs(est) - m) / se, df)
        elif test == "noninferiority":
            out[test] = _upper(-(est - m) / se, df) if plan.lower_is_better else _upper((est + m) / se, df)
    return out
