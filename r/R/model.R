# Truth models from the CLI's specification strings, and their MISE.

gfi_model <- function(spec, dim = 1) {
  if (!is.character(spec) || length(spec) != 1L || is.na(spec))
    gfi_stop("spec", "spec must be one string such as \"mw:6\"", status = 10L, name = "emodel")
  if (!is.numeric(dim) || length(dim) != 1L || is.na(dim) || dim < 1 || dim != round(dim))
    gfi_stop("dim", "dim must be an integer >= 1", status = 6L, name = "edim")
  dim <- as.integer(dim)
  desc <- .Call(C_model_describe, spec, dim)
  m <- list(spec = spec, dim = dim, description = desc)
  m$r <- function(n, seed, stream = 0) {
    if (missing(seed)) gfi_stop("seed", "give a seed: samples come from gfi's stream (seed, stream)")
    v <- .Call(C_model_sample, spec, dim, as.double(n), as.double(seed), as.double(stream))
    if (dim == 1L) v else matrix(v, ncol = dim, byrow = TRUE)
  }
  m$d <- function(x) .Call(C_model_pdf, spec, dim, .points(x, "x", dim))
  m$cf <- function(t) .Call(C_model_cf, spec, dim, .points(t, "t", dim))
  structure(m, class = "gfi_model")
}

print.gfi_model <- function(x, ...) {
  cat(sprintf("gfi model \"%s\" (%s), D = %d\n", x$spec, x$description, x$dim))
  invisible(x)
}

.as_model <- function(model, dim) if (inherits(model, "gfi_model")) model else gfi_model(model, dim)

.mise_df <- function(rows) {
  df <- do.call(rbind, lapply(rows, function(r) as.data.frame(r[setdiff(names(r), "R")])))
  rownames(df) <- NULL
  df
}

fmise <- function(model, R, N, phi = 4, dim = 1, nreps = NULL, seed = 0,
                  ise = c("auto", "plancherel", "grid"), parts = TRUE,
                  method = c("auto", "direct", "fast"), tol = 0, resolution = NULL, threads = NULL) {
  ise <- .choice(ise, c("auto", "plancherel", "grid"), "ise")
  method <- .choice(method, c("auto", "direct", "fast"), "method")
  m <- .as_model(model, dim)
  if (!is.numeric(N) || length(N) < 1L || anyNA(N)) gfi_stop("N", "N must be numbers >= 1", status = 3L, name = "eempty")
  R <- .radii(R, m$dim)
  k <- .phi(phi)
  th <- .threads(threads)
  rows <- lapply(N, function(n) {
    r <- if (is.null(nreps)) .Call(C_mise_exact, m$spec, m$dim, k, as.double(n), R,
                                  if (is.null(resolution)) NULL else as.double(resolution), th)
         else .Call(C_mise_mc, m$spec, m$dim, k, as.double(n), R, as.double(nreps), as.double(seed),
                    c(auto = 0L, plancherel = 1L, grid = 2L)[[ise]], as.logical(parts), .method(method),
                    .tol(tol), th)
    c(list(N = n), r)
  })
  .mise_df(rows)
}

fropt <- function(model, N, phi = 4, dim = 1, direction = NULL, resolution = NULL, threads = NULL) {
  m <- .as_model(model, dim)
  if (!is.numeric(N) || length(N) < 1L || anyNA(N)) gfi_stop("N", "N must be numbers >= 1", status = 3L, name = "eempty")
  dir <- if (is.null(direction)) NULL else .radii(direction, m$dim, "direction")
  k <- .phi(phi)
  th <- .threads(threads)
  rows <- lapply(N, function(n) {
    r <- .Call(C_ropt, m$spec, m$dim, k, as.double(n), dir, th)
    c(list(N = n, R = attr(r, "r")), r)
  })
  df <- do.call(rbind, lapply(rows, as.data.frame))
  rownames(df) <- NULL
  df
}

fmise.gauss <- function(model, N, H, h, dim = 1) {
  m <- .as_model(model, dim)
  Hm <- .Hmat(if (missing(H)) NULL else H, if (missing(h)) NULL else h, m$dim)
  rows <- lapply(N, function(n) c(list(N = n), .Call(C_mise_gauss, m$spec, m$dim, as.double(n), Hm)))
  .mise_df(rows)
}

fhopt <- function(model, N, dim = 1) {
  m <- .as_model(model, dim)
  rows <- lapply(N, function(n) {
    r <- .Call(C_mise_gauss_hopt, m$spec, m$dim, as.double(n))
    c(list(N = n, h = attr(r, "h")), r)
  })
  df <- do.call(rbind, lapply(rows, as.data.frame))
  rownames(df) <- NULL
  df
}

frates <- function(theorems = NULL, models = NULL, dim = 1, l1 = NULL, nmin = NULL, nmax = NULL,
                   per.decade = NULL, fit.decades = NULL, mc = NULL, mc.nmax = NULL, seed = 1,
                   slack = 0.02, full = FALSE, threads = NULL) {
  if (!is.null(theorems)) {
    if (!is.character(theorems)) gfi_stop("theorems", "theorems must be strings such as \"1\", \"3a\", \"3b\"")
    theorems <- unlist(strsplit(theorems, ",", fixed = TRUE))
  }
  if (!is.null(models) && (!is.character(models) || anyNA(models) || any(!nzchar(models)) || any(grepl("[[:space:]]", models))))
    gfi_stop("models", "models must be non-empty specification strings", status = 10L, name = "emodel")
  if (!is.numeric(dim) || length(dim) != 1L || is.na(dim) || dim < 1 || dim > 3 || dim != round(dim))
    gfi_stop("dim", "dim must be 1, 2 or 3", status = 6L, name = "edim")
  if (!is.null(l1)) {
    if (!is.numeric(l1) || anyNA(l1) || any(l1 != round(l1))) gfi_stop("l1", "l1 must be integer powers")
    l1 <- as.integer(l1)
  }
  num <- function(v, name) {
    if (is.null(v)) return(-1)
    if (!is.numeric(v) || length(v) != 1L || !is.finite(v) || v <= 0)
      gfi_stop(name, name, " must be a finite number > 0")
    as.double(v)
  }
  nums <- c(num(nmin, "nmin"), num(nmax, "nmax"), num(per.decade, "per.decade"),
            num(fit.decades, "fit.decades"), num(mc.nmax, "mc.nmax"))
  if (!is.null(mc) && (!is.numeric(mc) || length(mc) != 1L || is.na(mc) || mc < 0 || mc != round(mc)))
    gfi_stop("mc", "mc must be an integer >= 0 (0: no Monte-Carlo check)")
  if (!is.numeric(seed) || length(seed) != 1L || is.na(seed) || seed < 0 || seed > 2^53 || seed != round(seed))
    gfi_stop("seed", "seed must be an integer in [0, 2^53]")
  if (!is.numeric(slack) || length(slack) != 1L || !is.finite(slack)) gfi_stop("slack", "slack must be a finite number")
  .Call(C_density_rates, theorems, models, as.integer(dim), l1, nums, if (is.null(mc)) -1 else as.double(mc),
        as.double(seed), as.double(slack), isTRUE(full), .threads(threads))
}
