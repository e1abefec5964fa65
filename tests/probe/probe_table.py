"""The probes: every command of the CLI and the main Python entry points under malformed files, awkward but legal
data and flag combinations, with the outcome each should have (see :mod:`probe_harness` for the classes).

``ISSUE_38`` maps each defect (1-10) and rough case of issue 38 to the probes that hold it; ``OTHER_BRANCH``
names the probes whose fix is another helper's part of the issue (they fail until that branch is merged).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from probe_harness import MODEL, cli, py

__all__ = ["PROBES", "OTHER_BRANCH", "ISSUE_38"]

M = MODEL
RAND = "score ~ (1|item) + (1|rater)"
BOOT = ("--seed", "1", "--n-resamples", "199")
SIM = ("--nsim", "4", "--seed", "1")
ANSWERS = ("meta", "selective", "{answers}", "--confidence", "conf", "--correct", "ok")
LOCAL = ("meta", "local", "{local}", "--context", "context", "--subset", "subset", "--metric", "metric", "--score",
         "score", "--perturbed", "perturbed")
MCI = ("metric-ci", "--p-control", "0.1", "--p-treatment", "0.2", "--n", "500")


# ---------------------------------------------------------------------------------------------------- checks


def _count(key, n):
    """The JSON output lists ``n`` entries under ``key`` (comparisons, rows)."""
    def check(value, f):
        got = len(value.get(key, [])) if isinstance(value, dict) else None
        return None if got == n else f"{got} {key}, not {n}"
    return check


def _mean_difference(path, a, b):
    def check(value, f):
        df = pd.read_csv(path.format(**f))
        want = float((df[a] - df[b]).mean())
        got = value.get("statistic") if isinstance(value, dict) else None
        return None if got is not None and abs(got - want) < 1e-12 else f"statistic {got}, mean difference {want}"
    return check


def _contains(*words):
    def check(value, f):
        text = value if isinstance(value, str) else str(value)
        missing = [w for w in words if w not in text]
        return f"output lacks {missing}" if missing else None
    return check


def _lacks(*words):
    def check(value, f):
        text = value if isinstance(value, str) else str(value)
        present = [w for w in words if w in text]
        return f"output shows {present}" if present else None
    return check


def _alpha_as_krippendorff(path, level):
    def check(value, f):
        import krippendorff

        df = pd.read_csv(path.format(**f))
        want = krippendorff.alpha(reliability_data=df.to_numpy(dtype=float).T, level_of_measurement=level)
        got = value.get("alpha") if isinstance(value, dict) else None
        return None if got is not None and abs(got - want) < 1e-10 else f"alpha {got}, krippendorff {want}"
    return check


def _no_zero_se(value, f):
    if not isinstance(value, dict):
        return "no JSON"
    pairs = value.get("pairs", [])
    zero = [p for p in pairs if p.get("se_cr2") == 0 and p.get("estimate") not in (0, None)]
    return f"se 0 for a nonzero difference: {zero[:1]}" if zero else None


# ---------------------------------------------------------------------------------------------------- python calls


def _read(path):
    return pd.read_csv(path)


def _study(f, formula=M, **kw):
    from mixeval import Study

    return Study(_read(f["log"]), formula, **kw)


def _power(f, **kw):
    return _study(f).power(n={"item": [10]}, n_resamples=3, random_state=1, progress=False, **kw)


def _weighted_emmeans(f):
    from mixeval import Study

    d = _read(f["log_trials"])
    return Study(d, "p ~ system + (1|item)", weights=d["n"]).emmeans()


def _weighted_df(f):
    from mixeval import Study

    d = _read(f["log_trials"])
    table = Study(d, "p ~ system + (1|item)", weights=d["n"]).pairwise(df="satterthwaite").table
    df = float(table["df"].iloc[0])
    return None if np.isfinite(df) and df < len(d) else f"Satterthwaite df {df}"


def _weighted_kr(f):
    from mixeval import Study
    from mixeval.errors import MixevalError

    d = _read(f["log_trials"])
    d["w"] = d["n"] * (1 + d.index % 3)  # unequal weights (equal ones only rescale sigma: the same SEs)
    weighted = Study(d, "p ~ system + (1|item)", weights=d["w"])
    try:
        kr = weighted.pairwise(df="kenward-roger").table
    except MixevalError:
        return None  # refused by name: allowed
    plain = Study(d, "p ~ system + (1|item)").pairwise(df="kenward-roger").table
    sat = weighted.pairwise(df="satterthwaite").table
    if abs(float(kr["se"].iloc[0]) - float(plain["se"].iloc[0])) < 1e-9 * float(plain["se"].iloc[0]):
        return "Kenward-Roger SE equals the unweighted fit's"
    return None if abs(float(kr["se"].iloc[0]) / float(sat["se"].iloc[0]) - 1) < 0.2 else "KR SE far from the weighted SE"


def _bt_names(f):
    from mixeval.preferences import bradley_terry

    fit = bradley_terry(_read(f["votes_names"]), position="fixed")
    ability = dict(zip(fit.systems, fit.estimates))
    diff = ability["A"] - ability["B"]
    return None if abs(diff - np.log(33 / 7)) < 0.3 else f"A - B = {diff:.3f}; the votes say log(33/7) = 1.55"


def _bt_separation(f):
    from mixeval.preferences import bradley_terry

    fit = bradley_terry(_read(f["votes_two"]))
    se = np.asarray(fit.standard_errors if hasattr(fit, "standard_errors") else fit.se, dtype=float)
    finite = se[np.isfinite(se)]
    return None if finite.size == 0 or finite.max() > 50 else f"standard errors {se} under separation"


def _compare_twins(f):
    from mixeval.logs import compare_logs

    res = compare_logs(_read(f["hlog_twins"]), metric="correct", mixed=False)
    n_pairs = len(res.pairs)
    return None if n_pairs == 3 else f"{n_pairs} pairs of 3"


def _predict_strings(f):
    from mixeval import lmer

    fit = lmer("score ~ length + (1|item)", _read(f["log"]))
    new = pd.DataFrame({"length": ["10", "20"], "item": [0, 1]})
    return fit.predict(new)


def _single_level(f):
    from mixeval import lmer

    d = _read(f["log"]).assign(site="s1")
    return lmer("score ~ system + site + (1|item)", d)


def _uncertainty_attr(f):
    """In a fresh interpreter: here another probe may have imported the subpackage already."""
    import subprocess
    import sys

    code = "import mixeval\nfor name in ('uncertainty', 'significance', 'reliability', 'validity'):\n" \
           "    getattr(mixeval, name)\nprint(mixeval.uncertainty.confint.__name__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return None if done.returncode == 0 else done.stderr.strip().splitlines()[-1]


def _ordinal_strings(f):
    from mixeval import Study

    d = _read(f["log"])
    d["label"] = pd.Categorical(d["label"], categories=["bad", "poor", "fair", "good", "great"], ordered=True)
    return Study(d, "label ~ system + (1|item)", family="ordinal").fit


def _gam_constant(f):
    from mixeval.validity import fit_gam

    return fit_gam(_read(f["circ"]), "flat", ["a", "b"])


def _circ_summary(f):
    from mixeval.validity import circularity_test

    res = circularity_test(_read(f["circ"]), "score", ["c", "d"], top=2)
    return res.summary()


def _below(text, f):
    return None if "below the threshold 0.8" in text and "(>= 0.8)" not in text else f"summary: {text[:400]}"


def _metric_ci_bad(f):
    from mixeval.metric_model import MetricModel, metric_ci

    return metric_ci(1.5, 0.2, 100, metric=MetricModel.from_confusion(tp=80, fp=10, fn=5, tn=905))


def _covariate_se(value, f):
    cov = value.get("covariates", {}) if isinstance(value, dict) else {}
    se = (cov.get("length") or {}).get("se") if isinstance(cov.get("length"), dict) else None
    return f"the covariate with no difference has SE {se}" if se == 0 else None


def _ordinal_effect_size(f):
    from mixeval import Study

    table = Study(_read(f["log"]), "rating ~ system + (1|item)", family="ordinal").pairwise(scale="prob").table
    if "effect_size" in table and table["effect_size"].isna().all():
        return "effect_size is NaN on the probability scale"
    return None


def _boundary_spread(f):
    from mixeval import clmm

    return clmm("rating ~ system + (1|item) + (1|rater)", _read(f["ordinal_spread"]), random_thresholds="rater")


def _circ_binary(f):
    from mixeval.validity import circularity_test

    return circularity_test(_read(f["circ"]), "label", ["a", "b", "c"], top=3)


# ---------------------------------------------------------------------------------------------------- the table

PROBES = [
    # ---------------------------------------------------------------- files, as every command reads them
    cli("file-missing", "refuse", "fit", "{missing}", M, words=("no such file", "no_such.csv")),
    cli("file-directory", "refuse", "fit", "{dir}", M, words="is a directory"),
    cli("file-empty", "refuse", "fit", "{empty}", M, words="empty.csv"),
    cli("file-header-only", "refuse", "fit", "{header_only}", M, words="no data rows"),
    cli("file-blank-lines", "refuse", "fit", "{blank_lines}", M, words="blank.csv"),
    cli("file-json", "refuse", "fit", "{json}", M, words="looks like JSON"),
    cli("file-binary", "refuse", "fit", "{binary}", M, words="not a text file"),
    cli("file-xlsx", "refuse", "fit", "{xlsx}", M, words="log.xlsx"),
    cli("file-latin1", "refuse", "fit", "{latin1}", M, words=("not UTF-8",)),
    cli("file-dup-header", "refuse", "fit", "{dup_header}", "score ~ system + (1|item)", words="'score' twice"),
    cli("file-ragged", "refuse", "fit", "{log_ragged}", "score ~ system + (1|item)", words="ragged.csv"),
    cli("file-one-column", "refuse", "fit", "{one_column}", "score ~ system + (1|item)", words="'system'"),
    cli("file-tab", "ok", "fit", "{log_tab}", M),
    cli("file-gz", "ok", "fit", "{log_gz}", M),
    cli("file-parquet", "ok", "fit", "{log_parquet}", M),
    cli("file-bom", "ok", "fit", "{log_bom}", M),
    cli("file-crlf", "ok", "fit", "{log_crlf}", M),
    cli("file-quoted-separators", "ok", "fit", "{quoted}", M),
    cli("file-semicolon-decimal-comma", "ok", "fit", "{log_semi}", M),
    cli("file-missing-bootstrap", "refuse", "bootstrap", "{missing}", words="no such file"),
    cli("file-empty-agreement", "refuse", "agreement", "{empty}", words="empty.csv"),
    cli("file-json-circularity", "refuse", "circularity", "{json}", "--target", "score", words="looks like JSON"),
    cli("file-binary-preferences", "refuse", "preferences", "{binary}", words="not a text file"),
    cli("file-header-only-power", "refuse", "power", "{header_only}", M, "--n", "item=10", words="no data rows"),
    cli("file-dir-meta", "refuse", "meta", "selective", "{dir}", "--confidence", "c", "--correct", "y",
        words="is a directory"),
    cli("file-missing-report", "refuse", "report", "{missing}", "--score", "score", "--system", "system", "--item",
        "item", words="no such file"),
    cli("file-missing-compare-logs", "refuse", "compare-logs", "{missing}", "--metric", "correct",
        words="no_such.csv"),

    # ---------------------------------------------------------------- fit / compare
    cli("fit-ok", "ok", "fit", "{log}", M),
    cli("fit-ml-json", "ok", "fit", "{log}", M, "--ml", "--json"),
    cli("fit-binomial", "ok", "fit", "{log}", "acc ~ system + (1|item)", "--family", "binomial"),
    cli("fit-binomial-bool", "ok", "fit", "{log_bool}", "acc ~ system + (1|item)", "--family", "binomial"),
    cli("fit-poisson", "ok", "fit", "{log_trials}", "k ~ system + (1|item)", "--family", "poisson"),
    cli("fit-ordinal", "ok", "fit", "{log}", "rating ~ system + (1|item)", "--family", "ordinal"),
    cli("fit-binomial-weights", "ok", "fit", "{log_trials}", "p ~ system + (1|item)", "--family", "binomial",
        "--weights", "n"),
    cli("fit-gaussian-01-warns", "warn", "fit", "{log}", "acc ~ system + (1|item)", words="only takes the values 0 and 1"),
    cli("fit-slope", "ok", "fit", "{log_slope}", "score ~ system + x + (1 + x|item)"),
    cli("fit-interaction", "ok", "fit", "{log}", "score ~ system * domain + (1|item)"),
    cli("fit-numeric-system", "ok", "fit", "{log_numeric_system}", M),
    cli("fit-unbalanced", "ok", "fit", "{log_unbalanced}", M),
    cli("fit-duplicated-rows", "ok", "fit", "{log_dup_rows}", M),
    cli("fit-huge-scale", "ok", "fit", "{log_huge}", M),
    cli("fit-tiny-scale", "ok", "fit", "{log_tiny}", M),
    cli("fit-text-items", "ok", "fit", "{log_text_items}", M),
    cli("fit-nested", "ok", "fit", "{log}", "score ~ system + (1|domain/item)"),
    cli("fit-nan-score", "refuse", "fit", "{log_nan}", M, words=("'score'", "missing")),
    cli("fit-inf-score", "refuse", "fit", "{log_inf}", M, words=("score", "infinite")),
    cli("fit-text-score", "refuse", "fit", "{log_text_score}", M, words=("'score'", "'error' (row 8)")),
    cli("fit-na-score", "refuse", "fit", "{log_na_score}", M, words=("'score'", "missing")),
    cli("fit-missing-column", "refuse", "fit", "{log}", "score ~ system + (1|judge)", words="'judge'"),
    cli("fit-missing-response", "refuse", "fit", "{log}", "bleu ~ system + (1|item)", words="'bleu'"),
    cli("fit-unbalanced-parens", "refuse", "fit", "{log}", "score ~ system + (1|item", words="parenthes"),
    cli("fit-no-tilde", "refuse", "fit", "{log}", "score system (1|item)", words="~"),
    cli("fit-no-random", "ok", "fit", "{log}", "score ~ system", check=_contains("Linear model")),
    cli("fit-levels-as-rows", "refuse", "fit", "{log_items_as_rows}", "score ~ system + (1|item)",
        words=("'item'", "levels")),
    cli("fit-constant-group", "refuse", "fit", "{log}", "score ~ system + (1|const)", words="'const'"),
    cli("fit-constant-response", "refuse", "fit", "{log}", "const ~ system + (1|item)", words=("'const'", "constant")),
    cli("fit-space-name", "refuse", "fit", "{log_spaces}", "my score ~ system + (1|item)", words="backticks"),
    cli("fit-space-name-backticks", "ok", "fit", "{log_spaces}", "`my score` ~ system + (1|item)"),
    cli("fit-binomial-on-score", "refuse", "fit", "{log}", "score ~ system + (1|item)", "--family", "binomial",
        words="'score'"),
    cli("fit-poisson-negative", "refuse", "fit", "{log}", "score ~ system + (1|item)", "--family", "poisson",
        words="'score'"),
    cli("fit-ordinal-continuous", "refuse", "fit", "{log}", "score ~ system + (1|item)", "--family", "ordinal",
        words="'score'"),
    cli("fit-weights-missing-column", "refuse", "fit", "{log}", M, "--family", "binomial", "--weights", "trials",
        words="trials"),
    cli("fit-link-without-family", "refuse", "fit", "{log}", M, "--link", "probit", words="--family"),
    cli("fit-nagq-zero", "ok", "fit", "{log}", "acc ~ system + (1|item)", "--family", "binomial", "--nagq", "0"),
    cli("fit-nagq-negative", "refuse", "fit", "{log}", "acc ~ system + (1|item)", "--family", "binomial", "--nagq",
        "-1", words="nagq"),
    cli("fit-family-bogus", "refuse", "fit", "{log}", M, "--family", "gamma", words="--family"),
    cli("fit-single-level-factor", "refuse", "fit", "{log_one_system}", M, words="'system'"),
    cli("fit-log-negative", "refuse", "fit", "{log}", "log(score) ~ system + (1|item)", words="score"),
    cli("compare-ok", "ok", "compare", "{log}", M, "score ~ 1 + (1|item) + (1|rater)"),
    cli("compare-json", "ok", "compare", "{log}", M, "score ~ 1 + (1|item) + (1|rater)", "--json"),
    cli("compare-not-nested", "refuse", "compare", "{log}", "score ~ system + (1|item)", "score ~ domain + (1|rater)",
        words="nested"),
    cli("compare-same", "refuse", "compare", "{log}", M, M, words="same"),
    cli("compare-other-response", "refuse", "compare", "{log}", M, "acc ~ 1 + (1|item) + (1|rater)",
        words="response"),
    cli("compare-binomial", "ok", "compare", "{log}", "acc ~ system + (1|item)", "acc ~ 1 + (1|item)", "--family",
        "binomial"),

    # ---------------------------------------------------------------- significance
    cli("sig-ok", "ok", "significance", "{log}", M),
    cli("sig-json", "ok", "significance", "{log}", M, "--json"),
    cli("sig-three-systems", "ok", "significance", "{log3}", M, "--json"),
    cli("sig-kr", "ok", "significance", "{log}", M, "--df", "kenward-roger"),
    cli("sig-asymptotic", "ok", "significance", "{log3}", M, "--df", "asymptotic", "--adjust", "holm"),
    cli("sig-control", "ok", "significance", "{log3}", M, "--control", "A"),
    cli("sig-by-numeric", "ok", "significance", "{log}", M, "--by", "length"),
    cli("sig-by-cuts", "ok", "significance", "{log}", M, "--by", "length", "--cuts", "30,55"),
    cli("sig-by-cuts-labels", "ok", "significance", "{log}", M, "--by", "length", "--cuts", "30,55", "--labels",
        "short,mid,long"),
    cli("sig-by-text", "ok", "significance", "{log}", M, "--by", "domain"),
    cli("sig-binomial", "ok", "significance", "{log}", "acc ~ system + (1|item)", "--family", "binomial"),
    cli("sig-ordinal", "ok", "significance", "{log}", "rating ~ system + (1|item)", "--family", "ordinal"),
    cli("sig-level", "ok", "significance", "{log}", M, "--level", "0.9"),
    cli("sig-system-random", "refuse", "significance", "{log}", M, "--system", "rater", words=("'rater'", "random",
                                                                                                 "'system'")),
    cli("sig-system-item", "refuse", "significance", "{log}", M, "--system", "item", words=("'item'", "random")),
    cli("sig-system-not-in-formula", "refuse", "significance", "{log}", M, "--system", "domain",
        words=("'domain'", "fixed")),
    cli("sig-system-missing", "refuse", "significance", "{log}", M, "--system", "model", words="'model'"),
    cli("sig-no-system", "refuse", "significance", "{log}", "score ~ 1 + (1|item)", words="system"),
    cli("sig-by-missing", "refuse", "significance", "{log}", M, "--by", "nope", words="'nope'"),
    cli("sig-cuts-without-by", "refuse", "significance", "{log}", M, "--cuts", "30", words="--by"),
    cli("sig-labels-without-cuts", "refuse", "significance", "{log}", M, "--by", "length", "--labels", "a,b",
        words="--labels"),
    cli("sig-scale-gaussian", "refuse", "significance", "{log}", M, "--scale", "ratio", words="--scale"),
    cli("sig-cuts-text", "refuse", "significance", "{log}", M, "--by", "length", "--cuts", "a,b", words="--cuts"),
    cli("sig-labels-count", "refuse", "significance", "{log}", M, "--by", "length", "--cuts", "30", "--labels",
        "a,b,c", words="labels"),
    cli("sig-by-const", "refuse", "significance", "{log}", M, "--by", "const", words="single value"),
    cli("sig-control-unknown", "refuse", "significance", "{log3}", M, "--control", "Z", words="'Z'"),
    cli("sig-adjust-bogus", "refuse", "significance", "{log}", M, "--adjust", "magic", words="--adjust"),
    cli("sig-df-bogus", "refuse", "significance", "{log}", M, "--df", "residual", words="--df"),
    cli("sig-level-percent", "refuse", "significance", "{log}", M, "--level", "95", words="--level"),
    cli("sig-one-system", "refuse", "significance", "{log_one_system}", M, words="'system'"),
    cli("sig-nan-score", "refuse", "significance", "{log_nan}", M, words=("'score'", "missing")),
    cli("sig-ordinal-scale", "ok", "significance", "{log}", "rating ~ system + (1|item)", "--family", "ordinal",
        "--scale", "prob"),
    cli("sig-ordinal-levels", "ok", "significance", "{log}", "label ~ system + (1|item)", "--family", "ordinal",
        "--levels", "bad,poor,fair,good,great"),
    cli("sig-weighted", "ok", "significance", "{log_trials}", "p ~ system + (1|item)", "--weights", "n"),
    cli("sig-case-levels", "ok", "significance", "{log_case}", M),

    # ---------------------------------------------------------------- reliability
    cli("rel-ok", "ok", "reliability", "{log}", RAND),
    cli("rel-json", "ok", "reliability", "{log}", RAND, "--json"),
    cli("rel-n", "ok", "reliability", "{log}", RAND, "--n", "rater=3"),
    cli("rel-grid", "ok", "reliability", "{log}", RAND, "--grid", "rater=1:4", "--target", "0.7"),
    cli("rel-ci", "ok", "reliability", "{log}", RAND, "--ci", *SIM),
    cli("rel-relative", "ok", "reliability", "{log}", RAND, "--kind", "relative"),
    cli("rel-with-system", "ok", "reliability", "{log}", M),
    cli("rel-binomial", "ok", "reliability", "{log}", "acc ~ (1|item) + (1|rater)", "--family", "binomial"),
    cli("rel-long-ratings", "ok", "reliability", "{long_ratings}", "rating ~ (1|item) + (1|rater)"),
    cli("rel-nsim-without-ci", "refuse", "reliability", "{log}", RAND, "--nsim", "20", words="--ci"),
    cli("rel-seed-without-ci", "refuse", "reliability", "{log}", RAND, "--seed", "1", words="--ci"),
    cli("rel-level-without-ci", "refuse", "reliability", "{log}", RAND, "--level", "0.9", words="--ci"),
    cli("rel-n-unknown-facet", "refuse", "reliability", "{log}", RAND, "--n", "judge=2", words="judge"),
    cli("rel-n-zero", "refuse", "reliability", "{log}", RAND, "--n", "rater=0", words="rater=0"),
    cli("rel-grid-reversed", "refuse", "reliability", "{log}", RAND, "--grid", "rater=5:2", words="LO <= HI"),
    cli("rel-target-above-one", "refuse", "reliability", "{log}", RAND, "--target", "1.5", words="--target"),
    cli("rel-item-not-random", "refuse", "reliability", "{log}", M, "--item", "system", words="--item system"),
    cli("rel-constant", "refuse", "reliability", "{log}", "const ~ (1|item) + (1|rater)", words="constant"),
    cli("rel-text-response", "refuse", "reliability", "{log_text_score}", RAND, words=("'score'", "'error'")),
    cli("rel-constant-rater", "warn", "reliability", "{constant_rater}", "rating ~ (1|item) + (1|rater)",
        words="boundary"),
    cli("rel-missing-grouping", "refuse", "reliability", "{log}", "score ~ (1|item) + (1|judge)", words="'judge'"),

    # ---------------------------------------------------------------- confint
    cli("ci-profile", "ok", "confint", "{log}", M),
    cli("ci-wald-json", "ok", "confint", "{log}", M, "--method", "wald", "--json"),
    cli("ci-boot", "ok", "confint", "{log}", M, "--method", "boot", *SIM),
    cli("ci-binomial", "ok", "confint", "{log}", "acc ~ system + (1|item)", "--family", "binomial", "--method", "wald"),
    cli("ci-ordinal", "ok", "confint", "{log}", "rating ~ system + (1|item)", "--family", "ordinal", "--method",
        "wald"),
    cli("ci-nsim-zero", "refuse", "confint", "{log}", M, "--method", "boot", "--nsim", "0", words="--nsim"),
    cli("ci-level-percent", "refuse", "confint", "{log}", M, "--level", "95", words="--level"),
    cli("ci-jobs-zero", "refuse", "confint", "{log}", M, "--method", "boot", "--jobs", "0", words="--jobs"),
    cli("ci-nsim-with-profile", "refuse", "confint", "{log}", M, "--nsim", "50", words="--nsim"),
    cli("ci-seed-with-wald", "refuse", "confint", "{log}", M, "--method", "wald", "--seed", "3", words="--seed"),
    cli("ci-method-bogus", "refuse", "confint", "{log}", M, "--method", "bayes", words="--method"),

    # ---------------------------------------------------------------- power
    cli("power-ok", "ok", "power", "{log}", M, "--n", "item=10", *SIM),
    cli("power-json", "ok", "power", "{log}", M, "--n", "item=10,20", *SIM, "--json", check=_count("rows", 2)),
    cli("power-pairwise", "ok", "power", "{log}", M, "--n", "item=10", "--test", "pairwise", "--pair", "A,B", *SIM),
    cli("power-pairwise-default", "ok", "power", "{log3}", M, "--n", "item=10", "--test", "pairwise", *SIM),
    cli("power-delta", "ok", "power", "{log}", M, "--n", "item=10", "--delta", "0.5", *SIM),
    cli("power-pair-delta-glrt", "ok", "power", "{log3}", M, "--n", "item=10", "--pair", "A,C", "--delta", "0.5",
        *SIM),
    cli("power-reversed-pair", "ok", "power", "{log}", M, "--n", "item=10", "--test", "pairwise", "--pair", "B,A",
        *SIM),
    cli("power-two-facets", "ok", "power", "{log}", M, "--n", "item=10", "rater=3", *SIM),
    cli("power-replicates", "ok", "power", "{log}", M, "--n", "item=10", "replicates=2", *SIM),
    cli("power-item-column-name", "ok", "power", "{log}", "score ~ system + (1|item) + (1|rater)", "--n", "rater=4",
        *SIM),
    cli("power-pair-same", "refuse", "power", "{log}", M, "--n", "item=10", "--pair", "A,A", *SIM,
        words=("--pair", "itself")),
    cli("power-pair-same-pairwise", "refuse", "power", "{log}", M, "--n", "item=10", "--test", "pairwise", "--pair",
        "A,A", *SIM, words=("--pair", "itself")),
    cli("power-pair-same-spaces", "refuse", "power", "{log}", M, "--n", "item=10", "--test", "pairwise", "--pair",
        "A, A", *SIM, words="itself"),
    cli("power-pair-glrt-no-delta", "refuse", "power", "{log}", M, "--n", "item=10", "--pair", "A,B", *SIM,
        words=("--pair", "--test pairwise", "--delta")),
    cli("power-pair-unknown", "refuse", "power", "{log}", M, "--n", "item=10", "--test", "pairwise", "--pair", "A,Z",
        *SIM, words="'Z'"),
    cli("power-pair-one", "refuse", "power", "{log}", M, "--n", "item=10", "--test", "pairwise", "--pair", "A", *SIM,
        words="--pair"),
    cli("power-pair-three", "refuse", "power", "{log}", M, "--n", "item=10", "--test", "pairwise", "--pair", "A,B,C",
        *SIM, words="--pair"),
    cli("power-pair-empty", "refuse", "power", "{log}", M, "--n", "item=10", "--test", "pairwise", "--pair", "A,",
        *SIM, words="--pair"),
    cli("power-system-random", "refuse", "power", "{log}", M, "--n", "item=10", "--system", "rater", *SIM,
        words=("'rater'", "random")),
    cli("power-item-fixed", "refuse", "power", "{log}", M, "--n", "item=10", "--item", "system", *SIM,
        words="--item system"),
    cli("power-unknown-facet", "refuse", "power", "{log}", M, "--n", "judge=10", *SIM, words="judge"),
    cli("power-one-level", "refuse", "power", "{log}", M, "--n", "item=1", *SIM, words="item=1"),
    cli("power-n-text", "refuse", "power", "{log}", M, "--n", "item=many", *SIM, words="--n"),
    cli("power-alpha", "refuse", "power", "{log}", M, "--n", "item=10", "--alpha", "0", *SIM, words="--alpha"),
    cli("power-nsim-zero", "refuse", "power", "{log}", M, "--n", "item=10", "--nsim", "0", words="--nsim"),
    cli("power-delta-nan", "refuse", "power", "{log}", M, "--n", "item=10", "--delta", "nan", *SIM, words="--delta"),
    cli("power-no-system", "refuse", "power", "{log}", "score ~ 1 + (1|item)", "--n", "item=10", *SIM,
        words="system"),
    cli("power-slopes", "ok", "power", "{log}", "score ~ system + (1 + system|item)", "--n", "item=10", *SIM),
    cli("power-nan-score", "refuse", "power", "{log_nan}", M, "--n", "item=10", *SIM, words=("'score'", "missing")),
    cli("power-test-bogus", "refuse", "power", "{log}", M, "--n", "item=10", "--test", "t", *SIM, words="--test"),
    cli("power-covariate", "refuse", "power", "{log}", "score ~ system + length + (1|item)", "--n", "item=10", *SIM,
        words="length"),

    # ---------------------------------------------------------------- bootstrap / permutation
    cli("boot-two", "ok", "bootstrap", "{wide2}", *BOOT, "--json", check=_mean_difference("{wide2}", "A", "B")),
    cli("boot-three", "ok", "bootstrap", "{wide}", *BOOT, "--json", check=_count("comparisons", 3)),
    cli("boot-baseline", "ok", "bootstrap", "{wide}", "--baseline", "A", *BOOT, "--json", check=_count("comparisons", 2)),
    cli("boot-systems", "ok", "bootstrap", "{wide}", "--systems", "A", "C", *BOOT),
    cli("boot-bca", "ok", "bootstrap", "{wide2}", "--ci", "bca", *BOOT),
    cli("boot-bca-three", "ok", "bootstrap", "{wide}", "--ci", "bca", *BOOT),
    cli("boot-level", "ok", "bootstrap", "{wide2}", "--level", "0.9", *BOOT),
    cli("boot-greater", "ok", "bootstrap", "{wide2}", "--alternative", "greater", *BOOT),
    cli("boot-long", "ok", "bootstrap", "{wide_long}", "--item", "item", "--system", "system", "--score", "score",
        *BOOT, "--json", check=_count("comparisons", 3)),
    cli("boot-id-flag", "ok", "bootstrap", "{wide_id}", "--id", "id", *BOOT, "--json",
        check=_mean_difference("{wide2}", "A", "B")),
    cli("boot-text-id", "ok", "bootstrap", "{wide_text_id}", *BOOT, "--json", check=_count("comparisons", 3)),
    cli("boot-ranks", "ok", "bootstrap", "{wide_ranks}", *BOOT),
    cli("boot-binary", "ok", "bootstrap", "{wide_binary}", *BOOT),
    cli("boot-identical", "ok", "bootstrap", "{wide_same}", *BOOT),
    cli("boot-constant-difference", "ok", "bootstrap", "{wide_shift}", *BOOT),
    cli("boot-small", "ok", "bootstrap", "{wide_small}", *BOOT),
    cli("boot-adjust-none", "ok", "bootstrap", "{wide}", "--adjust", "none", *BOOT),
    cli("boot-numeric-id", "refuse", "bootstrap", "{wide_id}", *BOOT, words=("'id'", "--id", "--systems")),
    cli("boot-doc-id", "refuse", "bootstrap", "{wide_doc_id}", *BOOT, words=("'doc_id'", "--id")),
    cli("boot-counter", "refuse", "bootstrap", "{wide_counter}", *BOOT, words=("'n'", "--id")),
    cli("boot-saved-index", "refuse", "bootstrap", "{wide_unnamed}", *BOOT, words=("Unnamed: 0", "--id")),
    cli("boot-one-system", "refuse", "bootstrap", "{wide_one}", *BOOT, words="two systems"),
    cli("boot-nan", "refuse", "bootstrap", "{wide_nan}", *BOOT, words=("'B'", "NaN")),
    cli("boot-text-score", "refuse", "bootstrap", "{wide_text}", *BOOT, words=("'B'", "err")),
    cli("boot-single-item", "refuse", "bootstrap", "{wide_single_row}", *BOOT, words="item"),
    cli("boot-systems-unknown", "refuse", "bootstrap", "{wide}", "--systems", "A", "Z", *BOOT, words="'Z'"),
    cli("boot-baseline-unknown", "refuse", "bootstrap", "{wide}", "--baseline", "Z", *BOOT, words="'Z'"),
    cli("boot-id-unknown", "refuse", "bootstrap", "{wide_id}", "--id", "doc", *BOOT, words=("--id", "'doc'")),
    cli("boot-id-with-long", "refuse", "bootstrap", "{wide_long}", "--id", "item", "--item", "item", "--system",
        "system", "--score", "score", *BOOT, words="--id"),
    cli("boot-partial-long", "refuse", "bootstrap", "{wide_long}", "--item", "item", *BOOT, words="--score"),
    cli("boot-long-without-flags", "refuse", "bootstrap", "{wide_long}", *BOOT, words="--item"),
    cli("boot-long-duplicates", "refuse", "bootstrap", "{log}", "--item", "item", "--system", "system", "--score",
        "score", *BOOT, words="duplicate"),
    cli("boot-level-zero", "refuse", "bootstrap", "{wide2}", "--level", "0", *BOOT, words="--level"),
    cli("boot-resamples-zero", "refuse", "bootstrap", "{wide2}", "--n-resamples", "0", words="--n-resamples"),
    cli("boot-seed-negative", "refuse", "bootstrap", "{wide2}", "--seed", "-1", words="--seed"),
    cli("boot-exact", "refuse", "bootstrap", "{wide2}", "--exact", *BOOT, words="--exact"),
    cli("boot-adjust-bogus", "refuse", "bootstrap", "{wide}", "--adjust", "magic", *BOOT, words="magic"),
    cli("perm-two", "ok", "permutation", "{wide2}", *BOOT, "--json", check=_mean_difference("{wide2}", "A", "B")),
    cli("perm-three", "ok", "permutation", "{wide}", *BOOT, "--json", check=_count("comparisons", 3)),
    cli("perm-baseline-json", "ok", "permutation", "{wide}", "--baseline", "B", *BOOT, "--json",
        check=_count("comparisons", 2)),
    cli("perm-exact", "ok", "permutation", "{wide_small}", "--exact", "--json"),
    cli("perm-id-flag", "ok", "permutation", "{wide_id}", "--id", "id", *BOOT, "--json",
        check=_mean_difference("{wide2}", "A", "B")),
    cli("perm-long", "ok", "permutation", "{wide_long}", "--item", "item", "--system", "system", "--score", "score",
        *BOOT),
    cli("perm-identical", "ok", "permutation", "{wide_same}", *BOOT),
    cli("perm-numeric-id", "refuse", "permutation", "{wide_id}", *BOOT, words=("'id'", "--id")),
    cli("perm-exact-resamples", "refuse", "permutation", "{wide_small}", "--exact", "--n-resamples", "100",
        words=("--exact", "--n-resamples")),
    cli("perm-exact-seed", "refuse", "permutation", "{wide_small}", "--exact", "--seed", "2", words=("--exact", "--seed")),
    cli("perm-exact-many-items", "refuse", "permutation", "{wide2}", "--exact", words=("--exact", "40 items")),
    cli("perm-exact-three", "refuse", "permutation", "{wide}", "--exact", words="--exact"),
    cli("perm-ci", "refuse", "permutation", "{wide2}", "--ci", "bca", *BOOT, words="--ci"),
    cli("perm-text-score", "refuse", "permutation", "{wide_text}", *BOOT, words=("'B'", "err")),

    # ---------------------------------------------------------------- agreement
    cli("agr-three", "ok", "agreement", "{ratings}", "--level", "0", "--json",
        check=_alpha_as_krippendorff("{ratings}", "nominal")),
    cli("agr-interval", "ok", "agreement", "{ratings}", "--measurement", "interval", "--level", "0", "--json",
        check=_alpha_as_krippendorff("{ratings}", "interval")),
    cli("agr-ordinal", "ok", "agreement", "{ratings}", "--measurement", "ordinal", "--level", "0", "--json",
        check=_alpha_as_krippendorff("{ratings}", "ordinal")),
    cli("agr-ratio", "ok", "agreement", "{ratings}", "--measurement", "ratio", *BOOT),
    cli("agr-two", "ok", "agreement", "{ratings2}", *BOOT),
    cli("agr-missing-cells", "ok", "agreement", "{ratings_missing}", "--measurement", "interval", "--level", "0",
        "--json", check=_alpha_as_krippendorff("{ratings_missing}", "interval")),
    cli("agr-labels", "ok", "agreement", "{ratings_labels}", *BOOT),
    cli("agr-long", "ok", "agreement", "{ratings_long}", "--unit", "unit", "--rater", "rater", "--value", "value",
        *BOOT),
    cli("agr-id-flag", "ok", "agreement", "{ratings_id}", "--id", "id", "--level", "0", "--json",
        check=_alpha_as_krippendorff("{ratings}", "nominal")),
    cli("agr-text-id-flag", "ok", "agreement", "{ratings_unit}", "--id", "unit", *BOOT),
    cli("agr-raters", "ok", "agreement", "{ratings_id}", "--raters", "r1", "r2", *BOOT),
    cli("agr-rankings", "ok", "agreement", "{ratings_ranks}", "--measurement", "ordinal", *BOOT),
    cli("agr-negative-interval", "ok", "agreement", "{ratings_negative}", "--measurement", "interval", *BOOT),
    cli("agr-constant-one-rater", "ok", "agreement", "{ratings_const_one}", "--measurement", "interval", *BOOT),
    cli("agr-constant-one-rater-two", "ok", "agreement", "{ratings_const_one}", "--raters", "r1", "r2",
        "--measurement", "interval", *BOOT),
    cli("agr-constant", "warn", "agreement", "{ratings_const}", *BOOT, words=("undefined", "--if-undefined zero")),
    cli("agr-constant-zero", "ok", "agreement", "{ratings_const}", "--if-undefined", "zero", *BOOT),
    cli("agr-numeric-id", "refuse", "agreement", "{ratings_id}", *BOOT, words=("'id'", "--id", "--raters")),
    cli("agr-text-id", "refuse", "agreement", "{ratings_unit}", *BOOT, words=("'unit'", "--id")),
    cli("agr-all-missing", "refuse", "agreement", "{ratings_all_missing}", *BOOT, words="no ratings"),
    cli("agr-one-rater", "refuse", "agreement", "{ratings_one_rater}", *BOOT, words="two"),
    cli("agr-labels-interval", "refuse", "agreement", "{ratings_labels}", "--measurement", "interval", *BOOT,
        words=("numeric", "nominal")),
    cli("agr-ratio-negative", "refuse", "agreement", "{ratings_negative}", "--measurement", "ratio", *BOOT,
        words="non-negative"),
    cli("agr-id-unknown", "refuse", "agreement", "{ratings}", "--id", "id", *BOOT, words=("--id", "'id'")),
    cli("agr-raters-unknown", "refuse", "agreement", "{ratings}", "--raters", "r1", "r9", *BOOT, words="r9"),
    cli("agr-partial-long", "refuse", "agreement", "{ratings_long}", "--unit", "unit", *BOOT, words="rater"),
    cli("agr-long-duplicates", "refuse", "agreement", "{ratings_long_dup}", "--unit", "unit", "--rater", "rater",
        "--value", "value", *BOOT, words="duplicate"),
    cli("agr-id-with-long", "refuse", "agreement", "{ratings_long}", "--id", "unit", "--unit", "unit", "--rater",
        "rater", "--value", "value", *BOOT, words="--id"),
    cli("agr-level-zero-seed", "refuse", "agreement", "{ratings}", "--level", "0", "--seed", "1",
        words=("--level 0", "--seed")),
    cli("agr-level-zero-resamples", "refuse", "agreement", "{ratings}", "--level", "0", "--n-resamples", "50",
        words=("--level 0", "--n-resamples")),
    cli("agr-undefined-raise", "refuse", "agreement", "{ratings_const}", "--if-undefined", "raise", *BOOT,
        words="undefined"),
    cli("agr-measurement-bogus", "refuse", "agreement", "{ratings}", "--measurement", "likert", words="--measurement"),

    # ---------------------------------------------------------------- circularity
    cli("circ-ok", "ok", "circularity", "{circ}", "--target", "score", "--top", "3"),
    cli("circ-features", "ok", "circularity", "{circ}", "--target", "score", "--features", "a,b,c"),
    cli("circ-json", "ok", "circularity", "{circ}", "--target", "score", "--top", "2", "--json"),
    cli("circ-binomial", "ok", "circularity", "{circ}", "--target", "label", "--family", "binomial", "--top", "3"),
    cli("circ-reml", "ok", "circularity", "{circ}", "--target", "score", "--top", "2", "--method", "REML"),
    cli("circ-exclude", "ok", "circularity", "{circ}", "--target", "score", "--top", "2", "--exclude", "a,label"),
    cli("circ-no-k-check", "ok", "circularity", "{circ}", "--target", "score", "--top", "2", "--no-k-check"),
    cli("circ-not-met", "ok", "circularity", "{circ}", "--target", "score", "--features", "c,d",
        check=_lacks("(>= 0.8)")),
    cli("circ-binary-gaussian", "warn", "circularity", "{circ}", "--target", "label", "--top", "3",
        words="--family binomial"),
    cli("circ-target-missing", "refuse", "circularity", "{circ}", "--target", "nope", words="'nope'"),
    cli("circ-target-text", "refuse", "circularity", "{circ}", "--target", "text", words="'text'"),
    cli("circ-target-constant", "refuse", "circularity", "{circ}", "--target", "flat", words=("'flat'", "constant")),
    cli("circ-labels-binomial", "refuse", "circularity", "{circ_labels}", "--target", "label", "--family", "binomial",
        words="'label'"),
    cli("circ-counts-binomial", "refuse", "circularity", "{circ_counts}", "--target", "label", "--family", "binomial",
        words="0/1"),
    cli("circ-small", "refuse", "circularity", "{circ_small}", "--target", "score", words="rows"),
    cli("circ-nan", "refuse", "circularity", "{circ_nan}", "--target", "score", "--features", "a,b", words="'b'"),
    cli("circ-feature-missing", "refuse", "circularity", "{circ}", "--target", "score", "--features", "a,zz",
        words="'zz'"),
    cli("circ-feature-is-target", "refuse", "circularity", "{circ}", "--target", "score", "--features", "a,score",
        words="'score'"),
    cli("circ-top-zero", "refuse", "circularity", "{circ}", "--target", "score", "--top", "0", words="--top"),
    cli("circ-k-two", "refuse", "circularity", "{circ}", "--target", "score", "--k", "2", words="--k"),
    cli("circ-threshold", "refuse", "circularity", "{circ}", "--target", "score", "--d2-threshold", "1.5",
        words="d2"),
    cli("circ-exclude-all", "refuse", "circularity", "{circ}", "--target", "score", "--exclude", "a,b,c,d,label,flat",
        words="feature"),
    cli("circ-k-max-below-k", "refuse", "circularity", "{circ}", "--target", "score", "--k", "12", "--k-max", "6",
        words=("--k-max", "--k")),
    cli("circ-k-max-no-check", "refuse", "circularity", "{circ}", "--target", "score", "--no-k-check", "--k-max", "20",
        words=("--k-max", "--no-k-check")),

    # ---------------------------------------------------------------- preferences
    cli("pref-ok", "ok", "preferences", "{votes}", "--seed", "1"),
    cli("pref-json", "ok", "preferences", "{votes}", "--seed", "1", "--json"),
    cli("pref-davidson", "ok", "preferences", "{votes}", "--ties", "davidson", "--seed", "1"),
    cli("pref-ordinal", "ok", "preferences", "{votes}", "--ties", "ordinal", "--seed", "1"),
    cli("pref-position", "ok", "preferences", "{votes}", "--position", "fixed", "--seed", "1"),
    cli("pref-judge-random", "ok", "preferences", "{votes}", "--judge", "judge", "--position", "random", "--seed", "1"),
    cli("pref-counts", "ok", "preferences", "{votes_counts}", "--count", "n", "--seed", "1"),
    cli("pref-reference", "ok", "preferences", "{votes}", "--reference", "m2", "--seed", "1"),
    cli("pref-bad-winner", "refuse", "preferences", "{votes_bad_winner}", words="draw?"),
    cli("pref-self-vote", "refuse", "preferences", "{votes_self}", words="itself"),
    cli("pref-judge-missing", "refuse", "preferences", "{votes}", "--judge", "rater", words="'rater'"),
    cli("pref-position-random-no-judge", "refuse", "preferences", "{votes}", "--position", "random", words="judge"),
    cli("pref-count-missing", "refuse", "preferences", "{votes}", "--count", "k", words="'k'"),
    cli("pref-reference-unknown", "refuse", "preferences", "{votes}", "--reference", "zz", words="--reference zz"),
    cli("pref-zero-counts", "refuse", "preferences", "{votes_zero_counts}", "--count", "n", words=("--count n", "0")),
    cli("pref-disconnected", "refuse", "preferences", "{votes_disconnected}", words="connected"),
    cli("pref-names-as-winner", "ok", "preferences", "{votes_names}", "--position", "fixed", "--json",
        check=lambda v, f: None if isinstance(v, dict) and abs(v["abilities"]["A"] - v["abilities"]["B"]
                                                             - np.log(33 / 7)) < 0.3 else f"abilities {v.get('abilities')}"),
    cli("pref-ties-only", "refuse", "preferences", "{votes_ties_only}", "--ties", "davidson", words="tie"),
    cli("pref-missing-columns", "refuse", "preferences", "{log}", words="model_a"),

    # ---------------------------------------------------------------- meta
    cli("meta-selective", "ok", *ANSWERS),
    cli("meta-selective-json", "ok", *ANSWERS, "--json"),
    cli("meta-selective-weights", "ok", *ANSWERS, "--weights", "0.5,0.25,0.25"),
    cli("meta-selective-text", "refuse", "meta", "selective", "{answers_text}", "--confidence", "conf", "--correct",
        "ok", words="'ok'"),
    cli("meta-selective-missing", "refuse", "meta", "selective", "{answers}", "--confidence", "p", "--correct", "ok",
        words="'p'"),
    cli("meta-selective-weights-sum", "refuse", *ANSWERS, "--weights", "0.5,0.5,0.5", words="weights"),
    cli("meta-selective-tolerance", "refuse", *ANSWERS, "--tolerance", "-1", words="tolerance"),
    cli("meta-local", "ok", *LOCAL),
    cli("meta-local-json", "ok", *LOCAL, "--lower-is-better", "wer", "--json"),
    cli("meta-local-bootstrap", "ok", *LOCAL, "--ci", "bootstrap", "--n-resamples", "50"),
    cli("meta-local-nan", "refuse", "meta", "local", "{local_nan}", "--context", "context", "--subset", "subset",
        "--metric", "metric", "--score", "score", "--perturbed", "perturbed", words="'score'"),
    cli("meta-local-missing", "refuse", "meta", "local", "{local}", "--context", "ctx", "--subset", "subset",
        "--metric", "metric", "--score", "score", "--perturbed", "perturbed", words="'ctx'"),
    cli("meta-local-lower-unknown", "refuse", *LOCAL, "--lower-is-better", "ter", words="ter"),
    cli("meta-local-resamples", "ok", *LOCAL, "--n-resamples", "50", "--seed", "3"),

    # ---------------------------------------------------------------- metric-ci
    cli("mci-ok", "ok", *MCI, "--precision", "0.9", "--for", "0.1"),
    cli("mci-json", "ok", *MCI, "--precision", "0.9", "--for", "0.1", "--json"),
    cli("mci-confusion", "ok", *MCI, "--confusion", "80,10,5,905"),
    cli("mci-n-treatment", "ok", *MCI, "--n-treatment", "800", "--precision", "0.9", "--for", "0.1"),
    cli("mci-p-above-one", "refuse", "metric-ci", "--p-control", "1.5", "--p-treatment", "0.2", "--n", "500",
        "--precision", "0.9", "--for", "0.1", words="p_control"),
    cli("mci-n-zero", "refuse", "metric-ci", "--p-control", "0.1", "--p-treatment", "0.2", "--n", "0", "--precision",
        "0.9", "--for", "0.1", words="n_control"),
    cli("mci-no-metric-model", "refuse", *MCI, words=("--precision", "--confusion")),
    cli("mci-both", "refuse", *MCI, "--precision", "0.9", "--for", "0.1", "--confusion", "80,10,5,905",
        words="--confusion"),
    cli("mci-confusion-three", "refuse", *MCI, "--confusion", "80,10,5", words="--confusion"),
    cli("mci-level", "refuse", *MCI, "--precision", "0.9", "--for", "0.1", "--level", "1", words="--level"),

    # ---------------------------------------------------------------- reproduce, report, demo
    cli("repro-list", "ok", "reproduce", "list"),
    cli("repro-table", "ok", "reproduce", "goyal-table-1", "--json"),
    cli("repro-unknown", "refuse", "reproduce", "table-9.9", words="table-9.9"),
    cli("repro-no-data", "refuse", "reproduce", "table-3.1", "--data", "{missing}", words="no_such.csv"),
    cli("report-ok", "ok", "report", "{log}", "--score", "score", "--system", "system", "--item", "item", "--facet",
        "rater", "--out", "{dir}/r1.html"),
    cli("report-json", "ok", "report", "{log}", "--score", "score", "--system", "system", "--item", "item", "--json",
        "--out", "{dir}/r2.html"),
    cli("report-by", "ok", "report", "{log}", "--score", "score", "--system", "system", "--item", "item", "--by",
        "length", "--cuts", "30,55", "--out", "{dir}/r3.html"),
    cli("report-by-text", "ok", "report", "{log}", "--score", "score", "--system", "system", "--item", "item", "--by",
        "domain", "--out", "{dir}/r4.html"),
    cli("report-binomial", "ok", "report", "{log}", "--score", "acc", "--system", "system", "--item", "item",
        "--family", "binomial", "--out", "{dir}/r5.html"),
    cli("report-facet-missing", "refuse", "report", "{log}", "--score", "score", "--system", "system", "--item",
        "item", "--facet", "judge", "--out", "{dir}/r6.html", words="'judge'"),
    cli("report-cuts-without-by", "refuse", "report", "{log}", "--score", "score", "--system", "system", "--item",
        "item", "--cuts", "30", "--out", "{dir}/r7.html", words="--by"),
    cli("report-labels-without-cuts", "refuse", "report", "{log}", "--score", "score", "--system", "system", "--item",
        "item", "--by", "length", "--labels", "a,b", "--out", "{dir}/r8.html", words="--labels"),
    cli("report-system-random", "refuse", "report", "{log}", "--score", "score", "--system", "rater", "--item",
        "item", "--facet", "rater", "--out", "{dir}/r9.html", words=("'rater'", "numbers")),
    cli("report-one-system", "refuse", "report", "{log_one_system}", "--score", "score", "--system", "system",
        "--item", "item", "--out", "{dir}/r10.html", words="'system'"),
    cli("report-text-score", "refuse", "report", "{log_text_score}", "--score", "score", "--system", "system",
        "--item", "item", "--out", "{dir}/r11.html", words=("'score'", "'error'")),
    cli("demo-json", "ok", "demo", "--json", "--out", "{dir}/demo.html"),

    # ---------------------------------------------------------------- compare-logs
    cli("logs-csv", "ok", "compare-logs", "{hlog}", "--metric", "correct", "--no-mixed"),
    cli("logs-csv-json", "ok", "compare-logs", "{hlog}", "--metric", "correct", "--cluster", "passage", "--json"),
    cli("logs-by", "ok", "compare-logs", "{hlog}", "--metric", "correct", "--by", "subject", "--no-mixed"),
    cli("logs-lm-eval", "ok", "compare-logs", "{lm_toy}", "--metric", "acc", "--no-mixed"),
    cli("logs-inspect-files", "ok", "compare-logs", "{inspect_a}", "{inspect_b}", "--no-mixed"),
    cli("logs-metric-missing", "refuse", "compare-logs", "{hlog}", "--metric", "bleu", words="'bleu'"),
    cli("logs-cluster-missing", "refuse", "compare-logs", "{hlog}", "--metric", "correct", "--cluster", "doc",
        words="'doc'"),
    cli("logs-empty-dir", "refuse", "compare-logs", "{dir}/lm_toy/m-a/none", "--metric", "acc", words="none"),
    cli("logs-multi-filter", "ok", "compare-logs", "{lm_gsm8k}", "--metric", "exact_match,flexible-extract",
        "--no-mixed"),
    cli("logs-twins", "ok", "compare-logs", "{hlog_twins}", "--metric", "correct", "--no-mixed", "--json"),
    cli("logs-glmm-text", "ok", "compare-logs", "{hlog}", "--metric", "correct", "--glmm", "--effect", "0.1",
        check=_contains("glmm", "0.1")),
    cli("logs-null-metric", "warn", "compare-logs", "{lm_null}", "--metric", "acc", "--no-mixed", words="1"),
    cli("logs-same-model-name", "refuse", "compare-logs", "{lm_same_name}", "--metric", "acc", "--no-mixed",
        words="gpt", avoid="read twice"),
    cli("logs-blank-model", "refuse", "compare-logs", "{hlog_blank_model}", "--metric", "correct", "--no-mixed",
        words="model", avoid="read twice"),
    cli("logs-float-items", "flag", "compare-logs", "{hlog_float_items}", "--metric", "correct", "--no-mixed",
        words="1.0"),
    cli("logs-empty-samples", "flag", "compare-logs", "{lm_empty}", "--metric", "acc", "--no-mixed", words="m-c"),
    cli("logs-inspect-json-dir", "ok", "compare-logs", "{inspect_json}", "--no-mixed"),
    cli("logs-inspect-unfinished", "warn", "compare-logs", "{inspect_unf_a}", "{inspect_unf_b}", "{inspect_unf_c}",
        "--no-mixed", words=("c.json", "started")),
    cli("logs-inspect-errored", "refuse", "compare-logs", "{inspect_err_a}", "{inspect_err_b}", "--no-mixed",
        words="s7", avoid="missing or infinite"),
    cli("logs-constant-difference", "ok", "compare-logs", "{hlog_shift}", "--metric", "score", "--no-mixed", "--json",
        check=_no_zero_se),

    # ---------------------------------------------------------------- Python entry points
    py("py-lmer-list", "refuse", lambda f: __import__("mixeval").lmer(M, [1, 2]), words="DataFrame"),
    py("py-lmer-reml-text", "refuse", lambda f: __import__("mixeval").lmer(M, _read(f["log"]), REML="no"),
       words="REML"),
    py("py-lmer-nan", "refuse", lambda f: __import__("mixeval").lmer(M, _read(f["log_nan"])), words="drop"),
    py("py-lmer-drop-missing", "warn", lambda f: __import__("mixeval").lmer(M, _read(f["log_nan"]), drop_missing=True),
       words="dropped 1"),
    py("py-lmer-not-modified", "ok", lambda f: (lambda d: (__import__("mixeval").lmer(M, d), d)[1])(_read(f["log"])),
       check=lambda d, f: None if list(d.columns) == list(_read_cols()) else "data modified"),
    py("py-study-system-random", "refuse", lambda f: _study(f, system="rater"), words=("'rater'", "random")),
    py("py-study-system-absent", "refuse", lambda f: _study(f, system="length"), words=("'length'", "fixed")),
    py("py-study-item-fixed", "refuse", lambda f: _study(f, item="system"), words="'system'"),
    py("py-study-family", "refuse", lambda f: _study(f, family="gamma"), words="gamma"),
    py("py-power-pair-same", "refuse", lambda f: _power(f, pair=("A", "A"), test="pairwise"), words="itself"),
    py("py-power-pair-glrt", "refuse", lambda f: _power(f, pair=("A", "B")), words=("pair", "delta")),
    py("py-power-pair-string", "refuse", lambda f: _power(f, pair="AB", test="pairwise"), words="pair"),
    py("py-power-pair-delta", "ok", lambda f: _power(f, pair=("B", "A"), delta=0.5)),
    py("py-weighted-emmeans", "ok", _weighted_emmeans),
    py("py-weighted-satterthwaite", "ok", _weighted_df, check=lambda v, f: v),
    py("py-weighted-kenward-roger", "ok", _weighted_kr, check=lambda v, f: v),
    py("py-ordinal-ordered-strings", "ok", _ordinal_strings),
    py("py-single-level-factor", "refuse", _single_level, words="'site'"),
    py("py-predict-strings", "refuse", _predict_strings, words="'length'"),
    py("py-agreement-id", "refuse", lambda f: __import__("mixeval.agreement", fromlist=["x"]).agreement(
        _read(f["ratings_id"])),
       words=("'id'", "set_index")),
    py("py-agreement-index", "ok", lambda f: __import__("mixeval.agreement", fromlist=["x"]).agreement(
        _read(f["ratings_id"]).set_index("id"), level=None)),
    py("py-kappa-three", "refuse", lambda f: __import__("mixeval").cohens_kappa(_read(f["ratings"])), words="two"),
    py("py-alpha-array", "ok", lambda f: __import__("mixeval").krippendorff_alpha(_read(f["ratings"]).to_numpy().T.T,
                                                                                 level=None)),
    py("py-compare-systems-id", "refuse", lambda f: __import__("mixeval.resampling", fromlist=["x"]).compare_systems(
        _read(f["wide_id"]), n_resamples=9), words=("'id'", "systems=")),
    py("py-compare-systems-ci-t", "refuse", lambda f: __import__("mixeval.resampling", fromlist=["x"]).compare_systems(
        _read(f["wide"]), test="t", ci="bca"), words="ci="),
    py("py-compare-systems-bca", "ok", lambda f: __import__("mixeval.resampling", fromlist=["x"]).compare_systems(
        _read(f["wide"]), test="bootstrap", ci="bca", n_resamples=99, random_state=1),
       check=lambda t, f: None if t["lower"].notna().all() else "no intervals"),
    py("py-bootstrap-lengths", "refuse", lambda f: __import__("mixeval").paired_bootstrap_test([1.0, 2, 3], [1.0, 2],
                                                                                              n_resamples=9),
       words="3 and 2"),
    py("py-permutation-empty", "refuse", lambda f: __import__("mixeval").permutation_test([], [], n_resamples=9),
       words="empty"),
    py("py-permutation-resamples", "refuse", lambda f: __import__("mixeval").permutation_test([1.0, 2], [2.0, 1],
                                                                                             n_resamples=0),
       words="n_resamples"),
    py("py-circularity-binary", "warn", _circ_binary, words="family='binomial'"),
    py("py-gam-constant", "refuse", _gam_constant, words=("'flat'", "constant")),
    py("py-circularity-summary", "ok", _circ_summary, check=_below),
    py("py-bt-names", "ok", _bt_names, check=lambda v, f: v),
    py("py-bt-separation", "ok", _bt_separation, check=lambda v, f: v),
    py("py-bt-ties-only", "refuse", lambda f: __import__("mixeval.preferences", fromlist=["x"]).bradley_terry(
        _read(f["votes_ties_only"]), ties="davidson"), words=("every vote is a tie", "tie parameter is infinite")),
    py("py-compare-logs-twins", "ok", _compare_twins, check=lambda v, f: v),
    py("py-uncertainty-attribute", "ok", _uncertainty_attr, check=lambda v, f: v),
    py("py-dstudy-unknown-facet", "refuse", lambda f: __import__("mixeval").dstudy(
        __import__("mixeval").lmer(RAND, _read(f["log"])), "item", {"judge": [1, 2]}), words="judge"),
    py("py-metric-ci-bad", "refuse", _metric_ci_bad, words="p_control"),
    cli("pref-covariate-zero", "either", "preferences", "{votes_mixed}", "--covariate", "length=len_a,len_b", "--json",
        "--seed", "1", words="length", check=_covariate_se),
    cli("pref-counts-bad-row", "refuse", "preferences", "{votes_counts_self}", "--count", "n", words=("itself", "300")),
    cli("pref-mixed-percent", "ok", "preferences", "{votes_mixed}", "--judge", "judge", "--position", "random",
        "--seed", "1", check=_lacks("NaN", "nan")),
    py("py-ordinal-effect-size", "ok", _ordinal_effect_size, check=lambda v, f: v),
    py("py-ordinal-boundary-spread", "warn", _boundary_spread, words="spread"),
]


def _read_cols():
    from probe_harness import long_log

    return long_log().columns


#: probes whose fix is another helper's part of issue 38 (they fail until that branch is merged): id -> reason
OTHER_BRANCH: dict[str, str] = {
}

#: each defect (1-10) and rough case of issue 38 -> the probes that hold it
ISSUE_38: dict[str, tuple[str, ...]] = {
    "1 lm-eval tasks with several filters": ("logs-multi-filter",),
    "2 identical models abort compare_logs": ("logs-twins", "py-compare-logs-twins"),
    "3 winner values naming systems A/B": ("pref-names-as-winner", "py-bt-names"),
    "4 separation SEs near 0": ("py-bt-separation",),
    "5 weighted Gaussian Study": ("sig-weighted", "py-weighted-emmeans", "py-weighted-satterthwaite",
                                  "py-weighted-kenward-roger"),
    "6 compare-logs text omits --glmm/--effect": ("logs-glmm-text",),
    "7 power --pair A,A": ("power-pair-same", "power-pair-same-pairwise", "power-pair-same-spaces",
                           "py-power-pair-same"),
    "8 id column compared as a system": ("boot-numeric-id", "perm-numeric-id", "boot-id-flag", "perm-id-flag",
                                         "boot-doc-id", "boot-counter", "boot-saved-index", "py-compare-systems-id"),
    "9 flags accepted and ignored": ("sig-scale-gaussian", "sig-labels-without-cuts", "rel-nsim-without-ci",
                                     "rel-seed-without-ci", "rel-level-without-ci", "power-pair-glrt-no-delta",
                                     "py-power-pair-glrt"),
    "10 subpackages reachable from import mixeval": ("py-uncertainty-attribute",),
    "reader warning 'is not read' for one null value": ("logs-null-metric",),
    "'read twice' for runs with one model name or a blank model": ("logs-same-model-name", "logs-blank-model"),
    "item ids 1 vs 1.0": ("logs-float-items",),
    "empty samples file or unfinished inspect log dropped silently": ("logs-empty-samples", "logs-inspect-unfinished"),
    "inspect .json logs not found in directories": ("logs-inspect-json-dir",),
    "one errored inspect sample stops the run": ("logs-inspect-errored",),
    "constant difference: se 0, p 0, numpy warning": ("logs-constant-difference",),
    "Davidson ties-only data": ("py-bt-ties-only", "pref-ties-only"),
    "covariate with zero difference gets SE 0": ("pref-covariate-zero",),
    "'every vote is a tie' when all counts are 0": ("pref-zero-counts",),
    "row numbers of aggregated counts in source errors": ("pref-counts-bad-row",),
    "percent NaN in the mixed preference variance table": ("pref-mixed-percent",),
    "--scale unusable for ordinal models on the CLI": ("sig-ordinal-scale",),
    "no --levels for string ratings; ordinal Study refuses ordered strings": ("sig-ordinal-levels",
                                                                             "py-ordinal-ordered-strings"),
    "zero-variance warning naming the rater intercept at a boundary spread": ("py-ordinal-boundary-spread",),
    "effect_size NaN for ordinal probability scales": ("py-ordinal-effect-size",),
    "raw numpy warnings with constant raters": ("agr-constant-one-rater", "agr-constant-one-rater-two",
                                                "agr-constant", "rel-constant-rater"),
    "single-level fixed factor silently dropped": ("fit-single-level-factor", "py-single-level-factor"),
    "--system naming a random factor": ("sig-system-random", "power-system-random", "py-study-system-random"),
    "agreement without --id takes the id column as a rater": ("agr-numeric-id", "agr-text-id", "py-agreement-id"),
    "0/1 circularity target fitted as Gaussian without a hint": ("circ-binary-gaussian", "py-circularity-binary"),
    "circularity summary prints thresholds as met; np.float64 in a message": ("circ-not-met", "py-circularity-summary",
                                                                              "circ-target-constant",
                                                                              "py-gam-constant"),
    "predict with numbers given as strings": ("py-predict-strings",),
}
