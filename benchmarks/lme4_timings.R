# Time lme4 on the book's variance-component models (the competitor for mixeval.lmer).
#
# Usage:
#     Rscript benchmarks/lme4_timings.R BOOKDATA_DIR MODEL [MODEL ...]
# MODEL is one of table-3.4, table-3.8, table-3.9, table-3.10, table-3.11.
# Each model is fitted ONCE with lme4 defaults (REML, lmerControl() defaults, i.e. nloptwrap and the
# derivative check); the time is system.time(lmer(...))["elapsed"], data loading excluded.
# Prints one JSON object on stdout (and a markdown table on stderr):
#     {"timings": {"table-3.9": seconds, ...}, "variance_components": {"table-3.9": {group: variance}},
#      "reml_criterion": {...}, "nobs": {...}, "meta": {...}}
# (table-3.11 takes ~80 s on a 2-core machine: do not run it more than once per session.)

args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 2) stop("usage: Rscript lme4_timings.R BOOKDATA_DIR MODEL [MODEL ...]")
bookdir <- args[1]
models <- args[-1]

suppressMessages(library(lme4))
invisible(Sys.setlocale("LC_COLLATE", "C"))

f_vc <- "ter ~ (1|sentence_id) + (1|learning_rate) + (1|seed) + (1|decoder_dropout) + (1|decoder_dropout_hidden) + (1|encoder_dropout)"
specs <- list(
  "table-3.4" = list(file = "liver_gridsearch.csv.gz", numeric = "accuracy", delta = FALSE,
                     formula = "accuracy ~ (1|hidden_size_max) + (1|hidden_number) + (1|learning_rate) + (1|batch_size) + (1|random_seed) + (1|epochs) + (1|dropout)"),
  "table-3.8" = list(file = "mt_grid_partial.csv.gz", numeric = "ter", delta = TRUE, formula = "ter ~ (1|sentence_id)"),
  "table-3.9" = list(file = "mt_grid_partial.csv.gz", numeric = "ter", delta = TRUE, formula = f_vc),
  "table-3.10" = list(file = "mt_grid_full.csv.gz", numeric = "ter", delta = TRUE, formula = "ter ~ (1|sentence_id)"),
  "table-3.11" = list(file = "mt_grid_full.csv.gz", numeric = "ter", delta = TRUE, formula = f_vc)
)
bad <- setdiff(models, names(specs))
if (length(bad)) stop("unknown model(s): ", paste(bad, collapse = ", "), "; choose from ", paste(names(specs), collapse = ", "))

num <- function(x) if (is.finite(x)) sprintf("%.10g", x) else "null"
obj <- function(v) paste0("{", paste(sprintf("\"%s\": %s", names(v), vapply(v, num, "")), collapse = ", "), "}")

timings <- c(); comps <- list(); crit <- c(); nobs_ <- c()
cache <- list()
for (mname in models) {
  s <- specs[[mname]]
  if (is.null(cache[[s$file]])) {
    d <- read.csv(gzfile(file.path(bookdir, s$file)), colClasses = "character")
    cache[[s$file]] <- d
  }
  d <- cache[[s$file]]
  if (s$delta) d <- d[d$delta_scheme == "(-0.5:0.5)", ]
  for (cc in s$numeric) d[[cc]] <- as.numeric(d[[cc]])
  form <- as.formula(s$formula)
  gc()
  tm <- system.time(m <- lmer(form, data = d))[["elapsed"]]
  vc <- as.data.frame(VarCorr(m))
  timings[mname] <- tm
  comps[[mname]] <- setNames(vc$vcov, vc$grp)
  crit[mname] <- REMLcrit(m)
  nobs_[mname] <- nobs(m)
  message(sprintf("%s: %.2f s (n = %d)", mname, tm, nobs(m)))
}

# markdown table on stderr (stdout stays one JSON object)
message("\n| model | n | lme4 fit (s) | REML criterion |\n| --- | ---: | ---: | ---: |")
for (mname in names(timings))
  message(sprintf("| %s | %d | %.2f | %.4f |", mname, as.integer(nobs_[mname]), timings[mname], crit[mname]))

meta <- sprintf("{\"R\": \"%s\", \"lme4\": \"%s\", \"Matrix\": \"%s\", \"optimizer\": \"%s\", \"cores\": %d}",
                R.version.string, packageVersion("lme4"), packageVersion("Matrix"),
                lmerControl()$optimizer[1], parallel::detectCores())
cat(sprintf("{\"timings\": %s, \"variance_components\": {%s}, \"reml_criterion\": %s, \"nobs\": %s, \"meta\": %s}\n",
            obj(timings),
            paste(sprintf("\"%s\": %s", names(comps), vapply(comps, obj, "")), collapse = ", "),
            obj(crit), obj(nobs_), meta))
