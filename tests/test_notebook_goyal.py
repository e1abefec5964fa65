"""notebooks/goyal_metric_model: its numbers, read from its variables after a fresh run of its source, and its
committed outputs, which must show what that run shows.

References: Goyal, Hu & Gupta (2023), Table 1 (the paper's printed intervals), the closed-form variance
decomposition of Section 2 of the notebook, and the nominal 95% coverage with the Monte-Carlo tolerance of
the notebook's replicates (3 standard errors).
"""

from __future__ import annotations

import pytest

MC_4000 = 3 * (0.95 * 0.05 / 4000) ** 0.5


#: run in the notebook's kernel after its last cell: the numbers checked below, one ``label = value`` line each
PROBE = """
def put(label, value):
    print(f"{label} = {value!r}" if isinstance(value, bool) else f"{label} = {float(value)!r}")

for dataset, row in t1.iterrows():
    for ci in ("d", "m"):
        for end in ("low", "high"):
            put(f"{dataset} CI_{ci.upper()} {end}", row[f"ci_{ci}_{end}"])
            put(f"{dataset} CI_{ci.upper()} {end} (paper)", row[f"ci_{ci}_{end}_paper"])
for experiment, consistent in t2["consistent_m"].items():
    put(f"{experiment} CI_M consistent with its variances", bool(consistent))
put("GPT2 on BOLD: variance by Eq. 13", r.var_control)
put("GPT2 on BOLD: variance of the calibrated estimate", calibrated_var)
put("GPT2 on BOLD: E[Var(R|O)] / (N - 1)", within)
put("BOLD observed difference", r.ate)
put("BOLD calibrated difference (true rates)", r.ate_corrected)
put("no effect: uncorrected rejection rate", flips.reject_uncorrected.iloc[0])
put("no effect: Goyal rejection rate", flips.reject_goyal.iloc[0])
put("percentile bootstrap coverage (2,000 replicates x 1,000 resamples)", boot.loc["bootstrap", "coverage"])
for setting, column in summary.items():
    for method, value in column.dropna().items():
        put(f"coverage {method}, {setting}", value)
"""


@pytest.fixture(scope="module", params=["executed", "committed"])
def run(request, notebook_runner):
    return notebook_runner(request, "goyal_metric_model", needs_data=False, probe=PROBE)


def test_executes_with_the_figure_and_the_committed_outputs_are_a_fresh_run(run):
    assert run.images == 1 and not run.errors  # the rejection-rate plot
    assert not run.stale, "rebuild: python3 notebooks/build.py goyal_metric_model\n" + "\n".join(run.stale)
    assert run.nb.cells[-1].source.startswith("## Conclusion")


def test_table1_intervals_match_the_paper(run):
    # the paper's CI_M to the fifth decimal; CI_D's lower BOLD end is printed -0.00325 for -0.003258
    for dataset in ("BOLD", "RealToxicityPrompts"):
        for end in ("low", "high"):
            assert run[f"{dataset} CI_M {end}"] == pytest.approx(run[f"{dataset} CI_M {end} (paper)"], abs=6e-6)
    assert run["BOLD CI_D low"] == pytest.approx(-0.00326, abs=5e-6)
    assert run["BOLD CI_D high"] == pytest.approx(-0.00114, abs=5e-6)
    assert run["RealToxicityPrompts CI_D low"] == pytest.approx(-0.00220, abs=5e-6)
    assert run.raw("Exp5 CI_M consistent with its variances") == "False"
    assert run.raw("Exp1 CI_M consistent with its variances") == "True"


def test_variance_decomposition(run):
    # Eq. 13 = calibrated variance + E[Var(R|O)] / (N - 1), by the law of total variance
    total = run["GPT2 on BOLD: variance of the calibrated estimate"] + run["GPT2 on BOLD: E[Var(R|O)] / (N - 1)"]
    assert run["GPT2 on BOLD: variance by Eq. 13"] == pytest.approx(total, rel=1e-6)
    # the calibrated difference is (prec - FOR) times the observed one
    assert run["BOLD calibrated difference (true rates)"] == pytest.approx((0.8897 - 0.22769) * run["BOLD observed difference"],
                                                                          rel=1e-6)


def test_coverage_numbers(run):
    for setting in ("BOLD, no effect", "BOLD, effect"):
        assert abs(run[f"coverage calibrated, {setting}"] - 0.95) < MC_4000
        assert run[f"coverage goyal, {setting}"] == 1.0
    assert run["coverage calibrated, estimated rates"] < 0.8 and run["coverage calibrated, per-system error"] < 0.05
    assert abs(run["coverage delta, estimated rates"] - 0.95) < MC_4000
    assert abs(run["coverage delta, paired"] - 0.95) < MC_4000
    assert abs(run["coverage ppi, per-system error"] - 0.95) < MC_4000
    assert abs(run["coverage uncorrected, BOLD, no effect"] - 0.95) < MC_4000
    assert run["coverage uncorrected, BOLD, effect"] < 0.8
    boot = run["percentile bootstrap coverage (2,000 replicates x 1,000 resamples)"]
    assert abs(boot - 0.95) < 3 * (0.95 * 0.05 / 2000) ** 0.5


def test_rejection_rates_at_no_effect(run):
    # at no effect the uncorrected test rejects ~5% (1,000 intervals) and the paper's never
    assert abs(run["no effect: uncorrected rejection rate"] - 0.05) < 0.025
    assert run["no effect: Goyal rejection rate"] == 0.0
