"""emmeans' ordinal modes and their pairwise contrasts on a clmm fit, against R's emmeans
(fixtures from tests/significance/fixtures/make_ordinal_emmeans.R: clmm(rating ~ temp + contact + (1|judge), wine)).

Tolerances: estimates within 1e-4 (the fits agree to ~3e-6); standard errors within 2e-2 relative (clmm's
finite-difference Hessian differs from ours by up to 1% on this fit, see tests/mixed/test_clmm_vs_ordinal.py);
z ratios within 2e-2 relative and the adjusted p-values at emmeans' z ratios within 1e-3 relative.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval.errors import InputError
from mixeval.mixed import clmm, lmer
from mixeval.significance._ordinal import emmeans_ordinal, pairwise_ordinal

FIX = Path(__file__).parent / "fixtures"
REF = json.loads((FIX / "ordinal_emmeans.json").read_text())
WINE = Path(__file__).parents[1] / "mixed" / "fixtures" / "clmm" / "wine.csv"


@pytest.fixture(scope="module")
def fit():
    return clmm("rating ~ temp + contact + (1|judge)", pd.read_csv(WINE))


def _close(ours, ref, est_col, ref_col):
    np.testing.assert_allclose(ours[est_col].to_numpy(), [r[ref_col] for r in ref], atol=1e-4)
    np.testing.assert_allclose(ours.se.to_numpy(), [r["SE"] for r in ref], rtol=2e-2, atol=1e-6)


def test_latent_mode(fit):
    _close(emmeans_ordinal(fit, "temp", mode="latent"), REF["latent"], "emmean", "emmean")
    em = emmeans_ordinal(fit, ["temp", "contact"], mode="latent")
    assert em[["temp", "contact"]].values.tolist() == [[r["temp"], r["contact"]] for r in REF["latent_cells"]]
    _close(em, REF["latent_cells"], "emmean", "emmean")


def test_probability_modes(fit):
    em = emmeans_ordinal(fit, "temp", mode="prob")
    # R orders rating fastest within temp; ours category-outer: align by keys
    ref = {(r["rating"], r["temp"]): r for r in REF["prob"]}
    ordered = [ref[(str(a), b)] for a, b in zip(em.rating, em.temp)]
    _close(em, ordered, "prob", "prob")
    assert np.allclose(em.groupby("temp").prob.sum(), 1.0)
    for mode, key, col in (("cum.prob", "cum_prob", "cumprob"), ("exc.prob", "exc_prob", "exc.prob")):
        em = emmeans_ordinal(fit, "temp", mode=mode)
        ref = {(r["cut"], r["temp"]): r for r in REF[key]}
        _close(em, [ref[(a, b)] for a, b in zip(em.cut, em.temp)], col, col)


def test_mean_class_mode(fit):
    _close(emmeans_ordinal(fit, "temp", mode="mean.class"), REF["mean_class"], "mean.class", "mean.class")


@pytest.mark.parametrize("mode,adjust,key", [("latent", "tukey", "pairs_latent_tukey"),
                                              ("mean.class", "holm", "pairs_mean_holm")])
def test_pairwise_contrasts(fit, mode, adjust, key):
    res = pairwise_ordinal(fit, ["temp", "contact"], mode=mode, adjust=adjust)
    ref = REF[key]
    assert res.table.contrast.tolist() == [r["contrast"] for r in ref]
    np.testing.assert_allclose(res.table.estimate, [r["estimate"] for r in ref], atol=1e-4)
    np.testing.assert_allclose(res.table.se, [r["SE"] for r in ref], rtol=2e-2)
    np.testing.assert_allclose(res.table.z, [r["z.ratio"] for r in ref], rtol=2e-2)
    # the adjustment stage reproduces emmeans' p-values at emmeans' own z ratios (ours differ through the SEs)
    from mixeval.significance._pairwise import adjusted_inference

    z_r = np.array([r["z.ratio"] for r in ref])
    p_at_r = adjusted_inference(z_r, np.full(z_r.size, np.inf), res.adjust, 0.95, res.family_size, len(z_r))[1]
    np.testing.assert_allclose(p_at_r, [r["p.value"] for r in ref], rtol=1e-3)


def test_pairwise_within_categories(fit):
    res = pairwise_ordinal(fit, "temp", mode="prob", adjust="none")
    ref = REF["pairs_prob_none"]
    np.testing.assert_allclose(res.table.estimate, [r["estimate"] for r in ref], atol=1e-4)
    assert res.table.rating.astype(str).tolist() == [r["rating"] for r in ref]


def test_bad_mode_and_fit(fit):
    with pytest.raises(InputError, match="mode"):
        emmeans_ordinal(fit, "temp", mode="odds")
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"g": np.repeat(np.arange(10), 4), "s": np.tile(["A", "B"], 20), "y": rng.normal(size=40)})
    with pytest.raises(InputError, match="clmm"):
        emmeans_ordinal(lmer("y ~ s + (1|g)", df), "s")
