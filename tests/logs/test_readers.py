"""The readers on logs written by the harnesses themselves (tests/logs/data, made by make_logs.py)."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval import datasets
from mixeval.errors import ColumnError, DroppedRowsWarning, InputError, InputTypeError
from mixeval.logs import (KEY_COLUMNS, compare_logs, inspect_value_to_float, read_helm, read_inspect, read_jsonl,
                          read_lm_eval, read_logs)

DATA = Path(__file__).parent / "data"


def test_the_readers_are_in_datasets():
    assert datasets.read_lm_eval is read_lm_eval and datasets.read_logs is read_logs
    assert {"read_lm_eval", "read_inspect", "read_helm", "read_jsonl", "read_logs"} <= set(datasets.__all__)


# ------------------------------------------------------------------------------------ lm-evaluation-harness

def test_lm_eval_samples_become_the_long_format():
    df = read_lm_eval(DATA / "lm_eval")
    assert list(df.columns[:6]) == [*KEY_COLUMNS, "acc"]
    assert df.attrs["metrics"] == ["acc"]
    assert sorted(df["model"].unique()) == ["dummy-a", "dummy-b", "dummy-c"]
    assert len(df) == 3 * 24 and (df["task"] == "toyqa").all() and (df["repeat"] == 0).all()
    assert {"passage", "subject", "question", "label"} <= set(df.columns)   # the doc's fields by their own names
    assert df.groupby("item")["item_hash"].nunique().max() == 1


def test_lm_eval_means_and_stderr_equal_the_harness_results_file():
    df = read_lm_eval(DATA / "lm_eval")
    res = compare_logs(df, metric="acc", mixed=False)
    board = res.leaderboard.set_index("model")
    for results in (DATA / "lm_eval").rglob("results_*.json"):
        info = json.loads(results.read_text())
        task = info["results"]["toyqa"]
        model = info["model_name"]
        assert board.loc[model, "estimate"] == pytest.approx(task["acc,none"], rel=1e-12)
        assert board.loc[model, "se_naive"] == pytest.approx(task["acc_stderr,none"], rel=1e-12)


def test_lm_eval_model_name_can_be_given(tmp_path):
    df = read_lm_eval(next((DATA / "lm_eval" / "dummy-a").glob("samples_*.jsonl")), model="mine")
    assert set(df["model"]) == {"mine"}


def _copy_lm_eval(tmp_path: Path) -> Path:
    out = tmp_path / "lm_eval"
    shutil.copytree(DATA / "lm_eval", out)
    return out


def _edit_first_record(path: Path, change) -> None:
    lines = path.read_text().splitlines()
    rec = json.loads(lines[0])
    change(rec)
    lines[0] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")


def test_a_changed_question_is_reported_by_item_and_models(tmp_path):
    root = _copy_lm_eval(tmp_path)
    sample = next((root / "dummy-b").glob("samples_*.jsonl"))
    _edit_first_record(sample, lambda r: r.update(doc_hash="0" * 64, doc=dict(r["doc"], question="What is 1 + 1?")))
    with pytest.raises(InputError, match=r"item '0'.*dummy-a/dummy-c vs dummy-b|item '0'.*dummy-b vs dummy-a/dummy-c"):
        read_lm_eval(root)
    with pytest.warns(DroppedRowsWarning, match="left out for every model"):
        df = read_lm_eval(root, on_mismatch="drop")
    assert "0" not in set(df["item"]) and len(df) == 3 * 23


def test_reading_a_log_twice_is_an_error(tmp_path):
    with pytest.raises(InputError, match="samples_toyqa_.* is given twice"):
        read_logs([DATA / "lm_eval", DATA / "lm_eval" / "dummy-a"])
    copy = tmp_path / "elsewhere"
    shutil.copytree(DATA / "lm_eval" / "dummy-a", copy)
    with pytest.raises(InputError, match="both hold model 'same' on task 'toyqa'.*two runs under the same model name"):
        read_lm_eval([DATA / "lm_eval" / "dummy-a", copy], model="same")


def test_non_numeric_metrics_are_named_in_a_warning(tmp_path):
    root = _copy_lm_eval(tmp_path)
    for sample in root.rglob("samples_*.jsonl"):
        lines = [json.loads(x) for x in sample.read_text().splitlines()]
        for rec in lines:
            rec["metrics"] = ["acc", "bleu"]
            rec["bleu"] = [["ref"], "pred"]
        sample.write_text("\n".join(map(json.dumps, lines)))
    with pytest.warns(DroppedRowsWarning, match="bleu"):
        df = read_lm_eval(root)
    assert df.attrs["metrics"] == ["acc"]


def test_bad_lm_eval_input(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_lm_eval(tmp_path / "missing")
    with pytest.raises(InputError, match="no lm-evaluation-harness samples files"):
        read_lm_eval(tmp_path)
    bad = tmp_path / "m" / "samples_t_2024-01-01T00-00-00.jsonl"
    bad.parent.mkdir()
    bad.write_text("{not json}\n")
    with pytest.raises(InputError, match="line 1: not JSON"):
        read_lm_eval(bad)


# ---------------------------------------------------------------------------------------------- inspect_ai

def test_inspect_scores_equal_inspect_ais_own_reader():
    df = read_inspect(DATA / "inspect")
    ref = json.loads((DATA / "inspect_reference.json").read_text())
    assert df.attrs["metrics"] == ["match", "includes"]
    assert sorted(df["repeat"].unique()) == [1, 2]
    for log in ref:
        scores = pd.DataFrame(log["scores"]).pivot_table(index=["item", "repeat"], columns="scorer", values="value")
        mine = df[df["model"] == log["model"]].set_index(["item", "repeat"])[["match", "includes"]]
        pd.testing.assert_frame_equal(mine.sort_index(), scores[["match", "includes"]].sort_index(),
                                      check_names=False, check_dtype=False)


def test_inspect_clustered_stderr_equals_inspect_ai():
    res = compare_logs(DATA / "inspect", metric="match", cluster="passage", mixed=False)
    board = res.leaderboard.set_index("model")
    for log in json.loads((DATA / "inspect_reference.json").read_text()):
        metrics = log["metrics"]["match"]
        clustered = next(m["value"] for m in metrics.values() if m["params"].get("cluster") == "passage")
        plain = next(m["value"] for m in metrics.values() if m["name"] == "stderr" and not m["params"])
        assert board.loc[log["model"], "estimate"] == pytest.approx(metrics["accuracy"]["value"], rel=1e-12)
        assert board.loc[log["model"], "se_cluster"] == pytest.approx(clustered, rel=1e-12)
    unclustered = compare_logs(DATA / "inspect", metric="match", mixed=False).leaderboard
    assert unclustered.set_index("model").loc[log["model"], "se_naive"] == pytest.approx(plain, rel=1e-12)


def test_inspect_value_mapping():
    assert [inspect_value_to_float(v) for v in ["C", "I", "P", "N", False, 2, "No", "TRUE", "0.5"]] == \
        [1.0, 0.0, 0.5, 0.0, 0.0, 2.0, 0.0, 1.0, 0.5]
    for bad in ["maybe", "inf", None]:
        with pytest.raises(InputError, match="value_to_float"):
            inspect_value_to_float(bad, scorer="judge")


def test_inspect_json_logs_and_dict_scores(tmp_path):
    log = {"eval": {"model": "m1", "task": "t"}, "status": "success", "samples": [
        {"id": 1, "epoch": 1, "input": "q1", "target": "a", "metadata": {"item": "clash", "level": 2},
         "scores": {"judge": {"value": {"fluency": 3, "ok": "C"}}}}]}
    p = tmp_path / "log.json"
    p.write_text(json.dumps(log))
    df = read_inspect(p)
    assert df.attrs["metrics"] == ["judge/fluency", "judge/ok"]
    assert df.loc[0, "metadata_item"] == "clash" and df.loc[0, "level"] == 2   # a taken name gets a prefix
    log["status"] = "error"
    p.write_text(json.dumps(log))
    with pytest.warns(DroppedRowsWarning, match="status is 'error'"):
        read_inspect(p)
    p.write_text(json.dumps({"samples": []}))
    with pytest.raises(InputError, match="not an inspect_ai log"):
        read_inspect(p)


# ---------------------------------------------------------------------------------------------------- HELM

def test_helm_per_instance_stats():
    df = read_helm(DATA / "helm")
    assert sorted(df["model"].unique()) == ["meta/llama-tiny", "openai/gpt2"]
    assert set(df["task"]) == {"toyqa:subject=all"}
    assert df.attrs["metrics"] == ["exact_match", "num_output_tokens"]
    assert (df["split"] == "test").all() and df.groupby("item")["item_hash"].nunique().max() == 1
    res = compare_logs(df, metric="exact_match", mixed=False)
    assert res.pairs.loc[0, "n_items"] == 6


def test_helm_output_of_helm_run_itself():
    """helm-run's own output (make_helm_run.sh: the simple1 scenario on simple/model1, offline): the per-instance
    statistics averaged over instances and train trials are HELM's own aggregates in stats.json."""
    run = DATA / "helm_run" / "simple1"
    df = read_helm(run)
    assert set(df["model"]) == {"simple/model1"} and set(df["task"]) == {"simple1"}
    assert df["item"].nunique() == 10 and sorted(df["repeat"].unique()) == [0, 1] and len(df) == 20
    assert (df["item_hash"] != "").all() and df.groupby("item")["item_hash"].nunique().max() == 1  # scenario_state.json
    assert (df["split"] == "test").all()
    aggregates = {s["name"]["name"]: s for s in json.loads((run / "stats.json").read_text())
                  if set(s["name"]) == {"name", "split"} and s["name"]["split"] == "test" and s.get("count")}
    checked = [m for m in df.attrs["metrics"] if m in aggregates]
    assert {"num_prompt_tokens", "num_output_tokens", "logprob"} <= set(checked)
    for metric in checked:
        assert df[metric].mean() == pytest.approx(aggregates[metric]["mean"], rel=1e-12, abs=1e-12), metric


def test_helm_perturbed_instances_are_named(tmp_path):
    root = tmp_path / "helm"
    shutil.copytree(DATA / "helm", root)
    stats_file = next(root.rglob("per_instance_stats.json"))
    stats = json.loads(stats_file.read_text())
    stats.append(dict(stats[0], perturbation={"name": "typos"}))
    stats_file.write_text(json.dumps(stats))
    with pytest.warns(DroppedRowsWarning, match="1 perturbed instances"):
        read_helm(root)


# ---------------------------------------------------------------------------------------------- any JSONL

def test_jsonl_with_a_column_mapping(tmp_path):
    p = tmp_path / "run.jsonl"
    recs = [{"who": m, "q": {"id": i, "topic": "t%d" % (i % 2)}, "seed": s, "ok": bool((i + s) % 2)}
            for m in "xy" for i in range(4) for s in range(2)]
    p.write_text("\n".join(map(json.dumps, recs)))
    df = read_jsonl(p, item="q.id", metrics=["ok"], model="who", repeat="seed", fields=["q.topic"])
    assert len(df) == 16 and set(df["repeat"]) == {0, 1} and "q.topic" in df.columns
    with pytest.raises(ColumnError, match="no field 'q.nope'"):
        read_jsonl(p, item="q.nope", metrics=["ok"], model="who")
    with pytest.raises(InputError, match="not both"):
        read_jsonl(p, item="q.id", metrics=["ok"], model="who", model_name="z")
    with pytest.raises(InputTypeError, match="non-empty list"):
        read_jsonl(p, item="q.id", metrics="ok", model="who")
    with pytest.raises(InputError, match="is not a number"):
        read_jsonl(p, item="q.id", metrics=["who"], model="who")


# ------------------------------------------------------------------------------------------------ any mix

def test_read_logs_mixes_formats_and_tables(tmp_path):
    df = read_logs([DATA / "lm_eval", DATA / "inspect"])
    assert set(df.attrs["metrics"]) == {"acc", "match", "includes"}
    assert {"toyqa", "toy_arith"} == set(df["task"])
    csv = tmp_path / "long.csv"
    pd.DataFrame({"model": ["a", "a", "b", "b"], "item": [1, 2, 1, 2], "s": [1.0, 0.0, 1.0, 1.0]}).to_csv(csv, index=False)
    table = read_logs(csv)
    assert table.attrs["metrics"] == [] and list(table["task"]) == [""] * 4
    with pytest.raises(ColumnError, match="needs the columns model and item"):
        pd.DataFrame({"x": [1]}).to_csv(tmp_path / "bad.csv", index=False)
        read_logs(tmp_path / "bad.csv")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(InputError, match="unknown log format"):
        read_logs(tmp_path / "notes.txt")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="no evaluation logs found"):
        read_logs(empty)


# ------------------------------------------------------------------- lm-evaluation-harness: projected decoding

def _both_ways(paths, **kwargs):
    from mixeval.logs._readers._lm_eval import _lm_eval_frame

    fast = _lm_eval_frame(paths, model=None, **kwargs)
    whole = _lm_eval_frame(paths, model=None, projection=False, **kwargs)
    return fast, whole


def test_projected_decoding_equals_whole_records_on_the_harness_logs():
    fast, whole = _both_ways(DATA / "lm_eval")
    pd.testing.assert_frame_equal(fast, whole)
    assert fast.attrs == whole.attrs == {"metrics": ["acc"]}
    assert len(fast) == 72 and fast["question"].notna().all()


def _record(doc_id, doc, acc, **extra):
    rec = {"doc_id": doc_id, "doc": doc, "target": "1", "arguments": {"gen_args_0": {"arg_0": 'x, "filter": "y"',
                                                                                      "arg_1": " 1"}},
           "resps": [[["-0.5", "False"]]], "filtered_resps": [["-0.5", "False"]], "filter": "none",
           "metrics": ["acc"], "doc_hash": f"h{doc_id}", "prompt_hash": "p", "target_hash": "t", "acc": acc}
    rec.update(extra)
    return json.dumps(rec, ensure_ascii=False)


def test_projected_decoding_equals_whole_records_on_awkward_records(tmp_path):
    d = tmp_path / "org__m"
    d.mkdir()
    lines = [
        _record(0, {"q": "a", "target": "nested key", "filter": {"filter": 1}, "item": "x", "acc": 2}, 1.0),
        _record(1, {"q": "é, \"filter\": \"z\"", "choices": ["1", "2"], "target": "t"}, 0.0),
        _record("id-2", {"q": "c"}, float("nan")),                 # NaN (json.dumps writes it) and a string id
        _record(3, {"q": "d"}, 1.0, extra={"filter": "nested"}),  # a nested key after the top-level one
        _record(4, {"q": "e"}, 0.0, doc_hash=None, prompt_hash=None, target_hash=None),  # no hashes
        json.dumps({"doc_id": 5, "acc": 1.0, "doc": {"q": "f"}, "target": "1", "filter": "none", "metrics": ["acc"],
                    "doc_hash": "h5", "prompt_hash": "p", "target_hash": "t"}),           # another key order
        _record(6, "not a dict", True),
        _record(7, {"q": "a", "target": "nested key", "filter": {"filter": 1}, "item": "x", "acc": 2}, 0.0),
        "",
    ]
    (d / "samples_t_2024-01-01T00-00-00.000000.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    fast, whole = _both_ways(d)
    pd.testing.assert_frame_equal(fast, whole)
    assert list(fast["item"]) == ["0", "1", "id-2", "3", "4", "5", "6", "7"]
    assert {"doc_item", "doc_acc", "target", "filter", "choices"} <= set(fast.columns)
    assert fast.loc[0, "filter"] == '{"filter": 1}' and fast.loc[1, "choices"] == '["1", "2"]'


def test_runs_of_a_task_in_one_directory_are_its_repeats(tmp_path):
    root = _copy_lm_eval(tmp_path)
    first = next((root / "dummy-a").glob("samples_*.jsonl"))
    later = first.with_name("samples_toyqa_2027-01-01T00-00-00.000000.jsonl")
    earlier = first.with_name("samples_toyqa_2020-01-01T00-00-00.000000.jsonl")
    _edit_first_record(first, lambda r: r.update(acc=1 - r["acc"]))
    shutil.copy(first, later)
    shutil.copy(first, earlier)
    _edit_first_record(later, lambda r: r.update(acc=1 - r["acc"]))
    df = read_lm_eval(root)
    a = df[df["model"] == "dummy-a"]
    assert len(df) == 5 * 24 and sorted(a["repeat"].unique()) == [0, 1, 2]
    by_repeat = a[a["item"] == "0"].set_index("repeat")["acc"]
    assert by_repeat[0] == by_repeat[1] != by_repeat[2]      # runs numbered in timestamp order
    res = compare_logs(df, metric="acc", mixed=False)
    assert "var_within" in res.pairs.columns
