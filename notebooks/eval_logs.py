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
# Most scores already sit in the logs of an evaluation harness: lm-evaluation-harness (`lm_eval ... --log_samples`)
# writes one `samples_<task>_<date>.jsonl` per model and task with one record per question, inspect_ai writes
# `.eval` logs, HELM `per_instance_stats.json`. `mixeval.logs` reads them into one long table and compares every
# pair of models on the questions they share.
#
# The logs here are mixeval's demo logs (`mixeval.datasets.write_demo`, on the command line `mixeval demo
# --write-data DIR`): lm-evaluation-harness sample files of three models on 200 questions that come in 40 reading
# passages of 5, simulated with known truth. A question of a typical passage is answered correctly with log-odds
# 1.2 (model-a), 0.7 (model-b) and 0.6 (model-c); passages differ in difficulty (SD 0.8 on the log-odds scale)
# and so do the questions of a passage (SD 1). Averaged over questions the accuracies are 0.71, 0.63 and 0.61.
#
# **The question**: which models differ, by how much, and how many questions would a benchmark like this need to
# settle a difference of two points of accuracy? The harness's own statistic is an unpaired standard error per
# model, as if each model had answered different questions, and as if the five questions of a passage were
# independent.

# %%
import tempfile

import matplotlib.pyplot as plt
from IPython.display import display

from mixeval.datasets import read_lm_eval, write_demo
from mixeval.logs import compare_logs, plot_leaderboard, plot_pair_intervals

folder = write_demo(tempfile.mkdtemp())["demo_logs"]  # demo_logs/<model>/samples_quiz_<date>.jsonl
logs = read_lm_eval(folder)
logs[["model", "task", "item", "acc", "passage", "subject"]].head()

# %% [markdown]
# One row per model and question: the metric as the harness wrote it (`acc`) and the fields of the question's
# `doc` record (`passage`, `subject`) as columns by their own names. The reader checked that a `doc_id` names the
# same question for every model (the harness's document and prompt hashes).
#
# ## 1. Every pair on the shared questions
#
# The paired difference of two models cancels what makes a question hard for both; the questions of one passage
# are correlated, so the standard error is clustered by passage (CR2, with Bell-McCaffrey degrees of freedom:
# 40 passages give 39), and the p-values are adjusted for the three pairs (Holm).

# %%
res = compare_logs(logs, metric="acc", cluster="passage")
PAIRS = {"mean_a": "accuracy A", "mean_b": "accuracy B", "estimate": "A - B", "lower": "95% lower",
         "upper": "95% upper", "pvalue_adjusted": "p (Holm)"}
pairs = res.pairs.set_index(["model_a", "model_b"])
display(pairs[list(PAIRS)].rename(columns=PAIRS).style.format(precision=3)
        .format("{:.2g}", subset=["p (Holm)"]).set_caption("Paired differences on 200 shared questions (CR2, 39 df)"))

# %% [markdown]
# Four standard errors of the same differences: the unpaired one (the harness's comparison of two accuracies),
# the paired one with independent questions, the paired one clustered by passage (CR2), and the one of a mixed
# model of the per-question differences with a random passage effect (`d ~ 1 + (1|passage)`, REML).

# %%
SES = {"se_unpaired": "unpaired", "se_naive": "paired, independent questions", "se_cr2": "paired, CR2 by passage",
       "se_mixed": "paired, mixed model"}
display(pairs[list(SES)].rename(columns=SES).style.format(precision=4)
        .set_caption("Standard errors of the paired differences"))

# %% [markdown]
# Pairing removes the questions' shared difficulty: the unpaired standard errors are the largest. Clustering by
# passage counts the correlation of a passage's questions in the differences: where it is positive (model-b -
# model-c) the CR2 standard error exceeds the naive one, where the passages' differences happen to vary less than
# independent questions would (model-a - model-c) it is smaller. The mixed model's standard error is close to the
# CR2 one, or to the naive one when the passage variance of the differences is estimated at zero. Each pair's
# intervals in a figure:

# %%
fig = plot_pair_intervals(res)
fig.axes[0].set_xlabel("difference in accuracy, 95% intervals")
fig.axes[0].set_title("Each pair of models on the 200 shared questions")
plt.show()

# %% [markdown]
# ## 2. The leaderboard and its rank sets
#
# Each model's accuracy with its 95% interval (a Wilson interval with the clustering's design effect, inside
# [0, 1]) and the simultaneous set of ranks it may hold (Bonferroni over the pairs' CR2 t tests).

# %%
fig = plot_leaderboard(res)
fig.axes[0].set_xlabel("accuracy on 200 questions, 95% intervals")
fig.axes[0].set_title("Leaderboard with simultaneous rank sets")
plt.show()

# %% [markdown]
# ## 3. How many questions?
#
# `n_needed` is the number of questions (in passages of five, like these) for 80% power to detect a difference
# stated in advance, by default two points of accuracy (`effect=` states another), never the observed
# difference; `mdd` is the difference these 200 questions detect with 80% power.

# %%
DESIGN = {"mdd": "detectable with 200 questions", "n_needed": "questions needed for 0.02"}
display(pairs[list(DESIGN)].rename(columns=DESIGN).style.format("{:.3f}", subset=[DESIGN["mdd"]])
        .format("{:,.0f}", subset=[DESIGN["n_needed"]]).set_caption("Design: 80% power, two-sided 5% level"))

# %% [markdown]
# ## 4. The report
#
# The same comparison as one self-contained HTML page (`res.to_report().save("report.html")`; on the command
# line `mixeval compare-logs demo_logs/ --metric acc --cluster passage --html report.html`). Its sections, each
# with its tables, figures and the definitions of its terms:

# %%
report = res.to_report(title="Three models on the demo quiz")
print("\n".join(f"{i}. {section.title}" for i, section in enumerate(report.sections, start=1)))

# %% [markdown]
# ## Conclusion
#
# model-a is ahead of model-c by 0.175 (95% interval 0.105 to 0.245) and of model-b by 0.095, whose interval
# (0.012 to 0.178) excludes 0 but whose Holm-adjusted p-value (0.053) does not reach 5%; model-b and model-c are
# not told apart (0.080, interval -0.014 to 0.174). The leaderboard's rank sets say the same: model-a is first or
# second, model-c second or third. The truth behind the simulation (accuracies 0.71, 0.63 and 0.61) lies in every
# model's interval; of the differences (0.085, 0.103 and 0.018) two lie in their intervals and model-a - model-c
# just misses its own: this draw made model-c look weaker than it is, as one in twenty 95% intervals may. Pairing
# shrinks the standard errors below the unpaired ones the harness reports, and clustering by passage keeps them
# honest about the 40 passages behind the 200 questions. With 200 questions a benchmark of this kind detects
# differences of 0.10 to 0.13; to settle a difference of two points it would need 4,700 to 8,400 questions.
