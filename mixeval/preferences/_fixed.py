"""Stage 3 (fixed effects): the outcome models of a vote and their maximum-likelihood fit by Fisher scoring.

Each model gives the probabilities of the outcomes (``b`` won, tie, ``a`` won) of a vote from its linear
predictor ``eta = x' beta`` (the difference design) and at most one tie parameter ``phi``:

* ``binomial`` (ties dropped): ``P(a) = F(eta)``, ``F`` the logistic function (Bradley & Terry 1952);
* ``davidson``: ``P(a) : P(tie) : P(b) = e^{eta/2} : nu : e^{-eta/2}``, ``nu = e^phi`` (Davidson 1970:
  ``P(tie)`` proportional to ``nu sqrt(pi_a pi_b)``);
* ``ordinal``: the cumulative logit with symmetric thresholds ``-tau < tau`` (``tau = phi``):
  ``P(b) = F(-tau - eta)``, ``P(b or tie) = F(tau - eta)`` (R's ``ordinal::clm`` on the same design).

The fit maximises ``sum_i n_i sum_c [y_i = c] log pi_c`` by Fisher scoring with step halving; the
standard errors use the observed information (central differences of the analytic score), as R's
``glm`` (where the two agree) and ``clm`` do.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit

from ..errors import ConvergenceWarning, caller_stacklevel

__all__ = ["OutcomeModel", "outcome_model", "FixedFit", "fit_fixed", "loglik", "warn_not_converged", "TIES"]

TIES = ("drop", "davidson", "ordinal")


@dataclass(frozen=True)
class OutcomeModel:
    """Outcome probabilities of a vote and their derivatives in ``eta`` and the tie parameter ``phi``."""

    name: str
    n_phi: int
    phi_start: float

    def probabilities(self, eta: np.ndarray, phi: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(P(b), P(tie), P(a))`` per row and their derivatives in ``eta`` and ``phi`` (each ``3 x n``)."""
        if self.name == "binomial":
            pa = expit(eta)
            f = pa * (1 - pa)
            zero = np.zeros_like(eta)
            return (np.vstack([1 - pa, zero, pa]), np.vstack([-f, zero, f]), np.vstack([zero, zero, zero]))
        if self.name == "davidson":
            half = 0.5 * eta
            m = np.maximum(np.abs(half), phi)  # stabilise the exponentials
            ea, eb, et = np.exp(half - m), np.exp(-half - m), np.exp(phi - m)
            d = ea + eb + et
            pa, pb, pt = ea / d, eb / d, et / d
            deta = 0.5 * np.vstack([pb * (-1 - pa + pb), -pt * (pa - pb), pa * (1 - pa + pb)])
            dphi = np.vstack([-pb * pt, pt * (1 - pt), -pa * pt])
            return np.vstack([pb, pt, pa]), deta, dphi
        # ordinal: symmetric thresholds -tau, tau
        tau = phi
        lo, hi = expit(-tau - eta), expit(tau - eta)
        flo, fhi = lo * (1 - lo), hi * (1 - hi)
        probs = np.vstack([lo, hi - lo, 1 - hi])
        deta = np.vstack([-flo, flo - fhi, fhi])
        dphi = np.vstack([-flo, fhi + flo, -fhi])
        return probs, deta, dphi


def outcome_model(ties: str) -> OutcomeModel:
    """The model for ``ties`` in ``{"drop", "davidson", "ordinal"}``."""
    return {"drop": OutcomeModel("binomial", 0, 0.0), "davidson": OutcomeModel("davidson", 1, 0.0),
            "ordinal": OutcomeModel("ordinal", 1, 0.5)}[ties]


def _counts_by_outcome(outcome: np.ndarray, count: np.ndarray) -> np.ndarray:
    """``3 x n``: the row's count in its outcome's row, 0 elsewhere."""
    y = np.zeros((3, outcome.size))
    y[outcome, np.arange(outcome.size)] = count
    return y


def loglik(model: OutcomeModel, X: np.ndarray, y: np.ndarray, beta: np.ndarray, phi: float,
           offset: np.ndarray | float = 0.0) -> float:
    """``sum n_ic log pi_ic`` (``y``: the ``3 x n`` counts)."""
    probs = model.probabilities(X @ beta + offset, phi)[0]
    with np.errstate(divide="ignore"):
        return float(np.sum(np.where(y > 0, y * np.log(np.maximum(probs, 1e-300)), 0.0)))


def _score_and_information(model: OutcomeModel, X: np.ndarray, y: np.ndarray, beta: np.ndarray, phi: float,
                           offset, *, information: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """The score and (``information=True``) the expected information of ``(beta, phi)``."""
    probs, deta, dphi = model.probabilities(X @ beta + offset, phi)
    probs = np.maximum(probs, 1e-300)
    n = y.sum(axis=0)
    ratio = y / probs  # n_ic / pi_ic
    k = X.shape[1] + model.n_phi
    score = np.empty(k)
    score[:X.shape[1]] = X.T @ np.sum(ratio * deta, axis=0)
    if model.n_phi:
        score[-1] = np.sum(ratio * dphi)
    if not information:
        return score, None
    w_ee = np.sum(n * deta * deta / probs, axis=0)
    info = np.empty((k, k))
    info[:X.shape[1], :X.shape[1]] = X.T @ (X * w_ee[:, None])
    if model.n_phi:
        w_ep = np.sum(n * deta * dphi / probs, axis=0)
        info[:X.shape[1], -1] = info[-1, :X.shape[1]] = X.T @ w_ep
        info[-1, -1] = np.sum(n * dphi * dphi / probs)
    return score, info


@dataclass(frozen=True)
class FixedFit:
    """Maximum-likelihood fit of a fixed-effects preference model.

    ``beta`` follows the design's columns; ``phi`` is the tie parameter (``log nu`` for Davidson, ``tau``
    for the ordinal model; NaN for the binomial); ``cov`` is the inverse observed information of
    ``(beta, phi)``.
    """

    model: OutcomeModel
    beta: np.ndarray = field(repr=False)
    phi: float
    cov: np.ndarray = field(repr=False)
    loglik: float
    converged: bool
    iterations: int


def _observed_information(model, X, y, beta, phi, offset) -> np.ndarray:
    """Minus the Jacobian of the analytic score (central differences), symmetrised."""
    x0 = np.concatenate([beta, [phi] if model.n_phi else []])
    k = x0.size
    p = X.shape[1]
    h = 1e-5 * np.maximum(np.abs(x0), 1.0)
    jac = np.empty((k, k))
    for j in range(k):
        up, down = x0.copy(), x0.copy()
        up[j] += h[j]
        down[j] -= h[j]
        s_up = _score_and_information(model, X, y, up[:p], up[p] if model.n_phi else 0.0, offset,
                                      information=False)[0]
        s_dn = _score_and_information(model, X, y, down[:p], down[p] if model.n_phi else 0.0, offset,
                                      information=False)[0]
        jac[:, j] = (s_up - s_dn) / (2 * h[j])
    info = -0.5 * (jac + jac.T)
    return info


def warn_not_converged() -> None:
    """The warning of a fixed-effects fit that stopped before converging."""
    warnings.warn("the Bradley-Terry fit did not converge (see the separation warning, if any); treat the "
                  "estimates with care.", ConvergenceWarning, stacklevel=caller_stacklevel())


def fit_fixed(model: OutcomeModel, X: np.ndarray, outcome: np.ndarray, count: np.ndarray, *,
              offset: np.ndarray | float = 0.0, beta0: np.ndarray | None = None, phi0: float | None = None,
              maxit: int = 200, tol: float = 1e-10, flat: float | None = None, warn: bool = True,
              covariance: bool = True) -> FixedFit:
    """Fisher scoring with step halving for a fixed-effects preference model.

    Converged when the largest Newton step is below ``tol`` (relative to ``1 + |parameter|``). With ``flat``, it
    also stops (unconverged) once an iteration raises the log-likelihood by less than ``flat (|loglik| + 0.1)``
    (R ``glm``'s deviance criterion): where a separated fit's likelihood has flattened.

    Examples
    --------
    Two systems, ``x`` won 3 of 4 votes (ties dropped): the log-odds is ``log 3``.

    >>> import numpy as np
    >>> fit = fit_fixed(outcome_model("drop"), np.ones((2, 1)), np.array([2, 0]), np.array([3.0, 1.0]))
    >>> round(float(fit.beta[0]), 8) == round(float(np.log(3)), 8), round(float(fit.cov[0, 0]), 6)
    (True, 1.333333)
    """
    y = _counts_by_outcome(outcome, count)
    p = X.shape[1]
    beta = np.zeros(p) if beta0 is None else np.asarray(beta0, dtype=float).copy()
    phi = (model.phi_start if phi0 is None else float(phi0)) if model.n_phi else 0.0
    ll = loglik(model, X, y, beta, phi, offset)
    converged = False
    it = 0
    for it in range(1, maxit + 1):  # noqa: B007 (the count is reported after the loop)
        score, info = _score_and_information(model, X, y, beta, phi, offset)
        try:
            step = np.linalg.solve(info, score)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(info, score, rcond=None)[0]
        t = 1.0
        for _ in range(40):
            b_new = beta + t * step[:p]
            phi_new = phi + t * step[p] if model.n_phi else 0.0
            ok = not (model.name == "ordinal" and phi_new <= 0)
            ll_new = loglik(model, X, y, b_new, phi_new, offset) if ok else -np.inf
            if ll_new >= ll - 1e-12 * (1 + abs(ll)):
                break
            t /= 2
        else:
            break
        gain = ll_new - ll
        beta, phi, ll = b_new, phi_new, ll_new
        x = np.concatenate([beta, [phi] if model.n_phi else []])
        if np.max(np.abs(t * step) / (1 + np.abs(x)), initial=0.0) < tol:
            converged = True
            break
        if flat is not None and gain < flat * (abs(ll) + 0.1):
            break
    if warn and not converged:
        warn_not_converged()
    if covariance:
        info = _observed_information(model, X, y, beta, phi, offset)
        try:
            cov = np.linalg.inv(info)
        except np.linalg.LinAlgError:
            cov = np.linalg.pinv(info)
    else:
        cov = np.full((p + model.n_phi, p + model.n_phi), np.nan)
    return FixedFit(model=model, beta=beta, phi=float(phi) if model.n_phi else float("nan"), cov=cov, loglik=ll,
                    converged=converged, iterations=it)
