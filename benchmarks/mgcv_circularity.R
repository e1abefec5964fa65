# mgcv side of benchmarks/bench_circularity.py: the 31-model powerset of GAMs over the top-5
# candidates of the liver SOFA test split, Gaussian, k = 10, GCV (mgcv defaults).
# Usage: Rscript benchmarks/mgcv_circularity.R DATA.csv.gz TARGET BASIS ROWS feat1,feat2,...
# BASIS is "cr" (the same basis as mixeval) or "tp" (mgcv's default). Prints one JSON line.
suppressMessages({library(mgcv); library(jsonlite)})
a <- commandArgs(trailingOnly = TRUE)
d <- read.csv(a[1]); target <- a[2]; bs <- a[3]; rows <- as.integer(a[4]); feats <- strsplit(a[5], ",")[[1]]
if (rows > 0 && rows < nrow(d)) d <- d[seq_len(rows), ]
subsets <- unlist(lapply(seq_along(feats), function(r) combn(feats, r, simplify = FALSE)), recursive = FALSE)
t0 <- proc.time()[["elapsed"]]
res <- lapply(subsets, function(s) {
  f <- as.formula(paste(target, "~", paste(sprintf('s(%s, bs = "%s", k = 10)', s, bs), collapse = " + ")))
  m <- gam(f, data = d)
  list(features = s, d2 = summary(m)$dev.expl, edf = sum(m$edf))
})
el <- proc.time()[["elapsed"]] - t0
cat(toJSON(list(seconds = el, n_models = length(res), models = res), auto_unbox = TRUE, digits = NA), "\n")
