"""The "Coming from R" table: one record per R call, rendered into the docs and run by the tests.

Adding a row is adding one ``Row(...)`` to ``ROWS``: the R call, the mixeval call, a runnable example, what
differs and the R code that computes the same (``r_code``), then running ``coming_from_r_capture.py`` once to
capture R's output into ``r_output/``. The example runs after ``SETUP`` (which loads the bundled simulated
evaluation ``demo`` and fits ``m``, the model most rows use); ``tests/docs/test_coming_from_r.py`` runs every
example and checks that R's captured output is current. ``conf.py`` puts the rendered rows (``render``) into
``coming_from_r.md`` at build time, where myst-nb executes the examples, so the page shows both outputs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

SETUP = '''\
import numpy as np
import pandas as pd
import mixeval
from mixeval.datasets import load_demo

demo = load_demo()            # simulated MT evaluation: score ~ system, items, raters, seeds
m = mixeval.lmer("score ~ system + (1|item) + (1|rater)", demo)     # REML, as lmer's default
'''

#: the R session's set-up (``coming_from_r_capture.py`` runs it before the rows' R code, from the repository root)
R_SETUP = """\
library(lme4); library(emmeans)
options(width = 110)
demo <- read.csv("mixeval/data/demo_mt.csv")          # the bundled simulated MT evaluation
m <- lmer(score ~ system + (1|item) + (1|rater), data = demo)
"""


#: the formulas of the "Formulas" section: (formula, family), fitted by ML in R and in mixeval
FORMULAS = [
    ("score ~ system + I(len^2) + len + (1|item)", "gaussian"),
    ("score ~ system + I(len %% 2) + I(len %/% 10) + (1|item)", "gaussian"),
    ("score ~ system + factor(difficulty) + (1|item)", "gaussian"),
    ('score ~ relevel(factor(system), ref = "C") + (1|item)', "gaussian"),
    ("score ~ system + ordered(difficulty) + (1|item)", "gaussian"),
    ("score ~ C(factor(system), sum) + (1|item)", "gaussian"),
    ("score ~ system + poly(len, 2) + (1|item)", "gaussian"),
    ("score ~ system + poly(len, 2, raw = TRUE) + (1|item)", "gaussian"),
    ("score ~ system + ns(len, 3) + (1|item)", "gaussian"),
    ("score ~ system + bs(len, df = 4, degree = 2) + (1|item)", "gaussian"),
    ("score ~ system * scale(len) + (1|item)", "gaussian"),
    ("score ~ (system + factor(difficulty) + log(len))^2 + (1|item)", "gaussian"),
    ("score ~ 0 + system + sqrt(len) + (1|item)", "gaussian"),
    ("log(tokens) ~ system + (1|item)", "gaussian"),
    ("cbind(passed, n - passed) ~ system + log(len) + (1|item)", "binomial"),
    ("errors ~ system + offset(log(tokens)) + (1|item)", "poisson"),
]

FORMULAS_EXAMPLE = (
    'rng = np.random.default_rng(37)\n'
    'items = np.repeat(np.arange(60), 6)\n'
    'ev = pd.DataFrame({"item": items, "system": np.tile(["A", "B", "C"], 120)})\n'
    'ev["len"] = rng.integers(5, 80, 60)[items]\n'
    'ev["difficulty"] = rng.integers(1, 4, 60)[items]\n'
    'ev["tokens"] = 20 * ev["len"] + rng.integers(0, 40, 360)\n'
    'u = rng.normal(0, 0.5, 60)[items]\n'
    'ev["score"] = 1 + 0.002 * ev["len"] ** 2 - 0.05 * ev["len"] + u + rng.normal(0, 0.5, 360)\n'
    'ev["n"] = 10\n'
    'ev["passed"] = rng.binomial(10, 1 / (1 + np.exp(-(u - 0.01 * ev["len"]))))\n'
    'ev["errors"] = rng.poisson(ev["tokens"] * np.exp(-6 + u))\n'
    'formulas = ' + repr(FORMULAS).replace("), (", "),\n            (") + '\n'
    'for formula, family in formulas:\n'
    '    fit = (mixeval.lmer(formula, ev, REML=False) if family == "gaussian"\n'
    '           else mixeval.glmer(formula, ev, family=family))\n'
    '    print(f"{formula:62s} logLik {fit.loglik:.2f}")'
)

FORMULAS_R = (
    "library(splines)\n"
    "formulas <- list(" + ",\n                 ".join(f"c({json.dumps(f)}, {json.dumps(fam)})" for f, fam in FORMULAS)
    + ")\n"
    "for (f in formulas) {\n"
    '  fit <- if (f[2] == "gaussian") lmer(as.formula(f[1]), data = ev, REML = FALSE)\n'
    "         else glmer(as.formula(f[1]), data = ev, family = f[2])\n"
    '  cat(sprintf("%-62s logLik %.2f\\n", f[1], logLik(fit)))\n'
    "}"
)

#: the idioms of R's formula language, what mixeval reads them as, and what differs
FORMULA_IDIOMS = [
    ("I(len^2), I(x %% 2), I(x %/% 10)", "the same string",
     "R's arithmetic inside `I()`: `^` (or `**`) is a power, never Python's exclusive or; `%%` and `%/%` are R's "
     "floored modulus and division; `/` divides as real numbers."),
    ("factor(x), as.factor(x), factor(x, levels = c(...)), relevel(factor(x), ref = \"b\")", "the same string",
     "R's level order: numbers sorted as numbers and labelled as R prints them (`1e+05`); text (a factor or a text "
     "column) in R's default collation, ICU's root order (R's in every locale but `C`, `C.UTF-8` included): "
     "letters case-insensitively first, `\"apple\" < \"Banana\"`, then lower case before upper, punctuation before "
     "digits before letters. An R session with `LC_COLLATE=C` sorts by code point (`\"Banana\" < \"apple\"`): "
     "there, or to choose the reference level, pin the order with `factor(x, levels = c(...))`, `relevel()` or an "
     "ordered pandas Categorical. Treatment contrasts; a factor with one level is refused, as lme4 refuses it."),
    ("ordered(x); an ordered factor column", "the same string; an ordered pandas Categorical",
     "R's polynomial contrasts (`.L`, `.Q`, `.C`, `^4`)."),
    ("C(f, sum) (also helmert, poly, SAS)", "the same string", "`C()` also takes a text column, where R wants a factor."),
    ("offset(log(tokens))", "the same string",
     "A term with coefficient 1, summed when repeated, for Gaussian, binomial, Poisson and ordinal models, and kept "
     "by `predict(newdata)`; glmer's `offset=` argument is written as this term."),
    ("cbind(successes, failures) ~ ..., family = binomial", "the same string with `family=\"binomial\"`",
     "The trials are `successes + failures` (times `weights=`); `successes/trials` with `weights=\"trials\"` "
     "fits the same model."),
    ("poly(x, 2), poly(x, 2, raw = TRUE)", "the same string",
     "R's orthogonal basis (same columns, same coefficients); `predict(newdata)` uses the fitted recurrence."),
    ("ns(x, 3), bs(x, df = 5, degree = 2) (library(splines) or splines::)", "the same string",
     "The splines package's bases to 1e-10 (knots at quantiles, boundary knots at the range, R's extrapolation); "
     "`predict(newdata)` keeps the fitted knots (R's `makepredictcall`)."),
    ("scale(x), scale(x, scale = FALSE)", "the same string",
     "`predict(newdata)` keeps the fitted centre and scale (R's `makepredictcall`); `I(x - mean(x))` is refused "
     "because R's `predict` would recompute the mean on the new rows."),
    ("log(x), log(x, base = 2), exp, sqrt, abs, pmin, pmax, ifelse, x > 3", "the same string",
     "A logical term is a factor, named as R names it (`I(x > 3)TRUE`)."),
    ("(a + b + c)^2, a:b, a*b, a/b, b %in% a, a*b - a:b", "the same string",
     "R's term algebra, term order and coding of each factor (`model.matrix`'s columns and names; `a:b` without "
     "`a` and `b` is coded by indicators of both, rank deficient as in R, and fitted as lme4 fits it); `x^2` "
     "outside `I()` is `x` (R crosses it with itself): mixeval warns."),
    ("0 + system, system - 1", "the same string", "No intercept: the first factor is coded by all its levels."),
    ("a * b with an empty cell; a covariate that a factor determines", "the same string",
     "lme4's default for a rank-deficient fixed part: the columns beyond the first rank pivots of R's "
     "`qr(X, tol = 1e-7)` are dropped (the same names as lme4's; also for glmer, the glmmTMB families, clmm and "
     "the DuckDB path) and named by a `RankDeficientWarning` (lme4: a message). `fixef`, `vcov` and "
     "`coefficients` omit them, as lme4's (glmmTMB shows NA); `fit.dropped_columns` lists them and `summary()` "
     "names them. Marginal means emmeans calls `nonEst` are NaN, with a note."),
    ("log(latency) ~ ...", "the same string", "A response expression; a Study keeps it as its score column."),
    (". (every other column)", "refused by name", "List the columns."),
    ("s(x), lsp(x, 10), cut(x, 3), interaction(a, b), ar1(0 + t | id)", "refused by name",
     "Each with its alternative (`ns(x, df)`, `pmax(x - 10, 0)`, `pandas.cut`, `a:b`, lme4's `(x | g)`)."),
]


@dataclass(frozen=True)
class Row:
    """One translation: ``r_call`` (package::call as an R user types it) -> ``mixeval_call``."""

    package: str
    r_call: str
    mixeval_call: str
    example: str
    differs: str
    #: R code run by ``coming_from_r_capture.py`` after ``R_SETUP`` (its printed output is shown beside the
    #: example's); ``None`` when the R package is not installed where the outputs were captured.
    r_code: str | None = None
    #: Python variables of the example (DataFrames or arrays) that the R code reads as data frames of the same name
    r_data: tuple[str, ...] = ()
    #: when ``r_code`` does not call the row's package (not installable where the outputs were captured): the
    #: installed R route it takes instead, shown above R's output so that it is never mistaken for the package's
    r_route: str = ""

    @property
    def anchor(self) -> str:
        """The id of the row's example on the page: ``r-<package>-<R call>`` in lowercase words, 48 characters."""
        name = re.sub(r"[^a-z0-9]+", "-", f"{self.package} {self.r_call.split('#')[0]}".lower()).strip("-")
        return f"r-{name[:48].strip('-')}"


ROWS: list[Row] = [
    # ------------------------------------------------------------------------------------------- lme4
    Row("lme4", 'lmer(score ~ system + (1|item) + (1|rater), data = demo)',
        'mixeval.lmer("score ~ system + (1|item) + (1|rater)", demo)',
        'm = mixeval.lmer("score ~ system + (1|item) + (1|rater)", demo)\nprint(m.summary())',
        "The formula is a string. REML by default, as lme4. Random intercepts for crossed, nested `(1|a/b)` "
        "and interaction `(1|a:b)` groups, random slopes as below.",
        r_code='m <- lmer(score ~ system + (1|item) + (1|rater), data = demo)\nsummary(m)'),
    Row("lme4", "lmer(rt ~ x + (1 + x | subject) + (1 | item), data = d)",
        'mixeval.lmer("rt ~ x + (1 + x | subject) + (1 | item)", d)',
        'rng = np.random.default_rng(2)\n'
        'd = pd.DataFrame({"subject": np.repeat(np.arange(20), 16), "item": np.tile(np.arange(16), 20)})\n'
        'd["x"] = np.where(d["item"] < 8, -0.5, 0.5)\n'
        'b0, b1 = rng.normal(0, 0.3, 20), rng.normal(0, 0.2, 20)\n'
        'd["rt"] = 6 + 0.1 * d["x"] + b0[d["subject"]] + b1[d["subject"]] * d["x"] + rng.normal(0, 0.2, 320)\n'
        'ms = mixeval.lmer("rt ~ x + (1 + x | subject) + (1 | item)", d)\n'
        'print(ms.summary())\nms.components',
        "`(1 + x | g)`, `(x | g)`, `(0 + x | g)`, `(1 + x || g)` and factor slopes `(1 + system | item)` as lme4. "
        "`components` uses `as.data.frame(VarCorr(m))`'s names (`subject.x`, `subject.(Intercept).x`); "
        "the `||` terms are named `subject.x`, where lme4 prints `subject.1`.",
        r_code='ms <- lmer(rt ~ x + (1 + x | subject) + (1 | item), data = d)\nsummary(ms)\nas.data.frame(VarCorr(ms))', r_data=('d',)),
    Row("lme4", "summary(m)", "m.summary()", "print(m.summary())",
        "Text summary with the random-effect variances, the fixed effects and the REML criterion.",
        r_code='summary(m)'),
    Row("lme4", "fixef(m)", "m.fixef", "m.fixef",
        "A pandas Series named by formulaic's column names (`systemsystem_a`, as R's treatment coding).",
        r_code='fixef(m)'),
    Row("lme4", "VarCorr(m)", "m.varcorr",
        "m.varcorr          # group, variance, std, percent\nm.varcorr_se       # with standard errors",
        "A DataFrame with variance, standard deviation and percent of the total; `varcorr_se` adds "
        "standard errors of the variances (lme4 gives none).",
        r_code='VarCorr(m)\nas.data.frame(VarCorr(m))'),
    Row("lme4", "ranef(m)", "m.ranef", 'm.ranef["item"].head()',
        "A dict of Series (one per grouping factor) of conditional modes, like `ranef(m)`'s list of data frames.",
        r_code='head(ranef(m)$item)'),
    Row("lme4", "fitted(m); residuals(m)", "m.fitted; m.residuals", "m.fitted[:3], m.residuals[:3]",
        "Arrays in the row order of the data used for the fit.",
        r_code='head(fitted(m), 3); head(residuals(m), 3)'),
    Row("lme4", "logLik(m); AIC(m); BIC(m)", "m.loglik; m.aic; m.bic", "m.loglik, m.aic, m.bic",
        "The log-likelihood of the fit as fitted: REML for a REML fit, as lme4's `logLik`; AIC and BIC from it.",
        r_code='logLik(m); AIC(m); BIC(m)'),
    Row("lme4", "predict(m, newdata = new, allow.new.levels = TRUE)",
        "m.predict(new, allow_new_levels=True)",
        'new = pd.DataFrame({"system": ["system_a", "system_a", "baseline"],\n'
        '                    "item": [str(demo.item.iloc[0]), "unseen", str(demo.item.iloc[0])],\n'
        '                    "rater": [str(demo.rater.iloc[0])] * 3})\n'
        'm.predict(new, allow_new_levels=True), m.predict(new, re=False)',
        "The conditional modes of known levels are included by default (`re.form = NULL`); `re=False` is "
        "`re.form = NA`. A level the fit never saw is an error naming it unless `allow_new_levels=True` (then its "
        "effect is 0); new rows with missing values or unseen factor levels are refused, never dropped.",
        r_code='new$item <- as.character(new$item); new$rater <- as.character(new$rater)\n'
               'predict(m, newdata = new, allow.new.levels = TRUE); predict(m, newdata = new, re.form = NA)',
        r_data=("new",)),
    Row("lme4", "anova(m0, m)", "mixeval.compare(m, m0)",
        'm0 = mixeval.lmer("score ~ 1 + (1|item) + (1|rater)", demo)\nmixeval.compare(m, m0)',
        "Refits both models by ML first (`refit=True`), as `anova` does; returns a `TestResult` "
        "(`statistic`, `df`, `pvalue`).",
        r_code='m0 <- lmer(score ~ 1 + (1|item) + (1|rater), data = demo)\nanova(m0, m)'),
    Row("lme4", "anova(lmer(null, REML = FALSE), lmer(full, REML = FALSE))",
        'mixeval.glrt(demo, "score ~ system + (1|item)", "score ~ 1 + (1|item)")',
        'mixeval.glrt(demo, "score ~ system + (1|item)", "score ~ 1 + (1|item)")',
        "The generalized likelihood-ratio test of the book's Section 4.3 from two formulas, ML fits.",
        r_code='anova(lmer(score ~ 1 + (1|item), data = demo, REML = FALSE),\n      lmer(score ~ system + (1|item), data = demo, REML = FALSE))'),
    Row("lme4", "glmer(correct ~ system + (1|item), family = binomial, data = d)",
        'mixeval.glmer("correct ~ system + (1|item)", d, family="binomial")',
        'rng = np.random.default_rng(3)\n'
        'd = pd.DataFrame({"item": np.repeat(np.arange(150), 2), "system": np.tile(["A", "B"], 150)})\n'
        'eta = 0.3 + 0.5 * (d["system"] == "B") + rng.normal(0, 1.0, 150)[d["item"]]\n'
        'd["correct"] = (rng.uniform(size=300) < 1 / (1 + np.exp(-eta))).astype(int)\n'
        'g = mixeval.glmer("correct ~ system + (1|item)", d, family="binomial")\n'
        'print(g.summary())',
        "Laplace approximation by PIRLS as glmer (`nAGQ=` > 1: adaptive Gauss-Hermite for one scalar term); "
        "binomial (logit, probit; proportions with `weights=` for `cbind(successes, failures)`) and Poisson; "
        "`mixeval.compare` for the LRT of nested fits.",
        r_code='g <- glmer(correct ~ system + (1|item), family = binomial, data = d)\nsummary(g)', r_data=('d',)),
    Row("lme4", "lmer(score ~ I(len^2) + factor(d) + ns(len, 3) + offset(log(n)) + ...)  # R's formula language",
        'mixeval.lmer("score ~ I(len^2) + factor(d) + ns(len, 3) + offset(log(n)) + ...", ev)',
        FORMULAS_EXAMPLE,
        "The formula string is read as R reads it: every idiom of the [formulas](#formulas) table, the same "
        "model and log-likelihood as lme4's, the same column names.",
        r_code=FORMULAS_R, r_data=("ev",)),
    Row("glmmTMB", "glmmTMB(correct ~ system + (1|item) + (1|seed), family = binomial, REML = TRUE, data = d)",
        'mixeval.glmer("correct ~ system + (1|item) + (1|seed)", d, family="binomial", REML=True)',
        'rng = np.random.default_rng(5)\n'
        'd = pd.DataFrame({"item": np.repeat(np.arange(60), 10), "seed": np.tile(np.repeat(np.arange(5), 2), 60),\n'
        '                  "system": np.tile(["A", "B"], 300)})\n'
        'eta = 0.4 * (d["system"] == "B") + rng.normal(0, 1, 60)[d["item"]] + rng.normal(0, 0.5, 5)[d["seed"]]\n'
        'd["correct"] = (rng.uniform(size=600) < 1 / (1 + np.exp(-eta))).astype(int)\n'
        'g = mixeval.glmer("correct ~ system + (1|item) + (1|seed)", d, family="binomial", REML=True)\n'
        'print(g.varcorr)',
        "Variance components from the restricted Laplace criterion (fixed effects integrated with the random "
        "effects), as glmmTMB's `REML = TRUE` (tested against it: criterion 1e-12, components 1e-6); fixed effects "
        "from the Laplace deviance at those components (glmmTMB's joint mode is biased towards 0 for binary "
        "data). lme4 has no REML for glmer; its ML "
        "shrinks a variance estimated from few levels (5 seeds) and narrows the intervals of accuracies that "
        "contain it. `Study(..., family=, reml=True)` takes variance components and marginal means from this "
        "fit and the GLRT from ML fits (`benchmarks/sim_glmer_reml.py`); a Study's default is the ML fit, as glmer.",
        r_code='library(glmmTMB)\n'
               'g <- glmmTMB(correct ~ system + (1|item) + (1|seed), family = binomial, REML = TRUE, data = d)\n'
               'VarCorr(g)', r_data=('d',)),
    Row("lme4", 'confint(m, method = "profile")', 'mixeval.uncertainty.confint(m, method="profile")',
        'from mixeval.uncertainty import confint\n'
        'confint(m, method="profile", progress=False).table',
        "Rows named as `confint(m, oldNames = FALSE)` (`sd_(Intercept)|item`, `sigma`, fixed effects; with random "
        "slopes also `sd_x|subject` and `cor_x.(Intercept)|subject`); "
        "`method=\"profile\"` (the ML profile, as lme4, with exact roots instead of lme4's spline), "
        "`\"boot\"` (parametric bootstrap percentiles) or `\"wald\"` (standard deviations by the delta method, "
        "where lme4 gives NA). `Study.variance_components(ci=...)` adds the columns to the book's tables.",
        r_code='confint(m, method = "profile", oldNames = FALSE)'),
    Row("lme4", 'confint(gm, method = "profile")  # gm <- glmer(...)', 'mixeval.uncertainty.confint(gm, method="profile")',
        'from mixeval.uncertainty import confint\n'
        'rng = np.random.default_rng(3)\n'
        'd = pd.DataFrame({"item": np.repeat(np.arange(60), 2), "system": np.tile(["A", "B"], 60)})\n'
        'eta = 0.3 + 0.5 * (d["system"] == "B") + rng.normal(0, 1.0, 60)[d["item"]]\n'
        'd["correct"] = (rng.uniform(size=120) < 1 / (1 + np.exp(-eta))).astype(int)\n'
        'gm = mixeval.glmer("correct ~ system + (1|item)", d, family="binomial")\n'
        'confint(gm, method="profile", progress=False).table',
        "GLMMs (binomial, Poisson): sd's (and correlations) and fixed effects, no `sigma`; the profile of lme4's "
        "`profile.glmerMod` on the Laplace (or `nAGQ` > 1 quadrature) deviance with exact roots; "
        "`method=\"boot\"` draws binomial/Poisson responses with new random effects as `bootMer`; "
        "`\"wald\"` gives the sd's by the delta method where lme4 gives NA.",
        r_code='gm <- glmer(correct ~ system + (1|item), family = binomial, data = d)\nconfint(gm, method = "profile", oldNames = FALSE)', r_data=('d',)),
    Row("lme4", "bootMer(m, FUN, nsim = 1000, seed = 1)",
        'mixeval.uncertainty.bootstrap_fit(m, statistic, n_resamples=1000, random_state=1)',
        'from mixeval.uncertainty import bootstrap_fit\n'
        'b = bootstrap_fit(m, lambda refit: refit.fixef.iloc[1], n_resamples=20, random_state=1, progress=False)\n'
        'b.interval(0.95)',
        "Simulate from the fit, refit, collect any statistic of the refit; seeded (the same draws for any "
        "`n_jobs`), progress bar; the default statistic is `confint`'s parameters (fast path, no full refit result).",
        r_code='b <- bootMer(m, function(refit) fixef(refit)[2], nsim = 20, seed = 1)\nquantile(b$t, c(0.025, 0.975))'),
    # ---------------------------------------------------------------------------------------- lmerTest
    Row("lmerTest", "summary(m)  # t tests with Satterthwaite df", "m.coef_tests()", "m.coef_tests()",
        "Satterthwaite's df, as lmerTest's default; Kenward-Roger df for contrasts through `emmeans(..., df='kenward-roger')`.",
        r_code='library(lmerTest)\nm <- lmer(score ~ system + (1|item) + (1|rater), data = demo)\ncoef(summary(m))'),
    Row("lmerTest", 'ranova(m)', 'mixeval.Study(demo, formula).variance_lrt("rater")',
        'study = mixeval.Study(demo, "score ~ system + (1|item) + (1|rater)")\nstudy.variance_lrt("rater")',
        "One component at a time. The p-value uses the 50:50 chi-square mixture of a variance on its "
        "boundary (Self & Liang); `ranova` reports the naive chi-square(1) p-value, which is twice as large.",
        r_code='ranova(m)'),
    # ----------------------------------------------------------------------------------------- emmeans
    Row("emmeans", "emmeans(m, ~ system)", 'mixeval.emmeans(m, "system")',
        'mixeval.emmeans(m, "system")',
        "The default is `df=\"asymptotic\"` (z intervals, the book's, emmeans' `lmer.df = \"asymptotic\"`). "
        "emmeans uses Kenward-Roger df for lmer fits of up to 3,000 rows (`emm_options(pbkrtest.limit = )`) and "
        "asymptotic df above, as for the demo's 7,200 rows here; say `df=\"kenward-roger\"` (or "
        "`\"satterthwaite\"`) for small data.",
        r_code='emmeans(m, ~ system)'),
    Row("emmeans", 'pairs(emmeans(m, ~ system), adjust = "tukey")', 'mixeval.pairwise(m, "system", adjust="tukey")',
        'pw = mixeval.pairwise(m, "system", adjust="tukey")\npw.table',
        "Tukey by default, as `pairs`; also `holm`, `bonferroni`, `BH`, `none`. The table keeps the "
        "unadjusted p-value beside the adjusted one.",
        r_code='pairs(emmeans(m, ~ system), adjust = "tukey")'),
    Row("emmeans", 'emmeans(g, ~ system, type = "response")  # g from glmer',
        'mixeval.significance.emmeans_response(g, "system")',
        'rng = np.random.default_rng(5)\n'
        'd = pd.MultiIndex.from_product([range(60), range(5), ["A", "B"]], names=["item", "seed", "system"]).to_frame(index=False)\n'
        'eta = 1.0 + 0.3 * (d["system"] == "B") + rng.normal(0, 1, 60)[d["item"]] + rng.normal(0, 0.4, 5)[d["seed"]]\n'
        'd["correct"] = (rng.uniform(size=len(d)) < 1 / (1 + np.exp(-eta))).astype(int)\n'
        'g = mixeval.glmer("correct ~ system + (1|item) + (1|seed)", d, family="binomial")\n'
        'mixeval.significance.emmeans_response(g, "system")',
        "Accuracy of a typical item and seed (random effects at 0) per system with the logit-scale interval "
        "back-transformed. `df=\"asymptotic\"` (the default, also of `Study(..., family=\"binomial\")`) gives "
        "emmeans' z intervals for glmer exactly (tested); `df=\"satterthwaite\"` uses t intervals with the "
        "linearised model's Satterthwaite df, as SAS GLIMMIX's `ddfm=satterthwaite`, which cover closer to 95% "
        "than the z intervals with few seeds (`benchmarks/sim_glmer_df.py`). `marginal=True` gives the mean "
        "accuracy over items and seeds instead (emmeans' `bias.adjust = TRUE` approximates it to second order). "
        "`pairwise_ratios` / `pairwise_differences` take the same `df=`.",
        r_code='g <- glmer(correct ~ system + (1|item) + (1|seed), family = binomial, data = d)\nemmeans(g, ~ system, type = "response")', r_data=('d',)),
    Row("emmeans", 'contrast(emmeans(m, ~ system), "trt.vs.ctrl")',
        'mixeval.significance.contrast(m, "system", "trt.vs.ctrl")',
        'mixeval.significance.contrast(m, "system", "trt.vs.ctrl", ref="baseline").table',
        "Every system against the control (`ref=` a level; the first by default) with emmeans' Dunnett "
        "approximation `dunnettx`; also `consec`, `eff`, `revpairwise`, custom weights `{name: weights}` and "
        "`adjust=\"mvt\"` (exact simultaneous). `mixeval significance DATA FORMULA --control baseline` in the CLI.",
        r_code='contrast(emmeans(m, ~ system), "trt.vs.ctrl")'),
    Row("lmerTest", "anova(m)  # type III F tests, Satterthwaite df",
        'mixeval.significance.joint_tests(m, df="satterthwaite")',
        'mc = mixeval.lmer("score ~ system * length_class + (1|item) + (1|rater)", demo)\n'
        'mixeval.significance.joint_tests(mc, df="satterthwaite")',
        "The type III hypotheses of every term (emmeans' `joint_tests`; `df=\"asymptotic\"` is its default for "
        "large data). With a factor x covariate interaction the factor is tested at the covariate's mean, as "
        "emmeans, where lmerTest tests it at 0. Kenward-Roger F tests are not provided.",
        r_code='mt <- lmerTest::lmer(score ~ system * length_class + (1|item) + (1|rater), data = demo)\n'
               'anova(mt)'),
    Row("emmeans", "emmeans(m, pairwise ~ system | length_class)",
        'mixeval.pairwise(m, "system", by="length_class")',
        'mc = mixeval.lmer("score ~ system * length_class + (1|item) + (1|rater)", demo)\n'
        'mixeval.pairwise(mc, "system", by="length_class").table',
        "`by=` is the `|` of emmeans: comparisons within each level, adjusted within each level.",
        r_code='mc <- lmer(score ~ system * length_class + (1|item) + (1|rater), data = demo)\nemmeans(mc, pairwise ~ system | length_class)$contrasts'),
    Row("emmeans", "emtrends(m, ~ system, var = \"src_length\")",
        'mixeval.significance.emtrends(m, "system", "src_length")',
        'from mixeval.significance import emtrends\n'
        'ms = mixeval.lmer("score ~ system * src_length + (1|item) + (1|rater)", demo)\n'
        'emtrends(ms, "system", "src_length")',
        "The slope of a numeric covariate per level of `specs`, with the same `df=` choices as `emmeans`.",
        r_code='ms <- lmer(score ~ system * src_length + (1|item) + (1|rater), data = demo)\nemtrends(ms, ~ system, var = "src_length")'),
    Row("emmeans", "pairs(emtrends(m, ~ system, var = \"src_length\"))",
        'mixeval.significance.pairwise_trends(m, "system", "src_length")',
        'from mixeval.significance import pairwise_trends\n'
        'ms = mixeval.lmer("score ~ system * src_length + (1|item) + (1|rater)", demo)\n'
        'pairwise_trends(ms, "system", "src_length").table',
        "Tukey-adjusted differences of the slopes, as `pairs` on an `emtrends` object; "
        "`Study.conditional(prop)` with a numeric property and no `cuts` runs it with the interaction GLRT.",
        r_code='ms <- lmer(score ~ system * src_length + (1|item) + (1|rater), data = demo)\npairs(emtrends(ms, ~ system, var = "src_length"))'),
    # ------------------------------------------------------------------------------------------- mgcv
    Row("mgcv", 'gam(y ~ s(x, bs = "cr", k = 10), data = d)', 'mixeval.fit_gam(d, "y", ["x"], k=10)',
        'rng = np.random.default_rng(1)\nd = pd.DataFrame({"x": rng.uniform(0, 1, 500)})\n'
        'd["y"] = np.sin(6 * d["x"]) + rng.normal(0, 0.3, 500)\n'
        'g = mixeval.fit_gam(d, "y", ["x"], k=10)\nprint(g.summary())',
        "Cubic regression splines (`bs = \"cr\"`; mgcv's default is thin plate), smoothing parameters by GCV "
        "as mgcv's default `method = \"GCV.Cp\"`; Gaussian and binomial (`family=\"binomial\"`).",
        r_code='library(mgcv)\ng <- gam(y ~ s(x, bs = "cr", k = 10), data = d)\nsummary(g)', r_data=('d',)),
    Row("mgcv", "k.check(g)", "g.basis_check(random_state=0)",
        'rng = np.random.default_rng(1)\nd = pd.DataFrame({"x": rng.uniform(0, 1, 500)})\n'
        'd["y"] = np.sin(6 * d["x"]) + rng.normal(0, 0.3, 500)\n'
        'mixeval.fit_gam(d, "y", ["x"]).basis_check(random_state=0)',
        "k', edf, k-index and a permutation p-value per smooth, as `k.check`; seeded by `random_state`.",
        r_code='set.seed(0)\nk.check(gam(y ~ s(x, bs = "cr", k = 10), data = d))', r_data=('d',)),
    # --------------------------------------------------------------------------------------------- irr
    Row("irr", 'kripp.alpha(t(ratings), method = "interval")',
        'mixeval.krippendorff_alpha(ratings, measurement="interval")',
        'ratings = demo[demo["seed"] == 1].pivot_table(index=["item", "system"], columns="rater", values="score")\n'
        'mixeval.krippendorff_alpha(ratings.to_numpy(), measurement="interval", random_state=0).value',
        "Rows are units (items) and columns raters, the transpose of irr's layout; NaN marks a missing rating. "
        "Adds a bootstrap interval over units (`level=None` to skip); `measurement=` is irr's `method`.",
        r_code='kripp_interval <- function(x) {  # units in rows, raters in columns, NA = missing\n'
               '  units <- Filter(function(v) length(v) >= 2, lapply(seq_len(nrow(x)), function(i) na.omit(x[i, ])))\n'
               '  n <- sum(lengths(units)); pooled <- unlist(units)\n'
               '  observed <- sum(sapply(units, function(v) sum(outer(v, v, "-")^2) / (length(v) - 1))) / n\n'
               '  expected <- sum(outer(pooled, pooled, "-")^2) / (n * (n - 1))\n'
               '  1 - observed / expected\n'
               '}\n'
               'kripp_interval(as.matrix(ratings))', r_data=('ratings',),
        r_route="irr is not installed where the R outputs were captured: Krippendorff's interval alpha written "
                "out in base R from its definition (1 - observed / expected disagreement over pairable values), "
                "not irr's code"),
    Row("irr", "kappa2(ratings[, 1:2])", 'mixeval.cohens_kappa(ratings, "nominal")',
        'two = np.array([[1, 1], [1, 0], [0, 0], [0, 0], [1, 1], [0, 1], [0, 0], [1, 1]])\n'
        'mixeval.cohens_kappa(two, "nominal", level=None).value',
        "Same coefficient; `scotts_pi` is the pooled-marginal variant.",
        r_code='tab <- table(factor(two[, 1], levels = 0:1), factor(two[, 2], levels = 0:1))\n'
               'p_observed <- sum(diag(tab)) / sum(tab)\n'
               'p_chance <- sum(rowSums(tab) * colSums(tab)) / sum(tab)^2\n'
               '(p_observed - p_chance) / (1 - p_chance)', r_data=('two',),
        r_route="irr is not installed where the R outputs were captured: Cohen's kappa in base R from the "
                "2 x 2 table, (p_o - p_e) / (1 - p_e), not irr's code"),
    # ----------------------------------------------------------------------------------------------- simr
    Row("simr", "powerSim(extend(m, along = \"item\", n = 200), nsim = 500)",
        'Study(demo, formula).power(n={"item": [100, 200]}, delta=0.05, n_resamples=500)',
        'from mixeval.uncertainty import power_from_components\n'
        'r = power_from_components({"item": 0.05, "Residual": 0.02}, delta=0.05, n={"item": [20, 40]},\n'
        '                          n_resamples=40, random_state=0, progress=False)\n'
        'r.table',
        "Power by simulation from a fitted `Study` with the design changed (`Study.power`), or from assumed "
        "components without data (`power_from_components`, planning a new study); the table carries "
        "Monte-Carlo standard errors and `.smallest(target)` the smallest design reaching it.",
        r_code='set.seed(0)\n'
               'power_at <- function(n_item, nsim) {  # two systems, every item rated for both\n'
               '  d <- expand.grid(item = factor(seq_len(n_item)), system = factor(c("A", "B")))\n'
               '  hits <- replicate(nsim, {\n'
               '    d$y <- 0.05 * (d$system == "B") + rnorm(n_item, 0, sqrt(0.05))[d$item] + rnorm(nrow(d), 0, sqrt(0.02))\n'
               '    f <- lmer(y ~ system + (1|item), data = d)\n'
               '    abs(fixef(f)[2] / sqrt(vcov(f)[2, 2])) > qnorm(0.975)  # Wald z test of the difference\n'
               '  })\n'
               '  c(item = n_item, power = mean(hits), se = sqrt(mean(hits) * (1 - mean(hits)) / nsim))\n'
               '}\n'
               't(sapply(c(20, 40), power_at, nsim = 400))',
        r_route="simr is not installed where the R outputs were captured: the simulation powerSim runs, written "
                "out with lme4 (simulate the design from the assumed components, refit, Wald z test), with 400 "
                "simulations per size against the example's 40"),
    # ------------------------------------------------------------------------------------ base R, boot
    Row("stats", "t.test(a, b, paired = TRUE)", "mixeval.resampling.paired_t_test(a, b)",
        'from mixeval.resampling import paired_t_test\n'
        'wide = demo[demo["seed"] == 1].groupby(["item", "system"])["score"].mean().unstack()\n'
        'paired_t_test(wide["system_a"], wide["baseline"])',
        "Returns a `TestResult` with scipy's names (`statistic`, `pvalue`, `df`) and the interval.",
        r_code='t.test(wide$system_a, wide$baseline, paired = TRUE)', r_data=('wide',)),
    Row("boot", 'boot.ci(boot(d, mean_diff, R = 10000), type = "bca")',
        'mixeval.resampling.bootstrap_ci(a, b, method="bca", n_resamples=10_000)',
        'from mixeval.resampling import bootstrap_ci\n'
        'wide = demo[demo["seed"] == 1].groupby(["item", "system"])["score"].mean().unstack()\n'
        'bootstrap_ci(wide["system_a"], wide["baseline"], method="bca", n_resamples=2000, random_state=1)',
        "Paired over items; `random_state=` seeds it; `metric=` takes a corpus metric from per-item counts.",
        r_code='library(boot)\nset.seed(1)\nb <- boot(wide$system_a - wide$baseline, function(x, i) mean(x[i]), R = 2000)\nboot.ci(b, type = "bca")', r_data=('wide',)),
]


R_OUTPUT = Path(__file__).resolve().parent / "r_output"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def r_output(row: Row) -> str | None:
    """R's printed output for the row, as captured by ``coming_from_r_capture.py`` (``None`` if not captured)."""
    path = R_OUTPUT / f"{row.anchor}.txt"
    return path.read_text(encoding="utf-8").rstrip("\n") if row.r_code is not None and path.exists() else None


def r_versions() -> str:
    import json

    versions = json.loads((R_OUTPUT / "manifest.json").read_text(encoding="utf-8"))["versions"]
    return ", ".join(f"{name} {version}" for name, version in versions.items())


def _fence(lang: str, body: str, *, classes: str = "") -> list[str]:
    ticks = "````" if "```" in body else "```"
    return [f"{ticks}{lang}", *([f":class: {classes}"] if classes else []), body, ticks, ""]


def render(rows: list[Row] = ROWS) -> str:
    """The page body (MyST-notebook markdown): the table, then per row R's code and captured output beside the
    mixeval example as an executed code cell."""
    out = ["| R | mixeval | what differs |", "| --- | --- | --- |"]
    for row in rows:
        out.append(f"| `{_cell(row.r_call)}` ({row.package}) | [`{_cell(row.mixeval_call)}`](#{row.anchor}) "
                   f"| {_cell(row.differs)} |")
    out += ["", "## Side by side: R's output and mixeval's", "",
            "Each example below shows the R code and what R printed (captured once by "
            "`docs/coming_from_r_capture.py` with " + r_versions() + "), then the mixeval code and its output, "
            "computed when this page was built. Both sides use the same data: the bundled demo or the data set "
            "the Python example simulates (the capture script hands it to R). Set-up, in R:", "",
            *_fence("r", R_SETUP.rstrip("\n")),
            "and in Python:", "",
            "```{code-cell} python", ":tags: [setup]", "", SETUP.rstrip("\n"), "```", ""]
    for row in rows:
        out += [f"({row.anchor})=", f"### `{row.r_call}` ({row.package})", ""]
        captured = r_output(row)
        if captured is None:
            out += [f"**R** (`{row.package}` is not installed where the R outputs were captured):", "",
                    *_fence("r", row.r_call)]
        else:
            out += [f"**R** ({row.r_route})" if row.r_route else "**R**", "", *_fence("r", row.r_code),
                    *_fence("text", captured or "(no output)")]
        out += ["**mixeval**", "", "```{code-cell} python", row.example.rstrip("\n"), "```", ""]
    return "\n".join(out + render_formulas(rows))


def render_formulas(rows: list[Row] = ROWS) -> list[str]:
    """The "Formulas" section: each idiom of R's formula language beside mixeval's, and the example that fits them
    all in R and in mixeval (run when the page is built)."""
    example = next(r for r in rows if r.r_code == FORMULAS_R)
    out = ["(formulas)=", "## Formulas", "",
           "A formula is read as R reads it (`?formula`), by every entry point: `lmer`, `glmer`, `clmm`, `Study`, "
           "the command line, the report, power analysis and `predict(newdata)`. Paste the formula of your R "
           f"script; [the example](#{example.anchor}) fits every idiom below in R and in mixeval on the same data "
           "(the log-likelihoods agree), and the test suite checks 65 documented lme4, glmmTMB and mlmRev models "
           "and evaluation formulas against lme4 (log-likelihood, fitted values, model matrix, predictions).", "",
           "| R | mixeval | what it means, what differs |", "| --- | --- | --- |"]
    for r_idiom, ours, note in FORMULA_IDIOMS:
        out.append(f"| `{_cell(r_idiom)}` | {_cell(ours)} | {_cell(note)} |")
    return out + [""]
