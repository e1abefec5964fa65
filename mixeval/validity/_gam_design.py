"""The design of a GAM search: every candidate term built once, any subset fitted from cross products.

For the Gaussian family the cross products ``X'X`` and ``X'y`` of *all* candidate features are
formed once; the fit of any subset of features is then an ``O(p^3)`` computation on a sub-block,
independent of the number of rows. That is what makes a powerset search over candidate features
cheap. The binomial family runs penalized IRLS (performance iteration) per subset.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import scipy.linalg as sla
import scipy.sparse as sp

from .._validation import require_columns, require_dataframe, require_no_missing, require_positive_int
from ..errors import ConvergenceWarning, FamilyWarning, InputError, as_flag, caller_stacklevel
from ..mixed.engine import single_threaded_blas
from ._gam_basis import Term, build_term, penalty_scale
from ._gam_family import binomial_deviance, expit
from ._gam_result import GAMResult
from ._gam_smoothing import PenalizedFit, select_smoothing

__all__ = ["GAMDesign", "SubsetFit", "make_design", "prepare_response", "validate_inputs", "warn_binary_target",
           "FAMILIES", "RIDGE"]

FAMILIES = ("gaussian", "binomial")


@dataclass(frozen=True)
class SubsetFit:
    """The penalized fit of one subset of terms, before it becomes a :class:`GAMResult`."""

    pf: PenalizedFit
    beta: np.ndarray
    deviance: float
    null_deviance: float
    scale: float
    fitted: np.ndarray
    converged: bool = True
    separated: bool = False
    iterations: int = 1
# Binomial fits add RIDGE * n to the diagonal of X'WX for every non-intercept coefficient: a very
# weak prior that keeps fits finite when some region of a feature holds only 0s or only 1s
# (quasi-separation, common for thresholded teacher predictions); its effect on other fits is
# below 1e-4 in D^2 (the mgcv comparisons in the tests include it).
RIDGE = 1e-6


class GAMDesign:
    """All candidate terms of one response, with the cross products needed to fit any subset."""

    def __init__(self, data: pd.DataFrame, y: np.ndarray, features: list[str], family: str,
                 k: int | dict[str, int], categorical: set[str], method: str = "GCV") -> None:
        self.n = y.size
        self.method = method
        self.y = y
        self.family = family
        self.features = list(features)
        self.values = [data[f].to_numpy() for f in features]  # observed values (rugs, k-check)
        self.terms: list[Term] = []
        self.W: list[sp.csr_matrix] = []
        for f in features:
            term, W = build_term(data[f], f, k[f] if isinstance(k, dict) else k, f in categorical)
            if term.kind == "smooth":
                scale = penalty_scale(W, term)
                term = replace(term, S=term.S * scale)
            self.terms.append(term)
            self.W.append(W)
        # column layout of the full model matrix: intercept, then each term
        self.slices: list[slice] = []
        start = 1
        for t in self.terms:
            self.slices.append(slice(start, start + t.ncol))
            start += t.ncol
        self.p = start
        self._dense: np.ndarray | None = None
        if self.n * self.p <= 2.5e7:
            self._dense = self.model_matrix(range(len(self.terms)))
        if family == "gaussian":
            self.ybar = float(y.mean())
            yc = y - self.ybar
            self.G = self.gram(None)
            self.b = self.cross(yc)
            self.yy = float(yc @ yc)

    # model matrices -------------------------------------------------------
    def model_matrix(self, idx) -> np.ndarray:
        blocks = [np.ones((self.n, 1))]
        for i in idx:
            blocks.append(np.asarray(self.W[i] @ self.terms[i].TZ))
        return np.hstack(blocks)

    def gram(self, w: np.ndarray | None, idx=None) -> np.ndarray:
        """``X' diag(w) X`` over the intercept and terms ``idx`` (all terms when None)."""
        idx = list(range(len(self.terms))) if idx is None else list(idx)
        if self._dense is not None and w is None:
            X = self._dense[:, self.columns(idx)]
            return X.T @ X
        # weighted (PIRLS): the sparse local bases (4 non-zeros per row and smooth) make X'WX several
        # times cheaper than the dense n x p product, and it is recomputed at every iteration
        ones = sp.csr_matrix(np.ones((self.n, 1)))
        Wall = sp.hstack([ones] + [self.W[i] for i in idx], format="csr")
        Ww = Wall if w is None else sp.csr_matrix(Wall.multiply(w[:, None]))
        WtW = (Wall.T @ Ww).toarray()
        T = sla.block_diag(np.ones((1, 1)), *[self.terms[i].TZ for i in idx])
        return T.T @ WtW @ T

    def cross(self, v: np.ndarray, idx=None) -> np.ndarray:
        idx = list(range(len(self.terms))) if idx is None else list(idx)
        if self._dense is not None:
            return self._dense[:, self.columns(idx)].T @ v
        parts = [np.array([v.sum()])] + [self.terms[i].TZ.T @ (self.W[i].T @ v) for i in idx]
        return np.concatenate(parts)

    def columns(self, idx) -> np.ndarray:
        return np.concatenate([[0]] + [np.arange(self.slices[i].start, self.slices[i].stop) for i in idx]).astype(int)

    def linear_predictor(self, idx, beta: np.ndarray) -> np.ndarray:
        if self._dense is not None:
            # a zero-filled full coefficient vector: no copy of the selected columns of the n x p matrix
            full = np.zeros(self.p)
            full[self.columns(idx)] = beta
            return self._dense @ full
        eta = np.full(self.n, beta[0])
        pos = 1
        for i in idx:
            nc = self.terms[i].ncol
            eta += self.W[i] @ (self.terms[i].TZ @ beta[pos:pos + nc])
            pos += nc
        return eta

    def term_values(self, i: int, coef: np.ndarray) -> np.ndarray:
        return np.asarray(self.W[i] @ (self.terms[i].TZ @ coef)).ravel()

    # fitting --------------------------------------------------------------
    def fit(self, idx, *, max_iter: int = 50, tol: float = 1e-7) -> GAMResult:
        """Fit the GAM on the terms ``idx`` (indices into ``self.terms``).

        Stages: the coefficient layout (:meth:`layout`), the penalized fit (:meth:`fit_gaussian`, or
        :meth:`fit_pirls` for the binomial family), then the result (:meth:`result`).
        """
        idx = list(idx)
        with single_threaded_blas():
            slices, penalties = self.layout(idx)
            if self.family == "gaussian":
                fit = self.fit_gaussian(idx, penalties)
            else:
                fit = self.fit_pirls(idx, penalties, max_iter=max_iter, tol=tol)
            return self.result(idx, slices, fit)

    def layout(self, idx: list[int]) -> tuple[list[slice], list[tuple[slice, np.ndarray]]]:
        """Coefficient slices of the terms ``idx`` in their sub-model (intercept first) and their penalties."""
        slices = []
        pos = 1
        for i in idx:
            nc = self.terms[i].ncol
            slices.append(slice(pos, pos + nc))
            pos += nc
        penalties = [(sl, self.terms[i].S) for sl, i in zip(slices, idx) if self.terms[i].kind == "smooth"]
        return slices, penalties

    def fit_gaussian(self, idx: list[int], penalties: list[tuple[slice, np.ndarray]]) -> SubsetFit:
        """Identity link: one penalized least-squares solve on the cached cross products."""
        cols = self.columns(idx)
        G = self.G[np.ix_(cols, cols)]
        pf = select_smoothing(G, self.b[cols], self.yy, float(self.n), penalties,
                              "GCV" if self.method == "GCV" else "REML")
        beta = pf.beta.copy()
        beta[0] += self.ybar
        scale = pf.rss / max(self.n - pf.edf_diag.sum(), 1.0)
        return SubsetFit(pf, beta, pf.rss, self.yy, scale, self.linear_predictor(idx, beta))

    def fit_pirls(self, idx: list[int], penalties: list[tuple[slice, np.ndarray]], *, max_iter: int,
                  tol: float) -> SubsetFit:
        """Logit link: penalized IRLS with the smoothing parameters re-selected at every step (UBRE/REML)."""
        y = self.y
        mu = (y + 0.5) / 2.0
        eta = np.log(mu / (1 - mu))
        dev_old = np.inf
        rho = None
        binary = bool(np.all((y == 0) | (y == 1)))
        converged, separated, iterations = False, False, 0
        for iterations in range(1, max_iter + 1):  # noqa: B007 (reported after the loop)
            w = np.clip(mu * (1 - mu), 1e-10, None)
            z = eta + (y - mu) / w
            G = self.gram(w, idx)
            if RIDGE:
                G = G + RIDGE * np.diag(np.r_[0.0, np.ones(G.shape[0] - 1)]) * self.n
            pf = select_smoothing(G, self.cross(w * z, idx), float(np.sum(w * z * z)), float(self.n), penalties,
                                  "UBRE" if self.method == "GCV" else "REML1", start=rho)
            rho = np.log(np.maximum(pf.lam, 1e-300)) if len(penalties) else None
            eta = self.linear_predictor(idx, pf.beta)
            mu = expit(eta)
            dev = binomial_deviance(y, mu)
            if binary and np.all((eta > 0) == (y > 0.5)):
                separated = converged = True  # complete separation: the likelihood's supremum is the saturated fit
                break
            if abs(dev - dev_old) <= tol * (abs(dev) + 0.1):
                converged = True
                break
            dev_old = dev
        names = [self.terms[i].name for i in idx]
        if separated:
            warnings.warn(
                f"the features {names} separate the 0/1 target perfectly: the logit GAM has no finite maximum, its "
                "deviance tends to 0, so D^2 = 1 is reported (as mgcv does). A deterministic rule over these "
                "features reproduces the labels.", ConvergenceWarning, stacklevel=caller_stacklevel(),
            )
        elif not converged:
            warnings.warn(
                f"penalized IRLS did not converge in {max_iter} iterations for features {names}; D^2 may be "
                "inaccurate (perfect separation?).", ConvergenceWarning, stacklevel=caller_stacklevel(),
            )
        ybar = float(np.clip(y.mean(), 1e-15, 1 - 1e-15))
        null_deviance = binomial_deviance(y, np.full(self.n, ybar))
        deviance = 0.0 if separated else binomial_deviance(y, mu)
        return SubsetFit(pf, pf.beta, deviance, null_deviance, 1.0, mu, converged, separated, iterations)

    def result(self, idx: list[int], slices: list[slice], fit: SubsetFit) -> GAMResult:
        """Assemble the :class:`GAMResult` (edf and smoothing parameter per term, D^2, covariance)."""
        pf = fit.pf
        edf_terms, coefs, lam_by_term = {}, {}, {}
        li = 0
        for sl, i in zip(slices, idx):
            t = self.terms[i]
            edf_terms[t.name] = float(pf.edf_diag[sl].sum())
            coefs[t.name] = fit.beta[sl].copy()
            if t.kind == "smooth":
                lam_by_term[t.name] = float(pf.lam[li])
                li += 1
        d2 = 1.0 - fit.deviance / fit.null_deviance if fit.null_deviance > 0 else np.nan
        return GAMResult(
            features=tuple(self.terms[i].name for i in idx), family=self.family, n=self.n, d2=float(d2),
            deviance=float(fit.deviance), null_deviance=float(fit.null_deviance), edf=float(pf.edf_diag.sum()),
            edf_terms=edf_terms, smoothing=lam_by_term, intercept=float(fit.beta[0]), scale=float(fit.scale),
            converged=fit.converged, separated=fit.separated, iterations=fit.iterations, _design=self,
            _idx=tuple(idx), _coefs=coefs, _cov=pf.Ainv * fit.scale, _slices=tuple(slices), _fitted=fit.fitted,
        )


def prepare_response(data: pd.DataFrame, target: str, family: str) -> np.ndarray:
    """Validate and return the response as float array."""
    if family not in FAMILIES:
        raise InputError(f"`family` must be one of {', '.join(FAMILIES)}; got {family!r}.")
    series = data[target]
    if not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)):
        example = series.astype(str).head(3).tolist()
        raise InputError(
            f"the target column {target!r} must be numeric for the {family} family; it has dtype "
            f"{series.dtype} (e.g. {example}). Encode it as numbers (for two classes use 0/1 and "
            "family='binomial')."
        )
    y = series.to_numpy(dtype=float)
    if family == "binomial" and (np.any(y < 0) or np.any(y > 1)):
        bad = np.unique(y[(y < 0) | (y > 1)])[:5].tolist()
        raise InputError(
            f"the binomial family needs a 0/1 target (or proportions in [0, 1]); {target!r} has values "
            f"{bad}. Threshold it first, e.g. (data[{target!r}] >= 2).astype(int)."
        )
    if np.all(y == y[0]):
        raise InputError(f"the target column {target!r} is constant (every value is {float(y[0]):g}); there is no "
                         "deviance to explain.")
    return y


def warn_binary_target(y: np.ndarray, target: str, family: str) -> None:
    """Warn (:class:`~mixeval.errors.FamilyWarning`) when a 0/1 target is fitted with the Gaussian family.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_binary_target(np.array([0.0, 1, 1, 0]), "label", "gaussian")
    >>> print(caught[0].message)  # doctest: +NORMALIZE_WHITESPACE
    the target 'label' only takes the values 0 and 1; family='gaussian' fits it as a numeric score (identity link,
    constant variance), so D^2 and the selected features are on the wrong scale. Pass family='binomial'.
    """
    if family == "gaussian" and np.isin(y, (0.0, 1.0)).all():
        gaussian, binomial = as_flag("family='gaussian'", "--family gaussian"), as_flag("family='binomial'",
                                                                                      "--family binomial")
        warnings.warn(f"the target {target!r} only takes the values 0 and 1; {gaussian} fits it as a numeric score "
                      "(identity link, constant variance), so D^2 and the selected features are on the wrong scale. "
                      f"Pass {binomial}.", FamilyWarning, stacklevel=caller_stacklevel())


def validate_inputs(data: object, target: str, features: list[str]) -> pd.DataFrame:
    data = require_dataframe(data)
    if isinstance(features, str):
        raise InputError(f"`features` must be a list of column names, not a string; write features=[{features!r}].")
    features = list(features)
    if not features:
        raise InputError("`features` is empty; name at least one feature column.")
    if len(set(features)) != len(features):
        raise InputError(f"`features` lists a column twice: {features}.")
    if target in features:
        raise InputError(f"the target {target!r} is also listed in `features`; remove it.")
    require_columns(data, [target, *features])
    require_no_missing(data, [target, *features])
    for f in features:
        s = data[f]
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            v = s.to_numpy(dtype=float)
            if not np.all(np.isfinite(v)):
                raise InputError(f"feature {f!r} has infinite values; remove or cap them first.")
    return data


def make_design(data: pd.DataFrame, target: str, features: list[str], family: str, k: int | Mapping[str, int],
                categorical: list[str] | None, method: str = "GCV") -> GAMDesign:
    """Validate the inputs and build the design of every candidate term (``k`` per feature or one for all).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.uniform(size=300), "z": rng.uniform(size=300)})
    >>> df["y"] = np.sin(6 * df["x"]) + rng.normal(0, 0.1, 300)
    >>> design = make_design(df, "y", ["x", "z"], "gaussian", {"x": 12, "z": 5}, None)
    >>> [t.k for t in design.terms], design.fit([0]).features
    ([12, 5], ('x',))"""
    data = validate_inputs(data, target, features)
    if isinstance(k, Mapping):
        missing = [f for f in features if f not in k]
        if missing:
            raise InputError(f"`k` is a mapping but has no basis dimension for {missing}.")
        k = {f: require_positive_int(k[f], f"k[{f!r}]", minimum=3) for f in features}
    else:
        k = require_positive_int(k, "k", minimum=3)
    y = prepare_response(data, target, family)
    if method not in ("GCV", "REML"):
        raise InputError(f"`method` must be 'GCV' (mgcv's default GCV.Cp: GCV, or UBRE for binomial) or 'REML'; got {method!r}.")
    cat = set(categorical or [])
    unknown = cat - set(features)
    if unknown:
        raise InputError(f"`categorical` names {sorted(unknown)} which are not in `features`.")
    with single_threaded_blas():
        design = GAMDesign(data, y, features, family, k, cat, method)
    return design
