# Time glmmTMB on the data sets of bench_glmmtmb.py (the competitor of mixeval's glmmTMB families).
# Usage: Rscript benchmarks/glmmtmb_timings.R SPEC.json REPEATS
# SPEC.json: a list of {"name", "file", "r_formula", "family"} (family one of nbinom2, beta_family, ordbeta,
# betabinomial). One warm-up fit first (glmmTMB's first call loads its compiled template); then each case is
# fitted REPEATS times with glmmTMB's defaults (ordbeta's cutpoints started at -1, 1 as later glmmTMB versions do).
# Prints one JSON array: per case the elapsed and CPU seconds of every run, logLik, fixef, sigma().
suppressMessages({library(glmmTMB); library(jsonlite)})
args <- commandArgs(trailingOnly = TRUE)
spec <- fromJSON(args[1], simplifyDataFrame = FALSE)
repeats <- as.integer(args[2])
invisible(Sys.setlocale("LC_COLLATE", "C"))
families <- list(nbinom2 = nbinom2(), beta_family = beta_family(), ordbeta = ordbeta(), betabinomial = betabinomial())
read_factors <- function(file) {
  d <- read.csv(file, stringsAsFactors = FALSE)
  for (v in names(d)) if (is.character(d[[v]])) d[[v]] <- factor(d[[v]], levels = sort(unique(d[[v]])))
  d
}
fit <- function(cs, d) {
  start <- if (cs$family == "ordbeta") list(psi = c(-1, 1)) else NULL
  suppressWarnings(glmmTMB(as.formula(cs$r_formula), data = d, family = families[[cs$family]], start = start))
}
warm <- spec[[1]]
invisible(fit(warm, read_factors(warm$file)))
out <- lapply(spec, function(cs) {
  d <- read_factors(cs$file)
  times <- lapply(seq_len(repeats), function(i) system.time(m <<- fit(cs, d)))
  list(name = cs$name, seconds = sapply(times, function(t) unname(t["elapsed"])),
       cpu_seconds = sapply(times, function(t) unname(t["user.self"] + t["sys.self"])),
       loglik = as.numeric(logLik(m)), fixef = as.list(fixef(m)$cond), sigma = sigma(m), nobs = nrow(d))
})
cat(toJSON(out, auto_unbox = TRUE, digits = NA))
