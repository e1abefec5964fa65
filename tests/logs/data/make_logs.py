"""Make the small harness logs the tests read, with the harnesses themselves, offline.

Run from the repository root in an environment with the harnesses installed
(``pip install inspect_ai lm-eval``; neither needs torch for this):

    python tests/logs/data/make_logs.py

* ``lm_eval/<model>/samples_toyqa_*.jsonl`` (+ ``results_*.json``): lm-evaluation-harness 0.4 runs a local
  multiple-choice task (``toyqa.yaml`` on ``toyqa.jsonl``, 24 questions in 8 passages) with its ``dummy``
  model (random log-likelihoods; ``--model_args pretrained=NAME`` names the model, ``--seed`` differs).
* ``inspect/<model>.eval``: inspect_ai runs a local task (12 questions in 4 passages, 2 epochs, scorers
  ``match`` and ``includes``; metrics accuracy, stderr and ``stderr(cluster="passage")``) on its ``mockllm``
  provider with fixed outputs per model. The outputs carry their token usage so that mockllm does not count
  tokens with tiktoken (which downloads its encoding on first use and so fails offline).
* ``helm/<run>/``: HELM per-instance statistics written in HELM's documented layout by this script (HELM
  is too heavy to install here): ``run_spec.json``, ``instances.json``, ``per_instance_stats.json``.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


def toyqa_rows(n_passages: int, per_passage: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for p in range(n_passages):
        for q in range(per_passage):
            a, b = rng.randint(1, 20), rng.randint(1, 20)
            choices = [str(a + b), str(a + b + 1), str(a + b - 1)]
            rng.shuffle(choices)
            rows.append({"id": f"p{p}q{q}", "passage": f"p{p}", "subject": "math" if p % 2 else "arith",
                         "question": f"What is {a} + {b}?", "choices": choices, "label": choices.index(str(a + b)), "answer": str(a + b)})
    return rows


def make_lm_eval() -> None:
    out = HERE / "lm_eval"
    shutil.rmtree(out, ignore_errors=True)
    task_dir = HERE / "lm_eval_task"
    shutil.rmtree(task_dir, ignore_errors=True)
    task_dir.mkdir()
    (task_dir / "toyqa.jsonl").write_text("\n".join(json.dumps(r) for r in toyqa_rows(8, 3, 1)) + "\n")
    (task_dir / "toyqa.yaml").write_text(
        "task: toyqa\ndataset_path: json\ndataset_kwargs:\n  data_files:\n"
        f"    test: {task_dir / 'toyqa.jsonl'}\n"
        "test_split: test\noutput_type: multiple_choice\n"
        'doc_to_text: "Question: {{question}}\\nAnswer:"\ndoc_to_choice: "{{choices}}"\ndoc_to_target: label\n'
        "metric_list:\n  - metric: acc\n    aggregation: mean\n    higher_is_better: true\n")
    lm_eval = Path(sys.executable).with_name("lm_eval")
    for seed, name in enumerate(["dummy-a", "dummy-b", "dummy-c"], 1):
        subprocess.run([str(lm_eval), "--model", "dummy", "--model_args", f"pretrained={name}", "--tasks", "toyqa",
                        "--include_path", str(task_dir), "--log_samples", "--output_path", str(out),
                        "--seed", str(seed)], check=True, capture_output=True)
    shutil.rmtree(task_dir)
    for results in out.rglob("results_*.json"):  # keep the numbers, not the machine's description
        info = json.loads(results.read_text())
        for key in ("pretty_env_info", "git_hash", "upper_git_hash", "transformers_version"):
            info.pop(key, None)
        results.write_text(json.dumps(info, indent=2))


def make_inspect() -> None:
    from inspect_ai import Task, eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import accuracy, includes, match, stderr
    from inspect_ai.solver import generate

    out = HERE / "inspect"
    shutil.rmtree(out, ignore_errors=True)
    rows = toyqa_rows(4, 3, 2)
    samples = [Sample(input=r["question"], target=r["answer"], id=r["id"],
                      metadata={"passage": r["passage"], "subject": r["subject"]}) for r in rows]
    skill = {"mockllm/strong": 0.8, "mockllm/medium": 0.6, "mockllm/weak": 0.35}
    epochs = 2
    for k, (model, p) in enumerate(skill.items()):
        rng = random.Random(10 + k)
        outputs = []
        for _ in range(epochs):  # inspect runs epoch by epoch, samples in order
            for s in samples:
                text = s.target if rng.random() < p else "I do not know"
                o = ModelOutput.from_content(model, text)
                o.usage = ModelUsage(input_tokens=8, output_tokens=2, total_tokens=10)
                outputs.append(o)
        task = Task(dataset=samples, solver=generate(), scorer=[match(), includes()], epochs=epochs,
                    metrics=[accuracy(), stderr(), stderr(cluster="passage")], name="toy_arith")
        inspect_eval(task, model=get_model(model, custom_outputs=outputs), log_dir=str(out), display="none",
                     max_samples=1, max_connections=1)
    for i, f in enumerate(sorted(out.glob("*.eval"))):
        f.rename(out / f"log{i}.eval")


def make_helm() -> None:
    out = HERE / "helm"
    shutil.rmtree(out, ignore_errors=True)
    rows = toyqa_rows(3, 2, 3)
    for k, (model, p) in enumerate({"openai/gpt2": 0.4, "meta/llama-tiny": 0.7}.items()):
        run = out / f"toyqa_{model.replace('/', '_')}"
        run.mkdir(parents=True)
        rng = random.Random(20 + k)
        (run / "run_spec.json").write_text(json.dumps({
            "name": f"toyqa:subject=all,model={model.replace('/', '_')}",
            "scenario_spec": {"class_name": "toyqa.ToyScenario", "args": {}},
            "adapter_spec": {"method": "multiple_choice_joint", "model": model, "max_train_instances": 0},
            "metric_specs": [{"class_name": "helm.benchmark.metrics.basic_metrics.BasicMetric", "args": {}}]}, indent=2))
        (run / "instances.json").write_text(json.dumps([
            {"input": {"text": r["question"]}, "references": [{"output": {"text": c}, "tags": ["correct"] if j == r["label"] else []}
                                                               for j, c in enumerate(r["choices"])],
             "split": "test", "id": f"id{i}"} for i, r in enumerate(rows)], indent=2))
        stats = []
        for i, _ in enumerate(rows):
            em = float(rng.random() < p)
            stats.append({"instance_id": f"id{i}", "train_trial_index": 0, "stats": [
                {"name": {"name": "exact_match", "split": "test"}, "count": 1, "sum": em, "sum_squared": em,
                 "min": em, "max": em, "mean": em, "variance": 0.0, "stdev": 0.0},
                {"name": {"name": "num_output_tokens", "split": "test"}, "count": 1, "sum": 3.0, "sum_squared": 9.0,
                 "min": 3.0, "max": 3.0, "mean": 3.0, "variance": 0.0, "stdev": 0.0}]})
        (run / "per_instance_stats.json").write_text(json.dumps(stats, indent=2))


def inspect_reference() -> None:
    """What inspect_ai's own reader makes of the logs: every score through its ``value_to_float`` and the
    clustered standard error it computed (``stderr(cluster="passage")`` in the log's results)."""
    from inspect_ai.log import read_eval_log
    from inspect_ai.scorer import value_to_float

    to_float = value_to_float()
    out = []
    for f in sorted((HERE / "inspect").glob("*.eval")):
        log = read_eval_log(str(f))
        scores = [{"item": str(s.id), "repeat": s.epoch, "scorer": name, "value": to_float(score.value)}
                  for s in log.samples for name, score in s.scores.items()]
        metrics = {sc.name: {key: {"name": m.name, "value": m.value, "params": m.params} for key, m in sc.metrics.items()}
                   for sc in log.results.scores}
        out.append({"file": f.name, "model": log.eval.model, "task": log.eval.task, "scores": scores,
                    "metrics": metrics})
    (HERE / "inspect_reference.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    if sys.argv[1:] == ["--reference-only"]:
        inspect_reference()
        sys.exit()
    make_lm_eval()
    make_inspect()
    make_helm()
    inspect_reference()

