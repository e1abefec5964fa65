"""Bad input on the command line ends in one line naming the file or flag (exit 2); bugs keep their traceback."""

from __future__ import annotations

import gzip
import json

import pytest

from mixeval.cli import main
from mixeval.cli._io import read_table, sniff_separator
from mixeval.errors import InputError

LONG = "item,system,score\n1,A,0.5\n1,B,0.7\n2,A,0.1\n2,B,0.3\n3,A,0.2\n3,B,0.9\n4,A,0.4\n4,B,0.4\n"


def _error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


@pytest.fixture
def long_csv(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text(LONG)
    return path


def test_a_directory_is_named_not_a_traceback(capsys, tmp_path):
    assert "is a directory" in _error(capsys, ["fit", str(tmp_path), "score ~ system + (1|item)"])


def test_a_missing_file_is_named(capsys, tmp_path):
    assert "no such file" in _error(capsys, ["fit", str(tmp_path / "nope.csv"), "score ~ system + (1|item)"])


@pytest.mark.parametrize("sep", ["\t", ";", "|"])
def test_tab_semicolon_and_bar_separated_files_are_read(tmp_path, sep):
    path = tmp_path / "scores.txt"
    path.write_text(LONG.replace(",", sep))
    data = read_table(str(path))
    assert list(data.columns) == ["item", "system", "score"] and len(data) == 8


def test_gzipped_tab_separated_file(tmp_path):
    path = tmp_path / "scores.tsv.gz"
    with gzip.open(path, "wt") as fh:
        fh.write(LONG.replace(",", "\t"))
    assert read_table(str(path))["score"].sum() == pytest.approx(3.5)


def test_sniffing_keeps_commas_when_text_holds_other_separators():
    assert sniff_separator('a,b\n"x;y",1\n"z;w",2\n') == ","
    assert sniff_separator("only_one_column\n1\n2\n") == ","


def test_json_input_is_recognised(capsys, tmp_path):
    path = tmp_path / "scores.json"
    path.write_text(json.dumps([{"item": 1, "system": "A", "score": 1.0}]))
    assert "looks like JSON" in _error(capsys, ["fit", str(path), "score ~ system + (1|item)"])


def test_a_binary_file_is_named(capsys, tmp_path):
    path = tmp_path / "model.bin"
    path.write_bytes(bytes(range(256)) * 4)
    err = _error(capsys, ["fit", str(path), "score ~ system + (1|item)"])
    assert str(path) in err and "not a text file" in err


def test_a_file_with_only_a_header_has_no_rows(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("item,system,score\n")
    with pytest.raises(InputError, match="no data rows"):
        read_table(str(path))


def test_compare_labels_follow_the_models_not_the_argument_order(capsys, long_csv):
    assert main(["compare", str(long_csv), "score ~ 1 + (1|item)", "score ~ system + (1|item)"]) == 0
    out = capsys.readouterr().out
    assert "full: score ~ system + (1|item)" in out and "null: score ~ 1 + (1|item)" in out
    assert main(["compare", str(long_csv), "score ~ 1 + (1|item)", "score ~ system + (1|item)", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["formula_full"] == "score ~ system + (1|item)" and res["statistic"] >= 0


@pytest.mark.parametrize("flags, words", [
    (["--n", "rater=abc"], "--n rater=abc"),
    (["--n", "rater"], "--n must look like"),
    (["--n", "rater=0"], "positive"),
    (["--grid", "rater=a:3"], "--grid rater=a:3"),
    (["--grid", "rater=5:2"], "LO <= HI"),
])
def test_reliability_flags_are_named(capsys, tmp_path, flags, words):
    path = tmp_path / "ratings.csv"
    rows = ["item,rater,score"] + [f"{i},{r},{(i * 7 + r * 3) % 5 + 0.1 * r}" for i in range(6) for r in range(3)]
    path.write_text("\n".join(rows) + "\n")
    assert words in _error(capsys, ["reliability", str(path), "score ~ (1|item) + (1|rater)", *flags])


def test_bootstrap_without_column_flags_on_a_long_file_says_which_flags(capsys, long_csv):
    err = _error(capsys, ["bootstrap", str(long_csv), "--n-resamples", "99", "--seed", "1"])
    assert "--item" in err and "--system" in err and "--score" in err and "long format" in err
    assert main(["bootstrap", str(long_csv), "--item", "item", "--system", "system", "--score", "score",
                 "--n-resamples", "99", "--seed", "1"]) == 0


def test_only_project_errors_become_one_line_messages(monkeypatch, capsys, long_csv):
    """A bug (here an AttributeError, or a bare ValueError from inside) keeps its traceback."""
    import mixeval._lmer

    def broken(*args, **kwargs):
        raise ValueError("an internal invariant failed")

    monkeypatch.setattr(mixeval._lmer, "lmer", broken)
    with pytest.raises(ValueError, match="internal invariant"):
        main(["fit", str(long_csv), "score ~ system + (1|item)"])


def test_adjust_is_checked_also_with_two_systems(capsys, long_csv):
    with pytest.raises(SystemExit) as info:
        main(["bootstrap", str(long_csv), "--item", "item", "--system", "system", "--score", "score",
              "--adjust", "bogus"])
    assert info.value.code == 2 and "unknown adjustment 'bogus'" in capsys.readouterr().err


def test_semicolon_files_with_decimal_commas_are_read_as_numbers(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_text("item;system;score\n1;A;0,5\n1;B;1,25\n2;A;-0,75\n2;B;2\n")
    assert read_table(str(path))["score"].tolist() == [0.5, 1.25, -0.75, 2.0]
    path.write_text("item;system;score\n1;A;0.5\n1;B;1,25\n")  # points in use: a comma is text, not a decimal mark
    assert read_table(str(path))["score"].tolist() == ["0.5", "1,25"]


def test_a_text_cell_in_a_numeric_column_is_named_with_its_row(capsys, tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text(LONG.replace("2,A,0.1", "2,A,timeout"))
    err = _error(capsys, ["fit", str(path), "score ~ system + (1|item)"])
    assert "1 of its 8 values is not a number: 'timeout' (row 3)" in err
