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
# # From harness logs to a paired, clustered comparison with `mixeval.logs`
#
# Most scores already sit in the logs of an evaluation harness. This notebook starts from logs that the
# harnesses themselves wrote on this machine, offline (`tests/logs/data/make_logs.py`):
#
# * **lm-evaluation-harness** (`lm_eval --model dummy ... --log_samples`): `samples_toyqa_*.jsonl`, one record
#   per question with `doc_id`, `doc`, `acc`, ... for three runs of its dummy model (random answers);
# * **inspect_ai** (`inspect_ai.eval` with its `mockllm` provider): `.eval` logs of three models on 12
#   questions in 4 passages, 2 epochs, scorers `match` and `includes`.
#
# and ends at the HTML report. The harnesses' own statistics are thin: lm-evaluation-harness reports an unpaired
# standard error per task, inspect_ai a clustered standard error per model but no paired comparison, and
# neither says how many questions would be needed.

# %%
from pathlib import Path

from IPython.display import display

from _nbhelpers import KeyNumbers, show_figure
from mixeval.datasets import read_inspect, read_lm_eval
from mixeval.logs import compare_logs, plot_leaderboard, plot_pair_intervals

LOGS = Path("..") / "tests" / "logs" / "data"
lm = read_lm_eval(LOGS / "lm_eval")
lm[["model", "task", "item", "repeat", "acc", "passage", "subject", "question"]].head()

# %% [markdown]
# One row per model x question x repeat; the metric columns as the harness wrote them (`acc`), and the
# fields of the harness's `doc` record (`passage`, `subject`, ...) as columns by their own names. The
# reader checked that question `doc_id` is the same question for every model (the harness's document and
# prompt hashes).
#
# ## Every pair on the shared questions
#
# The paired difference of two models cancels the between-question variance; questions of one passage are
# correlated, so the standard error is clustered by passage. `se_unpaired` is what an unpaired comparison of
# the two accuracies (lm-evaluation-harness's) would use.

# %%
res_lm = compare_logs(lm, metric="acc", cluster="passage", by="subject", mixed=False)
PAIR_COLUMNS = {"mean_a": "accuracy A", "mean_b": "accuracy B", "estimate": "A - B", "se_unpaired": "SE unpaired",
                "se_cr2": "SE paired, clustered (CR2)", "pvalue_adjusted": "p (Holm)", "mcnemar_pvalue": "McNemar p"}
display(res_lm.pairs.set_index(["model_a", "model_b"])[list(PAIR_COLUMNS)].rename(columns=PAIR_COLUMNS)
        .style.format(precision=4).set_caption(f"lm-evaluation-harness: every pair on {res_lm.n_common_items} shared questions"))
row = res_lm.pairs.iloc[2]
KeyNumbers({f"lm-eval {row.model_a} - {row.model_b} {col}": row[col]
            for col in ("estimate", "se_unpaired", "se_cr2", "mcnemar_pvalue")})

# %% [markdown]
# The dummy model guesses: no pair differs once the p-values are adjusted for three pairs, and the rank
# sets overlap. With `cluster="passage"`, McNemar's test is the clustered one (`res_lm.mcnemar_test` says
# which): the exact randomisation test that flips the sign of whole passages' differences, with Durkalski's
# chi-square beside it; without clusters it is McNemar's exact binomial test on the discordant questions.
#
# ## inspect_ai: epochs, scorers and metadata
#
# Epochs become repeats (averaged within question before the paired difference); every scorer becomes a
# metric column, its values mapped to numbers as inspect_ai's `value_to_float` does (C = 1, I = 0, P = 0.5,
# N = 0); the sample metadata (`passage`, `subject`) are columns usable as clusters or properties. The
# per-model clustered standard error (`se_cluster` in the leaderboard) is the number inspect_ai's own
# `stderr(cluster="passage")` put into each log.

# %%
ins = read_inspect(LOGS / "inspect")
res = compare_logs(ins, metric="match", cluster="passage", mixed=True)
LEADER_COLUMNS = {"estimate": "accuracy", "se_cluster": "SE clustered (inspect_ai's)", "se_cr2": "SE CR2",
                  "lower": "95% lower (Wilson)", "upper": "95% upper (Wilson)", "rank_lower": "best rank",
                  "rank_upper": "worst rank"}
display(res.leaderboard.set_index("model")[list(LEADER_COLUMNS)].rename(columns=LEADER_COLUMNS)
        .style.format(precision=3).set_caption("inspect_ai: accuracy by `match`, 12 questions in 4 passages"))
best = res.pairs.loc[res.pairs["estimate"].abs().idxmax()]
KeyNumbers({f"inspect {best.model_a} - {best.model_b} {col}": best[col]
            for col in ("estimate", "se_naive", "se_cr2", "df", "se_mixed", "n_needed")})

# %% [markdown]
# Three ways to the interval of each difference: naive (questions independent), cluster-robust CR2 with
# Bell-McCaffrey degrees of freedom (here 4 passages: 3 df, so the interval is wide), and the mixed model of
# each pair's per-question differences (repeats averaged within question first), `d ~ 1 + (1|passage)` fitted by
# REML, with its own `se_mixed` and Satterthwaite df (`res.mixed_model` names it; `glmm=True` adds the per-pair
# logistic GLMM's log odds ratio for 0/1 scores). `n_needed` is the number of questions (in passages like these)
# for 80% power to detect a difference stated in advance: by default two points of accuracy (`effect=` states
# another), never the observed difference.

# %%
fig = plot_pair_intervals(res)
fig.axes[0].set_xlabel("difference in accuracy (scorer `match`), 95% intervals")
fig.axes[0].set_title("Each pair of models on the 12 shared questions: three intervals")
show_figure(fig)

# %% [markdown]
# The leaderboard: each model's accuracy with its 95% interval (a Wilson interval with the clustering's design
# effect, inside [0, 1]) and the simultaneous set of ranks it may hold (Bonferroni over the pairs' CR2 t tests).

# %%
fig = plot_leaderboard(res)
fig.axes[0].set_xlabel("accuracy (scorer `match`) on 12 questions, 95% intervals")
fig.axes[0].set_title("Leaderboard with simultaneous rank sets")
show_figure(fig)

# %% [markdown]
# ## The report
#
# The same comparison as one self-contained HTML page (`mixeval compare-logs tests/logs/data/inspect
# --metric match --cluster passage --html report.html` on the command line):

# %%
report = res.to_report(title="inspect_ai mock models on toy arithmetic")
print(report.to_text()[:1500])  # the page's text; report.save("report.html") writes the page
