"""F tests of the fixed-effect terms (emmeans' ``joint_tests``; with Satterthwaite df, lmerTest's type III
``anova(m)``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..errors import InputError
from ._ddf import DfInference, canonical_df, df_inference
from ._emmeans import _check_fit
from ._grid import (
    ReferenceGrid,
    _factor_variables,
    cached_reference_grid,
    combine_rows,
    marginal_linfct,
    normalise_names,
)
from ._labels import label_table

if TYPE_CHECKING:
    from ..mixed import MixedResult

__all__ = ["joint_tests", "term_hypotheses", "wald_f_test", "fstat_ddf"]


def _consec(k: int) -> np.ndarray:
    """``(k - 1) x k`` consecutive differences (any full-rank contrast basis gives the same F)."""
    return np.eye(k)[1:] - np.eye(k)[:-1]


def _model_terms(fit: MixedResult, rg: ReferenceGrid) -> list[tuple[str, list[str], str | None]]:
    """``(label, factors, covariate)`` of every fixed term but the intercept, in the formula's order."""
    spec = fit.design.fixed_spec
    data_vars = set(spec.variables_by_source.get("data", set()))
    out = []
    for term in spec.terms:
        names: list[str] = []
        for factor in term.factors:
            names += [v for v in _factor_variables(spec, str(factor)) if v in data_vars and v not in names]
        if not names:
            continue  # the intercept
        factors = [v for v in names if v in rg.factors]
        covs = [v for v in names if v in rg.covariates]
        if len(covs) > 1:
            raise InputError(f"joint_tests: the term {term} involves {len(covs)} numeric covariates; tests of "
                             "products of covariates are not available (center them and test the coefficient).")
        out.append((":".join(names), factors, covs[0] if covs else None))
    return out


def _slope_grid(fit: MixedResult, rg: ReferenceGrid, covariate: str, full: bool = False) -> np.ndarray:
    """``d X / d covariate`` on the reference grid (central differences; exact for terms linear in it); ``full``:
    of every column, those a rank-deficient fit dropped included."""
    h = max(1e-4, 1e-4 * abs(rg.covariates[covariate]))
    spec = fit.design.fixed_spec
    build = spec.full_model_matrix if full else spec.get_model_matrix
    grids = []
    for sign in (1.0, -1.0):
        g = rg.grid.copy()
        g[covariate] = rg.covariates[covariate] + sign * h
        grids.append(np.asarray(build(g, na_action="ignore"), dtype=float))
    return (grids[0] - grids[1]) / (2 * h)


def term_hypotheses(fit: MixedResult, rg: ReferenceGrid, factors: list[str], covariate: str | None,
                    by: list[str]) -> list[tuple[dict, np.ndarray]]:
    """The hypothesis matrix ``L`` of one term within each ``by`` group: the interaction contrasts of the term's
    factors on their equally weighted marginal means (or, with a covariate, on the slopes of that covariate).

    Returns ``[(by_values, L), ...]``; rows of ``L`` may be linearly dependent (:func:`wald_f_test` reduces them).
    """
    X = _slope_grid(fit, rg, covariate) if covariate is not None else rg.X
    X_full = rg.X_full if rg.X_full is None or covariate is None else _slope_grid(fit, rg, covariate, full=True)
    grid = ReferenceGrid(factors=rg.factors, covariates=rg.covariates, grid=rg.grid, X=X, X_full=X_full, spec=rg.spec)
    keys = factors if factors else []
    K = np.ones((1, 1))
    for f in reversed(factors):  # the first factor varies fastest in the cells
        K = np.kron(K, _consec(len(rg.factors[f])))
    if not keys:  # a covariate's average slope
        if by:
            cells, Lc = marginal_linfct(grid, [by[0]], by[1:]) if len(by) > 1 else marginal_linfct(grid, by, [])
            return [({b: cells[b].iloc[i] for b in by}, Lc[i:i + 1]) for i in range(len(cells))]
        average = X.mean(axis=0, keepdims=True)
        if X_full is not None and rg.spec.nonestimable(X_full.mean(axis=0)).any():
            average = np.full_like(average, np.nan)
        return [({}, average)]
    cells, Lc = marginal_linfct(grid, keys, by)
    n = int(np.prod([len(rg.factors[f]) for f in keys]))
    out = []
    for base in range(0, len(cells), n):
        out.append(({b: cells[b].iloc[base] for b in by}, combine_rows(K, Lc[base:base + n])))
    return out


def fstat_ddf(nu: np.ndarray, tol: float = 1e-8) -> float:
    """Denominator df of an F test from the Satterthwaite df ``nu_m`` of its ``q`` orthogonal 1-df parts (Fai &
    Cornelius 1996; lmerTest's ``get_Fstat_ddf``): ``E = sum nu_m / (nu_m - 2)``, ``ddf = 2E / (E - q)``; 2 when a
    ``nu_m <= 2``; their common value when all are equal.

    Examples
    --------
    >>> round(fstat_ddf(np.array([10.0, 30.0])), 4)
    14.4444
    """
    nu = np.asarray(nu, dtype=float)
    if nu.size == 1:
        return float(nu[0])
    if np.all(np.abs(np.diff(nu)) < tol):
        return float(np.mean(nu))
    if np.any(nu <= 2):
        return 2.0
    E = float(np.sum(nu / (nu - 2)))
    return 2 * E / (E - nu.size)


def wald_f_test(L: np.ndarray, coef: np.ndarray, inference: DfInference) -> tuple[float, int, float]:
    """``F = (L b)' (L V L')^+ (L b) / q`` on the ``q`` estimable directions of ``L`` (eigenvalues of ``L V L'``
    above ``sqrt(eps)`` of the largest, as lmerTest) and its denominator df: ``(F, q, df2)``."""
    L = L[~np.isnan(L).any(axis=1)]  # rows a rank-deficient fit cannot estimate (NaN) leave the test
    V = inference.vcov
    M = L @ V @ L.T
    d, P = np.linalg.eigh(0.5 * (M + M.T))
    order = np.argsort(d)[::-1]
    d, P = d[order], P[:, order]
    keep = d > max(np.sqrt(np.finfo(float).eps) * d[0], 0.0) if d.size and d[0] > 0 else np.zeros(d.size, bool)
    q = int(keep.sum())
    if q == 0:
        return float("nan"), 0, float("nan")
    PL = P[:, keep].T @ L
    F = float(np.sum((PL @ coef) ** 2 / d[keep]) / q)
    if inference.method == "asymptotic":
        return F, q, float("inf")
    nu = np.asarray(inference.df(PL), dtype=float)
    return F, q, fstat_ddf(nu)


def joint_tests(fit: MixedResult, *, by: str | Sequence[str] | None = None, df: str = "asymptotic",
                data: pd.DataFrame | None = None) -> pd.DataFrame:
    """F tests of every fixed-effect term (emmeans' ``joint_tests``), optionally within levels of ``by``.

    Parameters
    ----------
    fit : MixedResult
        A model fitted by :func:`mixeval.lmer` or :func:`mixeval.glmer` (link scale).
    by : str or list of str, optional
        Test the terms not involving ``by`` within each of its levels.
    df : {"asymptotic", "satterthwaite", "satterthwaite-upper"}
        ``"asymptotic"`` (``df2 = inf``, the F of a chi-square / q, emmeans' asymptotic df); ``"satterthwaite"``:
        lmerTest's ``anova(m, type = 3)`` (each estimable direction's Satterthwaite df combined by
        :func:`fstat_ddf`). Kenward-Roger's F test (pbkrtest's scaled F) is not provided.
    data : DataFrame, optional
        The fitted rows, only needed when the fit does not hold them (covariate means).

    Returns
    -------
    DataFrame
        One row per term (and ``by`` level): ``term``, the ``by`` columns, ``df1``, ``df2``, ``F``, ``pvalue``;
        ``attrs`` name the df method.

    Notes
    -----
    For a term with factors ``A, B`` the hypothesis is that the interaction contrasts ``(C_A (x) C_B)`` of the
    equally weighted marginal means of the ``A x B`` cells are 0 (for a main effect: all its marginal means equal),
    the type III hypothesis; for a term with a numeric covariate the same contrasts apply to the covariate's slopes
    (a main effect: its average slope is 0). ``F = (L b)' (L V L')^+ (L b) / q`` with ``q`` the rank;
    ``p = P(F_{q, df2} >= F)``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import mixeval
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(np.arange(30), 6)
    >>> df = pd.DataFrame({"item": g, "system": np.tile(["A", "B", "C"], 60),
    ...                    "len": np.tile(["s", "s", "s", "l", "l", "l"], 30)})
    >>> df["score"] = rng.normal(size=30)[g] + df.system.map({"A": 0.0, "B": 0.2, "C": 0.5}) + rng.normal(size=180)
    >>> joint_tests(mixeval.lmer("score ~ system * len + (1|item)", df))[["term", "df1", "F"]].round(3)
             term  df1       F
    0      system    2  12.910
    1         len    1   2.086
    2  system:len    2   2.122
    """
    _check_fit(fit)
    method = canonical_df(df)
    if method == "kenward-roger":
        raise InputError("joint_tests(df='kenward-roger') is not available (pbkrtest's scaled F is not implemented); "
                         "use df='satterthwaite' (lmerTest's anova) or df='asymptotic'.")
    by_list = normalise_names(by, "by")
    rg = cached_reference_grid(fit, data)
    for b in by_list:
        if b not in rg.factors:
            raise InputError(f"by={b!r} is not a factor of the model; factors: {', '.join(rg.factors) or 'none'}.")
    inference = df_inference(fit, method)
    coef = np.asarray(fit.coef, dtype=float)
    rows = []
    for label, factors, covariate in _model_terms(fit, rg):
        if set(factors) & set(by_list):
            continue
        for by_values, L in term_hypotheses(fit, rg, factors, covariate, by_list):
            F, q, df2 = wald_f_test(L, coef, inference)
            if q == 0:
                continue
            p = float(sps.f.sf(F, q, df2)) if np.isfinite(df2) else float(sps.chi2.sf(F * q, q))
            rows.append({"term": label, **by_values, "df1": q, "df2": df2, "F": F, "pvalue": p})
    if not rows:
        raise InputError("the model has no fixed-effect term to test (only an intercept, or only `by` factors).")
    table = pd.DataFrame(rows)
    return label_table(table, fit, inference.method)
