"""Evaluation-harness logs for the probes: lm-evaluation-harness, inspect_ai and their awkward cases."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

__all__ = ["write_logs"]


def _lm_eval_model(root: Path, model: str, task: str, records: list[dict], stamp: str = "2025-01-01T00-00-00.0") -> None:
    d = root / model
    d.mkdir(parents=True, exist_ok=True)
    (d / f"samples_{task}_{stamp}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (d / f"results_{stamp}.json").write_text(json.dumps({"results": {task: {}}, "model_name": model}))


def _gsm8k(model: str, skill: float, rng: np.random.Generator) -> list[dict]:
    """The harness's own layout of a task with two filters: one record per (doc, filter)."""
    out = []
    for i in range(30):
        doc = {"question": f"What is {i} + {i}?", "answer": f"#### {2 * i}"}
        for flt in ("strict-match", "flexible-extract"):
            hit = float(rng.uniform() < (skill if flt == "flexible-extract" else skill - 0.2))
            out.append({"doc_id": i, "doc": doc, "target": f"#### {2 * i}", "arguments": {}, "resps": [],
                        "filtered_resps": [], "filter": flt, "metrics": ["exact_match"],
                        "doc_hash": f"d{i}", "prompt_hash": f"p{i}", "target_hash": f"t{i}", "exact_match": hit})
    return out


def _toyqa(i_range, acc, null_at=None) -> list[dict]:
    return [{"doc_id": i, "doc": {"question": f"q{i}", "subject": "math"}, "target": "1", "filter": "none",
             "metrics": ["acc"], "doc_hash": f"h{i}", "prompt_hash": "p", "target_hash": "t",
             "acc": None if i == null_at else float(acc(i))} for i in i_range]


def _inspect(path: Path, model: str, correct, *, status: str = "success", error_at=None) -> None:
    samples = []
    for i in range(20):
        s = {"id": f"s{i}", "epoch": 1, "input": f"{i} + 1?", "target": str(i + 1), "metadata": {"passage": i // 4},
             "scores": {"match": {"value": "C" if correct(i) else "I"}}}
        if i == error_at:
            s["error"] = {"message": "RuntimeError: the model timed out", "traceback": "..."}
            s["scores"] = {}
        samples.append(s)
    log = {"eval": {"model": model, "task": "arith"}, "status": status,
           "samples": samples if status == "success" else samples[:5]}
    path.write_text(json.dumps(log))


def write_logs(root: Path) -> dict[str, str]:
    rng = np.random.default_rng(6)
    f = {}
    gsm = root / "lm_gsm8k"
    for model, skill in (("model-a", 0.6), ("model-b", 0.75)):
        _lm_eval_model(gsm, model, "gsm8k", _gsm8k(model, skill, rng))
    f["lm_gsm8k"] = str(gsm)
    toy = root / "lm_toy"
    _lm_eval_model(toy, "m-a", "toyqa", _toyqa(range(30), lambda i: i % 2))
    _lm_eval_model(toy, "m-b", "toyqa", _toyqa(range(30), lambda i: i % 3 > 0))
    f["lm_toy"] = str(toy)
    null = root / "lm_null"
    _lm_eval_model(null, "m-a", "toyqa", _toyqa(range(30), lambda i: i % 2, null_at=4))
    _lm_eval_model(null, "m-b", "toyqa", _toyqa(range(30), lambda i: i % 3 > 0))
    f["lm_null"] = str(null)
    empty = root / "lm_empty"
    _lm_eval_model(empty, "m-a", "toyqa", _toyqa(range(30), lambda i: i % 2))
    _lm_eval_model(empty, "m-b", "toyqa", _toyqa(range(30), lambda i: i % 3 > 0))
    _lm_eval_model(empty, "m-c", "toyqa", [])
    f["lm_empty"] = str(empty)
    same = root / "lm_same_name"
    _lm_eval_model(same, "run1", "toyqa", _toyqa(range(30), lambda i: i % 2))
    _lm_eval_model(same, "run2", "toyqa", _toyqa(range(30), lambda i: i % 3 > 0))
    for run in ("run1", "run2"):  # both runs name the same model in their results file
        (same / run / "results_2025-01-01T00-00-00.0.json").write_text(json.dumps({"results": {}, "model_name": "gpt"}))
    f["lm_same_name"] = str(same)

    ins = root / "inspect_json"
    ins.mkdir()
    _inspect(ins / "a.json", "mock/a", lambda i: i % 2 == 0)
    _inspect(ins / "b.json", "mock/b", lambda i: i % 3 > 0)
    f["inspect_json"] = str(ins)
    unfinished = root / "inspect_unfinished"
    unfinished.mkdir()
    _inspect(unfinished / "a.json", "mock/a", lambda i: i % 2 == 0)
    _inspect(unfinished / "b.json", "mock/b", lambda i: i % 3 > 0)
    _inspect(unfinished / "c.json", "mock/c", lambda i: True, status="started")
    f["inspect_unfinished"] = str(unfinished)
    errored = root / "inspect_errored"
    errored.mkdir()
    _inspect(errored / "a.json", "mock/a", lambda i: i % 2 == 0)
    _inspect(errored / "b.json", "mock/b", lambda i: i % 3 > 0, error_at=7)
    f["inspect_errored"] = str(errored)
    f["inspect_a"], f["inspect_b"] = str(ins / "a.json"), str(ins / "b.json")
    f["inspect_err_a"], f["inspect_err_b"] = str(errored / "a.json"), str(errored / "b.json")
    f.update({f"inspect_unf_{n}": str(unfinished / f"{n}.json") for n in "abc"})
    return f
