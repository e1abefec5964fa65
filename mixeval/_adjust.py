"""Multiplicity adjustment of p-values (R's ``p.adjust``), shared by every module that
runs several tests at once.

Only the step procedures that need nothing but the p-values are here; Tukey's
studentized-range adjustment needs the joint distribution of the comparisons and
lives with the model-based comparisons.
"""

from __future__ import annotations

import numpy as np

from .errors import InputError, InputTypeError

__all__ = ["adjust_pvalues", "ADJUST_METHODS"]

#: Canonical method names and the aliases accepted for them (case-insensitive).
ADJUST_METHODS: dict[str, tuple[str, ...]] = {
    "none": ("none",),
    "bonferroni": ("bonferroni",),
    "holm": ("holm",),
    "hochberg": ("hochberg",),
    "bh": ("bh", "fdr", "fdr_bh", "benjamini-hochberg"),
    "by": ("by", "fdr_by", "benjamini-yekutieli"),
}

#: statsmodels' name of each method (:func:`statsmodels.stats.multitest.multipletests`).
_STATSMODELS = {"bonferroni": "bonferroni", "holm": "holm", "hochberg": "simes-hochberg", "bh": "fdr_bh",
                "by": "fdr_by"}

_ALIASES = {alias: name for name, aliases in ADJUST_METHODS.items() for alias in aliases}


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment, ``max_{j <= i} min(1, (m - j + 1) p_(j))``, computed here: statsmodels'
    ``multipletests(method="holm")`` runs a full garbage collection on every call, which costs seconds per call in
    a session holding many objects (a notebook, a simulation).
    """
    order = np.argsort(p, kind="stable")
    m = p.size
    adjusted = np.minimum(1.0, np.maximum.accumulate(p[order] * np.arange(m, 0, -1)))
    out = np.empty(m)
    out[order] = adjusted
    return out


def _canonical_method(method: str) -> str:
    if not isinstance(method, str):
        raise InputTypeError(f"`method` must be a string such as 'holm'; got {method!r}.")
    try:
        return _ALIASES[method.strip().lower()]
    except KeyError:
        choices = ", ".join(repr(m) for m in ADJUST_METHODS)
        raise InputError(
            f"unknown p-value adjustment method {method!r}; choose one of {choices} "
            "(aliases: 'fdr'/'fdr_bh' for 'bh', 'fdr_by' for 'by')."
        ) from None


def adjust_pvalues(pvalues: object, method: str = "holm") -> np.ndarray:
    """Adjust p-values for multiple comparisons, like R's ``p.adjust``.

    Parameters
    ----------
    pvalues : array_like
        Unadjusted p-values in [0, 1] (any shape; the family is all entries).
    method : {"holm", "bonferroni", "hochberg", "bh", "by", "none"}
        ``"holm"`` (default; step-down, controls the family-wise error rate under any
        dependence), ``"bonferroni"``, ``"hochberg"`` (step-up, FWER under
        independence or positive dependence), ``"bh"`` (Benjamini-Hochberg false
        discovery rate; alias ``"fdr"``, ``"fdr_bh"``), ``"by"`` (Benjamini-Yekutieli,
        FDR under any dependence), ``"none"``.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, same shape as the input, capped at 1. The input is not
        modified.

    Raises
    ------
    InputError
        If a p-value is missing, outside [0, 1], or the method is unknown.

    Notes
    -----
    With ``m`` p-values sorted increasingly, :math:`p_{(1)} \\le \\dots \\le p_{(m)}`:

    * Bonferroni: :math:`\\min(1, m p_i)`.
    * Holm: :math:`\\tilde p_{(i)} = \\max_{j \\le i} \\min(1, (m - j + 1) p_{(j)})`.
    * Hochberg: :math:`\\tilde p_{(i)} = \\min_{j \\ge i} \\min(1, (m - j + 1) p_{(j)})`.
    * BH: :math:`\\tilde p_{(i)} = \\min_{j \\ge i} \\min(1, m p_{(j)} / j)`.
    * BY: BH multiplied by :math:`\\sum_{k=1}^m 1/k`.

    These are the formulas of R's ``stats::p.adjust``; they are computed by
    ``statsmodels.stats.multitest.multipletests`` and tested against values produced by R.
    Missing values are rejected rather than skipped, so that the family size
    ``m`` is always the number of p-values you passed.

    Examples
    --------
    >>> from mixeval._adjust import adjust_pvalues
    >>> adjust_pvalues([0.01, 0.02, 0.03, 0.5], "holm").round(4).tolist()
    [0.04, 0.06, 0.06, 0.5]
    >>> adjust_pvalues([0.01, 0.02, 0.03, 0.5], "bh").round(4).tolist()
    [0.04, 0.04, 0.04, 0.5]
    """
    name = _canonical_method(method)
    try:
        p = np.array(pvalues, dtype=float)  # a copy: never modify the input
    except (TypeError, ValueError):
        raise InputTypeError("`pvalues` must be numbers in [0, 1].") from None
    shape = p.shape
    p = p.ravel()
    if p.size == 0:
        return p.reshape(shape)
    if np.isnan(p).any():
        raise InputError(
            f"`pvalues` holds {int(np.isnan(p).sum())} missing value(s); remove them first "
            "(the family size must be explicit)."
        )
    if (p < 0).any() or (p > 1).any():
        bad = p[(p < 0) | (p > 1)][:3].tolist()
        raise InputError(f"`pvalues` must lie in [0, 1]; found {bad}.")
    if name == "none":
        return p.reshape(shape)
    if name == "holm":
        return _holm(p).reshape(shape)
    from statsmodels.stats.multitest import multipletests  # imported on first use (statsmodels loads slowly)

    out = multipletests(p, method=_STATSMODELS[name])[1]
    return np.minimum(1.0, out).reshape(shape)
