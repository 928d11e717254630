# gfi's R package against ks: time ratios (ks / gfi), printed, not a test.
#   Rscript bench/r_ks_bench.R [threads]      (after R CMD INSTALL r; ks installed)
# Cases (docs/r.md):
#   1-D LSCV at N = 1e4, 1e5, 1e6: ks::hlscv, gfi's Gaussian LSCV (fhlscv)
#     and gfi's sinc^4 LSCV radius (flscv);
#   the KDE on a 1024-point grid at N = 1e6: ks::kde (binned, its default at
#     this N) against gfi's Gaussian and sinc^4 estimates (auto: the fast route);
#   2-D Hpi at N = 1e4: ks::Hpi (binned) against fHpi;
#   per-call overhead: predict at one point from a 10-point estimate.
# gfi runs on `threads` threads (default 1, as ks); each time is the best of
# `reps` runs. Data: gfi's mw:6 (1-D) and a correlated normal (2-D), seed 1.
suppressMessages({ library(gfi); library(ks) })
args <- commandArgs(TRUE)
threads <- if (length(args)) as.integer(args[1]) else 1L
options(gfi.threads = threads)
best <- function(expr, reps = 3) {
  f <- substitute(expr); e <- parent.frame()
  min(vapply(seq_len(reps), function(i) system.time(eval(f, e))[["elapsed"]], 0))
}
try_best <- function(expr, reps = 3) {
  f <- substitute(expr); e <- parent.frame()
  tryCatch(min(vapply(seq_len(reps), function(i) system.time(eval(f, e))[["elapsed"]], 0)),
           error = function(err) { cat("    ks failed:", conditionMessage(err), "\n"); NA })
}
line <- function(what, tk, tg) cat(sprintf("  %-44s ks %9.3f s   gfi %8.3f s   ks/gfi %8.2f\n", what, tk, tg, tk / tg))
cat(sprintf("gfi %s, ks %s, R %s; gfi threads: %d\n", gfi_info()$version, packageVersion("ks"),
            getRversion(), threads))
m6 <- gfi_model("mw:6")

cat("1-D LSCV\n")
for (N in c(1e4, 1e5, 1e6)) {
  x <- m6$r(N, seed = 1)
  reps <- if (N >= 1e6) 1 else 3
  tk <- if (N <= 1e5) try_best(hk <- hlscv(x), reps) else NA
  tg <- best(hg <- fhlscv(x), reps)
  ts <- best(s <- flscv(x), reps)
  line(sprintf("hlscv N = %.0e (h ks %.5g, gfi %.5g)", N, if (is.na(tk)) NA else hk, hg), tk, tg)
  line(sprintf("  vs gfi sinc^4 LSCV radius (R = %.5g)", s$R), tk, ts)
}

cat("KDE on a 1024-point grid, N = 1e6\n")
x <- m6$r(1e6, seed = 1)
h <- 0.1
tk <- best(kk <- kde(x, h = h, gridsize = 1024), 2)
tg <- best(kg <- fkde(x, h = h, gridsize = 1024, xmin = min(kk$eval.points), xmax = max(kk$eval.points)), 2)
line(sprintf("kde h = 0.1 vs gfi Gaussian (%s route)", kg$route$route), tk, tg)
cat(sprintf("    largest |ks - gfi| / max: %.2g (ks bins the data)\n", max(abs(kk$estimate - kg$estimate)) / max(kg$estimate)))
tf <- best(kf <- fkde(x, R = 3, gridsize = 1024, xmin = min(kk$eval.points), xmax = max(kk$eval.points)), 2)
line(sprintf("kde h = 0.1 vs gfi sinc^4 R = 3 (%s route)", kf$route$route), tk, tf)

cat("2-D Hpi, N = 1e4\n")
x2 <- gfi_model("normal:cov=1,0.5,0.5,1", dim = 2)$r(1e4, seed = 1)
tk <- best(Hk <- Hpi(x2))
tg <- best(Hg <- fHpi(x2))
line(sprintf("Hpi (rel. difference %.2g)", max(abs(Hk - Hg)) / max(abs(Hg))), tk, tg)

cat("Per-call overhead from R\n")
k <- fkde(m6$r(10, seed = 1), R = 2, eval.points = 0)
n <- 2000
t1 <- system.time(for (i in seq_len(n)) predict(k, x = 0))[["elapsed"]] / n
kk <- kde(m6$r(10, seed = 1), h = 0.3, eval.points = 0)
t2 <- system.time(for (i in seq_len(n)) predict(kk, x = 0))[["elapsed"]] / n
cat(sprintf("  predict at 1 point, 10 data points: gfi %.1f us, ks %.1f us per call\n", 1e6 * t1, 1e6 * t2))
