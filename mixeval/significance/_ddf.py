"""Degrees of freedom of linear functions of the fixed effects, as emmeans offers them for lmer fits.

* ``"asymptotic"`` -- z tests (``df = inf``), the book's choice (emmeans' ``lmer.df = "asymptotic"``);
* ``"satterthwaite"`` -- lmerTest's Satterthwaite approximation (the engine's
  :meth:`LmerResult.satterthwaite_df`), standard errors from ``fit.cov_coef``; for glmer fits the
  linearised model's Satterthwaite approximation (SAS GLIMMIX's ``DDFM=SATTERTHWAITE``,
  :mod:`mixeval.significance._glmm_ddf`);
* ``"kenward-roger"`` -- pbkrtest's method (emmeans' default for lmer fits of up to 3,000 rows): the adjusted covariance
  of the fixed effects (``vcovAdj``) for the standard errors and its degrees of freedom (``Lb_ddf``);
* ``"satterthwaite-upper"`` (experimental) -- Satterthwaite's df with each variance component's part of the
  variance at an upper confidence bound (:mod:`mixeval.significance._satterthwaite`): near-nominal coverage where a
  component from 3-5 levels carries most of a mean's variance, where Satterthwaite's and Kenward-Roger's
  intervals undercover. For glmer fits and REML random-intercept lmer fits of balanced, crossed designs whose
  components have 3 or more levels (refused elsewhere: :mod:`mixeval.significance._upper_range`).

Kenward-Roger (and lmerTest's Satterthwaite for random-intercept fits) is computed by
:mod:`mixeval.significance._kenward_roger` in the space of the random effects, for every lmer random-effects
structure (intercepts, correlated and uncorrelated slopes, factor slopes, several terms, prior weights).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from threadpoolctl import ThreadpoolController

from ..errors import InputError
from ._glmm_ddf import glmm_ddf_pieces, is_glmm
from ._kenward_roger import KR_MAX_EFFECTS, DdfPieces, kr_pieces, re_layout

if TYPE_CHECKING:
    from ..mixed import MixedResult

__all__ = ["DF_METHODS", "canonical_df", "DfInference", "df_inference", "kenward_roger_vcov", "DdfPieces",
           "ddf_pieces", "PBKRTEST_LIMIT", "LMERTEST_LIMIT", "default_df", "kenward_roger_problem",
           "random_intercept_problem", "expected_variance_covariance"]

#: Accepted ``df`` values (case-insensitive) and the method each names.
DF_METHODS: dict[str, str] = {
    "asymptotic": "asymptotic", "z": "asymptotic", "inf": "asymptotic",
    "satterthwaite": "satterthwaite", "satterth": "satterthwaite",
    "satterthwaite-upper": "satterthwaite-upper", "satterthwaite_upper": "satterthwaite-upper",
    "kenward-roger": "kenward-roger", "kenward_roger": "kenward-roger", "kr": "kenward-roger",
}

#: emmeans' ``pbkrtest.limit``: Kenward-Roger by default for lmer fits of up to this many observations.
PBKRTEST_LIMIT = 3000

#: emmeans' ``lmerTest.limit``: Satterthwaite (where Kenward-Roger is not used) up to this many observations.
LMERTEST_LIMIT = 3000


def canonical_df(df: object) -> str:
    """The df method named by ``df`` (``"asymptotic"``, ``"satterthwaite"``, ``"kenward-roger"`` or
    ``"satterthwaite-upper"``).

    Examples
    --------
    >>> canonical_df("KR"), canonical_df("Satterthwaite"), canonical_df("asymptotic")
    ('kenward-roger', 'satterthwaite', 'asymptotic')
    """
    if isinstance(df, str):
        method = DF_METHODS.get(df.strip().lower())
        if method is not None:
            return method
    raise InputError(f"unknown degrees-of-freedom method df={df!r}; choose 'asymptotic' (z tests, the book's), "
                     "'satterthwaite' (lmerTest's), 'kenward-roger' (pbkrtest's) or "
                     "'satterthwaite-upper' (experimental: Satterthwaite with the components' shares at an upper "
                     "bound).")


def _root_weights(fit: MixedResult) -> np.ndarray | None:
    """``sqrt(w)`` of a weighted fit (residual variance ``sigma^2 / w_i``), None for an unweighted one.

    A weighted model is the unweighted model of the rows scaled by ``sqrt(w_i)``: ``V* = W^1/2 V W^1/2`` has
    the residual covariance ``sigma^2 I`` and a random-effects matrix with entries ``sqrt(w_i)``. ``X'V^-1X``,
    the traces of Kenward-Roger and the REML Hessian are invariant to that fixed transformation, so the pieces
    of the scaled rows are those of the weighted model.
    """
    weights = getattr(fit, "weights", None)
    return None if weights is None else np.sqrt(np.asarray(weights, dtype=float))


def ddf_pieces(fit: MixedResult) -> DdfPieces:
    """Kenward-Roger and Satterthwaite pieces of a REML lmer fit, cached per fit.

    Notes
    -----
    Variance parameters ``gamma``: each random term's variances and covariances (the lower triangle of
    ``Sigma_k`` column-wise, pbkrtest's order), then ``sigma^2``, with ``V = sum_r gamma_r G_r``,
    ``G_r = Z_k (I (x) S_r) Z_k'`` (``S_r = E_ii`` for a variance, ``E_ij + E_ji`` for a covariance) and
    ``G_res = I`` (pbkrtest's ``get_SigmaG``). With ``Phi = (X'V^-1X)^-1``,
    ``P_r = -X'V^-1 G_r V^-1 X``, ``Q_rs = X'V^-1 G_r V^-1 G_s V^-1 X`` and
    ``I_E[r, s] = tr(V^-1 G_r V^-1 G_s) - 2 tr(Phi Q_rs) + tr(Phi P_r Phi P_s) = tr(P G_r P G_s)``,
    ``W = 2 I_E^-1``, ``U = sum_rs W_rs (Q_rs - P_r Phi P_s)`` and ``Phi_A = Phi + 2 Phi U Phi``
    (Kenward & Roger 1997; their second-derivative term ``R_rs`` vanishes because ``V`` is linear in ``gamma``,
    and pbkrtest leaves it out). For random-intercept fits, the Hessian of the REML criterion is
    ``H_rs = -tr(P G_r P G_s) + 2 e' G_r P G_s e`` with ``e = P y = V^-1 (y - X b)`` (lmerTest's Satterthwaite).
    Every product is formed from ``Z'Z``, ``Z'[X r]``, ``[X r]'[X r]`` (``r`` the marginal residuals) through
    ``V^-1 = sigma^-2 (I - Z B Z')`` (:mod:`mixeval.significance._kenward_roger`).
    """
    key = id(fit)
    cached = _CACHE.get(key)
    if cached is not None and cached[0] is fit:
        return cached[1]
    problem = kenward_roger_problem(fit)
    if problem is not None:
        raise InputError(f"Kenward-Roger degrees of freedom are not available: this fit {problem}. "
                         + _KR_FIXES.get(problem, "Use df='satterthwaite' or df='asymptotic'."))
    lay = re_layout(fit.model_terms, np.asarray(fit.theta, dtype=float))
    # one BLAS thread for moderate q and for one grouping factor (no q x q matrix): under load, thread
    # oversubscription makes the small dense steps many times slower (as in the engine)
    small = lay.q < 2000 or len(lay.n_levels) == 1
    limit = _controller().limit(limits=1, user_api="blas") if small else contextlib.nullcontext()
    with limit:
        pieces = kr_pieces(np.asarray(fit.design.X, dtype=float), np.asarray(fit.design.y, dtype=float), lay,
                           float(fit.sigma2), root_w=_root_weights(fit))
    if len(_CACHE) >= 8:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = (fit, pieces)
    return pieces


_CACHE: dict[int, tuple[object, DdfPieces]] = {}
_CONTROLLER: list[ThreadpoolController] = []


def _controller() -> ThreadpoolController:
    """One threadpoolctl controller per process (creating it inspects the loaded libraries: slow)."""
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def expected_variance_covariance(fit: MixedResult, variances: dict[str, float] | None = None) -> np.ndarray:
    """``2 I_E^-1``: the asymptotic covariance of the REML estimates of ``(sigma_1^2, ..., sigma_K^2, sigma^2)`` (the
    groups in ``fit.group_names`` order, then the residual) from the expected information, at the fit's variances
    or at ``variances`` (``{group: variance}`` with ``"Residual"``): pbkrtest's ``W``, which depends on the design
    and the variances only (no response). For REML random-intercept lmer fits (:func:`random_intercept_problem`).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"g": np.repeat(np.arange(20), 5)})
    >>> df["y"] = rng.normal(size=20)[df.g] + rng.normal(size=100)
    >>> W = expected_variance_covariance(lmer("y ~ 1 + (1|g)", df), {"g": 1.0, "Residual": 1.0})
    >>> round(float(W[1, 1]), 4)  # var of the residual variance: 2 sigma^4 / (n - 20) in a balanced one-way layout
    0.025
    """
    problem = random_intercept_problem(fit)
    if problem is not None:
        raise InputError(f"the expected information of the variance components is computed for REML random-intercept "
                         f"lmer fits; this fit {problem}.")
    v = fit.variances if variances is None else variances
    sigma2 = float(v["Residual"])
    theta = np.sqrt(np.maximum([float(v[g]) for g in fit.group_names], 0.0) / sigma2)
    lay = re_layout(fit.model_terms, theta)
    return kr_pieces(np.asarray(fit.design.X, dtype=float), np.asarray(fit.design.y, dtype=float), lay, sigma2,
                     root_w=_root_weights(fit)).W_expected.copy()


def kenward_roger_vcov(fit: MixedResult) -> np.ndarray:
    """The Kenward-Roger adjusted covariance of the fixed effects of a REML fit (pbkrtest's ``vcovAdj``).

    Parameters
    ----------
    fit : LmerResult
        A REML fit (any random-effects structure lmer fits; prior weights enter as the residual covariance
        ``sigma^2 W^-1``, which pbkrtest's ``vcovAdj`` leaves out).

    Returns
    -------
    ndarray, shape (p, p)
        ``Phi + 2 Phi U Phi`` (see :func:`ddf_pieces`), in the order of ``fit.fixed_names``.

    Raises
    ------
    InputError
        An ML fit, a fit without rows, or more than ``KR_MAX_EFFECTS`` random effects over crossed factors.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(np.arange(12), 3)
    >>> df = pd.DataFrame({"item": g, "system": np.tile(["A", "B", "C"], 12)})
    >>> df = df.iloc[rng.permutation(36)[:30]]  # unbalanced
    >>> df["score"] = rng.normal(size=12)[df.item] + rng.normal(size=30)
    >>> fit = lmer("score ~ system + (1|item)", df)
    >>> bool(np.all(np.diag(kenward_roger_vcov(fit)) >= np.diag(fit.cov_coef)))
    True
    >>> df["x"] = rng.normal(size=30)
    >>> slopes = lmer("score ~ system + x + (1 + x|item)", df)
    >>> kenward_roger_vcov(slopes).shape
    (4, 4)
    """
    return ddf_pieces(fit).vcov_adjusted.copy()


@dataclass(frozen=True)
class DfInference:
    """The covariance used for standard errors and the degrees of freedom of linear functions.

    Attributes
    ----------
    method : str
        ``"asymptotic"``, ``"satterthwaite"``, ``"kenward-roger"`` or ``"satterthwaite-upper"``.
    vcov : ndarray
        Covariance of the fixed effects for the standard errors (Kenward-Roger: adjusted).
    """

    method: str
    vcov: np.ndarray = field(repr=False)
    fit: MixedResult | None = field(repr=False, compare=False)

    def df(self, L: np.ndarray) -> np.ndarray:
        """Degrees of freedom of each row of ``L`` (``inf`` for the asymptotic method)."""
        L = np.atleast_2d(np.asarray(L, dtype=float))
        if self.method == "asymptotic":
            return np.full(len(L), np.inf)
        fit = self.fit
        if fit is None:
            raise ValueError(f"df method {self.method!r} needs the fit; an asymptotic DfInference has none")
        if self.method == "kenward-roger":
            return ddf_pieces(fit).df_kenward_roger(L)
        if self.method == "satterthwaite-upper":
            pieces = glmm_ddf_pieces(fit) if is_glmm(fit) else ddf_pieces(fit)
            return pieces.df_satterthwaite_upper(L)
        if is_glmm(fit):
            return glmm_ddf_pieces(fit).df_satterthwaite(L)
        if _has_pieces(fit):
            return ddf_pieces(fit).df_satterthwaite(L)
        return np.array([_satterthwaite(fit, row) for row in L])  # the engine's, by numerical derivatives


def _require_upper_range(fit: MixedResult) -> None:
    from ._upper_range import upper_range_problems

    problems = upper_range_problems(fit)
    if problems:
        raise InputError("df='satterthwaite-upper' is experimental and calibrated only for balanced, crossed "
                         "random-intercept designs whose components have at least 3 levels; here "
                         + "; ".join(problems) + f". Use {_alternatives(fit)}.")


def _alternatives(fit: MixedResult) -> str:
    """The df methods that work for an lmer fit where ``"satterthwaite-upper"`` does not."""
    if kenward_roger_problem(fit) is None:
        return "df='kenward-roger', df='satterthwaite' or df='asymptotic'"
    return "df='satterthwaite' or df='asymptotic'"


def _has_pieces(fit: MixedResult) -> bool:
    """lmerTest's Satterthwaite df come from the pieces (analytic) for REML random-intercept fits; fits with random
    slopes use the engine's, in lmerTest's ``(theta, sigma)``."""
    return random_intercept_problem(fit) is None


_KR_FIXES = {
    "was fitted by maximum likelihood (REML=False)": "Refit with REML=True, or use df='satterthwaite' or "
                                                     "df='asymptotic'.",
}


def kenward_roger_problem(fit: MixedResult) -> str | None:
    """Why Kenward-Roger is not available for ``fit`` (a phrase completing "the fit ..."), or None when it is.

    Kenward-Roger needs a REML lmer fit made from the rows (any random-effects structure, weighted fits included),
    with at most ``KR_MAX_EFFECTS`` random effects over crossed factors.
    """
    if is_glmm(fit) or _is_ordinal(fit):
        return "is not a linear mixed model"
    design = getattr(fit, "design", None)
    if not getattr(fit, "reml", False):
        return "was fitted by maximum likelihood (REML=False)"
    if getattr(design, "X", None) is None:
        return "was made from aggregates, not from the rows"
    if len(design.groups) > 1 and len({g.name for g in design.groups}) > 1:
        q = sum(g.n_levels * len(g.coef_names) for g in design.groups)
        if q > KR_MAX_EFFECTS:
            return f"has {q:,} random effects over crossed factors (more than {KR_MAX_EFFECTS:,})"
    return None


def random_intercept_problem(fit: MixedResult) -> str | None:
    """Why ``fit`` is not a REML random-intercept lmer fit made from the rows (a phrase completing "the fit ..."),
    or None when it is: the fits whose variance components are one variance per grouping factor (lmerTest's
    Satterthwaite from the pieces, :func:`expected_variance_covariance`).

    Examples
    --------
    >>> from mixeval.datasets import toy_scores
    >>> from mixeval.mixed import lmer
    >>> random_intercept_problem(lmer("score ~ system + (1|item)", toy_scores())) is None
    True
    >>> random_intercept_problem(lmer("score ~ system + (1|item)", toy_scores(), REML=False))
    'was fitted by maximum likelihood (REML=False)'
    """
    problem = kenward_roger_problem(fit)
    if problem is None and fit.design.has_slopes:
        return "has random slopes"
    return problem


def _is_ordinal(fit: MixedResult) -> bool:
    return getattr(getattr(fit, "family", None), "name", None) == "ordinal"


def default_df(fit: MixedResult) -> tuple[str, str]:
    """The df method emmeans chooses for ``fit`` by default, and why (a sentence for the tables' notes).

    Returns
    -------
    (method, reason)
        GLMMs and ordinal fits: ``"asymptotic"`` (emmeans' for glmer and clmm fits). Linear mixed models (emmeans'
        ``lmer.df`` rule): ``"kenward-roger"`` while ``nobs <= PBKRTEST_LIMIT`` (3,000), else
        ``"satterthwaite"`` while ``nobs <= LMERTEST_LIMIT`` (3,000, so never with emmeans' limits), else
        ``"asymptotic"``. Where this fit cannot have Kenward-Roger (an ML fit, aggregates;
        :func:`kenward_roger_problem`), Satterthwaite takes its place within the limit, as emmeans falls back when
        pbkrtest cannot be used. Random slopes get Kenward-Roger, as pbkrtest gives them.

    Examples
    --------
    >>> from mixeval.mixed import lmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=40)
    >>> default_df(lmer("score ~ system + (1|item)", df))[0]
    'kenward-roger'
    >>> default_df(lmer("score ~ system + (1|item)", df, REML=False))[0]
    'satterthwaite'
    """
    if is_glmm(fit) or _is_ordinal(fit):
        return "asymptotic", f"the default: emmeans' for {'clmm' if _is_ordinal(fit) else 'glmer'} fits"
    n = int(fit.nobs)
    problem = kenward_roger_problem(fit)
    if n <= PBKRTEST_LIMIT and problem is None:
        return "kenward-roger", f"the default: emmeans' for lmer fits of up to {PBKRTEST_LIMIT:,} observations ({n:,} here)"
    if n <= LMERTEST_LIMIT and hasattr(fit, "satterthwaite_df"):
        why = f"this fit {problem}" if n <= PBKRTEST_LIMIT else f"more than {PBKRTEST_LIMIT:,} observations"
        return "satterthwaite", (f"the default: emmeans' fallback from Kenward-Roger for lmer fits of up to "
                                 f"{LMERTEST_LIMIT:,} observations ({why})")
    if n <= LMERTEST_LIMIT:
        return "asymptotic", f"the default: this fit {problem} and has no Satterthwaite df"
    return "asymptotic", (f"the default: emmeans' for lmer fits of more than {LMERTEST_LIMIT:,} observations ({n:,} "
                          "here; df='kenward-roger' or df='satterthwaite' give t intervals)")


def _satterthwaite(fit: MixedResult, row: np.ndarray) -> float:
    if not np.any(row):
        return float("nan")
    return float(fit.satterthwaite_df(row))


def df_inference(fit: MixedResult, df: str = "asymptotic") -> DfInference:
    """Standard-error covariance and degrees-of-freedom function of ``fit`` for the method ``df``.

    ``"satterthwaite-upper"`` (experimental) is refused outside its calibrated range
    (:func:`mixeval.significance._upper_range.upper_range_problems`).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"item": np.repeat(np.arange(12), 2), "system": np.tile(["A", "B"], 12)})
    >>> df["score"] = rng.normal(size=12)[df.item] + rng.normal(size=24)
    >>> inf = df_inference(lmer("score ~ system + (1|item)", df), "kenward-roger")
    >>> inf.method, inf.df([0.0, 1.0]).round(6).tolist()   # the paired design: n - 1
    ('kenward-roger', [11.0])
    """
    method = canonical_df(df)
    if method == "satterthwaite-upper":
        _require_upper_range(fit)
    if is_glmm(fit):
        if method == "kenward-roger":
            raise InputError("Kenward-Roger degrees of freedom are defined for linear mixed models; for a glmer fit "
                             "use df='satterthwaite' (the linearised model's, SAS GLIMMIX's) or df='asymptotic' "
                             "(z, emmeans' for glmer).")
        return DfInference(method, np.asarray(fit.cov_coef, dtype=float), fit)
    if method == "kenward-roger":
        return DfInference(method, ddf_pieces(fit).vcov_adjusted, fit)
    if method == "satterthwaite-upper" and not _has_pieces(fit):
        raise InputError("df='satterthwaite-upper' is implemented for glmer fits and REML random-intercept lmer "
                         f"fits made from the rows; this fit {random_intercept_problem(fit)}. Use {_alternatives(fit)}.")
    if method == "satterthwaite" and not hasattr(fit, "satterthwaite_df"):
        raise InputError("Satterthwaite degrees of freedom need a fit from mixeval.lmer(); use df='asymptotic'.")
    return DfInference(method, np.asarray(fit.cov_coef, dtype=float), fit)
