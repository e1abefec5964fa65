# Fit one model with lme4 defaults and time it (the competitor for benchmarks/bench_engine.py).
#
# Usage:
#     Rscript benchmarks/lme4_fit.R DATA.csv RESPONSE "FORMULA"
# Every column except RESPONSE is read as a factor (character). The time is
# system.time(lmer(...))["elapsed"], data loading excluded. Prints one JSON object:
#     {"seconds": s, "reml_criterion": x, "variance_components": {group: variance}, "feval": n}

args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 3) stop("usage: Rscript lme4_fit.R DATA.csv RESPONSE FORMULA")
suppressMessages(library(lme4))
invisible(Sys.setlocale("LC_COLLATE", "C"))
d <- read.csv(args[1], colClasses = "character")
d[[args[2]]] <- as.numeric(d[[args[2]]])
gc()
tm <- system.time(m <- lmer(as.formula(args[3]), data = d))[["elapsed"]]
vc <- as.data.frame(VarCorr(m))
num <- function(x) sprintf("%.10g", x)
comps <- paste(sprintf("\"%s\": %s", vc$grp, vapply(vc$vcov, num, "")), collapse = ", ")
cat(sprintf("{\"seconds\": %s, \"reml_criterion\": %s, \"variance_components\": {%s}, \"feval\": %d}\n",
            num(tm), num(REMLcrit(m)), comps, as.integer(m@optinfo$feval)))
