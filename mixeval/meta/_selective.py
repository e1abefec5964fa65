"""Selective answering: accuracy-coverage curve by MaxProb, its AUC, and DiSCA / DiDMA / NiDMA.

Implements Mishra, Arunkumar & Baral, *Investigating the Failure Modes of the AUC
metric and Exploring Alternatives for Evaluating Systems in Safety Critical
Applications* (arXiv:2210.04466), Eqs. 1-3, as read in ``DESIGN.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._results import Result
from .._validation import as_1d_float, require_probability
from ..errors import InputError, InputTypeError

__all__ = [
    "CoverageCurve",
    "DiscaResult",
    "accuracy_coverage_curve",
    "selective_auc",
    "disca",
    "didma",
    "nidma",
    "parse_weights",
    "plot_accuracy_coverage",
]

_WEIGHT_TOL = 1e-6


# ----------------------------------------------------------------------------- validation


def _confidence_array(confidence: object) -> np.ndarray:
    conf = as_1d_float(confidence, "confidence")
    bad = (conf < 0.0) | (conf > 1.0)
    if bad.any():
        idx = np.flatnonzero(bad)
        examples = ", ".join(f"{conf[i]:g} (position {i})" for i in idx[:3])
        raise InputError(
            f"`confidence` must lie in [0, 1] (a MaxProb, the largest softmax probability); "
            f"{idx.size} value(s) do not, e.g. {examples}. Pass probabilities, not logits or "
            "percentages (divide percentages by 100, apply a softmax to logits)."
        )
    return conf


def _correct_array(correct: object, n: int) -> np.ndarray:
    try:
        arr = np.asarray(correct)
    except Exception:  # pragma: no cover - numpy accepts nearly anything
        raise InputTypeError("`correct` must be a sequence of 0/1 or True/False values.") from None
    if arr.dtype == object or arr.dtype.kind in "USO":
        raise InputTypeError(
            f"`correct` must hold 0/1 or True/False values; got dtype {arr.dtype}. "
            "Convert it, e.g. (data['prediction'] == data['label']).astype(int)."
        )
    values = as_1d_float(arr, "correct")
    if values.size != n:
        raise InputError(
            f"`confidence` and `correct` must have the same length; got {n} and {values.size}."
        )
    bad = (values != 0.0) & (values != 1.0)
    if bad.any():
        example = values[np.flatnonzero(bad)[:3]].tolist()
        raise InputError(
            f"`correct` must hold only 0/1 (or True/False); {int(bad.sum())} value(s) do not, "
            f"e.g. {example}."
        )
    return values.astype(bool)


def parse_weights(weights: object, count: int, argument: str = "weights") -> tuple[float, ...]:
    """Validate a weight vector: ``count`` finite non-negative numbers summing to 1.

    ``weights`` may be a sequence of numbers or a comma-separated string, whose
    entries may be fractions such as ``"1/3,1/3,1/3"``.

    Examples
    --------
    >>> parse_weights("1/3,1/3,1/3", 3)
    (0.3333333333333333, 0.3333333333333333, 0.3333333333333333)
    >>> parse_weights([0.5, 0.5], 2)
    (0.5, 0.5)
    """
    if isinstance(weights, str):
        parts = [p.strip() for p in weights.split(",")]
        try:
            values = [float(Fraction(p)) for p in parts]
        except (ValueError, ZeroDivisionError):
            raise InputError(
                f"`{argument}` must be {count} comma-separated numbers such as "
                f"{','.join(['1/' + str(count)] * count)}; got {weights!r}."
            ) from None
    else:
        try:
            values = [float(w) for w in weights]  # type: ignore[attr-defined]  # any iterable; TypeError below
        except TypeError:
            raise InputTypeError(f"`{argument}` must be a sequence of {count} numbers; got {weights!r}.") from None
    if len(values) != count:
        raise InputError(f"`{argument}` must have {count} entries; got {len(values)} ({values}).")
    if not all(math.isfinite(v) and v >= 0.0 for v in values):
        raise InputError(f"`{argument}` must be finite and non-negative; got {values}.")
    total = math.fsum(values)
    if abs(total - 1.0) > _WEIGHT_TOL:
        raise InputError(
            f"`{argument}` must sum to 1; {values} sums to {total:.10g}. "
            f"For equal weights use {', '.join(['1/' + str(count)] * count)} (fractions are accepted "
            "as strings, e.g. '1/3,1/3,1/3')."
        )
    return tuple(values)


# ----------------------------------------------------------------------------- the curve


@dataclass(frozen=True, eq=False)
class CoverageCurve(Result):
    """Accuracy-coverage curve of selective answering by MaxProb.

    One point per distinct confidence value ``t`` (highest first): the system
    answers every question with confidence ``>= t``. Answers tied in confidence
    enter the curve together, as one step.

    Attributes
    ----------
    threshold : numpy.ndarray
        Distinct confidence values, strictly decreasing.
    n_answered, n_correct : numpy.ndarray
        Number of answered questions, and of correct ones among them, at each threshold.
    n_total : int
        Number of questions.

    Examples
    --------
    >>> import numpy as np
    >>> curve = accuracy_coverage_curve(np.array([0.9, 0.8, 0.7, 0.6]), np.array([1, 1, 0, 1]))
    >>> curve.coverage.tolist(), curve.accuracy.round(4).tolist()
    ([0.25, 0.5, 0.75, 1.0], [1.0, 1.0, 0.6667, 0.75])
    """

    threshold: np.ndarray
    n_answered: np.ndarray
    n_correct: np.ndarray
    n_total: int

    @property
    def coverage(self) -> np.ndarray:
        """Fraction of questions answered at each threshold."""
        return self.n_answered / self.n_total

    @property
    def accuracy(self) -> np.ndarray:
        """Accuracy among the answered questions at each threshold."""
        return self.n_correct / self.n_answered

    def auc(self, method: str = "step") -> float:
        """Area under accuracy over coverage in [0, 1]; see :func:`selective_auc`."""
        cov = self.coverage
        acc = self.accuracy
        widths = np.diff(np.concatenate(([0.0], cov)))
        if method == "step":
            return float(np.sum(widths * acc))
        if method == "trapezoid":
            previous = np.concatenate(([acc[0]], acc[:-1]))
            return float(np.sum(widths * (acc + previous) / 2.0))
        raise InputError(f"`method` must be 'step' or 'trapezoid'; got {method!r}.")

    def to_frame(self) -> pd.DataFrame:
        """The curve as a table: threshold, n_answered, n_correct, coverage, accuracy."""
        return pd.DataFrame(
            {
                "threshold": self.threshold,
                "n_answered": self.n_answered,
                "n_correct": self.n_correct,
                "coverage": self.coverage,
                "accuracy": self.accuracy,
            }
        )

    def __repr__(self) -> str:
        return (
            f"CoverageCurve({self.threshold.size} steps, {self.n_total} questions, "
            f"accuracy at full coverage {self.accuracy[-1]:.4g}, AUC {self.auc():.4g})"
        )

    def summary(self) -> str:
        """The curve as a text table (threshold, answered, correct, coverage, accuracy)."""
        return f"accuracy-coverage curve ({self.n_total} answers)\n" + self.to_frame().to_string(index=False)

    def _repr_html_(self) -> str:
        return self.to_frame().to_html(index=False)


def accuracy_coverage_curve(confidence: object, correct: object) -> CoverageCurve:
    """Accuracy-coverage curve of a system that answers its most confident questions first.

    Parameters
    ----------
    confidence : array_like of float
        MaxProb of each answer (the largest softmax probability), in [0, 1].
    correct : array_like of bool or {0, 1}
        Whether each answer is correct.

    Returns
    -------
    CoverageCurve
        One point per distinct confidence value, highest first.

    Notes
    -----
    With distinct confidences ``t_1 > t_2 > ... > t_K``, step ``k`` answers
    ``A_k = {i : confidence_i >= t_k}``; its coverage is ``|A_k| / N`` and its
    accuracy ``sum_{i in A_k} correct_i / |A_k|``. Questions tied in confidence
    cannot be separated by any threshold, so they enter the curve together.

    Examples
    --------
    >>> curve = accuracy_coverage_curve([0.9, 0.8, 0.8, 0.6], [1, 1, 0, 1])
    >>> curve.coverage.tolist(), curve.accuracy.round(4).tolist()
    ([0.25, 0.75, 1.0], [1.0, 0.6667, 0.75])
    """
    conf = _confidence_array(confidence)
    ok = _correct_array(correct, conf.size)
    order = np.argsort(-conf, kind="stable")
    conf_sorted = conf[order]
    cum_correct = np.cumsum(ok[order])
    # last position of every run of equal confidences
    last = np.flatnonzero(np.append(conf_sorted[1:] != conf_sorted[:-1], True))
    return CoverageCurve(
        threshold=conf_sorted[last],
        n_answered=last + 1,
        n_correct=cum_correct[last],
        n_total=int(conf.size),
    )


def selective_auc(confidence: object, correct: object, *, method: str = "step") -> float:
    """Area under the accuracy-coverage curve (MaxProb), over coverage in [0, 1].

    Parameters
    ----------
    confidence, correct
        As in :func:`accuracy_coverage_curve`.
    method : {"step", "trapezoid"}
        ``"step"`` (default): accuracy is constant on each coverage interval
        ``(c_{k-1}, c_k]``; without ties this is the mean over ``i = 1..N`` of the
        accuracy of the ``i`` most confident answers. ``"trapezoid"``: linear
        interpolation between the points, with the first point's accuracy held
        constant on ``[0, c_1]``.

    Returns
    -------
    float
        The AUC, in [0, 1]: 1 if every answer is correct, 0 if none is, the overall
        accuracy if all confidences are tied.

    Notes
    -----
    ``AUC_step = sum_k (c_k - c_{k-1}) acc_k`` with ``c_0 = 0``;
    ``AUC_trapezoid = c_1 acc_1 + sum_{k >= 2} (c_k - c_{k-1}) (acc_k + acc_{k-1}) / 2``.

    Examples
    --------
    >>> selective_auc([0.9, 0.8, 0.7], [1, 0, 1])  # (1 + 1/2 + 2/3) / 3
    0.7222222222222222
    """
    return accuracy_coverage_curve(confidence, correct).auc(method)


# ----------------------------------------------------------------------------- DiSCA


@dataclass(frozen=True, eq=False)
class DiscaResult(Result):
    """DiSCA score of one system and its terms (unrounded).

    Attributes
    ----------
    disca : float
        ``x / a + y / b - z * fluctuation_penalty``.
    auc : float
        Area under the accuracy-coverage curve (step rule, see :func:`selective_auc`).
    a : float
        MaxProb at which accuracy first drops below 100% (lowest MaxProb if it never does).
    b : float
        Lowest MaxProb cut-off whose accuracy (and that of every higher cut-off) is still
        admissible, i.e. ``>= tolerance`` (lowest MaxProb if accuracy never drops below
        the tolerance; highest MaxProb if even the highest cut-off is inadmissible).
    n : int
        Number of increases of accuracy with increasing coverage (curve fluctuations).
    fluctuation_penalty : float
        ``sum_i (n - i + 1) (d2_i - d1_i) / c_i / sum_i (n - i + 1)`` (0 when ``n = 0``).
    accuracy_dropped : bool
        Whether accuracy ever drops below 100% (if not, ``a`` is the lowest MaxProb).
    tolerance_admissible : bool
        Whether at least one cut-off reaches the tolerance (if not, ``b`` is the highest MaxProb).
    weights : tuple of float
        ``(x, y, z)``.
    tolerance : float
        Worst admissible accuracy used for ``b``.
    min_gap : float
        Floor of the MaxProb gap ``c_i``.
    curve : CoverageCurve
        The curve all terms are read from.

    Examples
    --------
    >>> import numpy as np
    >>> r = disca(np.array([0.9, 0.8, 0.7, 0.6]), np.array([1, 1, 0, 1]), tolerance=0.9)
    >>> r.a, r.b, r.n, round(r.disca, 4)
    (0.7, 0.8, 1, 0.6151)
    """

    _dict_exclude: ClassVar[tuple[str, ...]] = ("curve",)  # to_dict: the numbers, not the curve

    disca: float
    auc: float
    a: float
    b: float
    n: int
    fluctuation_penalty: float
    accuracy_dropped: bool
    tolerance_admissible: bool
    weights: tuple[float, float, float]
    tolerance: float
    min_gap: float
    curve: CoverageCurve = field(repr=False)
    _fluct: tuple[np.ndarray, ...] = field(repr=False, default=())

    @property
    def fluctuations(self) -> pd.DataFrame:
        """One row per fluctuation ``i``: c1, c2, d1, d2, gap ``c``, weight ``n - i + 1``."""
        cols = ["coverage", "c1", "c2", "d1", "d2", "c", "weight"]
        if not self._fluct:
            return pd.DataFrame({c: pd.Series(dtype=float) for c in cols})
        return pd.DataFrame(dict(zip(cols, self._fluct)))

    def summary(self) -> str:
        """A short human-readable description."""
        x, y, z = self.weights
        lines = [
            f"DiSCA = {self.disca:.6g}  (x={x:.4g}, y={y:.4g}, z={z:.4g}; tolerance {self.tolerance:g})",
            f"  a = {self.a:.6g}" + ("" if self.accuracy_dropped else "  (accuracy never drops below 100%: lowest MaxProb)"),
            f"  b = {self.b:.6g}" + ("" if self.tolerance_admissible else "  (no cut-off reaches the tolerance: highest MaxProb)"),
            f"  n = {self.n} fluctuation(s), penalty {self.fluctuation_penalty:.6g}",
            f"  AUC = {self.auc:.6g}",
        ]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"DiscaResult(disca={self.disca:.6g}, auc={self.auc:.6g}, a={self.a:.6g}, "
            f"b={self.b:.6g}, n={self.n})"
        )



def disca(
    confidence: object,
    correct: object,
    *,
    tolerance: float = 0.9,
    weights: Sequence[float] | str = (1 / 3, 1 / 3, 1 / 3),
    min_gap: float = 0.001,
) -> DiscaResult:
    """DiSCA score (Deployment in Safety Critical Applications) of a selective answerer.

    Parameters
    ----------
    confidence : array_like of float
        MaxProb of each answer, in [0, 1].
    correct : array_like of bool or {0, 1}
        Whether each answer is correct.
    tolerance : float, default 0.9
        The worst accuracy the application admits, in (0, 1]; it defines ``b``.
    weights : sequence of 3 floats or str, default (1/3, 1/3, 1/3)
        ``(x, y, z)``, non-negative and summing to 1 (a string like ``"1/3,1/3,1/3"`` is accepted).
    min_gap : float, default 0.001
        Floor of the MaxProb gap ``c_i`` of a fluctuation (the paper's 0.001).

    Returns
    -------
    DiscaResult
        The score, its terms ``a``, ``b``, ``n``, the penalty and the AUC.

    Raises
    ------
    InputError
        Confidences outside [0, 1], ``correct`` not 0/1, weights not summing to 1,
        a tolerance outside (0, 1], or ``a`` or ``b`` equal to 0 with a positive weight
        (the score would be infinite).

    Notes
    -----
    The paper's Eq. 1, garbled by text extraction, is read (DESIGN.md) as

    ``DiSCA = x / a + y / b - z * [sum_{i=1}^n (n - i + 1) (d2_i - d1_i) / c_i] / [sum_{i=1}^n (n - i + 1)]``

    with ``c_i = max(c1_i - c2_i, min_gap)`` and ``x + y + z = 1``. All terms are read
    from the accuracy-coverage curve of :func:`accuracy_coverage_curve` (one step per
    distinct MaxProb ``t_1 > ... > t_K``; tied answers enter together, since no
    threshold separates them), walking from the most confident answer to full coverage:

    * ``a`` -- the MaxProb ``t_k`` of the first step whose accuracy is below 100%; this
      equals the highest MaxProb of any wrong answer. If every answer is correct, ``a``
      is the lowest MaxProb ``t_K`` (the convention the paper's Figure 1 uses for ``b``).
      A low ``a`` is good: the first error comes at low confidence.
    * ``b`` -- the lowest cut-off that still gives admissible accuracy: ``t_{k*-1}`` where
      ``k*`` is the first step with accuracy ``< tolerance``. If accuracy never drops
      below the tolerance, ``b = t_K`` (lowest MaxProb, full coverage). If already the
      first step is below the tolerance, no cut-off is admissible and ``b = t_1`` (the
      highest MaxProb; flagged by ``tolerance_admissible=False``). A low ``b`` is good.
    * ``n`` -- the number of steps ``k`` whose accuracy exceeds that of step ``k - 1``
      (accuracy rising with coverage: confidence and correctness disagree). The ``i``-th
      such fluctuation, counted from the most confident end, has ``d1 = acc_{k-1} <
      d2 = acc_k`` at MaxProbs ``c1 = t_{k-1} > c2 = t_k``; its weight ``n - i + 1``
      makes fluctuations at high confidence count most. With ``n = 0`` the penalty is 0.

    Accuracy comparisons between steps are exact (integer cross-multiplication). A
    per-answer curve rises after every correct answer that follows an error; to count
    only coarser fluctuations, round the confidences first (e.g. ``np.round(conf, 2)``),
    which merges answers into steps.

    Examples
    --------
    >>> r = disca([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0], tolerance=0.6)
    >>> r.a, r.b, r.n          # first error at 0.8; accuracy 1, 1/2, 2/3, 1/2
    (0.8, 0.9, 1)
    >>> round(r.fluctuation_penalty, 6)  # (2/3 - 1/2) / 0.1
    1.666667
    >>> round(r.disca, 6)      # (1/0.8 + 1/0.9 - 1.6667) / 3
    0.231481
    """
    curve = accuracy_coverage_curve(confidence, correct)
    tol = require_probability(tolerance, "tolerance")
    if tol == 0.0:
        raise InputError("`tolerance` must lie in (0, 1] (the worst admissible accuracy); got 0.")
    x, y, z = parse_weights(weights, 3)
    try:
        gap = float(min_gap)
    except (TypeError, ValueError):
        raise InputTypeError(f"`min_gap` must be a positive number; got {min_gap!r}.") from None
    if not (math.isfinite(gap) and gap > 0.0):
        raise InputError(f"`min_gap` must be a positive number; got {min_gap!r}.")

    t = curve.threshold
    acc = curve.accuracy
    n_ans = curve.n_answered
    n_cor = curve.n_correct

    wrong = np.flatnonzero(n_cor < n_ans)
    accuracy_dropped = wrong.size > 0
    a = float(t[wrong[0]]) if accuracy_dropped else float(t[-1])

    below = np.flatnonzero(acc < tol)
    if below.size == 0:
        b, admissible = float(t[-1]), True
    elif below[0] == 0:
        b, admissible = float(t[0]), False
    else:
        b, admissible = float(t[below[0] - 1]), True

    # accuracy increases: n_cor[k] / n_ans[k] > n_cor[k-1] / n_ans[k-1], compared exactly
    rises = np.flatnonzero(n_cor[1:] * n_ans[:-1] > n_cor[:-1] * n_ans[1:]) + 1
    n = int(rises.size)
    fluct: tuple[np.ndarray, ...] = ()
    if n:
        c1, c2 = t[rises - 1], t[rises]
        d1, d2 = acc[rises - 1], acc[rises]
        c = np.maximum(c1 - c2, gap)
        w = (n - np.arange(1, n + 1) + 1).astype(float)
        penalty = float(np.sum(w * (d2 - d1) / c) / np.sum(w))
        fluct = (curve.coverage[rises], c1, c2, d1, d2, c, w)
    else:
        penalty = 0.0

    for name, value, weight in (("a", a, x), ("b", b, y)):
        if value == 0.0 and weight > 0.0:
            raise InputError(
                f"DiSCA's term {name} is 0 (a MaxProb of 0), so {name} enters as 1/0 and the "
                "score is infinite. MaxProb of a k-class model is at least 1/k; check the "
                f"confidence column, or give the term weight 0."
            )
    score = (x / a if x > 0 else 0.0) + (y / b if y > 0 else 0.0) - z * penalty
    return DiscaResult(
        disca=float(score),
        auc=curve.auc("step"),
        a=a,
        b=b,
        n=n,
        fluctuation_penalty=penalty,
        accuracy_dropped=bool(accuracy_dropped),
        tolerance_admissible=bool(admissible),
        weights=(x, y, z),
        tolerance=tol,
        min_gap=gap,
        curve=curve,
        _fluct=fluct,
    )


def _finite_score(value: object, argument: str) -> float:
    if isinstance(value, DiscaResult):
        return value.disca
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputTypeError(f"`{argument}` must be a number or a DiscaResult; got {value!r}.") from None
    if not math.isfinite(v):
        raise InputError(f"`{argument}` must be finite; got {value!r}.")
    return v


def didma(disca_score: float | DiscaResult, energy: float, *, weights: Sequence[float] | str = (0.5, 0.5)) -> float:
    """DiDMA score (Deployment in Disaster Management Applications), the paper's Eq. 2.

    Parameters
    ----------
    disca_score : float or DiscaResult
        DiSCA of the system on in-distribution data.
    energy : float
        Energy the system uses on the deployment device (> 0, any fixed unit).
    weights : (p, q), default (0.5, 0.5)
        Non-negative, summing to 1.

    Notes
    -----
    ``DiDMA = p * DiSCA + q * Computation_Score`` with ``Computation_Score = 1 / Energy``.

    Examples
    --------
    >>> didma(0.6, energy=2.0, weights=(0.8, 0.2))  # 0.8 * 0.6 + 0.2 / 2
    0.58
    """
    s = _finite_score(disca_score, "disca_score")
    e = _finite_score(energy, "energy")
    if e <= 0.0:
        raise InputError(f"`energy` must be positive (Computation_Score = 1 / Energy); got {energy!r}.")
    p, q = parse_weights(weights, 2)
    return p * s + q / e


def nidma(didma_score: float, disca_ood: float | DiscaResult, *, weights: Sequence[float] | str = (0.5, 0.5)) -> float:
    """NiDMA score (NLP in Disaster Management Applications), the paper's Eq. 3.

    Parameters
    ----------
    didma_score : float
        DiDMA of the system (:func:`didma`).
    disca_ood : float or DiscaResult
        DiSCA of the system on out-of-distribution data.
    weights : (u, v), default (0.5, 0.5)
        Non-negative, summing to 1.

    Notes
    -----
    ``NiDMA = u * DiDMA + v * DiSCA_OOD``.

    Examples
    --------
    >>> nidma(0.58, 0.2, weights=(0.5, 0.5))
    0.39
    """
    s = _finite_score(didma_score, "didma_score")
    o = _finite_score(disca_ood, "disca_ood")
    u, v = parse_weights(weights, 2)
    return u * s + v * o


def plot_accuracy_coverage(curves: dict[str, CoverageCurve] | CoverageCurve, *, ax: Any = None) -> Any:
    """Plot accuracy over coverage (step curves) of one or several systems.

    Parameters
    ----------
    curves : CoverageCurve or dict of name -> CoverageCurve
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> fig = plot_accuracy_coverage({"A": accuracy_coverage_curve([0.9, 0.5], [1, 0])})
    """
    import matplotlib.pyplot as plt

    if isinstance(curves, CoverageCurve):
        curves = {"system": curves}
    if not curves:
        raise InputError("`curves` is empty; pass at least one CoverageCurve.")
    if ax is None:
        fig, ax = plt.subplots(figsize=(5, 3.5))
    else:
        fig = ax.figure
    for name, curve in curves.items():
        if not isinstance(curve, CoverageCurve):
            raise InputTypeError(f"curve {name!r} must be a CoverageCurve; got {type(curve).__name__}.")
        cov = np.concatenate(([0.0], curve.coverage))
        acc = np.concatenate(([curve.accuracy[0]], curve.accuracy))
        ax.step(cov, acc, where="pre", label=f"{name} (AUC {curve.auc():.3f})")
    ax.set_xlim(0, 1)
    ax.set_xlabel("coverage")
    ax.set_ylabel("accuracy")
    ax.legend(loc="lower left", fontsize="small")
    return fig
