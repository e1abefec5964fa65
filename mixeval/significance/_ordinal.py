"""Estimated marginal means of ordinal (cumulative link) fits in emmeans' ordinal modes, and their contrasts.

emmeans' ``mode`` for ``clm``/``clmm`` fits, on the reference grid of :mod:`._grid`:

* ``"latent"``: ``x' beta - mean(theta)`` (the linear predictor on the latent scale, offset by the mean
  threshold), averaged over the grid rows of a cell;
* ``"prob"``: ``P(Y = j)`` per category (a column named after the response);
* ``"cum.prob"`` / ``"exc.prob"``: ``P(Y <= j)`` / ``P(Y > j)`` per cut point ``"j|j+1"`` (column ``cut``);
  ``P(rating >= k)`` is ``exc.prob`` at the cut ``"k-1|k"``;
* ``"mean.class"``: the expected category index ``sum_j j P(Y = j)`` (1..J), emmeans' ``mean.class``.

Probabilities are computed per grid row and then averaged over the cell (emmeans' order). They are
*conditional*, for a typical item and rater (every random effect at 0: ``P(Y <= j) = F(theta_j - x' beta)``),
as emmeans' for clmm fits, unless ``marginal=True``: the *population-averaged* probabilities over the random
effects, ``P(Y <= j) = E_b[F(theta_j - x' beta - b)]`` with ``b ~ N(0, s2)``, ``s2`` the sum of the random
intercepts' variances (Gauss-Hermite quadrature, :data:`GH_NODES` nodes), the same construction as a binomial
Study's marginal accuracy; their standard errors are the delta method over ``(theta, alpha, beta)`` jointly (the
fit's ``cov_params``) with z intervals. Every table says which (``attrs["scale"]``; the contrasts' ``scale``).
Standard
errors by the delta method over the thresholds and location effects (their block of the fit's covariance;
central-difference gradients); z intervals (emmeans'), or with ``df="satterthwaite"`` t intervals on each
estimate's Satterthwaite df (:func:`~mixeval.mixed._clmm_ddf.clmm_satterthwaite_df` of its delta-method gradient:
the thresholds carry the mean of the few raters' effects, which a z interval treats as known). Contrasts go
through the adjustment stage of :mod:`._pairwise` (Tukey, Holm, BH, ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats as sps

from .._validation import require_level
from ..errors import InputError
from ..mixed import MixedResult
from ..mixed.engine import category_probabilities
from ._ddf import canonical_df
from ._grid import cached_reference_grid, marginal_linfct, normalise_names
from ._labels import label_table
from ._pairwise import PairwiseResult, adjusted_inference, canonical_adjust, contrast_layout

if TYPE_CHECKING:
    from ..mixed import ClmmResult

__all__ = ["ORDINAL_MODES", "emmeans_ordinal", "pairwise_ordinal", "latent_linfct", "ordinal_scale"]

#: The ``type=`` values of the ordinal means (emmeans' ``mode``): the latent mean, the probability of each
#: category, the cumulative and exceedance probabilities, and the mean category.
ORDINAL_MODES = ("latent", "prob", "cum.prob", "exc.prob", "mean.class")

#: Gauss-Hermite nodes of the population-averaged probabilities (``marginal=True``).
GH_NODES = 64


def ordinal_scale(fit: ClmmResult, mode: str, marginal: bool) -> str:
    """What an ordinal table's estimates are: the mode and whether conditional or population-averaged.

    Examples
    --------
    >>> class Fit:
    ...     group_names = ("item", "rater")
    >>> ordinal_scale(Fit(), "prob", False)
    'ordinal prob, conditional: a typical item and rater (random effects at 0)'
    """
    groups = " and ".join(fit.group_names) or "unit"
    if mode == "latent":
        return "ordinal latent: the linear predictor minus the mean threshold (the same for a typical and an average unit)"
    if marginal:
        return f"ordinal {mode}, marginal: averaged over the random effects of {groups} (population-averaged)"
    return f"ordinal {mode}, conditional: a typical {groups} (random effects at 0)"


def _marginal_s2(fit: ClmmResult) -> float:
    """The summed variance of the random intercepts, over which ``marginal=True`` averages; refusals by name."""
    terms = fit.problem.re.terms
    if getattr(fit, "spread", None) is not None or any(t.n_coef != 1 for t in terms):
        raise InputError("marginal=True averages over random intercepts; this fit has random slopes or random "
                         "thresholds, whose contribution depends on the covariate or the category. Use "
                         "marginal=False (a typical unit) or a model with random intercepts only.")
    return float(np.sum(np.asarray(fit.theta, dtype=float) ** 2))


def _check(fit: ClmmResult, mode: str) -> None:
    if not (hasattr(fit, "threshold_values") and hasattr(fit, "alpha")):
        raise InputError(f"emmeans_ordinal() takes a fit of mixeval.clmm(); got {type(fit).__name__}. For lmer or "
                         "glmer fits use mixeval.emmeans().")
    if mode not in ORDINAL_MODES:
        raise InputError(f"mode={mode!r} is not an ordinal mode; use one of {list(ORDINAL_MODES)}.")
    if fit.cov_params is None:
        raise InputError("the fit has no usable Hessian, so no standard errors; refit or simplify the model.")


class _FixedPart(MixedResult):
    """The reference grid's view of an ordinal fit: its design and data, with a coefficient for every column of the
    fixed-effects matrix (the intercept's place is taken by the thresholds, which the grid does not use)."""

    def __init__(self, fit: ClmmResult):
        object.__setattr__(self, "design", fit.design)
        object.__setattr__(self, "data", fit.data)
        object.__setattr__(self, "coef", np.zeros(len(fit.design.fixed_names)))


def _cell_rows(fit: ClmmResult, specs: list[str], by: list[str]) -> tuple[pd.DataFrame, list[np.ndarray]]:
    """The cells of ``specs`` within ``by`` and the reference-grid model-matrix rows (no intercept) of each."""
    rg = cached_reference_grid(_FixedPart(fit))
    cells, _ = marginal_linfct(rg, specs, by)
    keep = [i for i, nm in enumerate(fit.design.fixed_names) if nm != "(Intercept)"]
    X = rg.X[:, keep]
    rows = []
    for _, cell in cells.iterrows():
        mask = np.ones(len(rg.grid), dtype=bool)
        for name in [*specs, *by]:
            mask &= (rg.grid[name] == cell[name]).to_numpy()
        rows.append(X[mask])
    return cells, rows


def _parameters(fit: ClmmResult, marginal: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``phi = (alpha, beta)`` and its covariance (the fit's block, without the covariance parameters); with
    ``marginal``, ``phi = (theta, alpha, beta)`` and the whole ``cov_params``."""
    k = fit.theta.size
    if marginal:
        return np.concatenate([fit.theta, fit.alpha, fit.coef]), np.asarray(fit.cov_params, dtype=float)
    phi = np.concatenate([fit.alpha, fit.coef])
    return phi, np.asarray(fit.cov_params, dtype=float)[k:, k:]


def latent_linfct(fit: ClmmResult, specs: str | Sequence[str], by: str | Sequence[str] | None = None):
    """Cells and the linear functions over ``(alpha, beta)`` of the latent-mode means (``x' beta`` minus the
    mean threshold), with the normalised ``specs`` and ``by`` (as :func:`mixeval.significance._emmeans.marginal_means`)."""
    specs_list, by_list = normalise_names(specs, "specs"), normalise_names(by, "by")
    cells, rows = _cell_rows(fit, specs_list, by_list)
    m = fit.threshold_matrix.shape[1]
    a = np.zeros(fit.alpha.size)
    a[:m] = -np.asarray(fit.threshold_matrix, dtype=float).mean(axis=0)
    L = np.array([np.concatenate([a, X.mean(axis=0) if X.size else np.zeros(fit.coef.size)]) for X in rows])
    return cells, L, specs_list, by_list


def _df_method(df: object) -> str:
    """``"asymptotic"`` or ``"satterthwaite"``; the Gaussian fits' other methods refused by name."""
    method = canonical_df(df)
    if method not in ("asymptotic", "satterthwaite"):
        raise InputError(f"df={df!r}: an ordinal (clmm) fit offers df='asymptotic' (z, emmeans') or "
                         "df='satterthwaite' (t on Satterthwaite df of the Laplace fit).")
    return method


def _degrees_of_freedom(fit: ClmmResult, G: np.ndarray, method: str) -> np.ndarray:
    """The df of each row of ``G`` (linear functions, or delta-method gradients, over ``(alpha, beta)``)."""
    if method == "asymptotic" or G.shape[0] == 0:
        return np.full(G.shape[0], np.inf)
    from ..mixed.engine import clmm_satterthwaite_df

    return clmm_satterthwaite_df(fit, G).to_numpy(dtype=float)


def _thresholds_at(fit: ClmmResult, alpha: np.ndarray) -> np.ndarray:
    """The whole scale's thresholds at threshold parameters ``alpha`` (as :attr:`ClmmResult.threshold_values`)."""
    m = fit.threshold_matrix.shape[1]
    est = fit.threshold_matrix @ alpha[:m]
    idx = fit._full_index
    return np.where(idx == -1, -np.inf, np.where(idx == -2, np.inf, est[np.maximum(idx, 0)]))


def _marginal_probabilities(fit: ClmmResult, thresholds: np.ndarray, eta: np.ndarray, s2: float) -> np.ndarray:
    """``E_b[P(Y = j | eta + b)]``, ``b ~ N(0, s2)``, per row of ``eta``: Gauss-Hermite over the standardised ``b``."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(GH_NODES)
    weights = weights / weights.sum()
    shifted = (eta[:, None] + np.sqrt(max(s2, 0.0)) * nodes[None, :]).ravel()
    probs = category_probabilities(fit.family, thresholds, shifted).reshape(eta.size, nodes.size, -1)
    return np.einsum("inj,n->ij", probs, weights)


def _estimates(fit: ClmmResult, phi: np.ndarray, cell_rows: list[np.ndarray], mode: str,
               marginal: bool = False) -> np.ndarray:
    """Every estimate (cells x categories flattened category-outer for the probability modes) at ``phi``
    (``(alpha, beta)``, or ``(theta, alpha, beta)`` with ``marginal``)."""
    s2 = 0.0
    if marginal:
        k = fit.theta.size
        s2, phi = float(np.sum(phi[:k] ** 2)), phi[k:]
    n_alpha = fit.alpha.size
    alpha, beta = phi[:n_alpha], phi[n_alpha:]
    theta = _thresholds_at(fit, alpha)
    J = len(fit.levels)
    out: list[np.ndarray | list[float]] = []
    for X in cell_rows:
        eta = X @ beta if beta.size else np.zeros(X.shape[0])
        if mode == "latent":
            out.append([float(np.mean(eta)) - float(np.mean(theta[np.isfinite(theta)]))])
            continue
        prob = (_marginal_probabilities(fit, theta, eta, s2) if marginal
                else category_probabilities(fit.family, theta, eta)).mean(axis=0)
        if mode == "prob":
            out.append(prob)
        elif mode == "cum.prob":
            out.append(np.cumsum(prob)[:-1])
        elif mode == "exc.prob":
            out.append(1.0 - np.cumsum(prob)[:-1])
        else:
            out.append([float(prob @ np.arange(1, J + 1))])
    values = np.asarray(out, dtype=float)  # cells x per-cell
    return values.T.ravel()  # category outer, cells inner


def _gradient(fit: ClmmResult, phi: np.ndarray, cell_rows: list[np.ndarray], mode: str,
              marginal: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Estimates and their Jacobian in ``phi`` (central differences, step ``1e-6 max(|phi|, 1)``)."""
    est = _estimates(fit, phi, cell_rows, mode, marginal)
    G = np.empty((est.size, phi.size))
    for i in range(phi.size):
        h = 1e-6 * max(abs(phi[i]), 1.0)
        up, down = phi.copy(), phi.copy()
        up[i] += h
        down[i] -= h
        G[:, i] = (_estimates(fit, up, cell_rows, mode, marginal) - _estimates(fit, down, cell_rows, mode, marginal)) / (2 * h)
    return est, G


def _extended_cells(fit: ClmmResult, cells: pd.DataFrame, mode: str) -> tuple[pd.DataFrame, str | None]:
    """The cells repeated per category (prob) or cut point (cum.prob, exc.prob), category outermost."""
    if mode in ("latent", "mean.class"):
        return cells.reset_index(drop=True), None
    if mode == "prob":
        column, labels = fit.design.parsed.response, list(fit.levels)
    else:
        column, labels = "cut", list(fit.threshold_names)
    if column in cells.columns:
        column = f"{column}_category"
    parts = [cells.assign(**{column: lab}) for lab in labels]
    return pd.concat(parts, ignore_index=True), column


def _estimate_name(mode: str) -> str:
    return {"latent": "emmean", "prob": "prob", "cum.prob": "cumprob", "exc.prob": "exc.prob",
            "mean.class": "mean.class"}[mode]


def emmeans_ordinal(fit: ClmmResult, specs: str | Sequence[str], *, by: str | Sequence[str] | None = None,
                    mode: str = "latent", level: float = 0.95, df: str = "asymptotic",
                    marginal: bool = False) -> pd.DataFrame:
    """Estimated marginal means of a :func:`mixeval.clmm` fit in one of emmeans' ordinal modes.

    Parameters
    ----------
    fit : ClmmResult
    specs, by : str or list of str
        Factors of the fixed part (as :func:`mixeval.emmeans`).
    mode : {"latent", "prob", "cum.prob", "exc.prob", "mean.class"}
        See the module notes; ``"exc.prob"`` at the cut ``"3|4"`` is ``P(rating >= 4)``.
    level : float
        Confidence level of the intervals.
    df : {"asymptotic", "satterthwaite"}
        z intervals (emmeans' for clmm, ``df`` inf), or t intervals on Satterthwaite df (Laplace fits with scalar
        random-effects terms; see the module notes).
    marginal : bool, default False
        False: the probabilities of a typical item and rater (random effects at 0, emmeans'); True: averaged over
        the random effects (population-averaged; probability modes, random intercepts, ``df="asymptotic"``).

    Returns
    -------
    DataFrame
        ``*specs``, ``*by``, the category (``prob``: a column named after the response) or ``cut`` column
        for the probability modes, the estimate (``emmean``, ``prob``, ``cumprob``, ``exc.prob``,
        ``mean.class``), ``se``, ``df``, ``lower``, ``upper``; ``attrs["scale"]`` says which (conditional or
        marginal), ``attrs["df_method"]``, ``attrs["fit_criterion"]`` and ``attrs["note"]``.

    Examples
    --------
    >>> from mixeval.mixed import clmm
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=10, systems=("A", "B"), n_raters=10, response="rating")
    >>> em = emmeans_ordinal(clmm("rating ~ system + (1|rater)", df), "system", mode="mean.class")
    >>> list(em.columns)
    ['system', 'mean.class', 'se', 'df', 'lower', 'upper']
    """
    _check(fit, mode)
    level = require_level(level)
    method = _df_method(df)
    marginal = _check_marginal(fit, mode, marginal, method)
    specs_list, by_list = normalise_names(specs, "specs"), normalise_names(by, "by")
    cells, rows = _cell_rows(fit, specs_list, by_list)
    phi, V = _parameters(fit, marginal)
    est, G = _gradient(fit, phi, rows, mode, marginal)
    se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", G, V, G), 0.0))
    out, _ = _extended_cells(fit, cells, mode)
    dof = _degrees_of_freedom(fit, G, method)
    crit = sps.t.ppf(0.5 + level / 2, dof)
    out[_estimate_name(mode)] = est
    out["se"] = se
    out["df"] = dof
    out["lower"] = est - crit * se
    out["upper"] = est + crit * se
    out.attrs["level"] = float(level)
    return label_table(out, fit, method, scale=ordinal_scale(fit, mode, marginal))


def _check_marginal(fit: ClmmResult, mode: str, marginal: object, method: str) -> bool:
    """``marginal`` as a bool, refused (by name) for the latent mode, with Satterthwaite df, or without intercepts."""
    if not isinstance(marginal, (bool, np.bool_)):
        raise InputError(f"marginal= must be True or False; got {marginal!r}.")
    if not marginal:
        return False
    if mode == "latent":
        raise InputError("marginal=True averages the probabilities over the random effects; the latent mode is a "
                         "linear predictor, the same for a typical and an average unit: use a probability mode "
                         "(prob, cum.prob, exc.prob, mean.class).")
    if method != "asymptotic":
        raise InputError("marginal=True gives delta-method z intervals (df='asymptotic'); use df='asymptotic', or "
                         "marginal=False for the conditional probabilities with Satterthwaite df.")
    _marginal_s2(fit)
    return True


def pairwise_ordinal(fit: ClmmResult, specs: str | Sequence[str], *, by: str | Sequence[str] | None = None,
                     mode: str = "latent", adjust: str = "tukey", level: float = 0.95,
                     df: str = "asymptotic", marginal: bool = False) -> PairwiseResult:
    """Pairwise differences of :func:`emmeans_ordinal` estimates (within each ``by`` group and category).

    Adjustments as :func:`mixeval.pairwise` (Tukey's studentized range, Holm, Bonferroni, BH, none); the
    probability modes compare within each category or cut point (each its own family, as emmeans'
    ``pairs(emmeans(fit, ~ specs | rating, mode = "prob"))``). ``effect_size`` is the latent-mode difference
    divided by the latent residual standard deviation (a standardised difference of the latent ratings); the
    probability modes have no such standard deviation (a difference of probabilities or of mean classes is
    already on an interpretable scale), so their table has no ``effect_size`` column and the result's
    ``effect_size_note`` says why. ``df``: z tests (``"asymptotic"``, emmeans') or t tests on each contrast's
    Satterthwaite df (``"satterthwaite"``, see :func:`emmeans_ordinal`). ``marginal``: contrasts of the
    population-averaged probabilities (see :func:`emmeans_ordinal`); ``scale`` names which.

    Examples
    --------
    >>> from mixeval.mixed import clmm
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=10, n_raters=10, response="rating")
    >>> res = pairwise_ordinal(clmm("rating ~ system + (1|rater)", df), "system", adjust="holm")
    >>> res.table.contrast.tolist()
    ['A - B', 'A - C', 'B - C']
    """
    _check(fit, mode)
    method = canonical_adjust(adjust)
    level = require_level(level)
    df_method = _df_method(df)
    marginal = _check_marginal(fit, mode, marginal, df_method)
    specs_list, by_list = normalise_names(specs, "specs"), normalise_names(by, "by")
    cells, rows = _cell_rows(fit, specs_list, by_list)
    phi, V = _parameters(fit, marginal)
    est, G = _gradient(fit, phi, rows, mode, marginal)
    ext, cat = _extended_cells(fit, cells, mode)
    families = by_list + ([cat] if cat else [])
    n_spec, m, table_rows, idx = contrast_layout(ext, specs_list, families)
    C = np.asarray([G[a] - G[b] for a, b in idx])
    diff = np.asarray([est[a] - est[b] for a, b in idx])
    se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", C, V, C), 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = diff / se
    dof = _degrees_of_freedom(fit, C, df_method)
    p_raw, p_adj, ci_method, crit = adjusted_inference(stat, dof, method, level, n_spec, m)
    sigma = float(np.sqrt(fit.distribution_variance)) if mode == "latent" else float("nan")
    table = pd.DataFrame(table_rows)
    table["estimate"] = diff
    table["se"] = se
    table["df"] = dof
    table["z" if df_method == "asymptotic" else "t"] = stat
    table["pvalue"] = p_adj
    table["lower"] = diff - crit * se
    table["upper"] = diff + crit * se
    table["pvalue_unadjusted"] = p_raw
    if mode == "latent":
        table["effect_size"] = diff / sigma
        size_scale = "latent residual SD"
    else:
        size_scale = (f"the {mode} contrasts are differences of "
                      + ("expected classes" if mode == "mean.class" else "probabilities")
                      + ", already on the rating scale; effect_size (a standardised latent difference) is given "
                        "with scale='latent'")
    means = emmeans_ordinal(fit, specs_list, by=by_list or None, mode=mode, level=level, df=df_method,
                            marginal=marginal)
    return PairwiseResult(table=table, emmeans=means, specs=tuple(specs_list), by=tuple(families), adjust=method,
                          ci_method=ci_method, level=level, family_size=n_spec, df_method=df_method,
                          trend=None, sigma=sigma, fit_criterion=fit.approximation,
                          effect_size_scale=size_scale, scale=ordinal_scale(fit, mode, marginal))
