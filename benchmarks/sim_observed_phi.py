"""Observed-scale reliability against brute-force simulation with known truth (issue 36 item 9).

Part 1 (the coefficient): for known components, the observed-scale phi of ``mixeval._observed`` (Gauss-Hermite
quadrature) against a simulation of 400,000 items whose facets are drawn anew: ``var(T)`` as the covariance of two
means of one item over disjoint facet draws, the mean squared error as the variance of one mean (Monte Carlo
standard error by the delta method). The latent-scale phi beside it.

Part 2 (the estimate): binary data sets simulated with item variance 1 and seed variance 0.3 at accuracy about 0.8
(200 items x 6 seeds; an item-by-seed interaction is not identified from one 0/1 score per cell), fitted by
``Study(..., family="binomial")``; the mean and spread of the estimated observed and latent phi at 6 seeds against
their true values.

    nice -n 10 python3 benchmarks/sim_observed_phi.py [n_fits]       # default 100 fitted data sets
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import norm

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from mixeval import Study, reliability  # noqa: E402
from mixeval._observed import moments_from, observed_coefficient  # noqa: E402

ITEMS = 400_000
CUTS = np.array([-1.0, 0.0, 1.2])
SCORES = np.arange(1.0, 5.0)


def brute(draw, n, rng):
    a = rng.normal(0.0, 1.0, ITEMS)
    y1, y2 = draw(a, n, rng), draw(a, n, rng)
    c1, c2 = y1 - y1.mean(), y2 - y2.mean()
    cov, var = np.mean(c1 * c2), np.mean(c1 * c1)
    infl = (c1 * c2 - cov) / var - (cov / var) * (c1 * c1 - var) / var
    return cov / var, float(np.std(infl) / np.sqrt(ITEMS))


def _probs(x):
    cum = norm.cdf(CUTS[None, :] - np.ravel(x)[:, None])
    p = np.diff(np.column_stack([np.zeros(cum.shape[0]), cum, np.ones(cum.shape[0])]), axis=1)
    return p.reshape(*np.shape(x), 4)


def cases():
    """(label, components, eta0, g, q, draw, latent residual variance)."""
    binary = {"item": 1.0, "seed": 0.3, "item:seed": 0.5}

    def draw_binary(a, n, rng):
        eta = 1.6 + a[:, None] + rng.normal(0, np.sqrt(0.3), (a.size, n)) + rng.normal(0, np.sqrt(0.5), (a.size, n))
        return (rng.random((a.size, n)) < expit(eta)).mean(axis=1)

    counts = {"item": 0.5, "seed": 0.2, "item:seed": 0.3}

    def draw_counts(a, n, rng):
        eta = 0.7 + np.sqrt(0.5) * a[:, None] + rng.normal(0, np.sqrt(0.2), (a.size, n)) \
            + rng.normal(0, np.sqrt(0.3), (a.size, n))
        return rng.poisson(np.exp(eta)).mean(axis=1)

    def draw_ratings(a, n, rng):
        latent = np.sqrt(0.5) * a[:, None] + rng.normal(0, np.sqrt(0.2), (a.size, n)) \
            + rng.normal(0, np.sqrt(0.3), (a.size, n)) + rng.normal(size=(a.size, n))
        return (np.digitize(latent, CUTS) + 1.0).mean(axis=1)

    yield ("binary (logit), accuracy about 0.8", binary, 1.6, expit, expit, draw_binary, np.pi ** 2 / 3)
    yield ("counts (Poisson, log), mean about 2.6", counts, 0.7, np.exp, lambda x: np.exp(x) + np.exp(2 * x),
           draw_counts, None)
    yield ("ratings 1-4 (ordinal probit)", counts, 0.0, lambda x: _probs(x) @ SCORES,
           lambda x: _probs(x) @ SCORES ** 2, draw_ratings, 1.0)


def part1() -> pd.DataFrame:
    rows = []
    rng = np.random.default_rng(20261127)
    for label, comps, eta0, g, q, draw, residual in cases():
        m = moments_from(comps, "item", np.array([eta0]), g, q)
        for n in (1, 3, 6):
            want, se = brute(draw, n, rng)
            latent = (reliability.phi({**comps, "Residual": residual}, "item", {"seed": n})
                      if residual is not None else float("nan"))
            rows.append({"scores": label, "seeds": n, "observed phi (quadrature)": observed_coefficient(m, {"seed": n}),
                         "observed phi (simulation)": want, "MC se": se, "latent phi": latent})
    return pd.DataFrame(rows)


def part2(n_fits: int) -> pd.DataFrame:
    comps = {"item": 1.0, "seed": 0.3}
    m = moments_from(comps, "item", np.array([1.6]), expit, expit)
    truth_obs = observed_coefficient(m, {"seed": 6})
    truth_lat = reliability.phi({**comps, "Residual": np.pi ** 2 / 3}, "item", {"seed": 6})
    rng = np.random.default_rng(11)
    est = []
    for _ in range(n_fits):
        d = pd.DataFrame([(i, s) for i in range(200) for s in range(6)], columns=["item", "seed"])
        eta = 1.6 + rng.normal(0, 1, 200)[d.item] + rng.normal(0, np.sqrt(0.3), 6)[d.seed]
        d["correct"] = (rng.random(len(d)) < expit(eta)).astype(int)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            study = Study(d, "correct ~ 1 + (1|item) + (1|seed)", family="binomial")
            est.append((study.phi({"seed": 6}), study.phi({"seed": 6}, scale="latent")))
    est = np.array(est)
    return pd.DataFrame({"scale": ["observed", "latent"], "true phi (6 seeds)": [truth_obs, truth_lat],
                         "mean estimate": est.mean(axis=0), "sd of estimates": est.std(axis=0, ddof=1),
                         "fits": [n_fits, n_fits]})


if __name__ == "__main__":
    print(part1().to_markdown(index=False, floatfmt=".4f"))
    print()
    print(part2(int(sys.argv[1]) if len(sys.argv) > 1 else 100).to_markdown(index=False, floatfmt=".4f"))
