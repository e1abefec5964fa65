"""The description of a metric model's errors: P(true positive | observed class)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._validation import require_positive_int, require_probability
from ..errors import BoundaryWarning, InputError, caller_stacklevel

__all__ = ["MetricModel"]


@dataclass(frozen=True)
class MetricModel:
    """How often the metric model's observed label is truly positive.

    A metric model (a toxicity classifier, an LLM judge, ...) assigns each output an
    observed class ``O`` in ``0, ..., K-1``; the true (gold) label is ``R`` in ``{0, 1}``.
    The model is described by ``q_o = P(R = 1 | O = o)``. For a binary metric
    ``q = (FOR, precision)``: ``q_0`` is the false omission rate ``P(R=1 | O=0)``
    and ``q_1`` the precision ``P(R=1 | O=1)`` (Goyal et al., Eq. 10).

    Build it with :meth:`from_rates` (known constants), :meth:`from_confusion`
    (estimated from an annotated test set; the counts then carry the estimates'
    uncertainty), :meth:`from_class_rates` or :meth:`from_confusion_matrix` (multi-class,
    Goyal et al. A.2).

    Attributes
    ----------
    rates : tuple of float
        ``q_o = P(R = 1 | O = o)`` for each observed class ``o = 0, ..., K-1``.
    counts : tuple of int or None
        Number of annotated test items the metric assigned to class ``o`` (the
        denominators of the ``q_o`` estimates); ``None`` when the rates are treated as
        known constants.
    positive_classes : tuple of int
        Observed classes counted as "positive" by the *uncorrected* analysis
        (Eqs. 3-8 use the observed positive rate). Binary: ``(1,)``; multi-class
        default: the last class.

    Notes
    -----
    The correction rests on one assumption, *transportability*: ``P(R = 1 | O = o)``
    is the same on the evaluated outputs of every system as on the annotated test
    set that estimated it. Precision and FOR depend on prevalence, so this fails
    when a system shifts the kind of content the metric errs on; only an interval
    using gold labels of the evaluated outputs themselves
    (``method="ppi"`` in :func:`metric_comparisons`) is free of it.

    Examples
    --------
    >>> from mixeval.metric_model import MetricModel
    >>> m = MetricModel.from_rates(precision=0.8897, false_omission_rate=0.22769)
    >>> m.precision, m.false_omission_rate
    (0.8897, 0.22769)
    >>> m2 = MetricModel.from_confusion(tp=80, fp=20, fn=10, tn=890)
    >>> m2.precision, m2.false_omission_rate
    (0.8, 0.011111111111111112)
    """

    rates: tuple[float, ...]
    counts: tuple[int, ...] | None = None
    positive_classes: tuple[int, ...] = (1,)

    def __post_init__(self) -> None:
        _validate(self.rates, self.counts, self.positive_classes)

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_rates(cls, precision: float, false_omission_rate: float) -> MetricModel:
        """Binary metric with known precision ``P(R=1|O=1)`` and FOR ``P(R=1|O=0)``."""
        prec = require_probability(precision, "precision")
        fomr = require_probability(false_omission_rate, "false_omission_rate")
        _require_informative(prec, fomr)
        return cls(rates=(fomr, prec), counts=None, positive_classes=(1,))

    @classmethod
    def from_confusion(cls, tp: int, fp: int, fn: int, tn: int) -> MetricModel:
        """Binary metric estimated on an annotated test set.

        ``tp``: observed 1 and truly 1; ``fp``: observed 1, truly 0; ``fn``: observed 0,
        truly 1; ``tn``: observed 0, truly 0. Precision = tp / (tp + fp), FOR =
        fn / (fn + tn); their binomial sampling variances are propagated by the
        ``delta`` and ``bootstrap`` methods.
        """
        vals = {}
        for name, v in (("tp", tp), ("fp", fp), ("fn", fn), ("tn", tn)):
            vals[name] = _count(v, name)
        n1 = vals["tp"] + vals["fp"]
        n0 = vals["fn"] + vals["tn"]
        if n1 == 0:
            raise InputError(
                "inconsistent confusion counts: tp + fp = 0, so the metric never predicted "
                "positive on its test set and precision is undefined; annotate more positives."
            )
        if n0 == 0:
            raise InputError(
                "inconsistent confusion counts: fn + tn = 0, so the metric never predicted "
                "negative on its test set and the false omission rate is undefined."
            )
        prec = vals["tp"] / n1
        fomr = vals["fn"] / n0
        _require_informative(prec, fomr)
        return cls(rates=(fomr, prec), counts=(n0, n1), positive_classes=(1,))

    @classmethod
    def from_class_rates(
        cls,
        rates: Sequence[float],
        counts: Sequence[int] | None = None,
        positive_classes: Sequence[int] | None = None,
    ) -> MetricModel:
        """Multi-class metric (Goyal et al. A.2) from ``q_o = P(R=1 | O=o)``, o = 0..K-1."""
        q = tuple(require_probability(r, f"rates[{i}]") for i, r in enumerate(rates))
        c = None if counts is None else tuple(_count(v, f"counts[{i}]") for i, v in enumerate(counts))
        pos = (len(q) - 1,) if positive_classes is None else tuple(int(p) for p in positive_classes)
        return cls(rates=q, counts=c, positive_classes=pos)

    @classmethod
    def from_confusion_matrix(
        cls, matrix: Sequence[Sequence[int]], positive_classes: Sequence[int] | None = None
    ) -> MetricModel:
        """Multi-class metric from a K x 2 table: row ``o`` = observed class, columns (R=0, R=1)."""
        arr = np.asarray(matrix)
        if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] < 2:
            raise InputError(
                "`matrix` must be K x 2 (rows: observed classes 0..K-1, columns: true 0, true 1) "
                f"with K >= 2; got shape {arr.shape}."
            )
        if not np.issubdtype(arr.dtype, np.integer):
            if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
                raise InputError("`matrix` must hold non-negative integer counts.")
            arr = arr.astype(np.int64)
        if np.any(arr < 0):
            raise InputError("`matrix` must hold non-negative counts; found a negative entry.")
        n = arr.sum(axis=1)
        if np.any(n == 0):
            bad = int(np.flatnonzero(n == 0)[0])
            raise InputError(
                f"inconsistent confusion matrix: observed class {bad} has no test items, so "
                f"P(R=1 | O={bad}) is undefined."
            )
        q = tuple(float(x) for x in arr[:, 1] / n)
        pos = (len(q) - 1,) if positive_classes is None else tuple(int(p) for p in positive_classes)
        return cls(rates=q, counts=tuple(int(x) for x in n), positive_classes=pos)

    # ------------------------------------------------------------------ views
    @property
    def n_classes(self) -> int:
        """Number of observed classes K."""
        return len(self.rates)

    @property
    def precision(self) -> float:
        """``P(R=1 | O=1)`` of a binary metric."""
        self._require_binary("precision")
        return self.rates[1]

    @property
    def false_omission_rate(self) -> float:
        """``P(R=1 | O=0)`` of a binary metric."""
        self._require_binary("false_omission_rate")
        return self.rates[0]

    @property
    def has_uncertainty(self) -> bool:
        """True when the rates were estimated from counts (their variance is known)."""
        return self.counts is not None

    def rate_variances(self) -> np.ndarray:
        """Binomial sampling variance ``q_o (1 - q_o) / n_o`` of each estimated rate (0 if known)."""
        q = np.asarray(self.rates)
        if self.counts is None:
            return np.zeros_like(q)
        return q * (1.0 - q) / np.asarray(self.counts, dtype=float)

    def corrected_rate(self, observed_proportions: Sequence[float]) -> float:
        """``p_R = sum_o q_o P(O = o)`` (Eq. 10 / Eq. 17) for the given class proportions."""
        p = np.asarray(observed_proportions, dtype=float)
        if p.shape != (self.n_classes,):
            raise InputError(
                f"`observed_proportions` must have one entry per observed class ({self.n_classes}); "
                f"got shape {p.shape}."
            )
        return float(np.dot(np.asarray(self.rates), p))

    def _require_binary(self, what: str) -> None:
        if self.n_classes != 2:
            raise InputError(f"`{what}` is defined for a binary metric; this one has {self.n_classes} classes.")

    def __repr__(self) -> str:
        if self.n_classes == 2 and self.positive_classes == (1,):
            s = f"MetricModel(precision={self.rates[1]:.6g}, false_omission_rate={self.rates[0]:.6g}"
        else:
            s = "MetricModel(rates=(" + ", ".join(f"{r:.6g}" for r in self.rates) + ")"
        if self.counts is not None:
            s += f", counts={self.counts}"
        return s + ")"


def _count(v: object, name: str) -> int:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        v = int(v)
    return require_positive_int(v, name, minimum=0)


def _require_informative(prec: float, fomr: float) -> None:
    if prec < fomr:
        raise InputError(
            f"precision ({prec:.6g}) is below the false omission rate ({fomr:.6g}): an output the "
            "metric calls positive would be less likely truly positive than one it calls negative. "
            "Check that the two were not swapped, or that the metric's labels are not inverted."
        )
    if prec == fomr:
        raise InputError(
            f"precision equals the false omission rate ({prec:.6g}): the metric's label carries no "
            "information about the true label, so no difference between systems can be measured with it."
        )


def _validate(rates: tuple[float, ...], counts: tuple[int, ...] | None, positive: tuple[int, ...]) -> None:
    if len(rates) < 2:
        raise InputError(f"a metric model needs at least 2 observed classes; got {len(rates)} rate(s).")
    for i, r in enumerate(rates):
        require_probability(r, f"rates[{i}]")
    if counts is not None:
        if len(counts) != len(rates):
            raise InputError(
                f"`counts` needs one entry per observed class ({len(rates)}); got {len(counts)}."
            )
        for i, (c, r) in enumerate(zip(counts, rates)):
            if c < 1:
                raise InputError(
                    f"counts[{i}] = {c}: the rate of observed class {i} was estimated from no items."
                )
            if abs(r * c - round(r * c)) > 1e-6 * max(1, c):
                raise InputError(
                    f"inconsistent counts: rates[{i}] = {r!r} times counts[{i}] = {c} is not a whole "
                    "number of true positives; give the rates as counts ratios."
                )
    if not positive or any(not (0 <= p < len(rates)) for p in positive) or len(set(positive)) != len(positive):
        raise InputError(
            f"`positive_classes` must name distinct observed classes in 0..{len(rates) - 1}; got {positive}."
        )
    if len(positive) == len(rates):
        raise InputError("`positive_classes` cannot contain every class (the observed rate would be 1).")
    if max(rates) == min(rates):
        raise InputError(
            "all rates P(R=1 | O=o) are equal: the metric's label carries no information about the true label."
        )
    if counts is not None:
        edge = [i for i, r in enumerate(rates) if r in (0.0, 1.0)]
        if edge:
            warnings.warn(
                f"rate(s) of observed class(es) {edge} were estimated as exactly 0 or 1, so their binomial "
                "variance estimate is 0 and the delta/bootstrap intervals ignore their uncertainty; "
                "annotate more items of those classes.",
                BoundaryWarning,
                stacklevel=caller_stacklevel(),
            )
