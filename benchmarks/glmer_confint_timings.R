# Time lme4's confint(method = "profile") and bootMer(nsim) of a glmer fit (the competitor of
# mixeval.uncertainty.confint / bootstrap_fit on GLMMs in bench_glmer_confint.py).
# Usage: Rscript benchmarks/glmer_confint_timings.R DATA.csv "FORMULA" FAMILY NSIM [WEIGHTS_COLUMN]
# Prints one JSON object: {"fit_seconds", "profile_seconds", "boot_seconds", "profile": {name: [lo, hi]},
# "boot": {name: [lo, hi]}} (bootMer: parametric, use.u = FALSE, percentile intervals, seed 1).
suppressMessages({library(lme4); library(jsonlite)})
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], stringsAsFactors = FALSE)
fam <- if (args[3] == "binomial") binomial() else poisson()
nsim <- as.integer(args[4])
d$.w <- if (length(args) >= 5) d[[args[5]]] else 1
t_fit <- system.time(m <- suppressWarnings(glmer(as.formula(args[2]), data = d, family = fam, weights = .w)))
t_prof <- system.time(ci <- suppressWarnings(suppressMessages(confint(m, method = "profile", oldNames = FALSE))))
stat <- function(x) {
  vc <- as.data.frame(VarCorr(x), order = "lower.tri")
  s <- vc$sdcor
  names(s) <- ifelse(is.na(vc$var2), paste0("sd_", vc$var1, "|", vc$grp), paste0("cor_", vc$var2, ".", vc$var1, "|", vc$grp))
  c(s, fixef(x))
}
t_boot <- system.time(b <- suppressWarnings(suppressMessages(
  bootMer(m, stat, nsim = nsim, seed = 1, type = "parametric", use.u = FALSE))))
q <- apply(b$t, 2, quantile, probs = c(0.025, 0.975), na.rm = TRUE)
cat(toJSON(list(fit_seconds = unname(t_fit["elapsed"]), profile_seconds = unname(t_prof["elapsed"]),
                boot_seconds = unname(t_boot["elapsed"]),
                profile = setNames(lapply(rownames(ci), function(r) unname(ci[r, ])), rownames(ci)),
                boot = setNames(lapply(seq_len(ncol(q)), function(j) unname(q[, j])), colnames(b$t))),
           auto_unbox = TRUE, digits = NA))
