"""Parametric-bootstrap p-values of likelihood-ratio tests between two fits of the same rows (lme4's
``pbkrtest::PBmodcomp``): for variance components estimated from few levels, where the boundary chi-square mixture
is only asymptotic.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._random import as_generator
from .._validation import require_positive_int
from ..errors import InputError

__all__ = ["bootstrap_lrt"]


def bootstrap_lrt(null: Any, full: Any, statistic: float, *, reml: bool, n_resamples: int,
                  random_state: Any = None) -> dict[str, Any]:
    """The p-value of ``statistic = crit(null) - crit(full)`` against its parametric-bootstrap null distribution.

    Parameters
    ----------
    null, full : MixedResult
        The fits under the null and the alternative, of the same rows in the same order (their evaluators
        ``fit.model`` simulate and refit).
    statistic : float
        The observed likelihood-ratio statistic.
    reml : bool
        Refit by REML (a Gaussian variance test on REML fits) or by maximum likelihood.
    n_resamples : int
        Response vectors simulated from ``null`` (new random effects each), both models refitted to each.
    random_state : None, int or Generator

    Returns
    -------
    dict
        ``pvalue = (1 + #{T* >= T}) / (1 + B)`` over the ``B`` finite refits (Davison & Hinkley 1997, Eq. 4.11),
        ``pvalue_se`` (its Monte Carlo standard error), ``null_distribution`` (every ``T*``, NaN for a failed
        refit), ``n_resamples``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval import lmer
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"item": np.repeat(np.arange(20), 4), "rater": np.tile([0, 1, 2, 3], 20)})
    >>> df["y"] = rng.normal(size=20)[df.item] + rng.normal(size=80)
    >>> full, null = lmer("y ~ 1 + (1|item) + (1|rater)", df), lmer("y ~ 1 + (1|item)", df)
    >>> out = bootstrap_lrt(null, full, null.criterion - full.criterion, reml=True, n_resamples=19, random_state=1)
    >>> 0 < out["pvalue"] <= 1, out["null_distribution"].shape
    (True, (19,))
    """
    n_resamples = require_positive_int(n_resamples, "n_resamples", example=200)
    if int(null.nobs) != int(full.nobs):
        raise InputError("the two fits have different rows; a bootstrap comparison needs the same rows.")
    try:
        null_model, full_model = null.model, full.model
    except InputError as exc:
        raise InputError(f"a parametric-bootstrap p-value needs fits that can be simulated and refitted: {exc}") from None
    Y = null_model.simulate(int(n_resamples), as_generator(random_state))
    crit0 = np.array([r.criterion for r in null_model.refit(Y, reml)], dtype=float)
    crit1 = np.array([r.criterion for r in full_model.refit(Y, reml)], dtype=float)
    draws = np.maximum(crit0 - crit1, 0.0)
    finite = draws[np.isfinite(draws)]
    pvalue = (1.0 + np.sum(finite >= statistic - 1e-9 * (1.0 + abs(statistic)))) / (1.0 + finite.size)
    return {"pvalue": float(pvalue), "pvalue_se": float(np.sqrt(pvalue * (1 - pvalue) / max(finite.size, 1))),
            "null_distribution": draws, "n_resamples": int(n_resamples)}
