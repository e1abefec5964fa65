"""Write large lm-evaluation-harness 0.4 ``--log_samples`` output for the reading benchmark (not committed data).

The layout and records are those lm-evaluation-harness 0.4 writes for MMLU (57 subject tasks, 14,042
questions; here ``--items`` questions spread over the 57 subjects) run ``--runs`` times per model (each run
a new timestamp in the model's directory: the repeats), ``--output_path OUT``:

    OUT/<org>__<model>/results_<date>.json
    OUT/<org>__<model>/samples_mmlu_<subject>_<date>.jsonl      one record per question

Each record carries the fields the harness writes for a 4-choice log-likelihood task (0-shot prompt):
``doc_id``, ``doc`` (question, subject, choices, answer), ``target``, ``arguments`` (one request per choice
with the whole prompt), ``resps`` and ``filtered_resps`` (log-likelihood, is-greedy per choice), ``filter``,
``metrics``, ``doc_hash``, ``prompt_hash``, ``target_hash`` (sha256 hex) and ``acc``, in the harness's key
order and its ``json.dumps(..., ensure_ascii=False)`` form. Correctness follows a logistic model of skill
and difficulty; the choice with the highest log-likelihood is the answer exactly when ``acc`` is 1.

    python3 benchmarks/make_lm_eval_logs.py /tmp/lm_eval_big --models 50 --items 14000 --runs 5
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

import numpy as np

SUBJECTS = [
    "abstract_algebra", "anatomy", "astronomy", "business_ethics", "clinical_knowledge", "college_biology",
    "college_chemistry", "college_computer_science", "college_mathematics", "college_medicine", "college_physics",
    "computer_security", "conceptual_physics", "econometrics", "electrical_engineering", "elementary_mathematics",
    "formal_logic", "global_facts", "high_school_biology", "high_school_chemistry", "high_school_computer_science",
    "high_school_european_history", "high_school_geography", "high_school_government_and_politics",
    "high_school_macroeconomics", "high_school_mathematics", "high_school_microeconomics", "high_school_physics",
    "high_school_psychology", "high_school_statistics", "high_school_us_history", "high_school_world_history",
    "human_aging", "human_sexuality", "international_law", "jurisprudence", "logical_fallacies", "machine_learning",
    "management", "marketing", "medical_genetics", "miscellaneous", "moral_disputes", "moral_scenarios", "nutrition",
    "philosophy", "prehistory", "professional_accounting", "professional_law", "professional_medicine",
    "professional_psychology", "public_relations", "security_studies", "sociology", "us_foreign_policy", "virology",
    "world_religions",
]
WORDS = ("the of a which following is an that most likely in for to with not be by statement true false value "
         "function process system energy population theory law model rate result cell market state equation").split()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _text(rng: np.random.Generator, n_words: int) -> str:
    return " ".join(WORDS[k] for k in rng.integers(0, len(WORDS), n_words))


def make_questions(n_items: int, rng: np.random.Generator) -> list[dict]:
    """Per question: its subject, doc_id within the subject, and the record's fixed parts as JSON text."""
    subject_of = np.sort(rng.integers(0, len(SUBJECTS), n_items))
    out = []
    counter = dict.fromkeys(range(len(SUBJECTS)), 0)
    for s in subject_of:
        doc_id = counter[s]
        counter[s] += 1
        subject = SUBJECTS[s]
        question = _text(rng, int(rng.integers(12, 45))).capitalize() + "?"
        choices = [_text(rng, int(rng.integers(2, 9))) for _ in range(4)]
        answer = int(rng.integers(0, 4))
        doc = {"question": question, "subject": subject, "choices": choices, "answer": answer}
        prompt = (f"The following are multiple choice questions (with answers) about {subject.replace('_', ' ')}.\n\n"
                  f"{question.strip()}\nA. {choices[0]}\nB. {choices[1]}\nC. {choices[2]}\nD. {choices[3]}\nAnswer:")
        arguments = {f"gen_args_{k}": {"arg_0": prompt, "arg_1": f" {letter}"} for k, letter in enumerate("ABCD")}
        head = json.dumps({"doc_id": doc_id, "doc": doc, "target": str(answer), "arguments": arguments},
                          ensure_ascii=False)[:-1]
        tail = json.dumps({"filter": "none", "metrics": ["acc"], "doc_hash": _sha(json.dumps(doc, indent=2, default=str)),
                           "prompt_hash": _sha(prompt), "target_hash": _sha(str(answer))}, ensure_ascii=False)[1:-1]
        out.append({"subject": subject, "answer": answer, "head": head, "tail": tail})
    return out


def write_run(model_dir: Path, model: str, date: str, questions: list[dict], correct: np.ndarray,
              rng: np.random.Generator) -> int:
    """One run of one model: a samples file per subject and the results file; returns the bytes written."""
    ll = -rng.gamma(2.0, 0.6, size=(len(questions), 4))
    answer = np.array([q["answer"] for q in questions])
    rows = np.arange(len(questions))
    best = ll.max(axis=1)
    other = (answer + 1 + rng.integers(0, 3, len(questions))) % 4
    ll[rows, answer] = np.where(correct, best + 0.05, ll[rows, answer])
    ll[rows, other] = np.where(correct, ll[rows, other], np.maximum(best, ll[rows, answer]) + 0.05)
    files: dict[str, list[str]] = {}
    for q, row, ok in zip(questions, ll, correct):
        vals = [repr(float(v)) for v in row]
        resps = ", ".join(f'[["{v}", "False"]]' for v in vals)
        filtered = ", ".join(f'["{v}", "False"]' for v in vals)
        files.setdefault(q["subject"], []).append(
            f'{q["head"]}, "resps": [{resps}], "filtered_resps": [{filtered}], {q["tail"]}, "acc": {1.0 if ok else 0.0}}}\n')
    size = 0
    for subject, lines in files.items():
        text = "".join(lines)
        (model_dir / f"samples_mmlu_{subject}_{date}.jsonl").write_text(text, encoding="utf-8")
        size += len(text.encode("utf-8"))
    results = {"results": {}, "config": {"model": "hf", "model_args": f"pretrained={model}"}, "model_name": model,
               "model_name_sanitized": model.replace("/", "__"), "date": time.time()}
    (model_dir / f"results_{date}.json").write_text(json.dumps(results, indent=2))
    return size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--items", type=int, default=14000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    questions = make_questions(args.items, rng)
    difficulty = rng.normal(0, 1.5, args.items)
    subject_effect = rng.normal(0, 0.5, (args.models, len(SUBJECTS)))
    subject_code = np.array([SUBJECTS.index(q["subject"]) for q in questions])
    skill = np.linspace(-0.5, 0.5, args.models)
    out = Path(args.out)
    total = 0
    start = time.perf_counter()
    for m in range(args.models):
        model = f"org/model-{m:02d}"
        model_dir = out / model.replace("/", "__")
        model_dir.mkdir(parents=True, exist_ok=True)
        p = 1 / (1 + np.exp(-(skill[m] + subject_effect[m, subject_code] - difficulty)))
        for r in range(args.runs):
            date = f"2026-11-{10 + r:02d}T12-00-{m:02d}.{r:06d}"
            total += write_run(model_dir, model, date, questions, rng.random(args.items) < p, rng)
    print(json.dumps({"out": str(out), "records": args.models * args.items * args.runs,
                      "files": args.models * args.runs * len({q["subject"] for q in questions}),
                      "bytes": total, "seconds": time.perf_counter() - start}))


if __name__ == "__main__":
    main()
