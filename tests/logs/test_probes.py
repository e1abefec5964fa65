"""Issue 38's probes of the evaluation-log readers and compare_logs: awkward but legal logs are read as the harness
means them, and bad ones end in a message that names the file, the column or the option that fixes it."""

from __future__ import annotations

import json
import shutil
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval.errors import DroppedRowsWarning, InputError
from mixeval.logs import compare_logs, read_inspect, read_lm_eval, read_logs

DATA = Path(__file__).parent / "data"


def _gsm8k_records(model_skill: float, rng: np.random.Generator, n: int = 12) -> list[dict]:
    """lm-evaluation-harness's layout for a task with two filters: one record per doc and filter (all docs of
    the first filter, then all of the second), each with the metric of its filter."""
    records = []
    for filt, bonus in (("strict-match", 0.0), ("flexible-extract", 0.15)):
        for i in range(n):
            records.append({"doc_id": i, "doc": {"question": f"q{i}", "answer": str(i)}, "target": str(i),
                            "arguments": {"gen_args_0": {"arg_0": f"Q: q{i}"}}, "resps": [["x"]],
                            "filtered_resps": ["x"], "filter": filt, "metrics": ["exact_match"],
                            "doc_hash": f"d{i}", "prompt_hash": f"p{i}", "target_hash": f"t{i}",
                            "exact_match": float(rng.random() < model_skill + bonus)})
    return records


def test_lm_eval_tasks_with_several_filters_are_one_row_per_item(tmp_path):
    rng = np.random.default_rng(0)
    for model, skill in (("m1", 0.5), ("m2", 0.3)):
        (tmp_path / model).mkdir()
        recs = _gsm8k_records(skill, rng)
        (tmp_path / model / "samples_gsm8k_2024-05-01T00-00-00.000000.jsonl").write_text(
            "\n".join(json.dumps(r) for r in recs))
    df = read_lm_eval(tmp_path)
    assert len(df) == 2 * 12 and df.attrs["metrics"] == ["exact_match,strict-match", "exact_match,flexible-extract"]
    assert df[df.attrs["metrics"]].notna().all().all()
    m1 = df[df["model"] == "m1"].set_index("item")
    recs = [json.loads(x) for x in (tmp_path / "m1").glob("*.jsonl").__next__().read_text().splitlines()]
    flexible = {str(r["doc_id"]): r["exact_match"] for r in recs if r["filter"] == "flexible-extract"}
    assert m1["exact_match,flexible-extract"].to_dict() == flexible
    res = compare_logs(tmp_path, metric="exact_match,flexible-extract", mixed=False)
    assert res.pairs.loc[0, "n_items"] == 12


def test_identical_models_get_estimate_0_with_a_note_and_the_other_pairs_are_reported():
    rng = np.random.default_rng(1)
    y = (rng.random(40) < 0.6).astype(float)
    frame = pd.DataFrame({"model": np.repeat(["a", "b", "c"], 40), "item": np.tile(np.arange(40), 3),
                          "acc": np.concatenate([y, y, (rng.random(40) < 0.4).astype(float)])})
    with warnings.catch_warnings():
        warnings.simplefilter("error")                            # no raw numpy warning either
        res = compare_logs(frame, metric="acc")
    pairs = res.pairs.set_index(["model_a", "model_b"])
    assert pairs.loc[("a", "b"), "estimate"] == 0 and np.isnan(pairs.loc[("a", "b"), "pvalue"])
    assert pairs.loc[[("a", "c"), ("b", "c")], "pvalue_adjusted"].notna().all()
    assert any("a and b have identical scores" in n for n in res.notes) and "identical scores" in res.summary()
    assert len(res.leaderboard) == 3


def test_a_constant_difference_has_no_test_and_no_numpy_warning():
    rng = np.random.default_rng(2)
    y = rng.normal(size=30)
    frame = pd.DataFrame({"model": np.repeat(["a", "b", "c"], 30), "item": np.tile(np.arange(30), 3),
                          "passage": np.tile(np.arange(30) // 5, 3), "half": np.tile(np.arange(30) % 2, 3),
                          "s": np.concatenate([y + 0.3, y, rng.normal(size=30)])})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = compare_logs(frame, metric="s", cluster="passage", equivalence=0.1, by="half")
    row = res.pairs.set_index(["model_a", "model_b"]).loc[("a", "b")]
    assert row["estimate"] == pytest.approx(0.3) and np.isnan(row["pvalue"]) and np.isnan(row["lower"])
    assert np.isnan(row["se_cr2"]) and np.isnan(row["se_naive"]) and np.isnan(row["se_mixed"])   # not estimable
    assert np.isnan(row["equivalence_pvalue"]) and np.isnan(row["df_mixed"])
    assert any("the difference is 0.3 on every shared item" in n for n in res.notes)
    assert res.pairs.drop(index=0)["se_cr2"].gt(0).all()


def test_null_metric_values_are_said_to_be_missing_not_unread(tmp_path):
    root = tmp_path / "lm_eval"
    shutil.copytree(DATA / "lm_eval", root)
    sample = next((root / "dummy-b").glob("samples_*.jsonl"))
    lines = [json.loads(x) for x in sample.read_text().splitlines()]
    lines[3]["acc"] = None
    sample.write_text("\n".join(map(json.dumps, lines)))
    with pytest.warns(DroppedRowsWarning, match=r"no number for a metric \(null\): 'acc' in 1 of 24") as caught:
        df = read_lm_eval(root)
    assert not any("not read" in str(w.message) for w in caught)
    assert df["acc"].isna().sum() == 1 and df.attrs["metrics"] == ["acc"]
    with pytest.warns(DroppedRowsWarning, match=r"metric 'acc' has no value in 1 rows .*'dummy-b'.*left out"):
        res = compare_logs(df, metric="acc", mixed=False)
    pairs = res.pairs.set_index(["model_a", "model_b"])
    assert pairs.loc[("dummy-a", "dummy-b"), "n_items"] == 23 and pairs.loc[("dummy-a", "dummy-c"), "n_items"] == 24


def test_two_runs_with_one_model_name_name_both_files(tmp_path):
    for name in ("run1", "run2"):
        shutil.copytree(DATA / "lm_eval" / "dummy-a", tmp_path / name)
    with pytest.raises(InputError, match=r"run1.*and .*run2.* both hold model 'dummy-a' on task 'toyqa'"):
        read_lm_eval(tmp_path)
    table = tmp_path / "long.csv"
    pd.DataFrame({"model": ["a", "a", "b", ""], "item": [1, 2, 1, 2], "s": [1, 0, 1, 1]}).to_csv(table, index=False)
    with pytest.raises(InputError, match=r"column 'model' is empty in 1 rows \(file lines \[5\]\)"):
        read_logs(table)
    blank = pd.DataFrame({"model": ["a", "a", "b", None], "item": [1, 2, 1, 2], "s": [1.0, 0, 1, 1]})
    with pytest.raises(InputError, match="column 'model' is empty in 1 rows"):
        compare_logs(blank, metric="s")


def test_item_ids_written_as_floats_get_a_hint():
    frame = pd.DataFrame({"model": ["a"] * 3 + ["b"] * 3, "item": ["1", "2", "3", "1.0", "2.0", "3.0"],
                          "s": [1.0, 0, 1, 0, 1, 1]})
    with pytest.raises(InputError, match=r"share 0 items.*look alike as numbers.*'1' for 'a', '1.0' for 'b'"):
        compare_logs(frame, metric="s", mixed=False)


def test_a_long_table_keeps_its_item_ids_as_written(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text("model,item,s\na,1,1\na,2,0\nb,1.0,1\nb,2.0,1\n")      # pandas alone reads 1 and 1.0 alike
    assert read_logs(path)["item"].tolist() == ["1", "2", "1.0", "2.0"]
    with pytest.raises(InputError, match="look alike as numbers"):
        compare_logs(path, metric="s", mixed=False)


def test_an_empty_samples_file_is_an_error_naming_it(tmp_path):
    root = tmp_path / "lm_eval"
    shutil.copytree(DATA / "lm_eval", root)
    next((root / "dummy-c").glob("samples_*.jsonl")).write_text("")
    with pytest.raises(InputError, match=r"dummy-c/samples_toyqa.*no samples \(an empty file"):
        read_lm_eval(root)


def _rewrite_eval(source: Path, target: Path, keep) -> None:
    """A copy of an inspect_ai .eval log with the members ``keep`` accepts (deflate-compressed)."""
    from mixeval.logs._readers._inspect import _zip_member

    with zipfile.ZipFile(source) as zf, open(source, "rb") as fh:
        members = {info.filename: _zip_member(zf, fh, info, source) for info in zf.infolist() if keep(info.filename)}
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for name, content in members.items():
            out.writestr(name, content)


def test_unfinished_inspect_logs_are_not_dropped_silently(tmp_path):
    log = next((DATA / "inspect").glob("*.eval"))
    started = tmp_path / "started.eval"
    _rewrite_eval(log, started, lambda name: name != "header.json" and "summar" not in name)
    with pytest.warns(DroppedRowsWarning, match="status is 'started'.*did not finish"):
        df = read_inspect(started)
    assert len(df) == 24
    empty = tmp_path / "empty.eval"
    _rewrite_eval(log, empty, lambda name: name.startswith("_journal/start"))
    with pytest.raises(InputError, match=r"empty.eval: no finished samples \(status 'started'\)"):
        read_inspect(empty)


def test_inspect_json_logs_are_found_in_directories(tmp_path):
    log = {"version": 2, "status": "success", "eval": {"model": "m1", "task": "t"}, "samples": [
        {"id": i, "epoch": 1, "input": f"q{i}", "target": "a", "scores": {"match": {"value": "C" if i % 2 else "I"}}}
        for i in range(4)]}
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "run_m1.json").write_text(json.dumps(log))
    log["eval"]["model"] = "m2"
    (tmp_path / "logs" / "run_m2.json").write_text(json.dumps(log))
    (tmp_path / "logs" / "results_2024.json").write_text(json.dumps({"eval": 1, "status": "x"}))   # not a log
    assert set(read_inspect(tmp_path)["model"]) == {"m1", "m2"}
    assert set(read_logs(tmp_path)["model"]) == {"m1", "m2"}


def test_an_errored_inspect_sample_stops_the_run_unless_dropped(tmp_path):
    log = {"version": 2, "status": "success", "eval": {"model": "m1", "task": "t"}, "samples": [
        {"id": i, "epoch": 1, "input": f"q{i}", "target": "a", "scores": {"match": {"value": "C"}}} for i in range(4)]}
    log["samples"][2] = {"id": 2, "epoch": 1, "input": "q2", "target": "a",
                         "error": {"message": "RuntimeError('rate limit')", "traceback": "..."}}
    path = tmp_path / "m1.json"
    path.write_text(json.dumps(log))
    with pytest.raises(InputError, match=r"sample 2 \(epoch 1\) of 'm1' ended in an error "
                                         r"\(RuntimeError\('rate limit'\)\).*on_error='drop' \(CLI: --drop-errored\)"):
        read_inspect(path)
    with pytest.warns(DroppedRowsWarning, match="1 samples of 'm1' ended in an error and are left out: 2"):
        df = read_inspect(path, on_error="drop")
    assert sorted(df["item"]) == ["0", "1", "3"]
    with pytest.raises(InputError, match="on_error must be"):
        read_inspect(path, on_error="skip")
