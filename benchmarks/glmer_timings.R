# Time lme4's glmer on one binary data set (the competitor of mixeval.glmer in bench_glmer.py).
# Usage: Rscript benchmarks/glmer_timings.R DATA.csv "FORMULA"
# One glmer() call with its defaults (binomial logit, Laplace); prints one JSON object:
#   {"seconds": elapsed, "loglik": logLik, "fixef": {...}, "theta": [...], "nobs": n}
suppressMessages({library(lme4); library(jsonlite)})
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], stringsAsFactors = FALSE)
t <- system.time(m <- suppressMessages(suppressWarnings(glmer(as.formula(args[2]), data = d, family = binomial))))
cat(toJSON(list(seconds = unname(t["elapsed"]), cpu_seconds = unname(t["user.self"] + t["sys.self"]), loglik = as.numeric(logLik(m)), fixef = as.list(fixef(m)),
                theta = unname(getME(m, "theta")), nobs = nrow(d)), auto_unbox = TRUE, digits = NA))
