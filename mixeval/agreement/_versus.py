"""Krippendorff's alpha next to the reliability coefficient phi on the same annotation data
(book Section 3.4: phi is recommended as the replacement of alpha)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validation import require_columns, require_dataframe, require_no_missing, require_numeric_column
from ..errors import InputError
from ._coefficients import _UNSET, krippendorff_alpha, renamed_arguments

__all__ = ["alpha_vs_phi", "phi_from_components"]


def phi_from_components(variances: dict[str, float], *, unit: str, rater: str, occasion: str | None,
                        n_raters: float = 1, n_occasions: float = 1) -> tuple[float, float]:
    """Reliability coefficient phi (book Definition 3.2, Eq. 3.11) from variance components.

    ``variances`` maps lme4-style group names (``unit``, ``rater``, ``occasion``,
    ``"rater:unit"``, ``"occasion:unit"``, ``"occasion:rater"``, ``"Residual"``) to
    variances; returns ``(phi, sigma2_delta)``.

    Notes
    -----
    .. math::
        \\sigma^2_\\Delta = \\frac{\\sigma^2_r}{n_r} + \\frac{\\sigma^2_i}{n_i} + \\frac{\\sigma^2_{sr}}{n_r}
        + \\frac{\\sigma^2_{si}}{n_i} + \\frac{\\sigma^2_{ri}}{n_r n_i} + \\frac{\\sigma^2_{res}}{n_r n_i},
        \\qquad \\varphi = \\frac{\\sigma^2_s}{\\sigma^2_s + \\sigma^2_\\Delta}.

    Without an occasion facet the ``i`` terms vanish and ``n_i = 1``. Computed by
    :func:`mixeval.reliability.error_variance` (the general Definition 3.2).

    Examples
    --------
    >>> phi_from_components({"s": 1.0, "r": 0.5, "Residual": 0.5}, unit="s", rater="r", occasion=None)
    (0.5, 1.0)
    """
    from ..reliability import RESIDUAL, error_variance

    comps = {str(k): float(v) for k, v in variances.items()}
    sizes = {rater: n_raters, **({occasion: n_occasions} if occasion is not None else {})}
    for name in (unit, RESIDUAL, *sizes):  # absent components are zero; named facets stay facets
        comps.setdefault(name, 0.0)
    delta = error_variance(comps, unit, sizes)
    total = comps[unit] + delta
    return (comps[unit] / total if total > 0 else float("nan")), delta


def alpha_vs_phi(
    data: pd.DataFrame,
    *,
    score: str,
    unit: str,
    rater: str,
    occasion: str | None = None,
    by: str | None = None,
    measurement: str = "interval",
    level: float | None = None,
    n_resamples: int = 2000,
    random_state: object = None,
    confidence: object = _UNSET,
) -> pd.DataFrame:
    """Krippendorff's alpha and the reliability coefficient phi side by side.

    Parameters
    ----------
    data : pandas.DataFrame
        Long annotation data, one row per rating.
    score, unit, rater : str
        Columns of the rating, the object of measurement (e.g. sentence) and the rater.
    occasion : str, optional
        Column of repeated annotation instances (the book's "instantiation").
    by : str, optional
        Compute one row per value of this column (e.g. annotation ``mode``).
    measurement : str
        Level of measurement for alpha (default ``"interval"``; phi treats scores as interval).
    level : float, optional
        Level of a bootstrap interval for alpha (None: no interval).
    n_resamples : int, keyword-only
    random_state : None, int or numpy.random.Generator, keyword-only

    Returns
    -------
    pandas.DataFrame
        Per group: ``alpha`` (units = ``unit``, coders = rater x occasion),
        ``phi_single`` (reliability of one rating by one rater on one occasion, i.e.
        the unit's share of the total variance), ``phi_design`` (reliability of the
        average over all observed raters and occasions), ``sigma2_unit``,
        ``sigma2_delta_single``, counts and, with ``level``, ``alpha_lower`` /
        ``alpha_upper``.

    Notes
    -----
    phi comes from a random-effects LMEM fitted by REML with
    :func:`mixeval.mixed.lmer`: ``score ~ (1|unit) + (1|rater) + (1|rater:unit)``
    plus, with ``occasion``, ``(1|occasion) + (1|occasion:unit) + (1|occasion:rater)``
    (the book's model 3.13); without ``occasion`` the rater-by-unit interaction is not
    identifiable and is left in the residual. phi follows Definition 3.2 / Eq. 3.11,
    see :func:`phi_from_components`. Alpha describes these raters on these units;
    phi estimates how much of the variance of a rating is due to the units, with
    the facets' components visible (book Section 3.4).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.agreement import alpha_vs_phi
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.normal(size=30)
    >>> df = pd.DataFrame([(u, r, truth[u] + rng.normal(0, 0.5)) for u in range(30) for r in range(4)],
    ...                   columns=["item", "rater", "y"])
    >>> out = alpha_vs_phi(df, score="y", unit="item", rater="rater")
    >>> bool(0.6 < out["alpha"].iloc[0] < 0.95 and 0.6 < out["phi_single"].iloc[0] < 0.95)
    True
    """
    from ..mixed import lmer  # the LMEM engine

    measurement, level = renamed_arguments(measurement, level, confidence)
    data = require_dataframe(data)
    cols = [score, unit, rater] + ([occasion] if occasion else []) + ([by] if by else [])
    require_columns(data, cols)
    require_no_missing(data, cols)
    require_numeric_column(data, score)
    for c in (unit, rater, occasion):
        if c is not None and not str(c).isidentifier():
            raise InputError(f"column name {c!r} must be a Python identifier to be used in a model formula; "
                             "rename it first.")
    terms = [f"(1|{unit})", f"(1|{rater})"]
    if occasion:
        terms += [f"(1|{occasion})", f"(1|{rater}:{unit})", f"(1|{occasion}:{unit})", f"(1|{occasion}:{rater})"]
    formula = f"{score} ~ " + " + ".join(terms)
    groups = [(None, data)] if by is None else list(data.groupby(by, sort=False))
    rows = []
    for key, sub in groups:
        coders = [rater] if occasion is None else [rater, occasion]
        dup = sub.duplicated([unit] + coders)
        if dup.any():
            raise InputError(f"{int(dup.sum())} duplicate ratings of the same unit by the same rater"
                             + (" on the same occasion" if occasion else "") + "; add an occasion column.")
        model_data = sub.copy()
        for c in (unit, rater, occasion):
            if c is not None:
                model_data[c] = model_data[c].astype(str)
        fit = lmer(formula, model_data, REML=True)
        vc = fit.varcorr
        variances = dict(zip(vc["group"].astype(str), vc["variance"].astype(float)))
        n_r = sub[rater].nunique()
        n_i = sub[occasion].nunique() if occasion else 1
        phi1, delta1 = phi_from_components(variances, unit=unit, rater=rater, occasion=occasion)
        phi_n, _ = phi_from_components(variances, unit=unit, rater=rater, occasion=occasion,
                                       n_raters=n_r, n_occasions=n_i)
        coder = sub[rater].astype(str) if occasion is None else sub[rater].astype(str) + "@" + sub[occasion].astype(str)
        wide = sub.assign(_coder=coder.to_numpy()).pivot(index=unit, columns="_coder", values=score)
        alpha = krippendorff_alpha(wide, measurement, level=level, n_resamples=n_resamples,
                                   random_state=random_state)
        row = {"group": key if by is not None else "all", "alpha": alpha.value, "phi_single": phi1,
               "phi_design": phi_n, "sigma2_unit": variances.get(unit, np.nan), "sigma2_delta_single": delta1,
               "n_units": sub[unit].nunique(), "n_raters": n_r, "n_occasions": n_i}
        if level is not None:
            row["alpha_lower"] = alpha.confidence_interval.lower
            row["alpha_upper"] = alpha.confidence_interval.upper
        rows.append(row)
    out = pd.DataFrame(rows)
    if by is not None:
        out = out.rename(columns={"group": by})
    return out
