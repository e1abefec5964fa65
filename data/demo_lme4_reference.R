# lme4 reference fit of the demo data (mixeval/data/demo_mt.csv) with the generating formula.
# Run from the repository root:  Rscript data/demo_lme4_reference.R
# Writes data/demo_lme4_reference.json: each value with the R expression that produced it ("expr").
suppressPackageStartupMessages({
  library(lme4)
})

d <- read.csv("mixeval/data/demo_mt.csv", stringsAsFactors = FALSE)
d$system <- factor(d$system, levels = c("baseline", "system_a", "system_b"))
d$length_class <- factor(d$length_class, levels = c("typical", "short", "very long"))
d$seed <- factor(d$seed)
d$item <- factor(d$item)
d$rater <- factor(d$rater)

m <- lmer(score ~ system * length_class + (1 | item) + (1 | system:seed) + (1 | rater) + (1 | item:rater),
          data = d, REML = TRUE)
vc <- as.data.frame(VarCorr(m))
pr <- profile(m, which = "theta_", signames = FALSE)
ci <- confint(pr, level = 0.95)
ci99 <- confint(pr, level = 0.99)

entry <- function(value, expr) list(value = unname(value), expr = expr)
grp_name <- function(g) g  # lme4's group names, "Residual" included

components <- list()
for (i in seq_len(nrow(vc))) {
  g <- vc$grp[i]
  ci_row <- if (g == "Residual") "sigma" else paste0("sd_(Intercept)|", g)
  components[[grp_name(g)]] <- list(
    variance = entry(vc$vcov[i], sprintf("as.data.frame(VarCorr(m))$vcov[grp == '%s']", g)),
    sd = entry(vc$sdcor[i], sprintf("as.data.frame(VarCorr(m))$sdcor[grp == '%s']", g)),
    sd_profile_ci95 = entry(as.numeric(ci[ci_row, ]),
                            sprintf("confint(profile(m, which = 'theta_', signames = FALSE), level = 0.95)['%s', ]", ci_row)),
    sd_profile_ci99 = entry(as.numeric(ci99[ci_row, ]),
                            sprintf("confint(profile(m, which = 'theta_', signames = FALSE), level = 0.99)['%s', ]", ci_row))
  )
}
fe <- fixef(m)
out <- list(
  model = list(value = "score ~ system * length_class + (1 | item) + (1 | system:seed) + (1 | rater) + (1 | item:rater)",
               expr = "lmer(<formula>, data = d, REML = TRUE); factor levels: system baseline first, length_class typical first, seed/item/rater factors"),
  r_version = R.version.string,
  lme4_version = as.character(packageVersion("lme4")),
  reml_criterion = entry(REMLcrit(m), "REMLcrit(m)"),
  fixed_effects = lapply(setNames(seq_along(fe), names(fe)), function(j)
    list(estimate = entry(fe[[j]], sprintf("fixef(m)[['%s']]", names(fe)[j])),
         se = entry(sqrt(diag(as.matrix(vcov(m))))[j], sprintf("sqrt(diag(vcov(m)))[['%s']]", names(fe)[j])))),
  variance_components = components
)
jsonlite::write_json(out, "data/demo_lme4_reference.json", auto_unbox = TRUE, digits = NA, pretty = TRUE)
cat("wrote data/demo_lme4_reference.json\n")
