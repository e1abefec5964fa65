"""Tests of mixeval.plots: the drawn values equal the data, validation, no mutation, ax= support."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from mixeval import plots  # noqa: E402
from mixeval.errors import ColumnError, InputError  # noqa: E402


@pytest.fixture
def scores() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame(
        {
            "system": np.repeat(["B", "A", "C"], [30, 20, 10]),
            "ter": np.concatenate([rng.normal(0.4, 0.1, 30), rng.normal(0.3, 0.1, 20), rng.normal(0.5, 0.1, 10)]),
        }
    )


@pytest.fixture
def means() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "cls": ["short", "typical", "very long"] * 2,
            "system": ["Baseline"] * 3 + ["Marking"] * 3,
            "emmean": [0.30, 0.35, 0.45, 0.28, 0.33, 0.40],
            "SE": [0.010, 0.005, 0.020, 0.011, 0.006, 0.021],
        }
    )


@pytest.fixture(autouse=True)
def _close_all():
    yield
    plt.close("all")


# --------------------------------------------------------------------------- box plots


def test_boxplots_draw_the_quartiles_and_means_of_each_system(scores):
    before = scores.copy()
    fig = plots.plot_system_boxplots(scores, score="ter", system="system")
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["B\n(n=30)", "A\n(n=20)", "C\n(n=10)"]  # first-appearance order, counts
    # medians: the 2-point median lines of the boxes
    medians = [line for line in ax.get_lines() if line.get_color() == "#1f3b57"]
    expected = scores.groupby("system", sort=False)["ter"].median().to_numpy()
    np.testing.assert_allclose([m.get_ydata()[0] for m in medians], expected, rtol=1e-12)
    mean_line = [line for line in ax.get_lines() if line.get_label() == "mean"][0]
    np.testing.assert_allclose(mean_line.get_ydata(), scores.groupby("system", sort=False)["ter"].mean(), rtol=1e-12)
    # box extents are the quartiles
    q = scores.groupby("system", sort=False)["ter"].quantile([0.25, 0.75]).unstack().to_numpy()
    for patch, (q1, q3) in zip(ax.patches, q):
        ys = patch.get_path().vertices[:, 1]
        np.testing.assert_allclose([ys.min(), ys.max()], [q1, q3], rtol=1e-12)
    assert ax.get_ylabel() == "ter" and ax.get_xlabel() == "system"
    pd.testing.assert_frame_equal(scores, before)


def test_boxplots_order_and_categorical_order(scores):
    fig = plots.plot_system_boxplots(scores, "ter", "system", order=["A", "B", "C"], show_means=False)
    assert [t.get_text().split("\n")[0] for t in fig.axes[0].get_xticklabels()] == ["A", "B", "C"]
    cat = scores.assign(system=pd.Categorical(scores["system"], categories=["C", "B", "A"]))
    fig = plots.plot_system_boxplots(cat, "ter", "system")
    assert [t.get_text().split("\n")[0] for t in fig.axes[0].get_xticklabels()] == ["C", "B", "A"]
    with pytest.raises(InputError, match="lacks level"):
        plots.plot_system_boxplots(scores, "ter", "system", order=["A", "B"])


def test_boxplots_bad_input(scores):
    with pytest.raises(ColumnError, match="available columns: system, ter"):
        plots.plot_system_boxplots(scores, score="score", system="system")
    with pytest.raises(InputError, match="numeric"):
        plots.plot_system_boxplots(scores.assign(ter=scores["ter"].astype(str)), "ter", "system")
    with pytest.raises(InputError, match="NaN"):
        plots.plot_system_boxplots(scores.assign(ter=np.where(scores.index == 3, np.nan, scores["ter"])),
                                   "ter", "system")
    with pytest.raises(InputError, match="missing"):
        plots.plot_system_boxplots(scores.assign(system=scores["system"].where(scores.index != 0)), "ter", "system")
    with pytest.raises(TypeError, match="DataFrame"):
        plots.plot_system_boxplots(scores.to_dict(), "ter", "system")  # type: ignore[arg-type]


def test_plots_draw_into_a_given_axes(scores):
    fig, (left, right) = plt.subplots(1, 2)
    out = plots.plot_system_boxplots(scores, "ter", "system", ax=right)
    assert out is fig and len(right.patches) == 3 and len(left.patches) == 0
    with pytest.raises(TypeError, match="Axes"):
        plots.plot_system_boxplots(scores, "ter", "system", ax="left")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- interaction


def test_interaction_lines_and_error_bars_match_the_table(means):
    fig = plots.plot_interaction(means, x="cls", trace="system", y="emmean", se="SE", dodge=0.1)
    ax = fig.axes[0]
    lines = [line for line in ax.get_lines() if line.get_label() in ("Baseline", "Marking")]
    assert [line.get_label() for line in lines] == ["Baseline", "Marking"]
    np.testing.assert_allclose(lines[0].get_ydata(), [0.30, 0.35, 0.45])
    np.testing.assert_allclose(lines[1].get_ydata(), [0.28, 0.33, 0.40])
    np.testing.assert_allclose(lines[0].get_xdata(), [-0.05, 0.95, 1.95])  # dodged by -dodge/2
    np.testing.assert_allclose(lines[1].get_xdata(), [0.05, 1.05, 2.05])
    bars = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert len(bars) == 2
    segments = np.array(bars[0].get_segments())  # (3 cells, 2 ends, xy)
    np.testing.assert_allclose(segments[:, 0, 1], [0.29, 0.345, 0.43])
    np.testing.assert_allclose(segments[:, 1, 1], [0.31, 0.355, 0.47])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["short", "typical", "very long"]
    assert ax.get_legend().get_title().get_text() == "system"


def test_interaction_orders_gaps_and_no_se(means):
    shuffled = means.sample(frac=1.0, random_state=0).iloc[1:]  # one cell missing
    fig = plots.plot_interaction(shuffled, x="cls", trace="system", y="emmean",
                                 x_order=["very long", "typical", "short"], trace_order=["Marking", "Baseline"])
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["very long", "typical", "short"]
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert list(lines)[:2] == ["Marking", "Baseline"]
    missing = means.iloc[~means.index.isin(shuffled.index)].iloc[0]
    ys = lines[missing["system"]].get_ydata()
    assert np.isnan(ys).sum() == 1
    assert not [c for c in ax.collections if isinstance(c, LineCollection)]  # no SE, no bars


def test_interaction_bad_input(means):
    with pytest.raises(ColumnError, match="available columns"):
        plots.plot_interaction(means, x="length", trace="system", y="emmean")
    with pytest.raises(InputError, match="one row per"):
        plots.plot_interaction(pd.concat([means, means.iloc[:1]]), x="cls", trace="system", y="emmean")
    with pytest.raises(InputError, match="negative"):
        plots.plot_interaction(means.assign(SE=-means["SE"]), x="cls", trace="system", y="emmean", se="SE")


# --------------------------------------------------------------------------- D-study


def _phi_grid() -> pd.DataFrame:
    """phi of a rater x occasion design with the book's Post Edit components (Table 3.2)."""
    s2 = {"sentence": 0.04787343, "rater:sentence": 0.01874915, "rater": 0.001377437,
          "instantiation:rater": 0.0006219792, "residual": 0.01059404}
    rows = []
    for n_r in range(1, 11):
        for n_o in (1, 2, 3):
            delta = (s2["rater"] + s2["rater:sentence"]) / n_r + s2["instantiation:rater"] / (n_r * n_o) \
                + s2["residual"] / (n_r * n_o)
            rows.append((n_r, n_o, s2["sentence"] / (s2["sentence"] + delta)))
    return pd.DataFrame(rows, columns=["n_rater", "n_occasion", "phi"]).sample(frac=1.0, random_state=2)


def test_dstudy_curves_are_sorted_by_facet_size_per_trace():
    grid = _phi_grid()
    fig = plots.plot_dstudy(grid, x="n_rater", trace="n_occasion", threshold=0.8)
    ax = fig.axes[0]
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["n_occasion = 1", "n_occasion = 2", "n_occasion = 3", "phi = 0.8"]
    for n_o, line in zip((1, 2, 3), lines):
        expected = grid[grid["n_occasion"] == n_o].sort_values("n_rater")
        np.testing.assert_array_equal(line.get_xdata(), expected["n_rater"])
        np.testing.assert_allclose(line.get_ydata(), expected["phi"], rtol=1e-12)
        assert np.all(np.diff(line.get_ydata()) > 0)  # phi increases with raters
    np.testing.assert_allclose(lines[-1].get_ydata(), [0.8, 0.8])


def test_dstudy_single_curve_without_threshold():
    grid = _phi_grid().query("n_occasion == 1")
    fig = plots.plot_dstudy(grid, x="n_rater", threshold=None)
    assert len(fig.axes[0].get_lines()) == 1 and fig.axes[0].get_legend() is None
    with pytest.raises(ColumnError, match="n_rater, n_occasion, phi"):
        plots.plot_dstudy(grid, x="raters")
    with pytest.raises(InputError, match="threshold"):
        plots.plot_dstudy(grid, x="n_rater", threshold=float("nan"))


# --------------------------------------------------------------------------- variance components


def test_variance_component_bars_are_percent_of_total():
    # book Table 3.9 (partial grid), lme4 variances
    vc = pd.DataFrame(
        {
            "component": ["sentence_id", "learning_rate", "decoder_dropout_hidden", "encoder_dropout", "seed",
                          "decoder_dropout", "Residual"],
            "variance": [0.09049537, 8.010e-4, 1.278e-4, 1.251e-4, 1.326e-5, 0.0, 0.01894499],
        }
    )
    fig = plots.plot_variance_components(vc)
    ax = fig.axes[0]
    widths = np.array([p.get_width() for p in ax.patches])
    np.testing.assert_allclose(widths, 100 * vc["variance"] / vc["variance"].sum(), rtol=1e-12)
    assert widths.sum() == pytest.approx(100.0)
    assert round(widths[0], 2) == 81.89  # 0.09049537 / 0.11050752, by hand
    # first component on top
    by_height = sorted(zip(ax.get_yticks(), [t.get_text() for t in ax.get_yticklabels()]), reverse=True)
    assert [label for _, label in by_height] == vc["component"].tolist()
    assert [p.get_y() for p in ax.patches] == sorted((p.get_y() for p in ax.patches), reverse=True)
    assert ax.texts[0].get_text() == f"{widths[0]:.1f}%"


def test_variance_components_column_detection_and_errors():
    vc = pd.DataFrame({"grp": ["item", "Residual"], "vcov": [3.0, 1.0]})
    fig = plots.plot_variance_components(vc)
    assert [p.get_width() for p in fig.axes[0].patches] == [75.0, 25.0]
    fig = plots.plot_variance_components(vc.rename(columns={"grp": "who", "vcov": "s2"}), component="who", variance="s2")
    assert len(fig.axes[0].patches) == 2
    with pytest.raises(InputError, match="Pass component=...*available columns: who, vcov"):
        plots.plot_variance_components(vc.rename(columns={"grp": "who"}))
    with pytest.raises(InputError, match="negative"):
        plots.plot_variance_components(vc.assign(vcov=[-1.0, 1.0]))
    with pytest.raises(InputError, match="sum to 0"):
        plots.plot_variance_components(vc.assign(vcov=[0.0, 0.0]))


def test_figures_stay_out_of_pyplot_and_render_png(scores):
    before = plt.get_fignums()
    fig = plots.plot_system_boxplots(scores, "ter", "system")
    assert plt.get_fignums() == before  # nothing accumulates in pyplot's registry
    png = fig._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5_000
