# Time ordinal's clmm on one data set (the competitor of mixeval.clmm in bench_clmm.py).
# Usage: Rscript benchmarks/clmm_timings.R DATA.csv "FORMULA" [LINK]
# One clmm() call with its defaults (Laplace); the response becomes an ordered factor of its values, integer and
# character columns factors (grouping codes).
# Prints one JSON object: {"seconds", "cpu_seconds", "loglik", "beta", "alpha", "variances", "nobs"}
suppressMessages({library(ordinal); library(jsonlite)})
args <- commandArgs(trailingOnly = TRUE)
link <- if (length(args) >= 3) args[3] else "logit"
d <- read.csv(args[1], stringsAsFactors = TRUE)
f <- as.formula(args[2])
resp <- all.vars(f)[1]
d[[resp]] <- factor(d[[resp]], ordered = TRUE)
for (v in setdiff(names(d), resp)) if (is.character(d[[v]]) || is.integer(d[[v]])) d[[v]] <- factor(d[[v]])
t <- system.time(m <- suppressWarnings(clmm(f, data = d, link = link)))
cat(toJSON(list(seconds = unname(t["elapsed"]), cpu_seconds = unname(t["user.self"] + t["sys.self"]),
                loglik = as.numeric(logLik(m)), beta = as.list(m$beta), alpha = as.list(m$alpha),
                variances = as.list(sapply(VarCorr(m), function(v) v[1, 1])), nobs = nrow(d)),
           auto_unbox = TRUE, digits = NA))
