"""Goyal et al.'s interval from summary numbers: :func:`metric_ci` and its result :class:`MetricCI`."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from .._format import format_number
from .._results import ConfidenceInterval, TestResult
from .._validation import as_1d_float, require_level, require_positive_int, require_probability
from ..errors import InputError, InputTypeError, MixevalWarning, caller_stacklevel
from . import _core
from ._model import MetricModel

__all__ = ["MetricCI", "metric_ci"]

_ESTIMAND_OBS = "difference in observed rates"
_ESTIMAND_TRUE = "difference in true rates"


def _z(level: float) -> float:
    level = require_level(level)
    return float(stats.norm.ppf(0.5 + level / 2))


@dataclass(frozen=True, eq=False)
class MetricCI(TestResult):
    """Goyal et al.'s comparison of two systems scored by a metric model.

    ``estimate``/``confidence_interval``/``statistic``/``pvalue`` are the paper's
    (Eq. 14: observed ATE, model-based variance); the other fields give the
    uncorrected analysis (Eqs. 5-8) and the calibrated alternatives. All unrounded.

    Attributes
    ----------
    ate : float
        Observed difference of positive rates, treatment minus control (Eqs. 3-4).
    var_control, var_treatment : float
        Eq. 13, ``p_R (1 - p_R) / (N - 1)`` per system.
    var_control_uncorrected, var_treatment_uncorrected : float
        Eqs. 5-6, ``p_O (1 - p_O) / (N - 1)``.
    ci_uncorrected : ConfidenceInterval
        Eq. 8.
    p_true_control, p_true_treatment : float
        Corrected rates ``p_R`` (Eq. 10 / 17).
    ate_corrected, se_corrected : float
        Calibrated difference ``p_R,T - p_R,C`` and its sampling standard error with
        the rates as known constants.
    ci_corrected : ConfidenceInterval
        Wald interval of the calibrated difference (rates known).
    se_delta : float or None
        Standard error adding the delta-method variance of estimated rates (only when the
        metric model was built from counts).
    ci_delta : ConfidenceInterval or None
        Wald interval with ``se_delta``.

    Examples
    --------
    >>> r = metric_ci(0.00456, 0.00236, 23679, metric=MetricModel.from_rates(0.8897, 0.22769))  # Table 1, BOLD
    >>> [round(x, 5) for x in r.confidence_interval]     # the paper's CI_M
    [-0.00978, 0.00538]
    >>> [round(x, 5) for x in r.ci_corrected]            # calibrated, for the difference in true rates
    [-0.00216, -0.00076]
    """

    ate: float = float("nan")
    var_control: float = float("nan")
    var_treatment: float = float("nan")
    var_control_uncorrected: float = float("nan")
    var_treatment_uncorrected: float = float("nan")
    ci_uncorrected: ConfidenceInterval | None = None
    p_true_control: float = float("nan")
    p_true_treatment: float = float("nan")
    ate_corrected: float = float("nan")
    se_corrected: float = float("nan")
    ci_corrected: ConfidenceInterval | None = None
    se_delta: float | None = None
    ci_delta: ConfidenceInterval | None = field(default=None)

    def summary(self) -> str:  # noqa: D102 - inherited doc
        ci, cu = self.confidence_interval, self.ci_uncorrected
        lines = [
            f"ATE (observed, treatment - control) = {format_number(self.ate)}",
            f"  uncorrected (Eqs. 5-8): Var_C = {format_number(self.var_control_uncorrected)}, "
            f"Var_T = {format_number(self.var_treatment_uncorrected)}, "
            f"{100 * cu.level:g}% CI [{format_number(cu.lower)}, {format_number(cu.upper)}]",
            f"  Goyal et al. (Eq. 14):  Var_C = {format_number(self.var_control)}, "
            f"Var_T = {format_number(self.var_treatment)}, "
            f"{100 * ci.level:g}% CI [{format_number(ci.lower)}, {format_number(ci.upper)}]",
            f"calibrated ATE (true rates) = {format_number(self.ate_corrected)}, "
            f"SE = {format_number(self.se_corrected)}, "
            f"CI [{format_number(self.ci_corrected.lower)}, {format_number(self.ci_corrected.upper)}]",
        ]
        if self.ci_delta is not None:
            lines.append(
                f"  + rate uncertainty (delta): SE = {format_number(self.se_delta)}, "
                f"CI [{format_number(self.ci_delta.lower)}, {format_number(self.ci_delta.upper)}]"
            )
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return "<pre>" + self.summary() + "</pre>"


def _proportions(p: float | Sequence[float], metric: MetricModel, name: str) -> np.ndarray:
    """Class proportions from a binary positive rate or a K-vector of proportions."""
    k = metric.n_classes
    if np.ndim(p) == 0:
        if k != 2:
            raise InputError(
                f"`{name}` is a single rate but the metric model has {k} classes; give the {k} "
                "observed class proportions instead."
            )
        x = require_probability(p, name)
        return np.array([1.0 - x, x])
    arr = as_1d_float(p, name)
    if arr.size != k:
        raise InputError(f"`{name}` needs {k} class proportions (one per observed class); got {arr.size}.")
    if np.any(arr < 0) or abs(arr.sum() - 1.0) > 1e-8:
        raise InputError(f"`{name}` must be non-negative proportions summing to 1; they sum to {arr.sum():.6g}.")
    return arr


def _mask(metric: MetricModel) -> np.ndarray:
    m = np.zeros(metric.n_classes)
    m[list(metric.positive_classes)] = 1.0
    return m


def _ci(est: float, se: float, z: float, level: float, method: str) -> ConfidenceInterval:
    return ConfidenceInterval(float(est - z * se), float(est + z * se), level, method)


def _warn_zero_width(standard_errors: dict[str, float]) -> None:
    """A plug-in binomial variance is 0 when every observed rate is 0 (or 1): the interval is a point, not certainty."""
    flat = [name for name, se in standard_errors.items() if se == 0]
    if flat:
        warnings.warn(f"the {' and '.join(flat)} interval(s) have zero width: every observed rate is 0 (or 1), whose "
                      "plug-in binomial variance is 0. That is not certainty: with no observed positives use the "
                      "Goyal interval (Eq. 14) or an exact (Clopper-Pearson) or Wilson interval per rate, or score "
                      "more outputs.", MixevalWarning, stacklevel=caller_stacklevel())


def metric_ci(
    p_control: float | Sequence[float],
    p_treatment: float | Sequence[float],
    n_control: int,
    n_treatment: int | None = None,
    *,
    metric: MetricModel,
    level: float = 0.95,
) -> MetricCI:
    """Confidence interval for the difference of two systems scored by a metric model.

    Two independent samples of outputs (control C, treatment T) were labelled by a
    metric model with known or estimated ``q_o = P(R=1 | O=o)``. Returns the paper's
    interval (Goyal et al. 2023, Eqs. 9-14), the uncorrected one (Eqs. 5-8) and the
    calibrated alternatives side by side.

    Parameters
    ----------
    p_control, p_treatment : float or sequence of float
        Observed positive rate of each system (binary metric), or the proportions of
        each observed class (multi-class, A.2).
    n_control : int
        Number of scored outputs of the control system (>= 2).
    n_treatment : int, optional
        Number of outputs of the treatment system; defaults to ``n_control``.
    metric : MetricModel
        The metric model's error description.
    level : float
        Confidence level in (0, 1).

    Returns
    -------
    MetricCI
        ``estimate`` is the observed ATE and ``confidence_interval`` Eq. 14's interval;
        the other fields are described in :class:`MetricCI`.

    Notes
    -----
    With ``p_R = q . p_O`` (Eq. 10, ``= prec p_O + FOR (1 - p_O)`` for a binary metric):

    * paper, Eq. 13: ``Var^M = p_R (1 - p_R) / (N - 1)``, interval
      ``ATE_obs +/- z sqrt(Var^M_C + Var^M_T)``. This is the variance of the mean of N
      *true* labels -- the variance one would have with gold labels -- not the
      sampling variance of an estimator computed from the metric's labels. By
      ``Var(R) = E[Var(R|O)] + Var(E[R|O])`` it exceeds the calibrated variance below by
      ``E[Var(R|O)] / (N - 1)``; and the interval is centred at the *observed*
      difference, whose expectation is ``(prec - FOR)^-1`` times the true difference.
    * uncorrected, Eqs. 5-8: ``p_O (1 - p_O) / (N - 1)``; exact for the difference of
      *observed* rates. If both systems share the metric's ``q`` (transportability),
      true difference = ``(prec - FOR) x`` observed difference, so the test of "no
      difference" is exactly valid -- only the size of the effect needs correcting.
    * calibrated: ``theta = p_R,T - p_R,C`` with
      ``Var = sum_s (q^2 . p_s - p_R,s^2) / (N_s - 1)``
      (binary: ``(prec - FOR)^2 p_O (1 - p_O) / (N - 1)``); calibrated for the true
      difference when ``q`` is known and transportable.
    * delta: adds ``sum_o (p_T,o - p_C,o)^2 q_o (1 - q_o) / n_o`` for rates estimated
      from ``n_o`` annotated items (test set independent of the evaluated outputs).

    With a perfect metric (precision 1, FOR 0) all variances equal Eq. 5 (A.1).

    Examples
    --------
    >>> from mixeval.metric_model import MetricModel, metric_ci
    >>> m = MetricModel.from_rates(precision=0.8897, false_omission_rate=0.22769)
    >>> r = metric_ci(0.00456, 0.00236, 23679, metric=m)   # Goyal et al. Table 1, BOLD
    >>> [round(x, 5) for x in r.confidence_interval]
    [-0.00978, 0.00538]
    >>> [round(x, 5) for x in r.ci_uncorrected]
    [-0.00326, -0.00114]
    """
    if not isinstance(metric, MetricModel):
        raise InputTypeError(f"`metric` must be a MetricModel; got {type(metric).__name__}.")
    z = _z(level)
    n_c = require_positive_int(n_control, "n_control", minimum=2)
    n_t = n_c if n_treatment is None else require_positive_int(n_treatment, "n_treatment", minimum=2)
    p_c = _proportions(p_control, metric, "p_control")
    p_t = _proportions(p_treatment, metric, "p_treatment")
    q = np.asarray(metric.rates)
    vq = metric.rate_variances()
    pos = _mask(metric)
    mom = _core.unpaired_moments(p_c, p_t, n_c, n_t, q, q, pos, pos, vq, vq, shared=True)
    ate = float(mom.ate)
    se_m = float(np.sqrt(mom.var_goyal))
    se_d = float(np.sqrt(mom.var_obs))
    se_c = float(np.sqrt(mom.var_cal))
    est_c = float(mom.ate_corrected)
    se_delta = ci_delta = None
    if metric.has_uncertainty:
        se_delta = float(np.sqrt(mom.var_cal + mom.var_rates))
        ci_delta = _ci(est_c, se_delta, z, level, "calibrated + delta method for estimated rates")
    _warn_zero_width({"uncorrected": se_d, "calibrated": se_c})
    stat = ate / se_m if se_m > 0 else float("nan")
    return MetricCI(
        statistic=stat,
        pvalue=float(2 * stats.norm.sf(abs(stat))) if np.isfinite(stat) else float("nan"),
        method="Goyal et al. (2023) model-based metric interval (Eq. 14)",
        estimate=ate,
        confidence_interval=_ci(ate, se_m, z, level, "goyal"),
        details={"n_control": n_c, "n_treatment": n_t, "rates": metric.rates, "level": level},
        ate=ate,
        var_control=float(mom.var_goyal_c),
        var_treatment=float(mom.var_goyal_t),
        var_control_uncorrected=float(mom.var_obs_c),
        var_treatment_uncorrected=float(mom.var_obs_t),
        ci_uncorrected=_ci(ate, se_d, z, level, "uncorrected"),
        p_true_control=float(mom.pr_c),
        p_true_treatment=float(mom.pr_t),
        ate_corrected=est_c,
        se_corrected=se_c,
        ci_corrected=_ci(est_c, se_c, z, level, "calibrated"),
        se_delta=se_delta,
        ci_delta=ci_delta,
    )
