# Power curve in lme4: the simulate/refit loop of bench_uncertainty.py's power job, written as an lme4
# user would (simr's approach without simr): for each design, fit the full and null models once, then per
# simulation draw a response from the assumed parameters (simulate(..., newparams =)), refit both models
# (refit(), which reuses the model structure) and test the system effect by the likelihood-ratio test (anova).
#
#   Rscript benchmarks/power_lme4.R ITEMS NSIM LOG
#   Rscript benchmarks/power_lme4.R 1000,2000,3000,4000,5000 500 benchmarks/results/power_lme4.log
#
# Design: items x 5 seeds x 2 systems, score ~ system + (1|item) + (1|seed), components as COMPS and the
# effect DELTA of bench_uncertainty.py. The designs are visited round robin (simulation 1 of every design,
# then simulation 2, ...), so a run stopped early has the same number of simulations for every design.
# Every simulation appends one line "items nobs sim seconds reject" to LOG (written as it goes).
suppressMessages(library(lme4))
args <- commandArgs(trailingOnly = TRUE)
items <- as.integer(strsplit(args[1], ",")[[1]]); nsim <- as.integer(args[2]); log <- args[3]
v_item <- 0.06; v_seed <- 0.0005; v_res <- 0.003; delta <- 0.001
params <- list(theta = c("item.(Intercept)" = sqrt(v_item / v_res), "seed.(Intercept)" = sqrt(v_seed / v_res)),
               beta = c("(Intercept)" = 0, systemB = delta), sigma = sqrt(v_res))
set.seed(1)
models <- lapply(items, function(ni) {
  d <- expand.grid(item = factor(1:ni), seed = factor(1:5), system = factor(c("A", "B")))
  # a response from the assumed parameters, so that the fits (and refit's start) are typical ones
  d$y <- delta * (d$system == "B") + rnorm(ni, 0, sqrt(v_item))[d$item] + rnorm(5, 0, sqrt(v_seed))[d$seed] +
    rnorm(nrow(d), 0, sqrt(v_res))
  full <- lmer(y ~ system + (1|item) + (1|seed), d, REML = FALSE)
  null <- lmer(y ~ 1 + (1|item) + (1|seed), d, REML = FALSE)
  list(items = ni, nobs = nrow(d), full = full, null = null)
})
cat("items nobs sim seconds reject\n", file = log)
for (s in seq_len(nsim)) {
  for (m in models) {
    t0 <- proc.time()[["elapsed"]]
    y <- suppressMessages(simulate(m$full, nsim = 1, newparams = params, use.u = FALSE))[[1]]
    f1 <- suppressMessages(refit(m$full, y))
    f0 <- suppressMessages(refit(m$null, y))
    p <- suppressMessages(anova(f0, f1))[["Pr(>Chisq)"]][2]
    cat(sprintf("%d %d %d %.4f %d\n", m$items, m$nobs, s, proc.time()[["elapsed"]] - t0, as.integer(p < 0.05)),
        file = log, append = TRUE)
  }
}
