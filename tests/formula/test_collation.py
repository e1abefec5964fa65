"""Text levels in R's order (``fixtures/make_collation.R``): R's ``factor(x)`` collates with ICU's root order in
every locale but C (``C.UTF-8`` included, where the fixture was made), case-insensitively first (``"apple" <
"Banana"``); mixeval orders the levels of text columns, ``factor()`` and grouping factors the same way. The corpus
(``test_corpus.py``, ``eval_model_names``) checks a fit with mixed-case system names against lme4."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixeval
from mixeval.formula import collated, collation_key, model_matrix
from mixeval.mixed import build_design

FIX = json.loads((Path(__file__).parent / "fixtures" / "collation.json").read_text())


def test_the_fixture_is_rs_default_order():
    """Made with ICU (R's default) in a non-C locale; R with ``LC_COLLATE=C`` sorts by code point (Python's order)."""
    assert FIX["icu"] and FIX["locale"] not in ("C", "POSIX")
    assert FIX["levels_icu"] != FIX["levels_c"] and sorted(set(FIX["values"])) == FIX["levels_c"]


def test_levels_are_in_rs_collation():
    """300 random strings of letters in both cases, digits, punctuation, spaces and accents, and level names of
    evaluation practice (``gpt-4o``, ``Llama-3-8B``, ``claude-3.5``, ``run10``/``run2``, ``æ``/``ae``...)."""
    assert collated(FIX["values"]) == FIX["levels_icu"]


def test_collation_examples():
    assert collated(["Banana", "apple", "B", "a", "A", "10", "9", "_x", "b-1", "b1"]) == [
        "_x", "10", "9", "a", "A", "apple", "B", "b-1", "b1", "Banana"]
    assert collation_key("apple") < collation_key("Banana") < collation_key("banana_split")


@pytest.fixture
def mixed_case() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    items = np.repeat(np.arange(30), 3)
    df = pd.DataFrame({"item": [f"Q{i}" if i % 2 else f"q{i}" for i in items],
                       "system": np.tile(["gpt-4o", "Llama-3-8B", "claude-3.5"], 30)})
    df["score"] = rng.normal(size=30)[items] + (df.system == "Llama-3-8B") + rng.normal(size=90)
    return df


@pytest.mark.parametrize("dtype", [object, "string"])
def test_text_columns_factor_and_grouping_levels_follow_r(mixed_case, dtype):
    df = mixed_case.astype({"system": dtype, "item": dtype})
    fit = mixeval.lmer("score ~ system + (1|item)", df)
    assert fit.fixed_names == ("(Intercept)", "systemgpt-4o", "systemLlama-3-8B")  # reference claude-3.5
    assert mixeval.lmer("score ~ factor(system) + (1|item)", df).fixed_names[1:] == (
        "factor(system)gpt-4o", "factor(system)Llama-3-8B")
    labels = build_design("score ~ 1 + (1|item)", df).groups[0].labels
    assert labels[:4] == ("q0", "Q1", "q10", "Q11")  # R's levels(factor(item)); ranef follows them
    assert list(fit.ranef["item"].index[:2]) == ["q0", "Q1"]
    from mixeval.significance import emmeans

    assert emmeans(fit, "system")["system"].tolist() == ["claude-3.5", "gpt-4o", "Llama-3-8B"]


def test_the_order_is_pinned_by_levels_relevel_or_a_categorical(mixed_case):
    """Where R sorts otherwise (``LC_COLLATE=C``) or another reference is wanted."""
    levels = 'factor(system, levels = c("Llama-3-8B", "claude-3.5", "gpt-4o"))'
    assert list(model_matrix(levels, mixed_case).columns)[1:] == [f"{levels}claude-3.5", f"{levels}gpt-4o"]
    rel = 'relevel(factor(system), ref = "gpt-4o")'
    assert list(model_matrix(rel, mixed_case).columns)[1:] == [f"{rel}claude-3.5", f"{rel}Llama-3-8B"]
    cat = mixed_case.assign(system=pd.Categorical(mixed_case.system, categories=["Llama-3-8B", "gpt-4o", "claude-3.5"]))
    assert list(model_matrix("system", cat).columns)[1:] == ["systemgpt-4o", "systemclaude-3.5"]


def test_predict_maps_new_text_rows_to_the_fitted_levels(mixed_case):
    fit = mixeval.lmer("score ~ system + (1|item)", mixed_case)
    new = pd.DataFrame({"system": ["Llama-3-8B", "claude-3.5"], "item": ["Q1", "q0"]})
    X = np.array([[1.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    np.testing.assert_allclose(fit.predict(new, re=False), X @ fit.coef)
