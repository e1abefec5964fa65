"""The shared validators of ``mixeval/_validation.py``: identifier columns and the cells that are not numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mixeval._validation import describe_id_column, id_like_columns, not_numeric_message


@pytest.mark.parametrize("column, expected", [
    ({"id": [3, 1, 2]}, ["id"]),                                   # named like an id: found even in 3 rows
    ({"doc_id": [10, 12, 11, 15, 14]}, ["doc_id"]),
    ({"Unnamed: 0": [0, 1, 2, 3, 4]}, ["Unnamed: 0"]),              # pandas' index written to the CSV
    ({"n": [7, 3, 5, 4, 6]}, ["n"]),                                # whole numbers counting the rows
    ({"name": ["a", "b", "c", "d", "e"]}, ["name"]),                # distinct text labels
    ({"id": [1, 1, 2]}, []),                                        # repeated: not one per row
    ({"id": [0.5, 0.25, 0.75]}, []),                                # decimals are scores whatever the name
    ({"n": [7, 3, 9, 4, 6]}, []),                                   # distinct, but not a run
    ({"n": [1, 2, 3, 4]}, []),                                      # too few rows to tell by the values
    ({"flag": [True, False]}, []),
    ({"id": [1.0, np.nan, 3.0]}, []),
])
def test_id_like_columns(column, expected):
    data = pd.DataFrame({**column, "score": np.linspace(0.1, 0.9, len(next(iter(column.values()))))})
    assert id_like_columns(data) == expected


def test_several_counting_columns_are_rankings_not_identifiers():
    ranks = pd.DataFrame({"r1": [1, 2, 3, 4, 5], "r2": [2, 1, 3, 5, 4], "id": [1, 2, 3, 4, 5]})
    assert id_like_columns(ranks) == ["id"]
    assert id_like_columns(ranks[["r1", "r2"]]) == []


def test_describe_and_not_numeric_messages():
    assert describe_id_column(pd.DataFrame({"item": ["q1", "q2"]}), "item") == \
        "one distinct value per row: 'q1', 'q2', ..."
    message = not_numeric_message(pd.Series(["1", "x", "2", "y", "z"], name="s"), "the score column 's'")
    assert "3 of its 5 values are not a number: 'x' (row 2), 'y' (row 4), 'z' (row 5)" in message
    assert "dtype" in not_numeric_message(pd.Series(["a", "b"], name="s"), "the score column 's'")


# ---------------------------------------------------------------- confidence levels and counts: one check each
import re  # noqa: E402
from pathlib import Path  # noqa: E402

from mixeval._validation import require_level, require_positive_int  # noqa: E402
from mixeval.errors import InputError, InputTypeError  # noqa: E402

PACKAGE = Path(__file__).resolve().parents[1] / "mixeval"


def _one_way_fit():
    from mixeval import lmer

    rng = np.random.default_rng(0)
    g = np.repeat(np.arange(8), 3)
    return lmer("y ~ 1 + (1|g)", pd.DataFrame({"g": g, "y": rng.normal(size=8)[g] + rng.normal(size=24)}))


def _calls():
    """Entry points whose level or count was checked by a function of their own, each with a bad value."""
    from mixeval import reliability
    from mixeval.cli._args import check_count, check_level
    from mixeval.mixed._bootstrap import bootstrap_fit
    from mixeval.preferences import votes_needed
    from mixeval.significance._bootstrap_lrt import bootstrap_lrt
    from mixeval.uncertainty import phi_interval
    from mixeval.validity import correlation_difference_test

    fit = _one_way_fit()
    comps = {"s": 4.0, "r": 1.0, "Residual": 2.0}
    x = np.linspace(0.0, 1.0, 20)
    return [
        (lambda: bootstrap_fit(fit, n_resamples=0), "`n_resamples` must be a whole number >= 1; got 0."),
        (lambda: bootstrap_fit(fit, n_resamples=3, random_state=0, progress=False).interval(95),
         "`level` must lie strictly between 0 and 1 (e.g. level=0.95); got 95."),
        (lambda: phi_interval(fit, "g", level=1.0, n_resamples=3), "`level` must lie strictly between 0 and 1"),
        (lambda: fit.simulate(0), "`nsim` must be a whole number >= 1; got 0."),
        (lambda: bootstrap_lrt(fit, fit, 0.0, reml=True, n_resamples=0),
         "`n_resamples` must be a whole number >= 1 (e.g. n_resamples=200); got 0."),
        (lambda: correlation_difference_test(x, x, x, x, n_resamples=-1),
         "`n_resamples` must be a whole number >= 1, or 0 for no bootstrap; got -1."),
        (lambda: reliability.cheapest_design(comps, "s", 1.5, max_n={"r": 3}),
         "`target` must lie strictly between 0 and 1 (e.g. target=0.8); got 1.5."),
        (lambda: reliability.cheapest_design(comps, "s", 0.5, max_n={"r": 3}, confidence=90),
         "`confidence` must lie strictly between 0 and 1 (e.g. confidence=0.9); got 90."),
        (lambda: votes_needed(0.2, power=80), "`power` must lie strictly between 0 and 1 (e.g. power=0.8); got 80."),
        (lambda: votes_needed(0.2, alpha=0), "`alpha` must lie strictly between 0 and 1 (e.g. alpha=0.05); got 0."),
        (lambda: check_level(95.0, "--level"), "--level must lie strictly between 0 and 1 (e.g. --level 0.95); got 95.0."),
        (lambda: check_level(-1.0, "--level", zero_means="no interval"),
         "--level must lie strictly between 0 and 1 (e.g. --level 0.95), or 0 for no interval; got -1.0."),
        (lambda: check_count(2, "--k", 3), "--k must be a whole number >= 3; got 2."),
    ]


def test_every_level_and_count_is_checked_by_one_function_in_the_words_of_its_caller():
    """Issue 41: the level and count checks live in _validation; each message names the argument or the flag."""
    for call, message in _calls():
        with pytest.raises(InputError) as info:
            call()
        assert str(info.value).startswith(message), (str(info.value), message)


def test_level_and_count_refuse_what_is_not_a_number_of_their_kind():
    assert require_level(0.9) == 0.9 and require_level(0, "--level", zero_means="no interval") == 0.0
    assert require_positive_int(np.int64(3), "nsim") == 3 and require_positive_int(0, "n", zero_means="none") == 0
    for bad in ("0.95", True, None, [0.9]):
        with pytest.raises(InputTypeError, match="`level` must be a number strictly between 0 and 1"):
            require_level(bad)
    for value in (np.nan, np.inf, 1.0, 0.0):
        with pytest.raises(InputError, match="must lie strictly between 0 and 1"):
            require_level(value)
    for bad in (2.5, True, "3"):
        with pytest.raises(InputTypeError, match="`n_resamples` must be a whole number >= 1"):
            require_positive_int(bad, "n_resamples")


def test_no_module_checks_a_level_or_a_count_of_resamples_by_itself():
    level_range = re.compile(r"\bnot\b.*0(\.0)? < \w*(level|alpha|power|confidence|target)\w* < 1")
    count_type = re.compile(r"isinstance\((n_resamples|nsim|n_sim|n_boot|n_draws), bool\)")
    found = [f"{path.relative_to(PACKAGE.parent)}:{i}" for path in sorted(PACKAGE.rglob("*.py"))
             if path.name != "_validation.py"
             for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
             if level_range.search(line) or count_type.search(line)]
    assert found == []
