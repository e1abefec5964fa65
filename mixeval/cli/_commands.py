"""The one table of the command line: every command's module, task group, one-line help and examples.

``mixeval --help`` is built from this table alone (no command module is imported), ``mixeval COMMAND ...``
imports only the module named here, and each command's ``--help`` ends with the examples given here. A new
``cmd_*`` module adds a row; ``tests/cli`` checks that the rows match what the modules register and that every
example runs as written on the demo data ``mixeval demo --write-data .`` writes.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Command", "COMMANDS", "GROUPS", "DEMO_DATA"]

#: the file most examples read; ``mixeval demo --write-data .`` writes it (the bundled demo log) and the
#: ``demo_*`` tables and logs the other examples read into the current folder
DEMO_DATA = "demo_mt.csv"

#: the task groups of ``mixeval --help``, in the order listed
GROUPS = ("fitting", "reliability", "significance", "resampling", "validity",
          "metric models and meta-evaluation", "reports and reproduction")


@dataclass(frozen=True)
class Command:
    """One row of the command table.

    Parameters
    ----------
    module : str
        The module of this package whose ``register(subparsers)`` defines the command's arguments.
    group : str
        Its task group in ``mixeval --help`` (one of :data:`GROUPS`).
    help : str
        The one-line description listed by ``mixeval --help``.
    examples : tuple of str
        Command lines shown at the end of the command's ``--help``.

    Examples
    --------
    >>> row = COMMANDS["significance"]
    >>> row.module, row.group
    ('cmd_study', 'significance')
    >>> row.examples[0]
    'mixeval significance demo_mt.csv "score ~ system + (1|item) + (1|rater) + (1|system:seed)"'
    """

    module: str
    group: str
    help: str
    examples: tuple[str, ...]


_D = DEMO_DATA
_MODEL = "score ~ system + (1|item) + (1|rater) + (1|system:seed)"  # the demo's design: seeds nested in systems

#: The command table: each command's name and its :class:`~mixeval.cli.Command` row (module, task group, help,
#: examples), in the order ``mixeval --help`` lists them within a group.
COMMANDS: dict[str, Command] = {
    "fit": Command("cmd_fit", "fitting", "fit a linear mixed model (lme4 formula syntax)", (
        f'mixeval fit {_D} "{_MODEL}"',
        f'mixeval fit {_D} "{_MODEL}" --ml --json')),
    "compare": Command("cmd_fit", "fitting",
                       "likelihood-ratio test of two nested models (refit by ML, as lme4's anova)", (
        f'mixeval compare {_D} "{_MODEL}" "score ~ 1 + (1|item) + (1|rater) + (1|system:seed)"',)),
    "confint": Command("cmd_confint", "fitting", "confidence intervals of a mixed model's sd's, sigma and fixed "
                                                 "effects (thresholds of an ordinal model)", (
        f'mixeval confint {_D} "{_MODEL}"',
        f'mixeval confint {_D} "{_MODEL}" --method boot --nsim 200 --seed 1')),
    "reliability": Command("cmd_study", "reliability", "variance components, phi and a D-study for your CSV", (
        f'mixeval reliability {_D} "score ~ (1|item) + (1|rater) + (1|item:rater)" --n rater=3',
        f'mixeval reliability {_D} "score ~ (1|item) + (1|rater) + (1|item:rater)" --grid rater=1:8 --target 0.8')),
    "agreement": Command("cmd_agreement", "reliability",
                         "Krippendorff's alpha, Cohen's kappa, Scott's pi (book Section 3.3.1)", (
        "mixeval agreement demo_ratings.csv --id translation --measurement interval --seed 1",)),
    "significance": Command("cmd_study", "significance",
                            "GLRT of the system effect and pairwise comparisons for your CSV", (
        f'mixeval significance {_D} "{_MODEL}"',
        f'mixeval significance {_D} "{_MODEL}" --by src_length --cuts 15,55 --adjust holm',
        f'mixeval significance {_D} "{_MODEL}" --df satterthwaite',
        f'mixeval significance {_D} "{_MODEL}" --control baseline')),
    "power": Command("cmd_power", "significance",
                     "power of a system comparison for more items, raters or seeds (simulation)", (
        # power lays seeds out as a crossed factor with a system:seed interaction: (1|seed) + (1|system:seed)
        f'mixeval power {_D} "score ~ system + (1|item) + (1|rater) + (1|seed) + (1|system:seed)" --n seed=3,6 '
        "--test pairwise --pair baseline,system_a --nsim 100 --seed 1",)),
    "compare-logs": Command("cmd_compare_logs", "significance", "paired, cluster-robust comparison of the models in "
                                                                "harness logs (lm-eval, inspect_ai, HELM)", (
        "mixeval compare-logs demo_logs/ --metric acc --cluster passage --by subject --html report.html",
        "mixeval compare-logs demo_logs/model-a demo_logs/model-b --cluster passage --json --no-mixed")),
    "preferences": Command("cmd_preferences", "significance", "Bradley-Terry leaderboard of pairwise judgments "
                                                              "(ties, position bias, judge and prompt effects)", (
        "mixeval preferences demo_votes.csv --seed 1",
        "mixeval preferences demo_votes.csv --ties davidson --json --seed 1",
        "mixeval preferences demo_votes.csv --judge judge --position random --prompt prompt --random prompt "
        "--html leaderboard.html --seed 1")),
    "bootstrap": Command("cmd_bootstrap", "resampling",
                         "paired bootstrap test of mean score differences (book Algorithm 4.1)", (
        "mixeval bootstrap demo_scores.csv --seed 1",
        "mixeval bootstrap demo_scores.csv --baseline baseline --ci bca --seed 1")),
    "permutation": Command("cmd_permutation", "resampling",
                           "paired approximate randomization test of mean score differences (Algorithm 4.2)", (
        "mixeval permutation demo_scores.csv --seed 1",
        "mixeval permutation demo_scores.csv --systems baseline system_b --n-resamples 20000 --seed 1")),
    "circularity": Command("cmd_circularity", "validity", "GAM circularity test: are the labels a reconstruction "
                                                          "of a rule over a few features?", (
        "mixeval circularity demo_circularity.csv --target sofa_kidney --exclude kidney_failure --top 5",
        "mixeval circularity demo_circularity.csv --target kidney_failure --features creatinine,urine,urea "
        "--family binomial --json")),
    "metric-ci": Command("cmd_metric_ci", "metric models and meta-evaluation",
                         "confidence interval when the metric is a model (Goyal et al. 2023)", (
        "mixeval metric-ci --p-control 0.00456 --p-treatment 0.00236 --n 23679 --precision 0.8897 --for 0.22769",)),
    "meta": Command("cmd_meta", "metric models and meta-evaluation",
                    "meta-evaluation of metrics: selective answering (DiSCA), local metric accuracy", (
        "mixeval meta selective demo_answers.csv --confidence maxprob --correct correct",
        "mixeval meta local demo_pairs.csv --context context --subset system --metric metric --score score "
        "--perturbed perturbed --lower-is-better wer")),
    "report": Command("cmd_report", "reports and reproduction",
                      "one command from an evaluation log to a full report (text + HTML)", (
        f"mixeval report {_D} --score score --system system --item item --facet rater --facet system:seed "
        "--by src_length --cuts 15,55 --out report.html",)),
    "demo": Command("cmd_report", "reports and reproduction",
                    "run the report on the bundled simulated MT evaluation (no network)", (
        "mixeval demo",
        "mixeval demo --json --out demo.html",
        "mixeval demo --write-data .")),
    "reproduce": Command("cmd_reproduce", "reports and reproduction", "recompute a table of the book or a paper", (
        "mixeval reproduce list",
        "mixeval reproduce goyal-table-1 --json")),
}
