# The glmer simulate-and-refit power loop (simr's method, as an lme4 user writes it) of bench_power_glmm.py:
# ITEMS items x SEEDS seeds x 2 systems, logit P(correct) = 0.5 + 0.5 [system B] + item + system:seed (variances
# 1.0 and 0.05); per simulation a response is drawn, the models with and without the system effect are refitted
# (refit(), which reuses the model structure) and the GLRT (anova) and the Wald z test are read off.
#
#   Rscript benchmarks/power_glmer.R ITEMS SEEDS NSIM
#
# Prints one line: "seconds power_glrt power_wald".
suppressMessages(library(lme4))
args <- as.integer(commandArgs(trailingOnly = TRUE))
ni <- args[1]; ns <- args[2]; nsim <- args[3]
set.seed(1)
d <- expand.grid(item = factor(1:ni), seed = factor(1:ns), system = factor(c("A", "B")))
d$sysseed <- interaction(d$system, d$seed, drop = TRUE)
draw <- function() {
  eta <- 0.5 + 0.5 * (d$system == "B") + rnorm(ni, 0, 1)[d$item] + rnorm(nlevels(d$sysseed), 0, sqrt(0.05))[d$sysseed]
  rbinom(nrow(d), 1, plogis(eta))
}
d$y <- draw()
full <- suppressMessages(glmer(y ~ system + (1|item) + (1|sysseed), d, family = binomial))
null <- suppressMessages(glmer(y ~ 1 + (1|item) + (1|sysseed), d, family = binomial))
t0 <- proc.time()[["elapsed"]]
rej_lr <- rej_z <- logical(nsim)
for (s in seq_len(nsim)) {
  y <- draw()
  f1 <- suppressMessages(suppressWarnings(refit(full, y)))
  f0 <- suppressMessages(suppressWarnings(refit(null, y)))
  rej_lr[s] <- anova(f0, f1)[["Pr(>Chisq)"]][2] < 0.05
  rej_z[s] <- coef(summary(f1))["systemB", "Pr(>|z|)"] < 0.05
}
cat(proc.time()[["elapsed"]] - t0, mean(rej_lr), mean(rej_z), "\n")
