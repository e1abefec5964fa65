"""Resampling of preference fits: the parametric bootstrap of the fitted model (random effects redrawn)
and the naive bootstrap over votes as arena leaderboards do it (votes treated as independent)."""

from __future__ import annotations

import numpy as np

from .._random import as_generator
from ._design import difference_design
from ._fixed import outcome_model
from ._log import VoteLog
from ._mixed import random_terms
from ._model import ModelFit, Spec, refit_quietly

__all__ = ["simulate_outcomes", "parametric_bootstrap", "iid_bootstrap", "abilities_of"]


def abilities_of(fit: ModelFit) -> np.ndarray:
    """All ``K`` abilities of a fit (``C beta``)."""
    d = fit.design
    return d.C @ fit.beta[:d.n_abilities]


def _linear_predictor(fit: ModelFit, log: VoteLog, rng: np.random.Generator) -> tuple[VoteLog, np.ndarray]:
    """``X beta`` plus, for a mixed model, random effects drawn anew from the fitted variances."""
    coll = log.collapse(judge=fit.spec.mixed and log.judge is not None,
                        prompt=fit.spec.mixed and log.prompt is not None)
    d = difference_design(coll, reference=fit.spec.reference, position=fit.spec.position != "none")
    eta = d.X @ fit.beta
    if fit.spec.mixed:
        re = random_terms(coll, fit.spec.random, fit.spec.position)
        for term, var in zip(re.terms, fit.varcorr.variance):
            draws = rng.normal(0.0, np.sqrt(max(float(var), 0.0)), term.n_levels)
            eta = eta + term.X[:, 0] * draws[term.codes]
            if term.is_multiple_membership:
                eta = eta + term.X2[:, 0] * draws[term.codes2]
    return coll, eta


def simulate_outcomes(fit: ModelFit, log: VoteLog, rng: np.random.Generator) -> VoteLog:
    """A new log with the same votes' systems, judges and prompts and outcomes drawn from the fitted model
    (three rows per row: the counts of each outcome)."""
    coll, eta = _linear_predictor(fit, log, rng)
    model = outcome_model(fit.spec.ties)
    probs = model.probabilities(eta, fit.phi if model.n_phi else 0.0)[0]
    n = np.round(coll.count).astype(np.int64)
    # multinomial per row: P(b), then P(tie | not b), then the rest
    c0 = rng.binomial(n, np.clip(probs[0], 0, 1))
    rest = np.clip(1 - probs[0], 1e-300, None)
    c1 = rng.binomial(n - c0, np.clip(probs[1] / rest, 0, 1))
    c2 = n - c0 - c1
    rows = np.concatenate([np.arange(coll.n_rows)] * 3)
    out = coll.subset(rows)
    out = out.with_outcomes(np.repeat([0, 1, 2], coll.n_rows)).with_counts(np.concatenate([c0, c1, c2]))
    keep = out.count > 0
    return out.subset(keep)


def parametric_bootstrap(fit: ModelFit, log: VoteLog, *, n_resamples: int, random_state) -> np.ndarray:
    """Abilities refitted on ``n_resamples`` logs simulated from ``fit`` (rows: resamples)."""
    rng = as_generator(random_state)
    out = np.empty((n_resamples, fit.design.C.shape[0]))
    for r in range(n_resamples):
        sim = simulate_outcomes(fit, log, rng)
        if fit.spec.ties == "drop":
            sim = sim.subset(sim.outcome != 1)
        out[r] = abilities_of(refit_quietly(sim, fit.spec, covariance=False))
    return out


def iid_bootstrap(log: VoteLog, spec: Spec, *, n_resamples: int, random_state) -> np.ndarray:
    """Abilities of the fixed-effects model refitted on votes resampled with replacement, as arena
    leaderboards compute their intervals (every vote independent; judges and prompts ignored)."""
    rng = as_generator(random_state)
    flat = log.collapse(judge=False, prompt=False)
    fixed_spec = Spec(ties=spec.ties, position="fixed" if spec.position == "random" else spec.position, random=(),
                      reference=spec.reference)
    total = int(round(flat.count.sum()))
    prob = flat.count / flat.count.sum()
    out = np.empty((n_resamples, log.n_systems))
    for r in range(n_resamples):
        sample = flat.with_counts(rng.multinomial(total, prob).astype(float))
        sample = sample.subset(sample.count > 0)
        out[r] = abilities_of(refit_quietly(sample, fixed_spec, covariance=False))
    return out
