"""Feature-shape plots: they draw what the numbers say (figures returned, never shown)."""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest

from mixeval.errors import BasisLimitWarning, InputError
from mixeval.validity import circularity_test, dataset_bias_test, fit_gam, plot_correlations, plot_shape, plot_shapes, step_function


def _data():
    rng = np.random.default_rng(0)
    d = pd.DataFrame(rng.uniform(0, 15, size=(3000, 2)), columns=["bili", "thrombo"])
    d["thrombo"] += d["bili"]
    d["g"] = rng.choice(["x", "y"], 3000)
    d["sofa"] = np.digitize(d["bili"], [1.2, 1.9, 5.9, 11.9], right=True).astype(float)
    return d


def test_step_function_matches_table_2_6():
    f = step_function([1.2, 1.9, 5.9, 11.9], [0, 1, 2, 3, 4])
    assert f(np.array([0.5, 1.2, 1.3, 1.9, 2.0, 5.9, 6.0, 11.9, 12.0])).tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4]
    with pytest.raises(InputError):
        step_function([2, 1], [0, 1, 2])


def test_plot_shapes_two_columns_with_rule_and_rug():
    d = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BasisLimitWarning)
        res = circularity_test(d, "sofa", ["bili", "thrombo"], k=30)
    rule = {"bili": {"thresholds": [1.2, 1.9, 5.9, 11.9], "values": [0, 1, 2, 3, 4]}}
    fig = plot_shapes(res, step=rule)
    axes = fig.axes
    assert len(axes) == 4
    assert not axes[0].axison  # bili is in the selected set: no "without" panel
    right_bili = axes[1]
    labels = [line.get_label() for line in right_bili.get_lines()]
    assert "rule" in labels
    # the fitted shape follows the centred rule closely
    shape = res.full_model.shape("bili", grid=300)
    rule_f = step_function(rule["bili"]["thresholds"], rule["bili"]["values"])
    centred = rule_f(shape["x"]) - rule_f(d["bili"]).mean()
    assert np.corrcoef(shape["f"], centred)[0, 1] > 0.97
    assert "ratio" in axes[3].get_title()
    assert axes[2].get_ylim() == axes[3].get_ylim()  # shared scale within the row
    assert "circular" in fig._suptitle.get_text()
    with pytest.raises(InputError):
        plot_shapes(res, features=["nope"])


def test_plot_shape_factor_and_existing_axes():
    import matplotlib.pyplot as plt

    d = _data()
    d["y"] = np.sin(d["bili"] / 3) + (d["g"] == "y") * 0.5 + np.random.default_rng(1).normal(0, 0.2, len(d))
    m = fit_gam(d, "y", ["bili", "g"])
    fig, ax = plt.subplots()
    out = plot_shape(m, "g", ax=ax, title="factor")
    assert out is fig and ax.get_title() == "factor"
    assert len(ax.get_xticklabels()) == 2
    plt.close("all")


def test_plot_correlations_bars_match_table():
    rng = np.random.default_rng(1)
    a = pd.DataFrame({"f": rng.normal(size=300), "g": rng.normal(size=300)})
    a["y"] = ((a["f"] + rng.normal(size=300)) > 0) * 1
    b = pd.DataFrame({"f": rng.normal(size=300), "g": rng.normal(size=300)})
    b["y"] = ((-b["f"] + rng.normal(size=300)) > 0) * 1
    res = dataset_bias_test(a, b, "y")
    fig = plot_correlations(res)
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches]
    np.testing.assert_allclose(heights, list(res.table["r_in"]) + list(res.table["r_out"]))
    assert [t.get_text() for t in ax.get_xticklabels()] == ["f", "g"]
    assert any(t.get_text() == "bias" for t in ax.texts)
