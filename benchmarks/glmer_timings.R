# Time lme4's glmer on one data set (the competitor of mixeval.glmer in bench_glmer.py).
# Usage: Rscript benchmarks/glmer_timings.R DATA.csv "FORMULA" [FAMILY [LINK]]
# One glmer() call with its defaults (Laplace; binomial logit unless FAMILY / LINK say otherwise); prints one
# JSON object: {"seconds": elapsed, "cpu_seconds": ..., "loglik": logLik, "fixef": {...}, "theta": [...], "nobs": n}
suppressMessages({library(lme4); library(jsonlite)})
args <- commandArgs(trailingOnly = TRUE)
fam_name <- if (length(args) >= 3) args[3] else "binomial"
link <- if (length(args) >= 4) args[4] else if (fam_name == "poisson") "log" else "logit"
fam <- if (fam_name == "poisson") poisson(link = link) else binomial(link = link)
d <- read.csv(args[1], stringsAsFactors = FALSE)
t <- system.time(m <- suppressMessages(suppressWarnings(glmer(as.formula(args[2]), data = d, family = fam))))
cat(toJSON(list(seconds = unname(t["elapsed"]), cpu_seconds = unname(t["user.self"] + t["sys.self"]), loglik = as.numeric(logLik(m)), fixef = as.list(fixef(m)),
                theta = unname(getME(m, "theta")), nobs = nrow(d)), auto_unbox = TRUE, digits = NA))
