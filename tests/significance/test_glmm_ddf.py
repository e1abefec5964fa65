"""Satterthwaite degrees of freedom of GLMM linear functions (mixeval.significance._glmm_ddf).

Checked against an independent dense computation of the linearised model (``V = W^-1 + sum_k theta_k^2
Z_k Z_k'``, ``Phi = (X' V^-1 X)^-1``, ``dPhi/dtheta_k = Phi X' V^-1 (2 theta_k Z_k Z_k') V^-1 X Phi``,
analytic instead of the module's central differences), against the containment bounds of the design, and
for a variance on the boundary (its derivative in ``v = theta^2``). The coverage evidence is the committed study benchmarks/sim_glmer_df.py.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from mixeval.errors import InputError
from mixeval.mixed import glmer
from mixeval.significance import emmeans, emmeans_response, pairwise, pairwise_differences, pairwise_ratios
from mixeval.significance._glmm_ddf import glmm_ddf_pieces


def _data(n_item=30, n_seed=4, n_sys=2, sd_seed=0.6, seed=11):
    rng = np.random.default_rng(seed)
    d = pd.MultiIndex.from_product([range(n_item), range(n_seed), range(n_sys)],
                                   names=["item", "seed", "system"]).to_frame(index=False)
    eta = (0.6 + 0.3 * d.system + rng.normal(0, 1.0, n_item)[d.item] + rng.normal(0, sd_seed, n_seed)[d.seed])
    d["correct"] = (rng.random(len(d)) < 1 / (1 + np.exp(-eta))).astype(int)
    d["item"] = "i" + d.item.astype(str).str.zfill(2)
    d["seed"] = "s" + d.seed.astype(str)
    d["system"] = np.array(["A", "B", "C"])[d.system]
    return d


@pytest.fixture(scope="module")
def fit():
    return glmer("correct ~ system + (1|item) + (1|seed)", _data())


def _dense_df(fit, L):
    """Independent Satterthwaite df: dense linearised model, analytic derivative of Phi."""
    X = np.asarray(fit.design.X, dtype=float)
    fam = fit.family
    w = fit.weights * fam.mu_eta(fit.fitted_link) ** 2 / fam.variance(fit.fitted)
    Zs = []
    for g in fit.design.groups:
        Z = np.zeros((len(X), g.n_levels))
        Z[np.arange(len(X)), g.codes] = 1.0
        Zs.append(Z)
    # lme4 orders the terms by number of levels: match theta to the groups by name
    order = [fit.group_names.index(g.name) for g in fit.design.groups]
    theta = fit.theta[order]
    V = np.diag(1 / w) + sum(t * t * Z @ Z.T for t, Z in zip(theta, Zs))
    Vi = np.linalg.inv(V)
    Phi = np.linalg.inv(X.T @ Vi @ X)
    dPhi = [Phi @ X.T @ Vi @ (2 * t * Z @ Z.T) @ Vi @ X @ Phi for t, Z in zip(theta, Zs)]
    k = fit.theta.size
    H = 2 * np.linalg.inv(fit.cov_params)
    Htt, Htb, Hbb = H[:k, :k], H[:k, k:], H[k:, k:]
    A = 2 * np.linalg.inv(Htt - Htb @ np.linalg.solve(Hbb, Htb.T))  # profiled: the theta block of 2 H^-1
    A = A[np.ix_(order, order)]
    out = []
    for l in np.atleast_2d(L):
        g = np.array([l @ d @ l for d in dPhi])
        v = l @ fit.cov_coef @ l
        out.append(2 * v * v / (g @ A @ g))
    return np.array(out), Phi


def test_phi_is_the_linearised_model_covariance(fit):
    _, Phi = _dense_df(fit, np.eye(2))
    np.testing.assert_allclose(fit.beta_covariance_at(fit.theta), Phi, rtol=1e-8)
    np.testing.assert_allclose(fit.beta_covariance_at(fit.theta), fit.cov_coef_rx, rtol=1e-8)


def test_satterthwaite_df_matches_an_independent_dense_computation(fit):
    L = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.5]])
    ours = glmm_ddf_pieces(fit).df_satterthwaite(L)
    dense, _ = _dense_df(fit, L)
    np.testing.assert_allclose(ours, dense, rtol=1e-5)


def test_df_lies_between_the_containment_bounds(fit):
    d = _data()
    n_seed, n_rows, p = d.seed.nunique(), len(d), len(fit.coef)
    means = emmeans_response(fit, "system", df="satterthwaite")
    # a system's mean carries the seed variance (n_seed - 1 df) and at most the rows' (n - p)
    assert np.all((means.df >= n_seed - 1) & (means.df <= n_rows - p)), means.df.tolist()
    # the within-seed, within-item contrast is nearly free of both components: far more df than the mean
    contrast = pairwise(fit, "system", df="satterthwaite").table.df.to_numpy()
    assert np.all(contrast > 10 * means.df.max())


def test_boundary_variance_enters_in_the_variance_parametrisation():
    """A seed variance estimated at 0 keeps its sampling uncertainty: its row of the Jacobian is d Phi / d v at
    v = 0 (dense linearised model, analytic), and the df are finite and below those with the seed held fixed."""
    from mixeval.significance import _glmm_ddf as G

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = glmer("correct ~ system + (1|item) + (1|seed)", _data(n_item=40, n_seed=3, sd_seed=0.4, seed=15))
        concave = glmer("correct ~ system + (1|item) + (1|seed)", _data(sd_seed=0.0, seed=5))
    # where the criterion is concave in v at 0 (no information there) the component is held fixed, as lmerTest
    assert concave.theta[1] < 1e-4 and glmm_ddf_pieces(concave).free.tolist() == [0]
    on_boundary = np.flatnonzero(fit.theta < 1e-4)
    assert on_boundary.size == 1, fit.theta
    pieces = glmm_ddf_pieces(fit)
    assert on_boundary[0] in pieces.free.tolist()
    # analytic d Phi / d v for the seed term at v = 0
    X = np.asarray(fit.design.X, dtype=float)
    fam = fit.family
    w = fit.weights * fam.mu_eta(fit.fitted_link) ** 2 / fam.variance(fit.fitted)
    Z = {}
    for g in fit.design.groups:
        Z[g.name] = np.zeros((len(X), g.n_levels))
        Z[g.name][np.arange(len(X)), g.codes] = 1.0
    t_item = fit.theta[fit.group_names.index("item")]
    V = np.diag(1 / w) + t_item**2 * Z["item"] @ Z["item"].T
    Vi = np.linalg.inv(V)
    Phi = np.linalg.inv(X.T @ Vi @ X)
    dPhi = Phi @ X.T @ Vi @ Z["seed"] @ Z["seed"].T @ Vi @ X @ Phi
    row = list(pieces.free).index(on_boundary[0])
    np.testing.assert_allclose(pieces.jacobian[row], dPhi, rtol=2e-3, atol=1e-6)
    # df: finite, and below the df with the seed held fixed (lmerTest's rule)
    free = G.free_theta(fit)
    fixed = G.GlmmDdfPieces(vcov=pieces.vcov, jacobian=G.phi_jacobian(fit, free),
                            theta_cov=G.theta_covariance(fit, free), free=free,
                            component_df=G.levels_minus_one(fit)[free])
    L = np.array([[1.0, 0.0], [0.0, 1.0]])
    df_new, df_fixed = pieces.df_satterthwaite(L), fixed.df_satterthwaite(L)
    assert np.all(np.isfinite(df_new)) and np.all(df_new < df_fixed)
    assert emmeans_response(fit, "system", df="satterthwaite").df.max() < df_fixed.max()


def test_asymptotic_is_unchanged_and_satterthwaite_widens(fit):
    z = emmeans_response(fit, "system")
    t = emmeans_response(fit, "system", df="satterthwaite")
    assert np.all(np.isinf(z.df)) and np.all(np.isfinite(t.df))
    np.testing.assert_allclose(t.prob, z.prob)
    np.testing.assert_allclose(t.se, z.se)
    assert np.all(t.lower < z.lower) and np.all(t.upper > z.upper)
    # the link-scale t interval back-transformed
    link = emmeans(fit, "system", df="satterthwaite")
    np.testing.assert_allclose(t.lower, 1 / (1 + np.exp(-link.lower)), rtol=1e-12)
    np.testing.assert_allclose(t.df, link.df)


def test_response_scale_contrasts_carry_the_df(fit):
    diff = pairwise_differences(fit, "system", df="satterthwaite")
    assert diff.df_method == "satterthwaite" and "t" in diff.table and np.all(np.isfinite(diff.table.df))
    z = pairwise_differences(fit, "system")
    assert "z" in z.table and "df" not in z.table
    ratio = pairwise_ratios(fit, "system", df="satterthwaite")
    link = pairwise(fit, "system", df="satterthwaite").table
    np.testing.assert_allclose(ratio.table.odds_ratio, np.exp(link.estimate))
    np.testing.assert_allclose(ratio.table.df, link.df)
    np.testing.assert_allclose(np.log(ratio.table.lower), link.lower)


def test_kenward_roger_is_refused_for_glmer(fit):
    with pytest.raises(InputError, match="satterthwaite"):
        emmeans_response(fit, "system", df="kenward-roger")


def test_aggregate_fit_has_the_row_fit_df():
    """Successes and trials per cell (the DuckDB/Spark path) give the same linearised model, hence the same df."""
    pytest.importorskip("duckdb")
    from mixeval.scale import glmer_aggregate

    rng = np.random.default_rng(4)
    d = pd.MultiIndex.from_product([range(20), range(3), range(3), range(2)],
                                   names=["item", "seed", "template", "system"]).to_frame(index=False)
    eta = 0.5 + 0.4 * d.system + rng.normal(0, 1.0, 20)[d.item] + rng.normal(0, 0.6, 3)[d.seed]
    d["correct"] = (rng.random(len(d)) < 1 / (1 + np.exp(-eta))).astype(int)  # 3 templates: 3 trials per cell
    d["item"] = "i" + d.item.astype(str).str.zfill(2)
    d["seed"] = "s" + d.seed.astype(str)
    d["system"] = np.array(["A", "B"])[d.system]
    formula = "correct ~ system + (1|item) + (1|seed)"
    rows, agg = glmer(formula, d), glmer_aggregate(formula, d)
    np.testing.assert_allclose(emmeans_response(agg, "system", df="satterthwaite").df,
                               emmeans_response(rows, "system", df="satterthwaite").df, rtol=1e-4)
