# Run by r/run_tests.sh, which sends SIGINT once the sum has reported its
# first piece (options(gfi.progress = TRUE): a "gfi: density" line on stderr),
# so the signal lands inside the direct sum whatever the machine's load: the
# sum (2e5 points at 2e5 queries, minutes on one thread) must stop with a
# gfi_interrupt condition, not run to its end.
library(gfi)
x <- gfi_model("normal")$r(2e5, seed = 1)
q <- seq(-3, 3, length.out = 2e5)
options(gfi.progress = TRUE)
r <- tryCatch(fkde(x, R = 2, eval.points = q, method = "direct", threads = 1),
              gfi_interrupt = function(e) conditionMessage(e))
cat(if (is.character(r)) paste("interrupted:", r) else "FAIL: the sum ran to its end", "\n")
invisible(gc())  # the plan's finalizer frees it
