"""The fitted GAM: deviance explained, effective degrees of freedom, feature shapes, k-check."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._random import as_generator
from .._results import Result
from .._validation import require_columns, require_dataframe, require_no_missing, require_positive_int
from ..errors import InputError
from ._gam_basis import Term, cr_local
from ._gam_family import expit

__all__ = ["GAMResult"]


@dataclass(frozen=True, eq=False)
class GAMResult(Result):
    """A fitted GAM: deviance explained, effective degrees of freedom and feature shapes.

    Examples
    --------
    >>> from mixeval.validity import fit_gam
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.uniform(size=400)})
    >>> df["y"] = (df["x"] > 0.5) + rng.normal(0, 0.1, 400)
    >>> m = fit_gam(df, "y", ["x"], k=20)
    >>> m.term("x").k, bool(m.d2 > 0.9), list(m.shape("x", grid=3).columns)
    (20, True, ['x', 'f', 'se'])

    Attributes
    ----------
    features : tuple of str
        The model's terms, in order.
    family : str
        ``"gaussian"`` (identity link) or ``"binomial"`` (logit link).
    n : int
        Number of rows.
    d2 : float
        Deviance explained ``1 - D(mu) / D(mu_0)`` (book Eq. 2.9).
    deviance, null_deviance : float
        Deviance of the model and of the intercept-only model.
    edf : float
        Effective degrees of freedom, ``tr((X'WX + S_lambda)^{-1} X'WX)``, intercept included.
    edf_terms : dict
        Effective degrees of freedom of each term.
    smoothing : dict
        Selected smoothing parameter of each smooth term (on the engine's internal penalty scale).
    intercept : float
        The intercept (every smooth sums to zero over the data).
    scale : float
        Residual variance (Gaussian) or 1 (binomial).
    converged : bool
        Whether the fit converged (always True for Gaussian).
    separated : bool
        Binomial only: the fitted linear predictor separates the 0/1 labels completely; the
        deviance's infimum 0 and ``d2 = 1`` are reported (a :class:`ConvergenceWarning` says so).
    """

    features: tuple[str, ...]
    family: str
    n: int
    d2: float
    deviance: float
    null_deviance: float
    edf: float
    edf_terms: dict[str, float]
    smoothing: dict[str, float]
    intercept: float
    scale: float
    converged: bool = True
    separated: bool = False
    iterations: int = 1
    _design: Any = field(default=None, repr=False, compare=False)
    _idx: tuple[int, ...] = field(default=(), repr=False, compare=False)
    _coefs: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)
    _cov: np.ndarray | None = field(default=None, repr=False, compare=False)
    _slices: tuple[slice, ...] = field(default=(), repr=False, compare=False)
    _fitted: np.ndarray | None = field(default=None, repr=False, compare=False)

    # numbers -------------------------------------------------------------
    @property
    def fitted(self) -> np.ndarray:
        """Fitted means (response scale) for every row."""
        return self._fitted.copy()

    @property
    def design(self) -> Any:
        """The :class:`~mixeval.validity._gam_design.GAMDesign` the model was fitted from."""
        return self._design

    def term(self, feature: str) -> Term:
        """The model term of ``feature`` (basis, knots, penalty, levels)."""
        if feature not in self.features:
            raise InputError(f"{feature!r} is not a term of this model; terms: {', '.join(self.features)}.")
        return self._design.terms[self._term_index(feature)]

    def basis_dimension(self, feature: str) -> int:
        """``k`` of a smooth term (0 for a parametric term)."""
        return self.term(feature).k

    def term_contributions(self, scale: str = "link") -> pd.DataFrame:
        """Each term's contribution for every row, one column per feature.

        ``scale="link"``: ``f_k(x_k)``. ``scale="response"``: the change of the fitted mean when the
        term is removed, ``mu - g^{-1}(eta - f_k(x_k))`` (identical to the link scale for the
        Gaussian family; for the binomial family a change in predicted probability, which stays
        finite where the logit diverges).
        """
        if scale not in ("link", "response"):
            raise InputError(f"`scale` must be 'link' or 'response'; got {scale!r}.")
        out = {}
        for f in self.features:
            i = self._term_index(f)
            out[f] = self._design.term_values(i, self._coefs[f])
        tc = pd.DataFrame(out)
        if scale == "response" and self.family == "binomial":
            eta = self.intercept + tc.sum(axis=1).to_numpy()
            mu = expit(eta)
            tc = pd.DataFrame({f: mu - expit(eta - tc[f].to_numpy()) for f in self.features})
        return tc

    def term_sd(self, scale: str = "link") -> dict[str, float]:
        """Standard deviation over the data of each term's contribution (the nullification measure)."""
        tc = self.term_contributions(scale)
        return {f: float(np.std(tc[f].to_numpy())) for f in self.features}

    def shape(self, feature: str, grid: int = 200) -> pd.DataFrame:
        """The feature shape on a grid (smooth) or per level (factor): columns ``x``, ``f``, ``se``.

        ``se`` is the Bayesian standard error of ``f`` (as mgcv's ``plot.gam``).
        """
        if feature not in self.features:
            raise InputError(f"{feature!r} is not a term of this model; terms: {', '.join(self.features)}.")
        require_positive_int(grid, "grid", minimum=2)
        term = self.term(feature)
        pos = self.features.index(feature)
        sl = self._slices[pos]
        V = self._cov[sl, sl]
        if term.kind == "smooth":
            x = np.linspace(term.lo, term.hi, grid)
            Xg = np.asarray(cr_local(x, term.knots) @ term.TZ)
        else:
            x = np.array(term.levels, dtype=object)
            Xg = np.vstack([np.zeros((1, term.ncol)), np.eye(term.ncol)])
        f = Xg @ self._coefs[feature]
        se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", Xg, V, Xg), 0.0))
        return pd.DataFrame({"x": x, "f": f, "se": se})

    def predict(self, data: pd.DataFrame, *, scale: str = "response") -> np.ndarray:
        """Predictions for new rows (smooths continue linearly beyond the data range, as mgcv).

        Parameters
        ----------
        data : pandas.DataFrame
            Must hold every feature of the model; factor levels must have been seen in the fit.
        scale : {"response", "link"}
            Fitted means, or the linear predictor.
        """
        data = require_dataframe(data)
        require_columns(data, list(self.features))
        require_no_missing(data, list(self.features))
        if scale not in ("link", "response"):
            raise InputError(f"`scale` must be 'link' or 'response'; got {scale!r}.")
        eta = np.full(len(data), self.intercept)
        for f in self.features:
            t = self.term(f)
            if t.kind == "factor":
                unseen = set(pd.unique(data[f])) - set(t.levels)
                if unseen:
                    raise InputError(f"feature {f!r} has level(s) {sorted(map(str, unseen))} not seen in the fit.")
            else:
                vals = data[f].to_numpy(dtype=float)
                if not np.all(np.isfinite(vals)):
                    raise InputError(f"feature {f!r} has infinite values.")
            eta += np.asarray(t.local(data[f]) @ (t.TZ @ self._coefs[f])).ravel()
        if scale == "link" or self.family == "gaussian":
            return eta
        return expit(eta)

    def residuals(self) -> np.ndarray:
        """Deviance residuals (``y - mu`` for the Gaussian family), as mgcv's ``residuals(m)``."""
        y = self._design.y
        mu = self._fitted
        if self.family == "gaussian":
            return y - mu
        m = np.clip(mu, 1e-15, 1 - 1e-15)
        with np.errstate(divide="ignore", invalid="ignore"):
            d = 2 * (np.where(y > 0, y * np.log(y / m), 0.0) + np.where(y < 1, (1 - y) * np.log((1 - y) / (1 - m)), 0.0))
        return np.sign(y - mu) * np.sqrt(np.maximum(d, 0.0))

    def basis_check(
        self, *, subsample: int = 5000, n_resamples: int = 400, random_state: int | np.random.Generator | None = None
    ) -> pd.DataFrame:
        """Is the basis dimension large enough? mgcv's ``k.check``: k', edf, k-index and its p-value.

        Residuals are ordered by each smooth's covariate; if the basis missed a pattern,
        neighbouring residuals are similar and ``k_index = mean(diff(r)^2) / 2 / mean(r^2)`` falls
        below 1. The p-value is the share of ``n_resamples`` random orderings with a smaller
        value. Above ``subsample`` rows a random subsample is used (as mgcv). A low k-index
        with ``edf`` close to ``k'`` means: increase ``k``.

        Returns
        -------
        pandas.DataFrame
            Columns ``feature``, ``k_prime``, ``edf``, ``k_index``, ``p_value`` (smooth terms only).
        """
        rng = as_generator(random_state)
        rsd = self.residuals()
        n = rsd.size
        idx = np.arange(n) if n <= subsample else np.sort(rng.choice(n, subsample, replace=False))
        r = rsd[idx]
        rows = []
        for f in self.features:
            t = self.term(f)
            if t.kind != "smooth":
                continue
            x = np.asarray(self.feature_values(f), dtype=float)[idx]
            v_obs = float(np.mean(np.diff(r[np.argsort(x, kind="stable")]) ** 2) / 2)
            ve = np.array([np.mean(np.diff(r[rng.permutation(r.size)]) ** 2) / 2 for _ in range(n_resamples)])
            rows.append({"feature": f, "k_prime": t.ncol, "edf": self.edf_terms[f],
                         "k_index": v_obs / float(np.mean(r**2)), "p_value": float(np.mean(ve < v_obs))})
        return pd.DataFrame(rows, columns=["feature", "k_prime", "edf", "k_index", "p_value"])

    def feature_values(self, feature: str) -> np.ndarray:
        """Observed values of ``feature`` (for rug plots)."""
        i = self._term_index(feature)
        return self._design.values[i]

    def _term_index(self, feature: str) -> int:
        return self._design.features.index(feature)

    # printing ------------------------------------------------------------
    def summary(self) -> str:
        """A short text summary (D^2, edf per term)."""
        link = "identity" if self.family == "gaussian" else "logit"
        lines = [
            f"GAM ({self.family}, {link} link), n = {self.n}",
            f"deviance explained D^2 = {self.d2:.4f}, edf = {self.edf:.3f}",
            "term         kind     k   edf",
        ]
        for f in self.features:
            t = self.term(f)
            lines.append(f"{f:12s} {t.kind:7s} {t.k:3d} {self.edf_terms[f]:6.3f}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"GAMResult(features={list(self.features)}, family={self.family!r}, d2={self.d2:.6g}, edf={self.edf:.6g}, n={self.n})"
