# gfi's R package: the same bits as the CLI of the same build (GFI_CLI), ks in
# the same run (the Gaussian KDE, the selectors, mise.mixt), plain R sums for
# the Fourier estimators and Nadaraya-Watson, and bad input as gfi conditions.
library(gfi)

fails <- 0L
check <- function(ok, what) {
  if (!isTRUE(ok)) {
    fails <<- fails + 1L
    cat("FAIL:", what, "\n")
  } else cat("ok:", what, "\n")
}
rel <- function(a, b) max(abs(a - b)) / max(abs(b))
is_gfi <- function(expr, param = NULL) {
  e <- tryCatch({ force(expr); NULL }, gfi_error = function(e) e, error = function(e) e)
  inherits(e, "gfi_error") && (is.null(param) || identical(e$param, param))
}

# ---- .npy files, to hand the CLI the very same doubles ----
write_npy <- function(path, m) {
  m <- as.matrix(m)
  hdr <- sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", nrow(m), ncol(m))
  pad <- 64 - (10 + nchar(hdr) + 1) %% 64
  hdr <- paste0(hdr, strrep(" ", pad %% 64), "\n")
  con <- file(path, "wb")
  writeBin(as.raw(c(0x93, charToRaw("NUMPY"), 1, 0)), con)
  writeBin(as.integer(nchar(hdr)), con, size = 2, endian = "little")
  writeBin(charToRaw(hdr), con)
  writeBin(as.vector(t(m)), con, size = 8, endian = "little")
  close(con)
  path
}
read_npy <- function(path) {
  raw <- readBin(path, "raw", file.info(path)$size)
  hlen <- readBin(raw[9:10], "integer", size = 2, endian = "little", signed = FALSE)
  readBin(raw[-(1:(10 + hlen))], "double", n = (length(raw) - 10 - hlen) / 8, size = 8, endian = "little")
}

m6 <- gfi_model("mw:6")
x1 <- m6$r(2000, seed = 7)
m2 <- gfi_model("normal:cov=1,0.5,0.5,1", dim = 2)
x2 <- m2$r(1500, seed = 3)
check(is.numeric(x1) && length(x1) == 2000 && identical(dim(x2), c(1500L, 2L)), "samples' shapes")
check(!identical(m6$r(50, seed = 7), m6$r(50, seed = 7, stream = 1)), "streams differ")

# ---- the CLI's bits ----
cli <- Sys.getenv("GFI_CLI")
if (nzchar(cli) && file.exists(cli)) {
  td <- tempfile("gfi-r-")
  dir.create(td)
  f <- function(name) file.path(td, name)
  run <- function(...) {
    args <- c(...)
    # under a sanitizer R runs with the ASan runtime preloaded; the CLI links its own
    out <- if (nzchar(Sys.getenv("LD_PRELOAD")))
      suppressWarnings(system2("env", c("-u", "LD_PRELOAD", cli, args), stdout = TRUE, stderr = TRUE))
    else suppressWarnings(system2(cli, args, stdout = TRUE, stderr = TRUE))
    st <- attr(out, "status")
    if (!is.null(st) && st != 0) stop("gfi ", paste(args, collapse = " "), " failed: ", paste(out, collapse = "\n"))
    out
  }
  meta <- function(out, key) {
    l <- out[startsWith(out, paste0("# ", key, ":"))][1L]
    trimws(sub("^[^:]*:", "", l))
  }
  rows <- function(out) {
    l <- out[nzchar(trimws(out)) & !startsWith(out, "#")]
    strsplit(trimws(l), "[[:space:]]+")
  }
  bits <- function(v) sprintf("%.17g", v)

  run("sample", "--model", "mw:6", "--n", "2000", "--seed", "7", "--out", f("s.npy"))
  check(identical(read_npy(f("s.npy")), x1), "sample mw:6 seed 7: the CLI's bits")
  run("sample", "--model", "normal:cov=1,0.5,0.5,1", "--dim", "2", "--n", "1500", "--seed", "3", "--out", f("s2.npy"))
  check(identical(read_npy(f("s2.npy")), as.vector(t(x2))), "sample 2-D: the CLI's bits")
  run("pdf", "--model", "mw:6", "--at", write_npy(f("x50.npy"), x1[1:50]), "--out", f("pdf.npy"))
  check(identical(read_npy(f("pdf.npy")), m6$d(x1[1:50])), "model pdf: the CLI's bits")

  at <- seq(-3, 3, length.out = 41)
  write_npy(f("d1.npy"), x1)
  write_npy(f("at.npy"), at)
  for (meth in c("direct", "fast", "auto")) {
    run("density", "--data", f("d1.npy"), "--phi", "pow:4", "--R", "2.5", "--at", f("at.npy"),
        "--method", meth, "--out", f("p.npy"))
    k <- fkde(x1, R = 2.5, phi = 4, eval.points = at, method = meth)
    check(identical(k$estimate, read_npy(f("p.npy"))), paste("Fourier 1-D density, method", meth, ": the CLI's bits"))
  }
  w <- abs(sin(seq_len(nrow(x2)) - 1)) + 0.1
  run("density", "--data", write_npy(f("d2.npy"), x2), "--weights", write_npy(f("w.npy"), w), "--phi", "pow:2",
      "--R", "1.5,2.5", "--grid", "-3:3:31,-2:2:21", "--out", f("g.npy"))
  k2 <- fkde(x2, R = c(1.5, 2.5), phi = "pow:2", w = w, gridsize = c(31, 21), xmin = c(-3, -2), xmax = c(3, 2))
  check(identical(as.vector(t(k2$estimate)), read_npy(f("g.npy"))), "Fourier 2-D grid, weights, per-axis R: the CLI's bits")
  check(all(dim(k2$estimate) == c(31, 21)) && isTRUE(all.equal(k2$eval.points[[1]], seq(-3, 3, length.out = 31))),
        "grid's shape and axes")
  out <- run("density", "--data", f("d1.npy"), "--phi", "pow:4", "--R", "lscv", "--at", write_npy(f("a2.npy"), c(0, 0.5)),
             "--out", f("p.npy"))
  kl <- fkde(x1, R = "lscv", eval.points = c(0, 0.5))
  check(identical(bits(kl$R), meta(out, "R")) && identical(kl$estimate, read_npy(f("p.npy"))),
        "LSCV radius and density: the CLI's bits")
  out <- run("density", "--data", f("d1.npy"), "--phi", "poly:0,1,0,0.5", "--R", "2", "--at", f("at.npy"),
             "--out", f("p.npy"))
  check(identical(fkde(x1, R = 2, phi = "poly:0,1,0,0.5", eval.points = at)$estimate, read_npy(f("p.npy"))),
        "polynomial phi: the CLI's bits")
  for (bw in c("pi", "lscv", "0.3")) {
    run("density", "--data", f("d1.npy"), "--kernel", "gauss", "--bandwidth", bw, "--at", f("at.npy"), "--out", f("p.npy"))
    g <- if (bw == "0.3") fkde(x1, h = 0.3, eval.points = at)
         else fkde(x1, H = c(pi = "hpi", lscv = "hlscv")[[bw]], eval.points = at)
    check(identical(g$estimate, read_npy(f("p.npy"))), paste("Gaussian KDE, bandwidth", bw, ": the CLI's bits"))
  }
  # Nadaraya-Watson, vector responses
  xr <- matrix(runif(2 * 400, -1.5, 1.5), ncol = 2)
  yr <- cbind(sin(xr[, 1]) + xr[, 2], cos(xr[, 2]))
  atr <- matrix(runif(60, -1.5, 1.5), ncol = 2)
  write_npy(f("xy.npy"), cbind(xr, yr))
  for (meth in c("direct", "fast")) {
    run("regress", "--data", f("xy.npy"), "--dim", "2", "--phi", "pow:4", "--R", "2,3", "--at", write_npy(f("atr.npy"), atr),
        "--method", meth, "--out", f("r.npy"))
    nw <- fnw(xr, yr, R = c(2, 3), method = meth)
    check(identical(as.vector(t(predict(nw, atr))), read_npy(f("r.npy"))), paste("Fourier NW, method", meth, ": the CLI's bits"))
  }
  run("regress", "--data", write_npy(f("xy2.npy"), cbind(xr, yr[, 1])), "--dim", "2", "--kernel", "gauss",
      "--bandwidth", "scott", "--at", f("atr.npy"), "--out", f("r.npy"))
  check(identical(predict(fnw(xr, yr[, 1], H = "scott"), atr), read_npy(f("r.npy"))),
        "Gaussian NW, Scott's rule: the CLI's bits")
  y1 <- sin(2 * x1[1:500]) + 0.1 * m6$r(500, seed = 9)
  out <- run("regress", "--data", write_npy(f("xy1.npy"), cbind(x1[1:500], y1)), "--R", "loocv", "--at", f("a2.npy"),
             "--out", f("r.npy"))
  nl <- fnw(x1[1:500], y1, R = "loocv")
  check(identical(bits(nl$R), meta(out, "R")) && identical(predict(nl, c(0, 0.5)), read_npy(f("r.npy"))),
        "LOO-CV radius and NW: the CLI's bits")
  # MISE
  r <- rows(run("mise", "--model", "mw:6", "--n", "1000", "--phi", "pow:4", "--R", "3", "--exact"))[[1]]
  e <- fmise("mw:6", R = 3, N = 1000)
  check(identical(bits(c(e$mise, e$bias2, e$var)), r[c(3, 5, 6)]), "exact MISE: the CLI's bits")
  r <- rows(run("mise", "--model", "normal", "--dim", "2", "--n", "100", "--phi", "pow:2", "--R", "2,1.5",
                "--mc", "6", "--seed", "3"))[[1]]
  mc <- fmise("normal", R = c(2, 1.5), N = 100, nreps = 6, seed = 3, phi = 2, dim = 2)
  check(identical(bits(c(mc$mise, mc$se, mc$bias2, mc$var)), r[3:6]), "Monte-Carlo MISE: the CLI's bits")
  r <- rows(run("ropt", "--model", "mw:6", "--n", "1000", "--phi", "pow:4"))[[1]]
  ro <- fropt("mw:6", N = 1000)
  ho <- fhopt("mw:6", N = 1000)
  check(identical(bits(c(ro$R, ro$mise, ho$h, ho$mise)), r[c(2, 3, 6, 7)]), "optimal radius and bandwidth: the CLI's bits")
  # the density rate checks (a build tree's libgfi_exp): the rows `gfi rates` prints
  if (gfi_info()$rates) {
    t <- frates(theorems = "1,3b", l1 = c(3, 4), models = c("normal", "laplace"), nmin = 100, nmax = 1e4,
                per.decade = 2, fit.decades = 1.5, mc = 4, seed = 7, threads = 1)
    out <- run("rates", "--theorems", "1,3b", "--l1", "3,4", "--model", "normal", "--model", "laplace",
               "--nmin", "100", "--nmax", "1e4", "--per-decade", "2", "--fit-decades", "1.5", "--mc", "4",
               "--seed", "7", "--threads", "1")
    cl <- Filter(function(r) length(r) == 18, rows(out))
    f6 <- function(v) tolower(sprintf("%.6f", v))
    mine <- lapply(seq_len(nrow(t)), function(i) with(t[i, ], c(
      name, setting, sprintf("%d", D), sprintf("%d", l), smooth_class, sprintf("%g", order), f6(claimed),
      f6(classical), f6(observed), f6(lo95), f6(hi95), f6(claimed_R), f6(observed_R), sprintf("%d", n_fit),
      sprintf("%d", mc_points), tolower(sprintf("%.3f", mc_max_z)), verdict, condition)))
    check(is.data.frame(t) && identical(mine, cl), "density rate checks: the rows of gfi rates")
    check(identical(t$name, c("1", "1", "1", "1", "3b", "3b", "gauss-kde")), "rate checks' rows")
    check(is_gfi(frates(theorems = "9"), "theorems"), "unknown theorem (rates)")
    check(is_gfi(frates(models = "nosuch", nmax = 1e3), "models"), "unknown model (rates)")
    check(is_gfi(frates(dim = 4), "dim"), "bad dim (rates)")
  } else cat("skip: frates needs the build tree's libgfi_exp\n")
  unlink(td, recursive = TRUE)
} else {
  cat("skip: the CLI comparisons need GFI_CLI (the meson test sets it)\n")
}

# ---- plain R sums ----
sinc <- function(u) ifelse(u == 0, 1, sin(u) / u)
A4 <- 2 * pi / 3  # int sinc^4
xs <- x1[1:300]
q <- c(-1.3, 0, 0.7, 2.2)
ref <- sapply(q, function(t) mean((2.5 / A4) * sinc(2.5 * (t - xs))^4))
check(rel(fkde(xs, R = 2.5, eval.points = q, method = "direct")$estimate, ref) < 1e-13, "sinc^4 density = a plain R sum")
Apoly <- 0.5 * pi + 0.5 * 3 * pi / 4  # int sinc = pi, int sinc^3 = 3 pi / 4
refp <- sapply(q, function(t) mean((2 / Apoly) * (0.5 * sinc(2 * (t - xs)) + 0.5 * sinc(2 * (t - xs))^3)))
check(rel(fkde(xs, R = 2, phi = c(0.5, 0, 0.5), eval.points = q)$estimate, refp) < 1e-12,
      "polynomial-phi density = a plain R sum")
yv <- cbind(sin(xs), xs^2)
K <- sapply(q, function(t) sinc(3 * (t - xs))^4)
refnw <- t(K) %*% yv / colSums(K)
check(rel(predict(fnw(xs, yv, R = 3, method = "direct"), q), refnw) < 1e-12, "Fourier NW (vector y) = a plain R sum")
Kg <- sapply(q, function(t) exp(-(t - xs)^2 / (2 * 0.3^2)))
check(rel(predict(fnw(xs, yv, h = 0.3, method = "direct"), q), t(Kg) %*% yv / colSums(Kg)) < 1e-12,
      "Gaussian NW (vector y) = a plain R sum")

# ---- ks in the same run ----
if (requireNamespace("ks", quietly = TRUE)) {
  xk <- x1[1:400]
  at <- seq(-3, 3, length.out = 33)
  h <- 0.25
  kk <- ks::kde(xk, h = h, eval.points = at, binned = FALSE)
  check(rel(fkde(xk, h = h, eval.points = at, method = "direct")$estimate, kk$estimate) < 1e-12, "kde 1-D = ks::kde at the same h")
  H <- matrix(c(0.2, 0.05, 0.05, 0.15), 2)
  x2k <- x2[1:400, ]
  at2 <- as.matrix(expand.grid(seq(-2, 2, length.out = 7), seq(-2, 2, length.out = 5)))
  kk2 <- ks::kde(x2k, H = H, eval.points = at2, binned = FALSE)
  check(rel(fkde(x2k, H = H, eval.points = at2, method = "direct")$estimate, kk2$estimate) < 1e-12,
        "kde 2-D = ks::kde at the same H")
  # ks bins where gfi sums exactly (hlscv: stats::bw.ucv's binned distances and
  # optimise's tolerance; hpi: KernSmooth::dpik's 401-point grid; Hlscv, Hpi:
  # optim's stopping rule), so the selectors agree to those tolerances, the
  # ones tests/test_select_ks.c uses; Hpi.diag is a closed form in both.
  hg <- fhlscv(xk)
  hk <- ks::hlscv(xk)
  check(abs(hg / hk - 1) < 2e-2, sprintf("hlscv = ks::hlscv within 2%% (%.2g)", abs(hg / hk - 1)))
  lscv_at <- function(h) .Call(gfi:::C_gauss_lscv, matrix(xk), matrix(h^2), 0L)
  check(lscv_at(hg) <= lscv_at(hk), "gfi's hlscv is no worse on the exact LSCV criterion than ks's")
  check(abs(fhpi(xk) / ks::hpi(xk) - 1) < 1e-2, sprintf("hpi = ks::hpi within 1%% (%.2g)", abs(fhpi(xk) / ks::hpi(xk) - 1)))
  check(abs(fhns(xk) / ks::hns(xk) - 1) < 1e-12, "hns = ks::hns")
  check(rel(fHpi(x2k), ks::Hpi(x2k, binned = FALSE)) < 5e-4,
        sprintf("Hpi = ks::Hpi (unbinned) within 5e-4 (%.2g)", rel(fHpi(x2k), ks::Hpi(x2k, binned = FALSE))))
  check(rel(fHpi.diag(x2k), ks::Hpi.diag(x2k, binned = FALSE)) < 1e-10, "Hpi.diag = ks::Hpi.diag (unbinned)")
  x2s <- x2k[1:200, ]
  check(rel(fHlscv(x2s), ks::Hlscv(x2s)) < 2e-2, sprintf("Hlscv = ks::Hlscv within 2%% (%.2g)", rel(fHlscv(x2s), ks::Hlscv(x2s))))
  check(rel(fHns(x2k), ks::Hns(x2k)) < 1e-12, "Hns = ks::Hns")
  # exact MISE of the Gaussian KDE for a normal mixture
  H1 <- matrix(0.3^2)
  mk <- ks::mise.mixt(h = 0.3, mus = c(-1, 1), sigmas = c(2 / 3, 2 / 3), props = c(0.5, 0.5), samp = 200)
  gm <- fmise.gauss("mw:6", N = 200, H = H1)$mise
  check(abs(gm / mk - 1) < 1e-12, sprintf("Gaussian exact MISE = ks::mise.mixt (1-D), rel %.2g", abs(gm / mk - 1)))
  S <- rbind(diag(2), matrix(c(1, 0.3, 0.3, 0.5), 2))
  mk2 <- ks::mise.mixt(H = H, mus = rbind(c(0, 0), c(1, -1)), Sigmas = S, props = c(0.4, 0.6), samp = 300)
  gm2 <- fmise.gauss("mix:0.4*normal|0.6*normal:mean=1,-1;cov=1,0.3,0.3,0.5", N = 300, H = H, dim = 2)$mise
  check(abs(gm2 / mk2 - 1) < 1e-12, sprintf("Gaussian exact MISE = ks::mise.mixt (2-D), rel %.2g", abs(gm2 / mk2 - 1)))
} else {
  cat("skip: the ks comparisons need the R package ks (r-cran-ks)\n")
}

# ---- objects: print, summary, predict, plot ----
k <- fkde(xs, R = 2.5)
check(length(k$estimate) == 151 && abs(summary(k)$integral - 1) < 0.02, "grid and its integral")
check(identical(predict(k, q), fkde(xs, R = 2.5, eval.points = q)$estimate), "predict = evaluation at the points")
k0 <- unserialize(serialize(k, NULL))
check(identical(predict(k0, q), predict(k, q)), "a saved estimate refits its plan")
pdf(NULL)
plot(k); plot(fkde(x2[1:200, ], R = 2, gridsize = 21)); plot(fkde(x2[1:200, ], R = 2, gridsize = 21), display = "image")
plot(flscv(xs, nscan = 20)); plot(fnw(xs, sin(xs), R = 3)); plot(fnw(xs, sin(xs), R = "loocv"), what = "cv")
invisible(dev.off())
invisible(capture.output(print(k), print(summary(k)), print(fnw(xs, yv, R = 2)), print(summary(fnw(xs, yv, R = 2))), print(m6)))
# phi = sinc (odd): far from the data the terms cancel; denom.tol = 0.5 flags it
p <- predict(fnw(xs, sin(xs), R = 3, phi = 1, denom.tol = 0.5), c(0, 50), flags = TRUE)
check(is.factor(p$flags) && identical(as.character(p$flags), c("ok", "small")) && is.nan(p$fit[2]) &&
      p$nflagged == 1, "predict with flags: a cancelling denominator")
w <- tryCatch(predict(fnw(xs, sin(xs), R = 3, phi = 1, denom.tol = 0.5), c(0, 50)), gfi_warning = function(w) w)
check(inherits(w, "gfi_warning") && w$param == "newdata", "a flagged row without flags = TRUE: a gfi_warning")
w <- tryCatch(flscv(xs, R.range = c(0.01, 0.1), nscan = 10), gfi_warning = function(w) w)
check(inherits(w, "gfi_warning") && w$param == "R.range", "an LSCV minimum at the scan's edge: a gfi_warning")
op <- options(gfi.threads = 1)
check(identical(fkde(xs, R = 2.5, eval.points = q)$estimate, fkde(xs, R = 2.5, eval.points = q, threads = 2)$estimate),
      "options(gfi.threads) and threads = give the same bits")
options(op)
check(abs(m6$cf(0) - 1) < 1e-15 && abs(integrate(m6$d, -Inf, Inf)$value - 1) < 1e-6, "model cf and density")
check(nrow(fmise("mw:6", R = 3, N = c(100, 1000))) == 2, "exact MISE table")

# ---- bad input: gfi conditions, never a crash ----
check(is_gfi(fkde(c(xs, NA), R = 2), "x"), "NA in x")
e <- tryCatch(fkde(c(xs[1:5], NA, 1), R = 2), gfi_error = function(e) conditionMessage(e))
check(grepl("row 6", e), "the NA's row is named")
check(is_gfi(fkde(c(xs, Inf), R = 2), "x"), "Inf in x")
check(is_gfi(fkde(xs, R = -1), "R"), "negative R")
check(is_gfi(fkde(xs, R = c(1, 2)), "R"), "wrong number of radii")
check(is_gfi(fkde(xs, R = 1, phi = 9), "phi"), "unknown phi (power 9)")
check(is_gfi(fkde(xs, R = 1, phi = "sigmoid"), "phi"), "unknown phi (name)")
check(is_gfi(fkde(xs, R = 1, w = 1:3), "w"), "wrong number of weights")
check(is_gfi(fkde(xs, R = 1, eval.points = matrix(0, 2, 2)), "eval.points"), "wrong dims of eval.points")
check(is_gfi(fkde(xs, R = 1, eval.points = c(0, NaN)), "eval.points"), "NaN eval.points")
check(is_gfi(fkde(xs, H = matrix(c(1, 2, 2, 1), 2)), "H"), "wrong H dims")
check(is_gfi(fkde(x2[1:50, ], H = matrix(c(1, 2, 2, 1), 2)), "H"), "H not SPD")
check(is_gfi(fkde(xs, h = -1), "h"), "negative h")
check(is_gfi(fkde(xs, H = "Hfoo"), "H"), "unknown selector")
check(is_gfi(fkde(xs, R = 1, threads = -1), "threads"), "bad threads")
check(is_gfi(fkde("a", R = 1), "x"), "non-numeric x")
check(is_gfi(fnw(xs, sin(xs)[1:10], R = 1), "y"), "wrong length of y")
check(is_gfi(fnw(xs, c(sin(xs[-1]), NA), R = 1), "y"), "NA in y")
check(is_gfi(fnw(xs, sin(xs), R = 0), "R"), "zero R (NW)")
# the range of denom.tol is the library's check, named by it (gfi_error_param)
check(is_gfi(fnw(xs, sin(xs), R = 1, denom.tol = 2), "denom.tol"), "denom.tol >= 1 (NW)")
check(is_gfi(fnw(xs, sin(xs), R = 1, denom.tol = NA), "denom.tol"), "NA denom.tol (NW)")
check(is_gfi(fnw(xs, sin(xs), R = "loocv", denom.tol = -1), "denom.tol"), "negative denom.tol (LOO-CV)")
check(is_gfi(fnw(xs, sin(xs), H = matrix(-1)), "H"), "negative H (NW), named by the library")
check(is_gfi(predict(fnw(xs, sin(xs), R = 1), matrix(0, 2, 3)), "newdata"), "wrong dims of newdata")
check(is_gfi(flscv(c(1, NA)), "x"), "NA (LSCV)")
check(is_gfi(flscv(xs, nscan = -1), "nscan"), "bad nscan")
check(is_gfi(predict(k, x = c(0, NA)), "x"), "NA (predict)")
check(is_gfi(fkde(x2[1:20, ], R = 1, gridsize = 1e8), "gridsize"), "a grid too large")
check(is_gfi(floocv(xs, sin(xs), phi = 0), "phi"), "unknown phi (LOO-CV)")
check(is_gfi(fhlscv(x2), "x"), "2-D data to a 1-D selector")
check(is_gfi(fHpi(cbind(xs, NA)), "x"), "NA (Hpi)")
check(is_gfi(fhpi(c(xs, NaN)), "x"), "NaN (hpi)")
check(is_gfi(fhns(c(xs, -Inf)), "x"), "-Inf (hns)")
check(is_gfi(fHns(matrix(c(1, 2, NA, 4), 2)), "x"), "NA (Hns)")
check(is_gfi(fHpi.diag(cbind(xs, Inf)), "x"), "Inf (Hpi.diag)")
check(is_gfi(fHlscv(matrix(rnorm(30), 10)), "x"), "3-D data to Hlscv")
check(is_gfi(fhlscv(letters), "x"), "non-numeric x (hlscv)")
check(is_gfi(m6$cf(c(0, NA)), "t"), "NA (model cf)")
check(is_gfi(m6$d(matrix(0, 2, 2)), "x"), "wrong dims (model density)")
check(is_gfi(plot(fkde(matrix(rnorm(60), 20), R = 1, eval.points = matrix(0, 1, 3))), "x"), "plot of a 3-D estimate")
check(is_gfi(fkde(xs, R = 1, method = "nosuch"), "method"), "unknown method")
check(is_gfi(fkde(xs, R = 1, tol = 2), "tol"), "bad tol")
check(is_gfi(gfi_model("nosuch"), "spec"), "unknown model")
check(is_gfi(gfi_model("mw:6", dim = 0), "dim"), "bad model dim")
check(is_gfi(m6$r(-1, seed = 1), "n"), "negative n")
check(is_gfi(m6$r(3, seed = -1), "seed"), "negative seed")
check(is_gfi(m6$d(c(0, NA)), "x"), "NA (model density)")
check(is_gfi(fmise("mw:6", R = -1, N = 10), "R"), "negative R (MISE)")
check(is_gfi(fmise("mw:6", R = 1, N = 0), "N"), "N = 0 (MISE)")
check(is_gfi(fmise("mw:6", R = 1, N = 10, phi = 12), "phi"), "unknown phi (MISE)")
check(is_gfi(fmise("mw:6", R = 1, N = 10, nreps = 1), "nreps"), "nreps = 1")
check(is_gfi(fmise("uniform", R = 1, N = 10), "model"), "unsupported model (exact MISE)")
check(is_gfi(fropt("mw:6", N = 10, phi = 0), "phi"), "unknown phi (optimal radius)")
check(is_gfi(fmise.gauss("laplace", N = 10, h = 1), "model"), "a truth that is not a mixture (Gaussian MISE)")
check(is_gfi(fhopt("mw:6", N = -1), "N"), "negative N (optimal bandwidth)")

if (fails > 0L) stop(fails, " check(s) failed")
cat("all checks passed\n")
