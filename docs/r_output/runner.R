# The helpers of docs/r_output/coming_from_r.R (sourced by it): run one row, record the versions.
run <- function(anchor, code, data = character()) {
  for (name in data) {
    assign(name, read.csv(file.path(data_dir, paste0(anchor, "--", name, ".csv"))), envir = globalenv())
  }
  notes <- character()
  keep_note <- function(m) {  # emmeans' and lme4's messages (a console shows them); not package start-up chatter
    text <- sub("\n$", "", conditionMessage(m))
    if (!inherits(m, "packageStartupMessage") &&
        !grepl("^(Loading required package|Attaching package|The following object|This is mgcv)", trimws(text))) {
      notes <<- c(notes, text)
    }
    invokeRestart("muffleMessage")
  }
  out <- tryCatch(
    capture.output(withCallingHandlers(
      source(exprs = parse(text = code), local = globalenv(), print.eval = TRUE, echo = FALSE),
      message = keep_note)),
    error = function(e) paste("Error:", conditionMessage(e)))
  writeLines(c(out, notes), file.path(out_dir, paste0(anchor, ".txt")))
}
versions <- function(pkgs) {
  v <- c(R = paste(R.version$major, R.version$minor, sep = "."))
  for (p in pkgs) v[p] <- as.character(packageVersion(p))
  writeLines(paste(names(v), v, sep = "="), file.path(out_dir, "versions.txt"))
}
