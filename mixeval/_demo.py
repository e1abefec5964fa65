"""The simulated tables of the demo that the command-line examples read besides the MT log (:func:`mixeval.datasets.write_demo`).

Each generator draws from a model stated in its docstring (the known truth a user can check the commands
against) with a fixed seed, so ``mixeval demo --write-data`` writes the same files on every machine.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["HARNESS_MODELS", "write_harness_logs", "circularity_table", "answers_table", "metric_pairs_table"]

#: the models of the demo harness logs and their effects on the log-odds of a correct answer (a typical question)
HARNESS_MODELS = {"model-a": 1.2, "model-b": 0.7, "model-c": 0.6}
_SUBJECTS = ("biology", "history", "law", "math")


def write_harness_logs(directory: Path, *, seed: int = 2026) -> Path:
    """Write lm-evaluation-harness ``--log_samples`` files of three models on 200 questions into ``directory``.

    One folder per model (``model-a``, ``model-b``, ``model-c``), each holding ``samples_quiz_<date>.jsonl`` with
    one record per question as the harness writes it (``doc_id``, ``doc`` with the question's ``passage`` and
    ``subject``, the document and prompt hashes, ``acc``). The questions come in 40 passages of 5 (10 passages per
    subject). Truth: ``P(correct) = logistic(m + u_passage + v_question)`` with ``m`` of :data:`HARNESS_MODELS`
    (1.2, 0.7, 0.6), ``u ~ N(0, 0.8^2)`` and ``v ~ N(0, 1)``: averaged over questions the accuracies are about
    0.71, 0.63 and 0.61, model-a is ahead of both others and model-b and model-c barely differ.

    Examples
    --------
    >>> import tempfile
    >>> from mixeval.datasets import read_lm_eval
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     logs = read_lm_eval(write_harness_logs(Path(tmp)))
    >>> logs.shape[0], sorted(logs["model"].unique())
    (600, ['model-a', 'model-b', 'model-c'])
    """
    rng = np.random.default_rng(seed)
    n_passages, per_passage = 40, 5
    passage = np.repeat(np.arange(n_passages), per_passage)
    subject = np.array(_SUBJECTS)[np.repeat(np.arange(len(_SUBJECTS)), n_passages // len(_SUBJECTS))]
    difficulty = rng.normal(0.0, 0.8, n_passages)[passage] + rng.normal(0.0, 1.0, passage.size)
    for model, effect in HARNESS_MODELS.items():
        correct = rng.random(passage.size) < 1.0 / (1.0 + np.exp(-(effect + difficulty)))
        records = [{"doc_id": i, "doc": {"question": f"question {i}", "passage": f"p{passage[i]:02d}",
                                         "subject": str(subject[passage[i]])},
                    "target": "A", "filter": "none", "metrics": ["acc"], "doc_hash": f"doc{i:03d}",
                    "prompt_hash": f"prompt{i:03d}", "target_hash": "A", "acc": float(correct[i])}
                   for i in range(passage.size)]
        folder = directory / model
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "samples_quiz_2026-01-15T10-00-00.000000.jsonl").write_text(
            "\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return directory


def circularity_table(*, n: int = 2000, seed: int = 2026) -> pd.DataFrame:
    """Patients' kidney measurements and the kidney SOFA score computed from two of them (a circular label).

    Columns ``creatinine`` (mg/dL, lognormal, median 1.1), ``urine`` (mL/day, lognormal, median 1,500), ``urea``
    (correlated with creatinine, r about 0.8 on the log scale), ``potassium`` (weakly correlated with both),
    ``heart_rate`` and ``age`` (independent), the label ``sofa_kidney`` = the larger of the creatinine score
    (0-4 at 1.2, 2.0, 3.5, 5.0 mg/dL) and the urine score (3 below 500 mL/day, 4 below 200; book Table 2.7), and
    ``kidney_failure`` = ``sofa_kidney >= 3`` (0/1). Truth: both labels are rules over {creatinine, urine}.

    Examples
    --------
    >>> t = circularity_table()
    >>> t.shape, int(t["sofa_kidney"].max())
    ((2000, 8), 4)
    """
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 6))
    creatinine = np.round(np.exp(np.log(1.1) + 0.6 * z[:, 0]), 2)  # as a laboratory reports them
    urine = np.round(np.exp(np.log(1500.0) + 0.6 * z[:, 1]))
    score = np.maximum(np.digitize(creatinine, [1.2, 2.0, 3.5, 5.0]),
                       np.where(urine < 200, 4, np.where(urine < 500, 3, 0)))
    return pd.DataFrame({
        "creatinine": creatinine, "urine": urine,
        "urea": np.round(np.exp(np.log(30.0) + 0.5 * (0.8 * z[:, 0] + 0.6 * z[:, 2])), 1),
        "potassium": np.round(4.2 + 0.4 * (0.4 * z[:, 0] - 0.4 * z[:, 1] + 0.82 * z[:, 3]), 2),
        "heart_rate": np.round(85.0 + 15.0 * z[:, 4]), "age": np.round(np.clip(60.0 + 15.0 * z[:, 5], 18.0, 95.0)),
        "sofa_kidney": score, "kidney_failure": (score >= 3).astype(int)})


def answers_table(*, n: int = 1000, seed: int = 2026) -> pd.DataFrame:
    """A QA model's answers: its confidence (the largest softmax probability) and whether the answer is right.

    ``maxprob ~ Beta(5, 2)`` and ``P(correct | maxprob) = maxprob ** 1.5`` (over-confident: about 0.62 correct on
    average against a mean confidence of 0.71); columns ``question``, ``maxprob``, ``correct`` (0/1).

    Examples
    --------
    >>> a = answers_table()
    >>> list(a.columns), len(a)
    (['question', 'maxprob', 'correct'], 1000)
    """
    rng = np.random.default_rng(seed)
    maxprob = rng.beta(5.0, 2.0, n)
    correct = (rng.random(n) < maxprob ** 1.5).astype(int)
    return pd.DataFrame({"question": [f"q{i:04d}" for i in range(n)], "maxprob": maxprob, "correct": correct})


def metric_pairs_table(*, n_contexts: int = 100, seed: int = 2026) -> pd.DataFrame:
    """Two metrics' scores of outputs and of their perturbed versions, for local metric accuracy.

    For each of ``n_contexts`` source sentences, each system (``system_a``, ``system_b``) and each metric (``bleu``,
    higher is better; ``wer``, lower is better): the score of the output and of a degraded copy. Truth: ``bleu``
    prefers the output with probability 0.80 on system_a and 0.50 on system_b (blind to the degradation there: its
    local accuracy differs between the subsets), ``wer`` with probability 0.70 on both (so the two metrics' order
    reverses between the subsets). Columns ``context``, ``system``, ``metric``, ``score``,
    ``perturbed``.

    Examples
    --------
    >>> p = metric_pairs_table()
    >>> p.groupby(["metric", "system"]).size().tolist()
    [100, 100, 100, 100]
    """
    rng = np.random.default_rng(seed)
    rows = []
    for context in range(n_contexts):
        for system, bleu_gap in (("system_a", 0.05), ("system_b", 0.0)):
            bleu = rng.uniform(0.2, 0.6)
            wer = rng.uniform(0.2, 0.5)
            rows.append((f"s{context:03d}", system, "bleu", bleu, bleu - rng.normal(bleu_gap, 0.06)))
            rows.append((f"s{context:03d}", system, "wer", wer, wer + rng.normal(0.026, 0.05)))
    return pd.DataFrame(rows, columns=["context", "system", "metric", "score", "perturbed"])
