# Reference values for mixeval._adjust.adjust_pvalues from R's stats::p.adjust.
# Run: Rscript tests/fixtures_resampling/p_adjust.R  (writes p_adjust.json beside this script)
library(jsonlite)
sets <- list(
  small = c(0.01, 0.02, 0.03, 0.04, 0.05),
  ties = c(0.001, 0.02, 0.02, 0.3, 0.3, 0.9, 0.04),
  mixed = c(0.8, 1e-05, 0.049, 0.2, 0.012, 0.0499, 0.67, 0.003, 1, 0.03)
)
out <- list()
for (nm in names(sets)) {
  p <- sets[[nm]]
  for (m in c("holm", "bonferroni", "hochberg", "BH", "BY", "none")) {
    out[[length(out) + 1]] <- list(
      set = nm, method = m, p = p, adjusted = p.adjust(p, method = m),
      expr = sprintf("p.adjust(c(%s), method = \"%s\")", paste(format(p, digits = 17), collapse = ", "), m)
    )
  }
}
here <- dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))
writeLines(toJSON(list(R = R.version.string, cases = out), auto_unbox = TRUE, digits = NA, pretty = TRUE),
           file.path(here, "p_adjust.json"))
