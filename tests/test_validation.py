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
