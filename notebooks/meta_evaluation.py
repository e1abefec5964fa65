# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Meta-evaluation of metrics with `mixeval.meta`
#
# Two questions about the evaluation itself:
#
# 1. **Local metric accuracy** (Deviyani & Diaz): how often does a metric score an output above a
#    degraded version of it, and does that change between subsets of outputs (hypothesis A)? Does the
#    *ordering* of several metrics change between subsets (hypothesis B)?
# 2. **Selective answering** (Mishra et al.): the accuracy-coverage curve by MaxProb, its AUC, and the
#    DiSCA score that fixes AUC's failure modes.
#
# Everything here runs on a tiny text set that `mixeval` generates itself (`example_translations()`).

# %%
import numpy as np
import pandas as pd

from _nbhelpers import show_figure
from mixeval.meta import (
    example_translations, score_pairs, local_accuracy, accuracy_equality_test, rank_stability_test,
    plot_local_accuracy, word_error_rate, unigram_f1, chrf, DropWords, RandomTranspositions,
    disca, didma, nidma, accuracy_coverage_curve, plot_accuracy_coverage,
)
data = example_translations()
data.head(6)

# %% [markdown]
# ## Local accuracy per system
#
# Each output `y` is perturbed once by dropping 20% of its words (rounded); every metric judges the same
# pair `(y, y')`. WER is an error rate, so for it a pair counts as correct when `WER(y) < WER(y')`.
# The unit of averaging and of resampling is the context `x` (the source sentence), since the three
# systems' outputs of one sentence are not independent.

# %%
metrics = {"wer": word_error_rate, "f1": unigram_f1, "chrf": chrf}
pairs = score_pairs(data, metrics, context="reference", output="hypothesis", subset="system",
                    context_id="context", perturbation=DropWords(0.2), random_state=1)
res = local_accuracy(pairs, lower_is_better=["wer"])
print(res.accuracy_matrix().round(3).to_string())
res.table

# %% [markdown]
# **Hypothesis A** (a metric's local accuracy differs between subsets): a cluster-robust Wald F test
# over contexts (Hotelling's T² when every context appears in every subset).

# %%
for m in res.metrics:
    t = accuracy_equality_test(res, metric=m)
    print(f"A {m:5s} F = {t.statistic:8.3f}  df = ({t.df:g}, {t.details['df_denominator']:g})  p = {t.pvalue:.3g}")

# %% [markdown]
# **Hypothesis B** (the ordering of metrics changes): the reversal statistic `R` needs one metric
# significantly ahead on one subset and behind on another; its p-value comes from a bootstrap over
# contexts. Kendall's W describes how similar the subsets' rankings are (1 = identical).

# %%
tb = rank_stability_test(res, n_resamples=1999, random_state=0)
print(f"B R = {tb.statistic:.3f}  p = {tb.pvalue:.3f}  Kendall W = {tb.estimate:.3f}")
print(tb.details["ranking"])
show_figure(plot_local_accuracy(res))


# %% [markdown]
# ## Ranked lists: random transpositions
#
# For a ranking of `n` items the perturbation makes `k = round(n log10(n) / 2)` random transpositions
# (`k = 100` for `n = 100`). Any callable `(output, rng) -> output` can be plugged in the same way.

# %%
def average_precision(relevant, ranking):
    hits, total = 0, 0.0
    for i, item in enumerate(ranking, start=1):
        if item in relevant:
            hits += 1
            total += hits / i
    return total / len(relevant)

def reciprocal_rank(relevant, ranking):
    return next((1 / i for i, item in enumerate(ranking, start=1) if item in relevant), 0.0)

rng = np.random.default_rng(7)
rows = []
for user in range(60):
    relevant = frozenset(rng.choice(100, size=5, replace=False).tolist())
    # a good recommender puts most relevant items near the top
    scores = rng.normal(size=100) + 2.5 * np.isin(np.arange(100), list(relevant))
    ranking = list(np.argsort(-scores))
    rows.append({"user": user, "relevant": relevant, "ranking": ranking,
                 "activity": "heavy" if user % 3 == 0 else "light"})
rec = pd.DataFrame(rows)
rpairs = score_pairs(rec, {"ap": average_precision, "rr": reciprocal_rank}, context="relevant",
                     output="ranking", subset="activity", context_id="user",
                     perturbation=RandomTranspositions(), random_state=3)
rres = local_accuracy(rpairs)
print(rres.accuracy_matrix().round(3).to_string())


# %% [markdown]
# ## Selective answering: AUC versus DiSCA
#
# System A has the higher AUC, but its most confident answers are already wrong; system B is perfect
# where it is most confident (Table 1, case 1 of Mishra et al.). DiSCA = x/a + y/b − z·penalty prefers B.

# %%
def groups(*spec):
    conf, ok = [], []
    for c, n, k in spec:
        conf += [c] * n
        ok += [1] * k + [0] * (n - k)
    return np.array(conf), np.array(ok)

conf_a, ok_a = groups((0.99, 10, 8), (0.95, 10, 8))
conf_b, ok_b = groups((0.99, 2, 2), (0.9, 10, 7), (0.6, 8, 4))
ra, rb = disca(conf_a, ok_a, tolerance=0.9), disca(conf_b, ok_b, tolerance=0.9)
for name, r in (("A", ra), ("B", rb)):
    print(f"{name}: AUC = {r.auc:.4f}  a = {r.a}  b = {r.b}  n = {r.n}  DiSCA = {r.disca:.4f}")
show_figure(plot_accuracy_coverage({"A": ra.curve, "B": rb.curve}))

# %%
print(rb.summary())
# DiDMA adds an energy term, NiDMA the DiSCA on out-of-distribution data
score = nidma(didma(rb, energy=2.0, weights=(0.8, 0.2)), disca_ood=0.4, weights=(0.5, 0.5))
print(f"NiDMA = {score:.4f}")
