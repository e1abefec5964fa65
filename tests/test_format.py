"""Issue 41 item 7: one number format, as R prints numbers (mixeval/_format.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mixeval._format import format_column, format_count, format_number, format_pvalue, text_table


@pytest.mark.parametrize("p, text", [
    (1.07e-151, "< 2.2e-16"), (2.220446049250313e-16, "< 2.2e-16"), (0.0, "< 2.2e-16"),  # R: format.pval, eps
    (0.000300647, "0.000301"), (7.929e-05, "7.93e-05"), (0.1625, "0.163"), (0.05, "0.05"), (1.0, "1"),
    (float("nan"), "NA")])
def test_pvalues_as_r_format_pval_with_3_digits(p, text):
    assert format_pvalue(p) == text


def test_one_pvalue_style_in_sentences():
    assert "p " + format_pvalue(1.07e-151, relation=True) == "p < 2.2e-16"
    assert "p " + format_pvalue(0.0123, relation=True) == "p = 0.0123"


@pytest.mark.parametrize("needed, text", [(166.4, "167"), (166.0, "166"), (12_345.2, "12,346"),
                                          (float("inf"), "never")])
def test_a_number_needed_is_the_next_whole_number(needed, text):
    assert format_count(needed, needed=True) == text


def test_infinite_df_is_Inf_as_emmeans_prints_it():
    assert format_number(float("inf")) == "Inf" and format_number(-np.inf) == "-Inf"
    assert "Inf" in text_table(pd.DataFrame({"contrast": ["A - B"], "df": [np.inf]}))


def test_a_column_shares_its_decimals_and_keeps_4_significant_digits():
    assert format_column([60.7676, 2.06084, 5.7619]) == ["60.768", "2.061", "5.762"]
    assert format_column([1e-9, 0.5]) == ["1e-09", "5e-01"]  # scientific where narrower, as R
    assert format_column([1.0, 22.0, np.nan]) == ["1", "22", "NA"]


def test_no_index_column_and_no_trailing_padding():
    table = pd.DataFrame({"estimate": [0.25, -1.5]})
    assert text_table(table).splitlines() == ["estimate", "    0.25", "   -1.50"]
    named = pd.DataFrame({"ability": [0.3, -0.3]}, index=pd.Index(["a", "b"], name="system"))
    assert text_table(named).splitlines() == ["system  ability", "a           0.3", "b          -0.3"]


def test_a_wide_table_wraps_into_blocks_that_fit_the_width():
    wide = pd.DataFrame({"contrast": ["baseline - system_a"], **{f"column_{j}": [1.2345] for j in range(12)}})
    text = text_table(wide, width=60)
    assert max(map(len, text.splitlines())) <= 60
    blocks = text.split("\n\n")
    assert len(blocks) > 1 and all(block.startswith("contrast") for block in blocks)
    assert sum(block.splitlines()[0].count("column_") for block in blocks) == 12  # every column, once
