"""notebooks/ordinal_ratings: its numbers, read from the notebook's own variables after a fresh run of its source,
and its committed outputs, which must show what that run shows."""

from __future__ import annotations

import pytest

#: run in the notebook's kernel after its last cell: the numbers checked below, one ``label = value`` line each
PROBE = """
def put(label, value):
    print(f"{label} = {float(value)!r}")

for name, value in ordinal.fixef.items():
    put(f"clmm {name}", value)
for name, value in ordinal.components.items():
    put(f"clmm variance {name}", value)
put("gaussian B - C z", gp.set_index("contrast").loc["B - C", "z"])
put("ordinal latent B - C z", op.set_index("contrast").loc["B - C", "z"])
put("P(rating >= 4 | C)", top)
put("phi gaussian (6 raters)", reliability["Gaussian, rating scale"])
put("phi latent (6 raters)", reliability["ordinal, latent scale"])
put("phi observed (6 raters)", reliability["ordinal, observed scale"])
put("nominal test p", same.pvalue)
put("spread test statistic", spread_test.statistic)
put("spread test p", spread_test.pvalue)
for column in ("estimate", "lower", "upper"):
    put(f"spread sd {column}", sd_table.loc["sd_spread|rater", column])
"""


@pytest.fixture(scope="module", params=["executed", "committed"])
def run(request, notebook_runner):
    return notebook_runner(request, "ordinal_ratings", needs_data=False, probe=PROBE)


def test_executes_with_the_figures_and_the_committed_outputs_are_a_fresh_run(run):
    assert run.images == 2 and not run.errors
    assert not run.stale, "rebuild: python3 notebooks/build.py ordinal_ratings\n" + "\n".join(run.stale)


def test_ordinal_fit_recovers_the_simulated_truth(run):
    # truth: effects 1 and 2, item variance 1, rater variance 0.4 (one simulated study: within ~2 SE)
    assert abs(run["clmm systemB"] - 1.0) < 0.5
    assert abs(run["clmm systemC"] - 2.0) < 0.5
    assert 0.3 < run["clmm variance item"] < 2.0


def test_latent_scale_separates_the_ceiling_systems_more(run):
    assert abs(run["ordinal latent B - C z"]) > abs(run["gaussian B - C z"])
    assert 0.5 < run["P(rating >= 4 | C)"] < 1.0
    assert 0 < run["phi gaussian (6 raters)"] < 1 and 0 < run["phi latent (6 raters)"] < 1
    assert 0 < run["phi observed (6 raters)"] < run["phi latent (6 raters)"]


def test_random_rater_thresholds_recover_the_simulated_spread(run):
    # truth: spread sd 0.6 over 40 raters; the six raters of the first study share their thresholds
    assert run["spread sd lower"] < 0.6 < run["spread sd upper"]
    assert abs(run["spread sd estimate"] - 0.6) < 0.25
    assert run["spread test p"] < 1e-3 and run["spread test statistic"] > 10
    assert 0 < run["nominal test p"] <= 1


def test_the_notebook_shows_no_quantity_value_table_and_ends_with_a_conclusion(run):
    cells = run.nb.cells
    assert cells[-1].cell_type == "markdown" and cells[-1].source.startswith("## Conclusion")
    html = "".join(o.get("data", {}).get("text/html", "") for c in cells for o in c.get("outputs", []))
    assert "<th>quantity</th>" not in html


def test_every_table_fits_the_page(run):
    """Issue 41, item 8: at most 8 cells a row (index levels included) in every table the notebook shows."""
    import re

    html = [o["data"]["text/html"] for c in run.nb.cells for o in c.get("outputs", []) if "text/html" in o.get("data", {})]
    rows = [row for table in html for row in re.findall(r"<tr.*?</tr>", table, flags=re.S)]
    assert rows and max(len(re.findall(r"<t[hd]", row)) for row in rows) <= 8
