"""A purpose-built penalized regression spline engine for generalized additive models.

The engine follows mgcv's ``bs = "cr"`` cubic regression splines (knots at quantiles of the
distinct values, integrated squared second derivative penalty, sum-to-zero identifiability
constraint over the data) with smoothing parameters chosen by GCV (Gaussian) or UBRE
(binomial, performance iteration), as ``mgcv::gam(method = "GCV.Cp")``.

Stages, each in its own module and testable alone: the basis and terms (``_gam_basis``), the
penalized solve and smoothing parameter selection (``_gam_smoothing``), the design of a search
with its fitting of any subset of terms (``_gam_design``), and the result (``_gam_result``).
This module holds the public entry :func:`fit_gam` and the basis-limit check.
"""

from __future__ import annotations

import warnings

import pandas as pd

from ..errors import BasisLimitWarning, caller_stacklevel
from ._gam_basis import cr_knots, cr_local, cr_matrices, sum_to_zero_null_space
from ._gam_design import GAMDesign, make_design, prepare_response, validate_inputs, warn_binary_target
from ._gam_result import GAMResult

__all__ = ["GAMResult", "fit_gam", "check_basis", "make_design", "prepare_response", "validate_inputs", "GAMDesign",
           "cr_knots", "cr_local", "cr_matrices", "sum_to_zero_null_space"]


def check_basis(result: GAMResult, threshold: float = 0.9) -> list[str]:
    """Warn (:class:`BasisLimitWarning`) for smooths whose edf is close to their basis limit ``k - 1``."""
    hit = []
    for f in result.features:
        t = result.term(f)
        if t.kind == "smooth" and not t.saturated and result.edf_terms[f] >= threshold * (t.k - 1):
            hit.append(f)
    if hit:
        desc = ", ".join(f"{f} (edf {result.edf_terms[f]:.2f} of {result.basis_dimension(f) - 1})" for f in hit)
        warnings.warn(
            f"smooth term(s) {desc} use nearly all the freedom of their basis; the shape may be "
            "under-resolved (e.g. a step function). Refit with a larger `k` (the book used 100-230 knots "
            "for thresholds).",
            BasisLimitWarning, stacklevel=caller_stacklevel(),
        )
    return hit


def fit_gam(
    data: pd.DataFrame,
    target: str,
    features: list[str],
    *,
    family: str = "gaussian",
    k: int = 10,
    categorical: list[str] | None = None,
    method: str = "GCV",
    basis_warning: float = 0.9,
) -> GAMResult:
    """Fit a generalized additive model with penalized cubic regression splines.

    Numeric features with three or more distinct values get a smooth term ``s(x, bs = "cr", k = k)``
    (``k`` is lowered to the number of distinct values if needed); binary and non-numeric features
    (and those named in ``categorical``) get a parametric, treatment-coded term. Smoothing
    parameters are chosen by GCV (Gaussian) or UBRE (binomial), as ``mgcv::gam`` does by default.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per observation; not modified.
    target : str
        Response column (numeric; 0/1 or proportions for ``family="binomial"``).
    features : list of str
        Feature columns.
    family : {"gaussian", "binomial"}
        Gaussian with identity link, or binomial with logit link.
    k : int
        Basis dimension of every smooth (mgcv's ``k``; at least 3).
    categorical : list of str, optional
        Numeric columns to treat as categorical (nominal codes).
    method : {"GCV", "REML"}
        Smoothing parameter selection: ``"GCV"`` is mgcv's default ``"GCV.Cp"`` (GCV for
        Gaussian, UBRE for binomial); ``"REML"`` is restricted maximum likelihood (for the
        binomial family on the working model of each PIRLS step).
    basis_warning : float
        Warn with :class:`~mixeval.errors.BasisLimitWarning` when a smooth's edf reaches this
        fraction of its maximum ``k - 1``.

    Returns
    -------
    GAMResult

    Notes
    -----
    The model is :math:`g(E[Y|x]) = \\beta_0 + \\sum_k f_k(x_k)` with
    :math:`f_k = X_k \\beta_k` and :math:`\\sum_n f_k(x_k^n) = 0`; coefficients minimise
    :math:`\\|\\sqrt{W}(z - X\\beta)\\|^2 + \\sum_k \\lambda_k \\beta_k' S_k \\beta_k` where
    :math:`S_k` is the integrated squared second derivative. The smoothing parameters minimise
    GCV :math:`n\\,D/(n-\\tau)^2` (Gaussian) or UBRE :math:`D/n - 1 + 2\\tau/n` (binomial), or
    the restricted likelihood (``method="REML"``), with
    :math:`\\tau = \\mathrm{tr}((X'WX + S_\\lambda)^{-1} X'WX)` the effective degrees of freedom.
    The deviance explained is :math:`D^2 = 1 - D(\\hat\\mu)/D(\\hat\\mu_0)` (book Eq. 2.9).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.validity import fit_gam
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.uniform(0, 1, 500)})
    >>> df["y"] = np.sin(2 * np.pi * df["x"]) + rng.normal(0, 0.2, 500)
    >>> m = fit_gam(df, "y", ["x"])
    >>> round(m.d2, 2)
    0.93
    """
    design = make_design(data, target, features, family, k, categorical, method)
    warn_binary_target(design.y, target, family)
    result = design.fit(range(len(design.terms)))
    check_basis(result, basis_warning)
    return result
