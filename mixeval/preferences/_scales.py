"""Scales of the abilities and the outcome probabilities a fitted preference model implies.

A fit's abilities are on its own scale: the log-odds of winning a decisive vote (``ties="drop"``,
``"davidson"``), or the latent cumulative log-odds of the ordinal tie model (``P(a wins) = F(d - tau)``,
``P(b wins) = F(-d - tau)``); with random effects, for a typical judge and prompt (every random deviation 0:
the *conditional* scale). Two other scales answer other questions, and both are defined here the same way,
as the target of another fit of the same votes:

* **population-averaged** (marginal) abilities: the abilities of the same model without random effects (ties,
  position and covariates as fitted) that reproduce best, in expected log-likelihood over this log's votes,
  the outcome probabilities averaged over the random deviations of a new judge and prompt. They are what a
  fixed-effects fit of votes from ever new judges and prompts estimates; the random deviations attenuate
  them, by about ``1 / sqrt(1 + c^2 sigma^2)`` (Zeger, Liang & Albert 1988; ``sigma^2`` the latent variance of
  a vote's random deviations, ``c = 16 sqrt(3) / (15 pi)``);
* **arena** abilities: the Bradley-Terry abilities (no position or covariate term) that arena leaderboards'
  fit (Chiang et al. 2024, FastChat's ``compute_mle_elo``: a tie counted as half a win for each system; or
  ties dropped) converges to on this log's votes when the fitted model holds (population-averaged).

Both are smooth functions of the fitted fixed effects and tie parameter, computed by one fixed-effects fit to
the expected outcome counts; their standard errors are the delta method's (central differences), the variance
components taken as estimated.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ._design import constraint_matrix, difference_design
from ._fixed import _observed_information, fit_fixed, outcome_model
from ._log import VoteLog, count_identical
from ._model import ModelFit

__all__ = ["outcome_probabilities", "distinct_pairs", "project", "implied_abilities", "converted", "TARGETS",
           "GH_NODES"]

#: Gauss-Hermite nodes for averaging over a vote's normal random deviation (exact to ~1e-12 for these integrands)
GH_NODES = 40
#: the scales a fit converts to: its own model without random effects, arena's (ties half or dropped)
TARGETS = ("model", "arena", "arena-drop")


def outcome_probabilities(ties: str, eta: np.ndarray, phi: float, variance: float = 0.0) -> np.ndarray:
    """``(P(b), P(tie), P(a))`` (first axis) of votes with linear predictor ``eta``: at ``eta`` itself (the conditional
    probabilities), or averaged over a normal deviation of ``variance`` added to it (population-averaged).

    ``ties="drop"`` gives ``P(tie) = 0`` and ``P(a) = F(eta)``, the probability that ``a`` wins a decisive vote.

    Examples
    --------
    >>> from scipy.special import expit
    >>> p = outcome_probabilities("ordinal", np.array([1.0]), 0.4)
    >>> bool(np.isclose(p[2, 0], expit(1.0 - 0.4)) and np.isclose(p[0, 0], expit(-1.0 - 0.4)))
    True
    >>> m = outcome_probabilities("drop", np.array([1.0]), float("nan"), variance=1.0)[2, 0]
    >>> bool(0.5 < m < expit(1.0))  # averaging over the deviation pulls it towards 1/2
    True
    """
    shape = np.shape(eta)
    return _averaged(ties, np.asarray(eta, dtype=float).ravel(), phi, variance)[0].reshape((3, *shape))


def _averaged(ties: str, eta: np.ndarray, phi: float, variance: float) -> tuple[np.ndarray, ...]:
    """Outcome probabilities and their derivatives in ``eta`` and ``phi`` (each ``3 x n``), averaged over a normal
    deviation of ``variance`` (Gauss-Hermite)."""
    model = outcome_model(ties)
    phi = phi if model.n_phi else 0.0
    if variance <= 0:
        return model.probabilities(eta, phi)
    nodes, weights = np.polynomial.hermite_e.hermegauss(GH_NODES)
    weights = weights / weights.sum()
    sd = float(np.sqrt(variance))
    out = [np.zeros((3, eta.size)) for _ in range(3)]
    for x, w in zip(nodes, weights):
        for acc, part in zip(out, model.probabilities(eta + sd * x, phi)):
            acc += w * part
    return tuple(out)


def distinct_pairs(log: VoteLog) -> VoteLog:
    """The distinct votes of ``log`` regardless of their outcome (systems in order, covariate differences) with
    their numbers of votes; judges and prompts left out (they are averaged over)."""
    flat = log.collapse(judge=False, prompt=False)
    uniq, total = count_identical([flat.a, flat.b], flat.covariates, flat.count)
    return VoteLog(flat.systems, uniq[:, 0].astype(np.int64), uniq[:, 1].astype(np.int64),
                   np.full(total.size, 2, dtype=np.int64), total, covariates=uniq[:, 2:].astype(float),
                   covariate_names=flat.covariate_names)


#: expected outcome counts of each target from the model's outcome probabilities (rows: b won, tie, a won)
_TARGET_MAP = {"model": np.eye(3), "arena": np.array([[1.0, 0.5, 0.0], [0.0, 0.0, 0.0], [0.0, 0.5, 1.0]]),
               "arena-drop": np.diag([1.0, 0.0, 1.0])}


def _expected_counts(rows: VoteLog, probs: np.ndarray, target: str) -> tuple[VoteLog, np.ndarray, np.ndarray]:
    """Rows replicated per outcome with their expected counts (arena: a tie half a win each, or left out)."""
    n = rows.count
    if target == "model":
        outcome, counts = np.repeat([0, 1, 2], rows.n_rows), np.concatenate([n * probs[0], n * probs[1],
                                                                              n * probs[2]])
        index = np.tile(np.arange(rows.n_rows), 3)
    else:
        tie = 0.5 * probs[1] if target == "arena" else 0.0
        outcome, counts = np.repeat([0, 2], rows.n_rows), np.concatenate([n * (probs[0] + tie), n * (probs[2] + tie)])
        index = np.tile(np.arange(rows.n_rows), 2)
    return rows.subset(index), outcome, counts


def project(rows: VoteLog, probs: np.ndarray, *, ties: str, target: str, reference: int | None, position: bool,
            start: tuple[np.ndarray, float] | None = None) -> tuple[np.ndarray, float, np.ndarray]:
    """The fixed-effects fit to the expected outcome counts ``rows.count * probs``: on the model's own design
    (``target="model"``: tie model ``ties``, position and covariates) or arena's (``"arena"``, ``"arena-drop"``:
    binomial Bradley-Terry on the abilities alone). Returns the ``K`` abilities, the tie parameter and the
    coefficients."""
    expanded, outcome, counts = _expected_counts(rows, probs, target)
    if target == "model":
        design = difference_design(expanded, reference=reference, position=position)
        model = outcome_model(ties)
    else:
        bare = VoteLog(expanded.systems, expanded.a, expanded.b, outcome, counts)
        design = difference_design(bare, reference=reference, position=False)
        model = outcome_model("drop")
    beta0, phi0 = (None, None) if start is None else start
    fit = fit_fixed(model, np.asarray(design.X, dtype=float), outcome, counts, beta0=beta0,
                    phi0=phi0 if model.n_phi else None, warn=False, covariance=False, tol=1e-12)
    return design.C @ fit.beta[:design.n_abilities], fit.phi, fit.beta


def implied_abilities(rows: VoteLog, abilities: np.ndarray, *, ties: str = "drop", phi: float = float("nan"),
                      position_bias: float | None = None, covariate_coefs: np.ndarray | None = None,
                      variance: float = 0.0, target: str = "model", reference: int | None = None,
                      start: tuple[np.ndarray, float] | None = None) -> tuple[np.ndarray, float, np.ndarray]:
    """The abilities another fit converges to on the votes ``rows`` (:func:`distinct_pairs`) when the model with
    these parameters holds: :func:`project` of its outcome probabilities (:func:`outcome_probabilities`,
    averaged over a random deviation of ``variance``). With known parameters it gives the truth of a simulation
    on the population-averaged or arena scale.

    ``position_bias``: ``None`` for a model without a position term. Returns the abilities (sum 0, or the
    ``reference`` system's 0), the fitted tie parameter and the coefficients.

    Examples
    --------
    >>> import pandas as pd
    >>> from ._log import read_log
    >>> log = read_log(pd.DataFrame({"model_a": ["x", "y"] * 50, "model_b": ["y", "x"] * 50,
    ...                              "winner": ["model_a"] * 100}))
    >>> rows = distinct_pairs(log)
    >>> implied_abilities(rows, np.array([0.5, -0.5]))[0].round(6).tolist()  # the model itself: unchanged
    [0.5, -0.5]
    >>> implied_abilities(rows, np.array([0.5, -0.5]), variance=2.0)[0].round(3).tolist()  # attenuated
    [0.366, -0.366]
    """
    position = position_bias is not None
    design = difference_design(rows, reference=reference, position=position)
    centred = abilities - (abilities[reference] if reference is not None else abilities.mean())
    beta = [np.linalg.pinv(design.C) @ centred]
    if position:
        beta.append([position_bias])
    if rows.covariate_names:
        beta.append(np.asarray(covariate_coefs, dtype=float))
    eta = np.asarray(design.X, dtype=float) @ np.concatenate(beta)
    probs = outcome_probabilities(ties, eta, phi, variance)
    return project(rows, probs, ties=ties, target=target, reference=reference, position=position, start=start)


def _target_design(rows: VoteLog, spec, target: str) -> np.ndarray:
    """The dense design :func:`project` fits on the distinct votes ``rows``."""
    if target == "model":
        return np.asarray(difference_design(rows, reference=spec.reference, position=spec.position != "none").X,
                          dtype=float)
    bare = VoteLog(rows.systems, rows.a, rows.b, rows.outcome, rows.count)
    return np.asarray(difference_design(bare, reference=spec.reference, position=False).X, dtype=float)


def converted(fit: ModelFit, log: VoteLog, *, target: str, variance: float) -> tuple[np.ndarray, np.ndarray]:
    """Abilities of ``fit`` on another scale (:data:`TARGETS`; ``variance``: the latent variance of a vote's random
    deviations averaged over, 0 for the conditional scale) and their delta-method covariance.

    ``log``: the votes the fit used. The map ``x = (beta, phi) -> abilities`` is :func:`implied_abilities` on this
    log's distinct votes; its covariance is ``J Cov(x) J'`` (:attr:`ModelFit.cov_joint`).

    Notes
    -----
    The target's coefficients ``t`` solve ``S(t; x) = sum_{r,o} E_ro(x) grad_t log pi_ro(t) = 0`` (``E_ro = n_r
    (A q_r(x))_o`` the expected count of outcome ``o`` of vote ``r``, ``A`` the target's map of the model's outcome
    probabilities ``q``, ``pi`` the target's), so by the implicit function theorem ``dt/dx = H^{-1} dS/dx`` with
    ``H = -dS/dt`` the target fit's observed information and ``dS/dx = sum_{r,o} grad_t log pi_ro (dE_ro/dx)'``;
    ``J = C dt/dx`` on the ability coefficients.
    """
    if target not in TARGETS:
        raise InputError(f"scale {target!r}: choose one of {', '.join(TARGETS)}.")
    spec, design = fit.spec, fit.design
    rows = distinct_pairs(log)
    m, p = design.n_abilities, fit.beta.size
    names = list(design.names)
    pos = names.index("position") if "position" in names else None
    has_phi = not np.isnan(fit.phi)
    first_covariate = m if pos is None else pos + 1
    est, phi_t, beta_t = implied_abilities(
        rows, design.C @ fit.beta[:m], ties=spec.ties, phi=fit.phi, position_bias=None if pos is None else fit.beta[pos],
        covariate_coefs=fit.beta[first_covariate:p], variance=variance, target=target, reference=spec.reference)
    # the model's probabilities and their derivatives at its own coefficients
    X = np.asarray(difference_design(rows, reference=spec.reference, position=pos is not None).X, dtype=float)
    q, dq_eta, dq_phi = _averaged(spec.ties, X @ fit.beta, fit.phi if has_phi else 0.0, variance)
    A = _TARGET_MAP[target]
    n = rows.count
    expected = n * (A @ q)
    d_eta, d_phi = n * (A @ dq_eta), n * (A @ dq_phi)
    # the target's log-probability gradients at its fit
    tmodel = outcome_model(spec.ties if target == "model" else "drop")
    Xt = _target_design(rows, spec, target)
    pi, dpi_eta, dpi_phi = tmodel.probabilities(Xt @ beta_t, phi_t if tmodel.n_phi else 0.0)
    pi = np.maximum(pi, 1e-300)
    r_eta, r_phi = dpi_eta / pi, dpi_phi / pi
    blocks = [[Xt.T @ (np.sum(r_eta * d_eta, axis=0)[:, None] * X)]]
    if has_phi:
        blocks[0].append((Xt.T @ np.sum(r_eta * d_phi, axis=0))[:, None])
    if tmodel.n_phi:
        row = [(np.sum(r_phi * d_eta, axis=0) @ X)[None, :]]
        if has_phi:
            row.append(np.array([[np.sum(r_phi * d_phi)]]))
        blocks.append(row)
    dS = np.block(blocks)
    info = _observed_information(tmodel, Xt, expected, beta_t, phi_t if tmodel.n_phi else 0.0, 0.0)
    try:
        dt = np.linalg.solve(info, dS)
    except np.linalg.LinAlgError:  # separation: the unidentified directions (infinite se) are left out
        dt = np.linalg.pinv(info, hermitian=True) @ dS
    c_t = constraint_matrix(len(rows.systems), spec.reference)
    jac = c_t @ dt[:c_t.shape[1]]
    cov = jac @ fit.cov_joint @ jac.T
    return est, 0.5 * (cov + cov.T)
