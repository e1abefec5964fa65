# Coverage of the per-system means in the Gaussian counterpart of the 3-seed binary design
# (benchmarks/sim_glmer_df.py, seeds3_60x3x4_p80): 60 items x 3 seeds x 4 systems,
# y = b_system + a_item + s_seed + e with var(a) = 0.25, var(s) = 0.36 and var(e) = 6.25 (the
# logit-scale binomial variance 1 / (p (1 - p)) at p = 0.8).  REML lmer; 95% intervals of the four
# system means from emmeans with lmerTest's Satterthwaite df and with pbkrtest's Kenward-Roger df
# (and adjusted covariance).  What R's best small-sample methods achieve on this variance structure.
#
#   Rscript benchmarks/sim_gaussian_analog.R 1000 | gzip > benchmarks/results/sim_gaussian_analog.csv.gz
#   python3 benchmarks/sim_satterthwaite_limit.py analog    # its coverage table
suppressPackageStartupMessages({library(lmerTest); library(emmeans); library(pbkrtest)})
args <- commandArgs(trailingOnly = TRUE)
n_rep <- if (length(args)) as.integer(args[1]) else 1000
emm_options(lmerTest.limit = 1e6, pbkrtest.limit = 1e6)
set.seed(20261123)
d <- expand.grid(item = factor(1:60), seed = factor(1:3), system = factor(LETTERS[1:4]))
truth <- c(A = qlogis(0.8), B = qlogis(0.8), C = qlogis(0.8), D = qlogis(0.8))
cat("rep,method,system,estimate,se,df,cover,var_seed,singular\n")
for (r in seq_len(n_rep)) {
  a <- rnorm(60, 0, 0.5); s <- rnorm(3, 0, 0.6)
  d$y <- truth[as.integer(d$system)] + a[d$item] + s[d$seed] + rnorm(nrow(d), 0, 2.5)
  fit <- suppressMessages(suppressWarnings(lmer(y ~ system + (1 | item) + (1 | seed), d)))
  vs <- as.data.frame(VarCorr(fit))
  vseed <- vs$vcov[vs$grp == "seed"]
  for (m in c("satterthwaite", "kenward-roger")) {
    e <- as.data.frame(summary(emmeans(fit, "system", lmer.df = m), infer = c(TRUE, FALSE)))
    cover <- as.integer(e$lower.CL <= truth & truth <= e$upper.CL)
    cat(sprintf("%d,%s,%s,%.10g,%.10g,%.10g,%d,%.10g,%d\n", r, m, e$system, e$emmean, e$SE, e$df, cover,
                vseed, as.integer(isSingular(fit))), sep = "")
  }
}
