"""The probe harness: inputs a new user would try, run through the command line or a Python entry point, and
classified as issue 38 defines the classes.

GOOD  ran (and, where the probe checks it, gave the right number), or was refused with a specific message naming
      the column, argument or fix (exit code 2 on the command line);
ROUGH refused, but the message misleads (or a legal input refused; numpy's own warnings or reprs leaking out);
BAD   a traceback, a silently wrong number, data silently dropped or modified, an input accepted that should
      have been refused.

A probe names what it runs (``argv`` for the command line, with ``{name}`` replaced by the path of an input file
of :func:`write_inputs`, or ``call(inputs)`` for Python), what it expects (``ok``, ``refuse`` or ``warn``, with
words the message must hold) and optionally ``check(result)``, which returns a complaint or None.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mixeval.cli import main
from mixeval.errors import MixevalError, MixevalWarning

__all__ = ["Probe", "Outcome", "cli", "py", "run", "classify", "write_inputs", "MODEL"]

MODEL = "score ~ system + (1|item) + (1|rater)"

#: text that must never reach a user: numpy's and pandas' own warnings and reprs, Python's tracebacks
LEAKS = re.compile(r"Traceback \(most recent|np\.(float|int|str_|bool)|encountered in|divide by zero|Mean of empty "
                   r"slice|Degrees of freedom <= 0|FutureWarning|DeprecationWarning|SettingWithCopy|RuntimeWarning|"
                   r"PerfectSeparationWarning|ConvergenceWarning: |formulaic|PatsyError|KeyError|IndexError")


@dataclass(frozen=True)
class Probe:
    """One input tried: ``argv`` (command line) or ``call`` (Python), the expected outcome and message words."""

    id: str
    expect: str  # "ok", "refuse", "warn", "either" (ok, or refused with words) or "flag" (warned or refused with words)
    words: tuple[str, ...] = ()                  # fragments the error (refuse) or a warning (warn) must hold
    argv: tuple[str, ...] | None = None
    call: Callable[[dict[str, str]], Any] | None = None
    check: Callable[[Any, dict[str, str]], str | None] | None = None  # (CLI output or value, inputs)
    avoid: tuple[str, ...] = ()                  # words a refusal must not say (they mislead)


@dataclass
class Outcome:
    code: int | None = None                      # CLI exit code (None: an exception escaped)
    out: str = ""
    err: str = ""
    value: Any = None
    exc: BaseException | None = None
    warnings: list[tuple[type, str]] = field(default_factory=list)


def _tuple(words: tuple[str, ...] | str) -> tuple[str, ...]:
    return (words,) if isinstance(words, str) else tuple(words)


def cli(id: str, expect: str, *argv: str, words: tuple[str, ...] | str = (), check=None, avoid=()) -> Probe:
    return Probe(id, expect, _tuple(words), argv=tuple(argv), check=check, avoid=_tuple(avoid))


def py(id: str, expect: str, call, *, words: tuple[str, ...] | str = (), check=None, avoid=()) -> Probe:
    return Probe(id, expect, _tuple(words), call=call, check=check, avoid=_tuple(avoid))


def run(probe: Probe, inputs: dict[str, str]) -> Outcome:
    outcome = Outcome()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if probe.argv is not None:
            argv = [a.format(**inputs) for a in probe.argv]
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    outcome.code = main(argv)
                except SystemExit as exc:  # argparse's own refusals
                    outcome.code = exc.code if isinstance(exc.code, int) else 2
                except Exception as exc:  # noqa: BLE001 - a traceback is what the probe looks for
                    outcome.exc = exc
            outcome.out, outcome.err = out.getvalue(), err.getvalue()
            if outcome.code == 0 and outcome.out.lstrip().startswith("{"):
                try:
                    outcome.value = json.loads(outcome.out)
                except ValueError:
                    outcome.value = outcome.out
            else:
                outcome.value = outcome.out
        else:
            try:
                outcome.value = probe.call(inputs)
            except Exception as exc:  # noqa: BLE001
                outcome.exc = exc
    outcome.warnings = [(w.category, str(w.message)) for w in caught]
    return outcome


def _message(outcome: Outcome) -> str:
    return str(outcome.exc) if outcome.exc is not None else outcome.err.strip()


def classify(probe: Probe, outcome: Outcome, inputs: dict[str, str]) -> tuple[str, str]:
    """``(class, why)`` of a probe's outcome: GOOD, ROUGH or BAD."""
    is_cli = probe.argv is not None
    exc = outcome.exc
    if exc is not None and not isinstance(exc, MixevalError):
        return "BAD", f"traceback: {type(exc).__name__}: {str(exc)[:300]}"
    refused = (outcome.code not in (0, None)) if is_cli else exc is not None
    message = _message(outcome)
    shown = outcome.out + outcome.err + message + "".join(m for _, m in outcome.warnings if is_cli)
    leak = LEAKS.search(shown)
    if leak:
        return "ROUGH", f"leaks {leak.group(0)!r}: {shown[max(0, leak.start() - 150):leak.end() + 150]!r}"
    if not is_cli:
        foreign = [(c.__name__, m) for c, m in outcome.warnings if not issubclass(c, MixevalWarning)]
        if foreign:
            return "ROUGH", f"foreign warning {foreign[0][0]}: {foreign[0][1][:200]}"
    said = [w for w in probe.avoid if w.lower() in message.lower()]
    if refused and said:
        return "ROUGH", f"message says {said}: {message[:400]!r}"
    if probe.expect in ("either", "flag") and refused:  # a refusal naming the problem is as good as the rest
        missing = [w for w in probe.words if w.lower() not in message.lower()]
        return ("ROUGH", f"message lacks {missing}: {message[:400]!r}") if missing else ("GOOD", message[:200])
    if probe.expect == "refuse":
        if not refused:
            return "BAD", f"accepted (should be refused with {probe.words}); output: {outcome.out[:300]!r}"
        if is_cli and outcome.code != 2:
            return "ROUGH", f"exit code {outcome.code}, not 2"
        missing = [w for w in probe.words if w.lower() not in message.lower()]
        if missing:
            return "ROUGH", f"message lacks {missing}: {message[:400]!r}"
        if is_cli and len(message.splitlines()) > 1 and not message.startswith("usage:"):
            return "ROUGH", f"message of {len(message.splitlines())} lines: {message[:300]!r}"
        return "GOOD", message[:200]
    if refused:
        return "ROUGH", f"refused a legal input: {message[:400]!r}"
    if probe.expect in ("warn", "flag"):
        printed = [line for line in outcome.out.splitlines() if line.lstrip().lower().startswith("warning")]
        said = outcome.err + " ".join(m for _, m in outcome.warnings) + " ".join(printed)
        missing = [w for w in probe.words if w.lower() not in said.lower()]
        if missing:
            return "BAD", f"no warning holding {missing}; stderr {outcome.err[:300]!r}, stdout {outcome.out[:300]!r}"
    if probe.check is not None:
        complaint = probe.check(outcome.value, inputs)
        if complaint:
            return "BAD", f"wrong result: {complaint}"
    return "GOOD", ""


# ---------------------------------------------------------------------------------------------------- inputs


def _csv(root: Path, name: str, df: pd.DataFrame, **kwargs) -> str:
    path = root / name
    df.to_csv(path, index=False, **kwargs)
    return str(path)


def _text(root: Path, name: str, text: str) -> str:
    path = root / name
    path.write_text(text)
    return str(path)


def long_log(seed: int = 0, n_items: int = 30, systems=("A", "B"), raters=(1, 2)) -> pd.DataFrame:
    """Items x systems x raters with a Gaussian score, a 0/1 accuracy, item properties and a constant column."""
    rng = np.random.default_rng(seed)
    rows = [(i, s, r) for i in range(n_items) for s in systems for r in raters]
    df = pd.DataFrame(rows, columns=["item", "system", "rater"])
    effect = {s: 0.4 * k for k, s in enumerate(systems)}
    df["score"] = (rng.normal(size=n_items)[df["item"]] + df["system"].map(effect)
                   + rng.normal(0, 0.3, len(raters))[df["rater"].map({r: k for k, r in enumerate(raters)})]
                   + rng.normal(size=len(df)))
    df["acc"] = (df["score"] > 0.3).astype(int)
    df["const"] = 1.0
    df["length"] = rng.integers(5, 80, size=n_items)[df["item"]]
    df["domain"] = np.array(["news", "web", "legal"])[df["item"] % 3]
    df["rating"] = np.clip(np.round(df["score"] + 3), 1, 5).astype(int)
    df["label"] = df["rating"].map({1: "bad", 2: "poor", 3: "fair", 4: "good", 5: "great"})
    return df


def write_inputs(root: Path) -> dict[str, str]:
    """Every file the probes read, written once into ``root``; returns ``{name: path}``."""
    root.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(38)
    f: dict[str, str] = {"dir": str(root), "missing": str(root / "no_such.csv")}
    log = long_log()
    f["log"] = _csv(root, "log.csv", log)
    f["log3"] = _csv(root, "log3.csv", long_log(1, 24, ("A", "B", "C"), (1, 2, 3)))
    f["log_tab"] = _csv(root, "log.tsv", log, sep="\t")
    f["log_semi"] = _csv(root, "log_semi.csv", log, sep=";", decimal=",")
    with gzip.open(root / "log.csv.gz", "wt") as fh:
        log.to_csv(fh, index=False)
    f["log_gz"] = str(root / "log.csv.gz")
    f["log_parquet"] = str(root / "log.parquet")
    log.to_parquet(f["log_parquet"])
    f["log_nan"] = _csv(root, "log_nan.csv", log.assign(score=log["score"].where(log.index != 5)))
    f["log_inf"] = _csv(root, "log_inf.csv", log.assign(score=log["score"].where(log.index != 5, np.inf)))
    f["log_text_score"] = _csv(root, "log_text.csv", log.assign(score=log["score"].round(2).astype(str)
                                                                .where(log.index != 7, "error")))
    f["log_na_score"] = _csv(root, "log_na.csv", log.assign(score=log["score"].round(2).astype(str)
                                                            .where(log.index != 7, "n/a")))
    f["log_one_system"] = _csv(root, "log_one_system.csv", log.assign(system="A"))
    f["log_numeric_system"] = _csv(root, "log_num_system.csv", log.assign(system=log["system"].map({"A": 1, "B": 2})))
    f["log_spaces"] = _csv(root, "log_spaces.csv", log.rename(columns={"score": "my score"}))
    f["log_bom"] = str(root / "log_bom.csv")
    (root / "log_bom.csv").write_text(log.to_csv(index=False), encoding="utf-8-sig")
    f["log_crlf"] = str(root / "log_crlf.csv")
    (root / "log_crlf.csv").write_bytes(log.to_csv(index=False).replace("\n", "\r\n").encode())
    f["log_dup_rows"] = _csv(root, "log_dup.csv", pd.concat([log, log.iloc[:4]]))
    f["log_unbalanced"] = _csv(root, "log_unbalanced.csv", log.drop(index=[0, 5, 9, 30]))
    f["log_items_as_rows"] = _csv(root, "log_rows.csv", log.assign(item=np.arange(len(log))))
    f["log_case"] = _csv(root, "log_case.csv", log.assign(system=log["system"].where(log.index % 5 != 0, "a")))
    f["log_bool"] = _csv(root, "log_bool.csv", log.assign(acc=log["acc"].astype(bool)))
    f["log_trials"] = _csv(root, "log_trials.csv", log.assign(n=5, k=rng.binomial(5, 0.6, len(log)),
                                                              p=lambda d: d["k"] / 5))
    f["log_huge"] = _csv(root, "log_huge.csv", log.assign(score=log["score"] * 1e8 + 1e12))
    f["log_tiny"] = _csv(root, "log_tiny.csv", log.assign(score=log["score"] * 1e-9))
    f["log_slope"] = _csv(root, "log_slope.csv", log.assign(x=rng.normal(size=len(log))))
    rows = log.copy()
    rows["item"] = "q" + rows["item"].astype(str)
    f["log_text_items"] = _csv(root, "log_text_items.csv", rows)
    f["long_ratings"] = _csv(root, "long_ratings.csv", log[log.system == "A"][["item", "rater", "rating"]])
    f["log_ragged"] = _text(root, "ragged.csv", "item,system,score\n1,A,0.5\n1,B,0.7,9\n2,A,0.1\n2,B\n")
    f["empty"] = _text(root, "empty.csv", "")
    f["header_only"] = _text(root, "header.csv", "item,system,rater,score\n")
    f["blank_lines"] = _text(root, "blank.csv", "\n\n\n")
    f["json"] = _text(root, "log.json", log.head(5).to_json(orient="records"))
    f["binary"] = str(root / "model.bin")
    (root / "model.bin").write_bytes(bytes(range(256)) * 8)
    f["xlsx"] = str(root / "log.xlsx")
    (root / "log.xlsx").write_bytes(b"PK\x03\x04" + bytes(300))
    f["latin1"] = str(root / "latin1.csv")
    (root / "latin1.csv").write_bytes(("item,system,rater,score\n" + "".join(
        f"{i},sys\xe9{s},{r},{rng.normal():.3f}\n" for i in range(12) for s in "AB" for r in (1, 2))).encode("latin-1"))
    f["dup_header"] = _text(root, "dup_header.csv", "score,item,system,score\n1,1,A,2\n2,1,B,3\n3,2,A,4\n4,2,B,5\n")
    f["one_column"] = _text(root, "one_col.csv", "score\n1\n2\n3\n")
    f["quoted"] = _csv(root, "quoted.csv", log.assign(system=log["system"].map({"A": "sys, A", "B": "sys; B"})))

    # wide scores for bootstrap / permutation
    base = rng.normal(0.4, 0.1, 40)
    wide = pd.DataFrame({"A": base + rng.normal(0, .05, 40), "B": base + 0.03 + rng.normal(0, .05, 40),
                         "C": base + rng.normal(0, .05, 40)})
    f["wide"] = _csv(root, "wide.csv", wide)
    f["wide2"] = _csv(root, "wide2.csv", wide[["A", "B"]])
    f["wide_id"] = _csv(root, "wide_id.csv", wide[["A", "B"]].assign(id=np.arange(1, 41))[["id", "A", "B"]])
    f["wide_doc_id"] = _csv(root, "wide_doc.csv", wide.assign(doc_id=rng.permutation(np.arange(100, 140))))
    f["wide_counter"] = _csv(root, "wide_counter.csv", wide.assign(n=np.arange(40))[["n", "A", "B", "C"]])
    f["wide_unnamed"] = str(root / "wide_unnamed.csv")
    wide.to_csv(root / "wide_unnamed.csv")  # pandas' index saved as a first, unnamed column
    f["wide_text_id"] = _csv(root, "wide_text_id.csv", wide.assign(item=[f"s{i}" for i in range(40)]))
    f["wide_ranks"] = _csv(root, "wide_ranks.csv", pd.DataFrame({"A": rng.permutation(np.arange(1, 41)),
                                                                  "B": rng.permutation(np.arange(1, 41))}))
    f["wide_one"] = _csv(root, "wide_one.csv", wide[["A"]])
    f["wide_nan"] = _csv(root, "wide_nan.csv", wide.assign(B=wide["B"].where(wide.index != 3)))
    f["wide_text"] = _csv(root, "wide_textscore.csv", wide.assign(B=wide["B"].round(3).astype(str)
                                                                  .where(wide.index != 3, "err")))
    f["wide_same"] = _csv(root, "wide_same.csv", wide.assign(B=wide["A"]))
    f["wide_shift"] = _csv(root, "wide_shift.csv", wide.assign(B=wide["A"] + 0.1)[["A", "B"]])
    f["wide_small"] = _csv(root, "wide_small.csv", wide.head(8)[["A", "B"]])
    f["wide_single_row"] = _csv(root, "wide_row.csv", wide.head(1))
    f["wide_binary"] = _csv(root, "wide_binary.csv", (wide > 0.4).astype(int))
    f["wide_long"] = _csv(root, "wide_long.csv", wide.reset_index().melt(id_vars="index", var_name="system",
                                                                        value_name="score").rename(
                                                                            columns={"index": "item"}))

    # ratings for agreement
    truth = rng.integers(1, 6, 20)
    ratings = pd.DataFrame({f"r{k}": np.clip(truth + rng.integers(-1, 2, 20), 1, 5) for k in (1, 2, 3)})
    f["ratings"] = _csv(root, "ratings.csv", ratings)
    f["ratings2"] = _csv(root, "ratings2.csv", ratings[["r1", "r2"]])
    f["ratings_id"] = _csv(root, "ratings_id.csv", ratings.assign(id=np.arange(1, 21))[["id", "r1", "r2", "r3"]])
    f["ratings_unit"] = _csv(root, "ratings_unit.csv", ratings.assign(unit=[f"u{i}" for i in range(20)]))
    f["ratings_missing"] = _csv(root, "ratings_missing.csv", ratings.assign(r3=ratings["r3"].where(ratings.index % 3 != 0)))
    f["ratings_const"] = _csv(root, "ratings_const.csv", pd.DataFrame({"r1": [3] * 20, "r2": [3] * 20}))
    f["ratings_const_one"] = _csv(root, "ratings_const_one.csv", ratings.assign(r1=3))
    f["ratings_labels"] = _csv(root, "ratings_labels.csv", ratings.replace({1: "bad", 2: "poor", 3: "fair", 4: "good",
                                                                              5: "great"}))
    f["ratings_all_missing"] = _text(root, "ratings_nan.csv", "r1,r2\n,\n,\n,\n")
    f["ratings_one_rater"] = _csv(root, "ratings_one.csv", ratings[["r1"]])
    f["ratings_negative"] = _csv(root, "ratings_neg.csv", ratings - 3)
    f["ratings_ranks"] = _csv(root, "ratings_ranks.csv", pd.DataFrame({f"r{k}": rng.permutation(np.arange(1, 9))
                                                                       for k in (1, 2, 3)}))
    long_r = ratings.reset_index().melt(id_vars="index", var_name="rater", value_name="value")
    f["ratings_long"] = _csv(root, "ratings_long.csv", long_r.rename(columns={"index": "unit"}))
    f["ratings_long_dup"] = _csv(root, "ratings_long_dup.csv",
                                 pd.concat([long_r, long_r.head(2)]).rename(columns={"index": "unit"}))

    # circularity
    x = rng.normal(size=(300, 4))
    circ = pd.DataFrame(x, columns=["a", "b", "c", "d"])
    circ["score"] = np.digitize(circ["a"], [-1, 0, 1]) + 0.5 * circ["b"]
    circ["label"] = (circ["a"] + circ["b"] > 0).astype(int)
    circ["text"] = np.where(circ["c"] > 0, "hi", "lo")
    circ["flat"] = 2.0
    f["circ"] = _csv(root, "circ.csv", circ)
    f["circ_small"] = _csv(root, "circ_small.csv", circ.head(12))
    f["circ_nan"] = _csv(root, "circ_nan.csv", circ.assign(b=circ["b"].where(circ.index != 4)))
    f["circ_labels"] = _csv(root, "circ_labels.csv", circ.assign(label=circ["label"].map({0: "no", 1: "yes"})))
    f["circ_counts"] = _csv(root, "circ_counts.csv", circ.assign(label=circ["label"] * 2))

    # pairwise votes
    systems = [f"m{k}" for k in range(4)]
    strength = dict(zip(systems, [0.0, 0.5, 1.0, 1.5]))
    a = rng.choice(systems, 400)
    b = np.array([rng.choice([s for s in systems if s != x]) for x in a])
    p = 1 / (1 + np.exp(-(pd.Series(a).map(strength).to_numpy() - pd.Series(b).map(strength).to_numpy())))
    u = rng.uniform(size=400)
    winner = np.where(u < p - 0.05, "model_a", np.where(u < p + 0.05, "tie", "model_b"))
    votes = pd.DataFrame({"model_a": a, "model_b": b, "winner": winner, "judge": rng.choice(["j1", "j2", "j3"], 400),
                          "prompt": rng.integers(0, 60, 400)})
    f["votes"] = _csv(root, "votes.csv", votes)
    f["votes_ties_only"] = _csv(root, "votes_ties.csv", votes.assign(winner="tie"))
    f["votes_bad_winner"] = _csv(root, "votes_bad.csv", votes.assign(winner=votes["winner"].where(votes.index != 3,
                                                                                                   "draw?")))
    f["votes_self"] = _csv(root, "votes_self.csv", votes.assign(model_b=votes["model_b"].where(votes.index != 2,
                                                                                                votes["model_a"])))
    f["votes_two"] = _csv(root, "votes_two.csv", pd.DataFrame({"model_a": ["x", "y"] * 10, "model_b": ["y", "x"] * 10,
                                                               "winner": ["model_a"] * 20}))
    f["votes_names"] = _csv(root, "votes_names.csv", pd.DataFrame({
        "model_a": ["A", "B"] * 40, "model_b": ["B", "A"] * 40,
        "winner": (["A"] * 33 + ["B"] * 7) * 2}))
    f["votes_counts"] = _csv(root, "votes_counts.csv", votes.assign(n=rng.integers(1, 4, 400)))
    f["votes_zero_counts"] = _csv(root, "votes_zero.csv", votes.assign(n=0))
    bad = votes.assign(n=rng.integers(1, 4, 400))
    bad.loc[300, "model_b"] = bad.loc[300, "model_a"]
    f["votes_counts_self"] = _csv(root, "votes_counts_self.csv", bad)
    judge_effect = {"j1": -1.0, "j2": 0.0, "j3": 1.2}
    lin = (pd.Series(a).map(strength).to_numpy() - pd.Series(b).map(strength).to_numpy()
           + votes["judge"].map(judge_effect).to_numpy())
    mixed = votes.assign(winner=np.where(rng.uniform(size=400) < 1 / (1 + np.exp(-lin)), "model_a", "model_b"),
                         len_a=100, len_b=100)
    f["votes_mixed"] = _csv(root, "votes_mixed.csv", mixed)
    f["votes_disconnected"] = _csv(root, "votes_disc.csv", pd.DataFrame({
        "model_a": ["a", "b", "c", "d"] * 10, "model_b": ["b", "a", "d", "c"] * 10,
        "winner": ["model_a", "model_b"] * 20}))

    # ordinal ratings whose raters differ in level but not in the spacing of their thresholds
    item, rater = np.repeat(np.arange(60), 8), np.tile(np.arange(8), 60)
    latent = rng.normal(size=60)[item] + np.linspace(-1.5, 1.5, 8)[rater] + rng.logistic(size=480)
    f["ordinal_spread"] = _csv(root, "ordinal_spread.csv", pd.DataFrame({
        "item": item, "rater": rater, "system": np.tile(["A", "B"], 240),
        "rating": np.digitize(latent, [-1.5, -0.5, 0.5, 1.5]) + 1}))
    constant_rater = log[log.system == "A"][["item", "rater", "rating"]].copy()
    constant_rater.loc[constant_rater.rater == 1, "rating"] = 3
    f["constant_rater"] = _csv(root, "constant_rater.csv", constant_rater)

    # meta
    conf = rng.uniform(size=200)
    f["answers"] = _csv(root, "answers.csv", pd.DataFrame({"conf": conf,
                                                           "ok": (rng.uniform(size=200) < conf).astype(int)}))
    f["answers_text"] = _csv(root, "answers_text.csv", pd.DataFrame({"conf": conf, "ok": ["yes"] * 200}))
    f["answers_range"] = _csv(root, "answers_range.csv", pd.DataFrame({"conf": conf * 5, "ok": [1, 0] * 100}))
    pairs = []
    for ctx in range(30):
        for system in ("s1", "s2"):
            for metric in ("bleu", "wer"):
                y = rng.uniform()
                pairs.append((ctx, system, metric, y, y - 0.1 * rng.uniform() if metric == "bleu" else y + 0.1))
    local = pd.DataFrame(pairs, columns=["context", "subset", "metric", "score", "perturbed"])
    f["local"] = _csv(root, "local.csv", local)
    f["local_nan"] = _csv(root, "local_nan.csv", local.assign(score=local["score"].where(local.index != 2)))

    # harness-like long log (compare-logs reads CSV too)
    models = ["alpha", "beta", "gamma"]
    hl = pd.DataFrame([(m, f"q{i:02d}", f"P{i // 4:02d}", ["math", "history"][i % 2]) for m in models
                       for i in range(40)], columns=["model", "item", "passage", "subject"])
    skill = {"alpha": 0.55, "beta": 0.7, "gamma": 0.75}
    hl["correct"] = (rng.uniform(size=len(hl)) < hl["model"].map(skill)).astype(int)
    f["hlog"] = _csv(root, "hlog.csv", hl)
    twin = hl.copy()
    twin.loc[twin.model == "gamma", "correct"] = twin.loc[twin.model == "beta", "correct"].to_numpy()
    f["hlog_twins"] = _csv(root, "hlog_twins.csv", twin)
    shifted = hl.copy()
    shifted["score"] = rng.integers(0, 8, len(hl)) / 4  # quarters: a difference of 0.25 is exact in binary
    shifted.loc[shifted.model == "beta", "score"] = shifted.loc[shifted.model == "alpha", "score"].to_numpy() + 0.25
    f["hlog_shift"] = _csv(root, "hlog_shift.csv", shifted)
    f["hlog_float_items"] = _csv(root, "hlog_float_items.csv", hl.assign(
        item=np.where(hl.model == "alpha", (hl.index % 40 + 1).astype(str),
                      (hl.index % 40 + 1).astype(float).astype(str))))
    f["hlog_blank_model"] = _csv(root, "hlog_blank.csv", hl.assign(model=hl["model"].where(hl.index != 0, "")))
    return f
