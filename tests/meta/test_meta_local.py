"""Local metric accuracy: hand-computed values, closed-form references for hypothesis A
(paired t-test, Welch-type two-sample Wald, Hotelling's T^2), seeded simulations of
type I error, power and interval coverage, and bad input."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mixeval.errors import ColumnError, InputError
from mixeval.meta import (
    accuracy_equality_table,
    accuracy_equality_test,
    local_accuracy,
    plot_local_accuracy,
    rank_stability_test,
    score_pairs,
    unigram_f1,
    word_error_rate,
)

matplotlib.use("Agg")


def tiny_pairs() -> pd.DataFrame:
    rows = [
        # context, subset, score, perturbed
        ("A", "s1", 0.9, 0.5),  # win
        ("A", "s1", 0.4, 0.6),  # loss
        ("A", "s1", 0.3, 0.6),  # loss  -> w_A = 1/3
        ("B", "s1", 0.7, 0.7),  # tie   -> w_B = 0 (fail) or 1/2 (half)
        ("C", "s1", 0.8, 0.1),  # win   -> w_C = 1
        ("A", "s2", 0.2, 0.1),  # win
        ("B", "s2", 0.3, 0.9),  # loss
    ]
    frame = pd.DataFrame(rows, columns=["context", "subset", "score", "perturbed"])
    frame["metric"] = "m"
    err = frame.copy()
    err["metric"] = "err"  # an error rate: lower is better; same decisions with negated scores
    err["score"], err["perturbed"] = -frame["score"], -frame["perturbed"]
    return pd.concat([frame, err], ignore_index=True)


def from_wins(wins: np.ndarray, contexts, subsets, metrics) -> pd.DataFrame:
    """Pairs table whose decisions are the given 0/1 wins (score = win, perturbed = 1/2)."""
    return pd.DataFrame(
        {"context": contexts, "subset": subsets, "metric": metrics, "score": wins.astype(float), "perturbed": 0.5}
    )


# ----------------------------------------------------------------------------- hand-computed values


def test_local_accuracy_hand_computed():
    res = local_accuracy(tiny_pairs(), lower_is_better=["err"], level=0.5, ci="t")
    t = res.table.set_index(["metric", "subset"])
    for m in ("m", "err"):
        # mean over contexts of per-context means, not the pooled 2/5
        assert t.loc[(m, "s1"), "accuracy"] == pytest.approx(4 / 9, abs=1e-15)
        assert t.loc[(m, "s2"), "accuracy"] == pytest.approx(1 / 2, abs=1e-15)
        assert t.loc[(m, "s1"), "n_contexts"] == 3 and t.loc[(m, "s1"), "n_pairs"] == 5
        se = np.sqrt(21) / 9 / np.sqrt(3)  # sd of (1/3, 0, 1) over sqrt(3)
        assert t.loc[(m, "s1"), "se"] == pytest.approx(se, rel=1e-12)
        half_width = stats.t.ppf(0.75, 2) * se
        assert t.loc[(m, "s1"), "lower"] == pytest.approx(4 / 9 - half_width, rel=1e-12)
        assert t.loc[(m, "s1"), "upper"] == pytest.approx(4 / 9 + half_width, rel=1e-12)
    half = local_accuracy(tiny_pairs(), lower_is_better=["err"], ties="half").table.set_index(["metric", "subset"])
    assert half.loc[("m", "s1"), "accuracy"] == pytest.approx((1 / 3 + 1 / 2 + 1) / 3, abs=1e-15)
    np.testing.assert_array_equal(res.accuracy_matrix().loc["m"].to_numpy(), [4 / 9, 1 / 2])
    assert res.ranking().loc["m", "s1"] == 1.5  # m and err are tied


def test_wilson_interval_with_effective_sample_size_hand_computed():
    res = local_accuracy(tiny_pairs(), lower_is_better=["err"])
    row = res.table.set_index(["metric", "subset"]).loc[("m", "s1")]
    p, se, z = 4 / 9, np.sqrt(21) / 9 / np.sqrt(3), stats.norm.ppf(0.975)
    n = p * (1 - p) / se**2  # 2.857 < 5 pairs
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    assert (row.lower, row.upper) == (pytest.approx(centre - half, rel=1e-12), pytest.approx(centre + half, rel=1e-12))
    # every pair won: n_eff is the number of contexts, the interval is [G / (G + z^2), 1]
    perfect = local_accuracy(from_wins(np.ones(3), [0, 1, 2], "all", "m")).table.iloc[0]
    assert perfect.lower == pytest.approx(3 / (3 + z**2), rel=1e-12) and perfect.upper == 1.0
    assert perfect.se == 0.0


def test_t_interval_is_clipped_to_unit_interval_and_nan_for_one_context():
    res = local_accuracy(tiny_pairs(), lower_is_better=["err"], ci="t")
    t = res.table.set_index(["metric", "subset"])
    assert t.loc[("m", "s1"), "lower"] == 0.0 and t.loc[("m", "s1"), "upper"] == 1.0
    one = tiny_pairs().query("context == 'A'")
    t1 = local_accuracy(one).table
    assert t1["lower"].isna().all() and t1["se"].isna().all()


def test_bootstrap_interval_is_seeded_and_close_to_t_interval():
    rng = np.random.default_rng(7)
    G = 200
    p = rng.beta(3, 2, G)
    wins = (rng.random((G, 2)) < p[:, None]).ravel()
    pairs = from_wins(wins, np.repeat(np.arange(G), 2), "all", "m")
    b1 = local_accuracy(pairs, ci="bootstrap", n_resamples=2000, random_state=3).table
    b2 = local_accuracy(pairs, ci="bootstrap", n_resamples=2000, random_state=3).table
    pd.testing.assert_frame_equal(b1, b2)
    t = local_accuracy(pairs, ci="t").table
    assert b1["lower"].iloc[0] == pytest.approx(t["lower"].iloc[0], abs=0.01)
    assert b1["upper"].iloc[0] == pytest.approx(t["upper"].iloc[0], abs=0.01)


# ----------------------------------------------------------------------------- hypothesis A: closed forms


def _crossed(rng, G, S, k, p_subset, metric="m", beta=(4, 1.5)):
    """Every context has k pairs in each of S subsets; context difficulty shared across subsets."""
    base = rng.beta(*beta, G)
    shift = np.asarray(p_subset) - np.mean(p_subset) if p_subset is not None else np.zeros(S)
    prob = np.clip(base[:, None, None] + shift[None, :, None], 0, 1)
    wins = rng.random((G, S, k)) < prob
    ctx = np.repeat(np.arange(G), S * k)
    sub = np.tile(np.repeat([f"q{s}" for s in range(S)], k), G)
    return from_wins(wins.ravel(), ctx, sub, metric)


def test_equality_test_two_crossed_subsets_is_the_paired_t_test():
    rng = np.random.default_rng(11)
    pairs = _crossed(rng, G=30, S=2, k=2, p_subset=[0.7, 0.6])
    res = local_accuracy(pairs)
    test = accuracy_equality_test(res)
    w = res.context_means[:, 0, :]
    ref = stats.ttest_rel(w[:, 0], w[:, 1])
    assert test.statistic == pytest.approx(ref.statistic**2, rel=1e-10)
    assert test.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    assert (test.df, test.details["df_denominator"]) == (1.0, 29.0)


def test_equality_test_three_crossed_subsets_is_hotellings_t2():
    rng = np.random.default_rng(12)
    G = 25
    pairs = _crossed(rng, G=G, S=3, k=1, p_subset=[0.8, 0.7, 0.6])
    res = local_accuracy(pairs)
    test = accuracy_equality_test(res)
    w = res.context_means[:, 0, :]
    D = np.column_stack([w[:, 0] - w[:, 2], w[:, 1] - w[:, 2]])
    dbar = D.mean(axis=0)
    t2 = G * dbar @ np.linalg.solve(np.cov(D, rowvar=False), dbar)
    f = (G - 2) / (2 * (G - 1)) * t2
    assert test.statistic == pytest.approx(f, rel=1e-10)
    assert test.pvalue == pytest.approx(stats.f.sf(f, 2, G - 2), rel=1e-10)
    assert test.details["wald"] == pytest.approx(t2, rel=1e-10)


def test_equality_test_disjoint_subsets_hand_formula():
    # subset s1: contexts a-d, subset s2: contexts e-g (domains)
    w1 = np.array([1, 0.5, 1, 0])
    w2 = np.array([0, 0.5, 0])
    pairs = pd.DataFrame(
        {
            "context": list("abcdefg"),
            "subset": ["s1"] * 4 + ["s2"] * 3,
            "metric": "m",
            "score": np.r_[w1, w2],
            "perturbed": 0.5,
        }
    )
    res = local_accuracy(pairs, ties="half")
    test = accuracy_equality_test(res, metric="m")
    G = 7
    var = G / (G - 1) * (np.sum((w1 - w1.mean()) ** 2) / 16 + np.sum((w2 - w2.mean()) ** 2) / 9)
    W = (w1.mean() - w2.mean()) ** 2 / var
    assert test.details["wald"] == pytest.approx(W, rel=1e-12)
    assert test.statistic == pytest.approx(W, rel=1e-12)  # r = 1: F = W (G - 1) / (G - 1)
    assert test.pvalue == pytest.approx(stats.f.sf(W, 1, G - 1), rel=1e-12)
    assert test.estimate == pytest.approx(w1.mean() - w2.mean(), abs=1e-15)


def test_equality_test_degenerate_variance():
    # equal accuracies, no variance at all -> p = 1; different accuracies, no variance -> p = 0
    same = from_wins(np.ones(6, int), [0, 1, 2, 0, 1, 2], ["a"] * 3 + ["b"] * 3, "m")
    assert accuracy_equality_test(local_accuracy(same)).pvalue == 1.0
    diff = from_wins(np.r_[np.ones(3), np.zeros(3)], [0, 1, 2, 0, 1, 2], ["a"] * 3 + ["b"] * 3, "m")
    t = accuracy_equality_test(local_accuracy(diff))
    assert t.pvalue == 0.0 and np.isinf(t.statistic)


# ----------------------------------------------------------------------------- hypothesis A: simulations


def _rejection_rate(make, reps, rng, alpha=0.05):
    rejections = 0
    for _ in range(reps):
        rejections += accuracy_equality_test(local_accuracy(make(rng))).pvalue < alpha
    return rejections / reps


@pytest.mark.parametrize("beta", [(4, 1.5), (19, 1)])  # mean accuracy 0.73 and 0.95 (near the ceiling)
def test_equality_test_type_i_error_crossed_subsets(beta):
    rng = np.random.default_rng(2024)
    rate = _rejection_rate(lambda r: _crossed(r, G=30, S=3, k=2, p_subset=None, beta=beta), 400, rng)
    assert 0.025 <= rate <= 0.08, rate


def test_equality_test_type_i_error_disjoint_subsets_unequal_sizes():
    def make(r):
        G = 40
        n_pairs = r.integers(1, 5, G)
        subset = np.where(np.arange(G) < 15, "short", "long")
        p = r.beta(4, 1.5, G)
        ctx = np.repeat(np.arange(G), n_pairs)
        wins = r.random(ctx.size) < p[ctx]
        return from_wins(wins, ctx, subset[ctx], "m")

    rate = _rejection_rate(make, 400, np.random.default_rng(99))
    assert 0.025 <= rate <= 0.08, rate


def test_equality_test_power():
    rng = np.random.default_rng(5)
    rate = _rejection_rate(lambda r: _crossed(r, G=40, S=2, k=2, p_subset=[0.85, 0.65]), 100, rng)
    assert rate >= 0.8, rate


@pytest.mark.parametrize(
    "ci, a, b",
    [("wilson", 3, 2), ("wilson", 19, 1), ("wilson", 40, 1), ("t", 3, 2)],
)
def test_interval_coverage(ci, a, b):
    # E[w_x] = E[p_x] = a / (a + b) is the population local accuracy (0.6, 0.95, 0.976)
    rng = np.random.default_rng(31)
    covered, reps, G, mu = 0, 300, 40, a / (a + b)
    for _ in range(reps):
        p = rng.beta(a, b, G)
        n_pairs = rng.integers(1, 4, G)
        ctx = np.repeat(np.arange(G), n_pairs)
        wins = rng.random(ctx.size) < p[ctx]
        row = local_accuracy(from_wins(wins, ctx, "all", "m"), ci=ci).table.iloc[0]
        covered += row.lower <= mu <= row.upper
    assert 0.92 <= covered / reps <= 0.985, covered / reps


def test_t_interval_undercovers_near_one():
    # why "wilson" is the default: the symmetric t interval is too short near the ceiling
    rng = np.random.default_rng(32)
    covered, reps, G, mu = 0, 300, 30, 40 / 41
    for _ in range(reps):
        p = rng.beta(40, 1, G)
        ctx = np.repeat(np.arange(G), rng.integers(1, 4, G))
        row = local_accuracy(from_wins(rng.random(ctx.size) < p[ctx], ctx, "all", "m"), ci="t").table.iloc[0]
        covered += row.lower <= mu <= row.upper
    assert covered / reps < 0.9


# ----------------------------------------------------------------------------- hypothesis B


def _two_metrics(rng, G, prob):
    """prob[m][q]: win probability of metric m in subset q; one pair per (context, subset);
    the metrics judge the same pair, so half of the time they share a uniform draw (correlated)."""
    prob = np.asarray(prob)
    M, S = prob.shape
    shared = rng.random((G, 1, S))
    own = rng.random((G, M, S))
    u = np.where(rng.random((G, M, S)) < 0.5, shared, own)
    wins = u < prob[None, :, :]  # (G, M, S)
    ctx = np.repeat(np.arange(G), M * S)
    met = np.tile(np.repeat([f"m{m}" for m in range(M)], S), G)
    sub = np.tile([f"q{s}" for s in range(S)], G * M)
    return from_wins(wins.ravel(), ctx, sub, met)


@pytest.mark.parametrize(
    "prob",
    [
        [[0.9, 0.7], [0.85, 0.65]],  # hypothesis A true, B false: same ordering, shifted accuracies
        [[0.8, 0.8], [0.8, 0.65]],  # a tie in one subset, an order in the other
        [[0.95, 0.8], [0.65, 0.8]],  # near the least favourable configuration (measured ~0.03)
    ],
)
def test_rank_stability_type_i_error(prob):
    rng = np.random.default_rng(77)
    reps, rejections = 200, 0
    for i in range(reps):
        res = local_accuracy(_two_metrics(rng, 40, prob))
        rejections += rank_stability_test(res, n_resamples=199, random_state=i).pvalue < 0.05
    assert rejections / reps <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / reps), rejections / reps


def test_rank_stability_power_and_reproducibility():
    rng = np.random.default_rng(78)
    reps, rejections = 40, 0
    for i in range(reps):
        res = local_accuracy(_two_metrics(rng, 40, [[0.9, 0.6], [0.6, 0.9]]))
        rejections += rank_stability_test(res, n_resamples=199, random_state=i).pvalue < 0.05
    assert rejections / reps >= 0.7
    res = local_accuracy(_two_metrics(np.random.default_rng(1), 40, [[0.9, 0.6], [0.6, 0.9]]))
    t1 = rank_stability_test(res, n_resamples=99, random_state=5)
    t2 = rank_stability_test(res, n_resamples=99, random_state=np.random.default_rng(5))
    assert t1.pvalue == t2.pvalue
    np.testing.assert_array_equal(t1.null_distribution, t2.null_distribution)
    assert t1.details["ranking"] == {"q0": {"m0": 1.0, "m1": 2.0}, "q1": {"m0": 2.0, "m1": 1.0}}
    assert t1.estimate == pytest.approx(0.0)  # Kendall's W of two opposite rankings


def test_rank_stability_statistic_hand_computed_and_no_reversal():
    # m0 - m1 per context: q0 diffs (1, 0, 1, 0) -> delta .5, se = sd/2; q1 diffs (0, -1, 0, 0)
    d0 = np.array([1, 0, 1, 0.0])
    d1 = np.array([0, -1, 0, 0.0])
    m1 = np.array([0, 1, 0, 1, 1, 1, 0, 1.0])  # q0 then q1 per context
    m0 = m1 + np.r_[d0, d1]
    ctx = np.tile(np.arange(4), 2)
    sub = np.repeat(["q0", "q1"], 4)
    pairs = pd.concat([from_wins(m0, ctx, sub, "m0"), from_wins(m1, ctx, sub, "m1")])
    res = local_accuracy(pairs)
    t = rank_stability_test(res, n_resamples=199, random_state=0)
    t_up = 0.5 / (np.std(d0, ddof=1) / 2)
    t_down = 0.25 / (np.std(d1, ddof=1) / 2)
    assert t.statistic == pytest.approx(min(t_up, t_down), rel=1e-12)
    assert t.details["pairs"]["m0 vs m1"]["max_t_first_better"] == pytest.approx(t_up, rel=1e-12)
    # a consistent ordering (no subset where m1 beats m0) has R <= 0 and p = 1
    m0b = m1 + np.r_[d0, -d1]
    pairs = pd.concat([from_wins(m0b, ctx, sub, "m0"), from_wins(m1, ctx, sub, "m1")])
    assert rank_stability_test(local_accuracy(pairs), n_resamples=99, random_state=0).pvalue == 1.0


# ----------------------------------------------------------------------------- score_pairs and the example


def test_score_pairs_is_seeded_and_metrics_share_the_perturbed_output():
    data = pd.DataFrame(
        {
            "ref": ["a b c d e", "the cat sat on the mat", "one two three four five six seven"],
            "hyp": ["a b c d x", "the cat sat on a mat", "one two three four five six seven"],
            "grp": ["x", "y", "y"],
        }
    )
    seen = []

    def spy(context, output):
        seen.append(output)
        return float(len(output.split()))

    p1 = score_pairs(data, {"len": spy, "f1": unigram_f1}, context="ref", output="hyp", subset="grp", random_state=4)
    p2 = score_pairs(data, {"len": spy, "f1": unigram_f1}, context="ref", output="hyp", subset="grp", random_state=4)
    pd.testing.assert_frame_equal(p1, p2)
    assert p1["perturbed"][p1.metric == "len"].tolist() == [4.0, 5.0, 6.0]  # 20% of 5, 6, 7 words dropped
    assert p1["context"].tolist()[:3] == data["ref"].tolist()
    assert data["hyp"].tolist()[1] == "the cat sat on a mat"  # input not modified
    perturbed_seen = seen[3:6]
    assert all(len(s.split()) < len(h.split()) for s, h in zip(perturbed_seen, data["hyp"]))


def test_score_pairs_errors():
    data = pd.DataFrame({"ref": ["a b"], "hyp": ["a b"], "grp": ["x"]})
    with pytest.raises(ColumnError, match="available columns"):
        score_pairs(data, {"f1": unigram_f1}, context="reference", output="hyp", subset="grp")
    with pytest.raises(TypeError, match="must return a number"):
        score_pairs(data, {"bad": lambda c, o: "high"}, context="ref", output="hyp", subset="grp")
    with pytest.raises(InputError, match="finite"):
        score_pairs(data, {"bad": lambda c, o: float("nan")}, context="ref", output="hyp", subset="grp")
    with pytest.raises(TypeError, match="mapping"):
        score_pairs(data, [unigram_f1], context="ref", output="hyp", subset="grp")
    with pytest.raises(TypeError, match="DataFrame"):
        score_pairs(data.to_dict(), {"f1": unigram_f1}, context="ref", output="hyp", subset="grp")


def test_local_accuracy_errors():
    pairs = tiny_pairs()
    with pytest.raises(InputError, match="empty"):
        local_accuracy(pairs, subsets=["s1", "s3"])
    with pytest.raises(InputError, match="empty"):
        local_accuracy(pairs, subsets=[])
    with pytest.raises(InputError, match="empty subset"):
        local_accuracy(pairs[~((pairs.metric == "err") & (pairs.subset == "s2"))])
    with pytest.raises(InputError, match="lower_is_better"):
        local_accuracy(pairs, lower_is_better=["wer"])
    with pytest.raises(InputError, match="ties"):
        local_accuracy(pairs, ties="random")
    with pytest.raises(InputError, match="missing"):
        local_accuracy(pairs.assign(score=pairs.score.where(pairs.index != 0)))
    with pytest.raises(InputError, match="numeric"):
        local_accuracy(pairs.assign(score="high"))
    res = local_accuracy(pairs, subsets=["s1"])
    assert res.subsets == ("s1",)
    with pytest.raises(InputError, match="two subsets"):
        accuracy_equality_test(res, metric="m")
    with pytest.raises(InputError, match="metric"):
        accuracy_equality_test(local_accuracy(pairs))
    with pytest.raises(InputError, match="two metrics"):
        rank_stability_test(local_accuracy(pairs[pairs.metric == "m"]))


def test_example_end_to_end_and_plot():
    from mixeval.meta import chrf, example_translations

    data = example_translations()
    pd.testing.assert_frame_equal(data, example_translations())
    pairs = score_pairs(
        data,
        {"wer": word_error_rate, "f1": unigram_f1, "chrf": chrf},
        context="reference",
        output="hypothesis",
        subset="system",
        context_id="context",
        random_state=1,
    )
    res = local_accuracy(pairs, lower_is_better=["wer"])
    assert res.table.shape == (9, 8)
    assert res.contexts.size == 40
    # WER's accuracy differs strongly between systems (hypothesis A) on this set
    assert accuracy_equality_test(res, metric="wer").pvalue < 1e-6
    fig = plot_local_accuracy(res)
    assert len(fig.axes[0].get_xticklabels()) == 3
    assert "Local metric accuracy" in res.summary() and "<table" in res._repr_html_()


def test_accuracy_equality_table_holm_adjustment():
    from mixeval.meta import chrf, example_translations

    pairs = score_pairs(
        example_translations(),
        {"wer": word_error_rate, "f1": unigram_f1, "chrf": chrf},
        context="reference",
        output="hypothesis",
        subset="system",
        context_id="context",
        random_state=1,
    )
    res = local_accuracy(pairs, lower_is_better=["wer"])
    table = accuracy_equality_table(res).set_index("metric")
    p = {m: accuracy_equality_test(res, metric=m).pvalue for m in res.metrics}
    order = sorted(p, key=p.get)  # Holm by hand: 3 p, 2 p, 1 p, made monotone
    expected, running = {}, 0.0
    for i, m in enumerate(order):
        running = max(running, min(1.0, (3 - i) * p[m]))
        expected[m] = running
    for m in res.metrics:
        assert table.loc[m, "pvalue"] == p[m]
        assert table.loc[m, "pvalue_adjusted"] == pytest.approx(expected[m], rel=1e-12)
    none = accuracy_equality_table(res, adjust="none")
    assert (none["pvalue_adjusted"] == none["pvalue"]).all()


def test_stages_of_local_accuracy_alone_and_wilson_by_its_formula():
    """context_means -> accuracy_and_se -> accuracy_intervals; the Wilson limits (statsmodels) equal the
    closed form with the effective sample size to 1e-12."""
    from scipy import stats

    from mixeval.meta._local import accuracy_and_se, accuracy_intervals, context_means

    frame = pd.DataFrame({"x": [0, 0, 1, 1, 2, 2, 3], "m": ["f"] * 7, "q": ["a"] * 7,
                          "w": [1.0, 0.0, 1.0, 1.0, 1.0, 0.5, 1.0]})
    contexts, means, counts = context_means(frame, ["f"], ["a"])
    assert list(contexts) == [0, 1, 2, 3] and means[:, 0, 0].tolist() == [0.5, 1.0, 0.75, 1.0]
    acc, n_ctx, se = accuracy_and_se(means, counts)
    assert acc[0, 0] == pytest.approx(0.8125) and n_ctx[0, 0] == 4
    assert se[0, 0] == pytest.approx(np.std([0.5, 1.0, 0.75, 1.0], ddof=1) / 2)
    low, high = accuracy_intervals(acc, se, n_ctx, counts, means, ci="wilson", level=0.9, n_resamples=10,
                                   random_state=0)
    a, n = acc[0, 0], min(acc[0, 0] * (1 - acc[0, 0]) / se[0, 0] ** 2, 7)
    z = stats.norm.ppf(0.95)
    centre = (a + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * np.sqrt(a * (1 - a) / n + z**2 / (4 * n**2))
    assert low[0, 0] == pytest.approx(centre - half, abs=1e-12) and high[0, 0] == pytest.approx(centre + half, abs=1e-12)
