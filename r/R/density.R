# Density estimation: the generalized Fourier estimator and the Gaussian KDE
# with ks's bandwidth conventions.

.default_gridsize <- function(D) c(151L, 151L, 51L)[D]

# The grid's ends: the data's box widened by a tenth of its width per side
# (and, for the Gaussian, by at least 3.7 kernel standard deviations, as ks).
.grid_ends <- function(x, H = NULL) {
  lo <- apply(x, 2L, min)
  hi <- apply(x, 2L, max)
  pad <- 0.1 * (hi - lo)
  if (!is.null(H)) pad <- pmax(pad, 3.7 * sqrt(diag(H)))
  pad[pad == 0] <- 1
  list(lo = lo - pad, hi = hi + pad)
}

# A Gaussian bandwidth matrix from a selector name (ks's names).
.H_rule <- function(rule, x, method, tol, threads) {
  map <- c(hlscv = "lscv", Hlscv = "lscv", hpi = "dpi", Hpi = "pi", Hpi.diag = "pi-diag",
           hns = "ns", Hns = "ns", scott = "scott", silverman = "silverman")
  if (!(rule %in% names(map)))
    gfi_stop("H", "unknown bandwidth selector '", rule, "'; expected one of ",
             paste(names(map), collapse = ", "))
  .Call(C_bandwidth, x, map[[rule]], .method(method), .tol(tol), .threads(threads))
}

.fkde_plan <- function(fit) {
  if (fit$type == "fourier")
    .Call(C_density_plan, fit$x, fit$w, fit$R, NULL, fit$phi, .method(fit$method), fit$tol,
          .threads(fit$threads))
  else
    .Call(C_density_plan, fit$x, fit$w, NULL, fit$H, 0L, .method(fit$method), fit$tol,
          .threads(fit$threads))
}

.plan_of <- function(fit) {
  p <- fit$plan
  if (is.null(p) || !.Call(C_ptr_ok, p)) p <- .fkde_plan(fit)
  p
}

# Evaluate on the grid lo:hi:n; R's array order (first axis fastest).
.eval_grid <- function(plan, lo, hi, n) {
  D <- length(n)
  v <- .Call(C_density_grid, plan, as.double(lo), as.double(hi), as.double(n))
  info <- attr(v, "info")
  axes <- lapply(seq_len(D), function(j)
    if (n[j] == 1) lo[j] else lo[j] + (0:(n[j] - 1)) * ((hi[j] - lo[j]) / (n[j] - 1)))
  est <- if (D == 1L) as.vector(v) else aperm(array(as.vector(v), rev(n)), D:1)
  list(axes = axes, estimate = est, info = info)
}

fkde <- function(x, R, phi = 4, w = NULL, eval.points, gridsize, xmin, xmax, H, h,
                 method = c("auto", "direct", "fast"), tol = 0, threads = NULL) {
  method <- .choice(method, c("auto", "direct", "fast"), "method")
  x <- .points(x, "x")
  N <- nrow(x)
  D <- ncol(x)
  if (N == 0L) gfi_stop("x", "x has no rows", status = 3L, name = "eempty")
  if (!is.null(w)) {
    if (!is.numeric(w) || length(w) != N)
      gfi_stop("w", "w must have one weight per row of x (", N, ")", status = 6L, name = "edim")
    w <- as.double(w)
  }
  tol <- .tol(tol)
  .threads(threads)
  gauss <- !missing(H) || !missing(h)
  if (gauss && !missing(R)) gfi_stop("R", "give R (Fourier) or H/h (Gaussian), not both")
  if (!gauss && missing(R)) gfi_stop("R", "give a radius R (Fourier estimator) or a bandwidth H or h (Gaussian)")
  fit <- list(x = x, w = w, method = method, tol = tol, threads = threads, selection = NULL)
  if (gauss) {
    if (!missing(H) && is.character(H)) {
      if (!is.null(w)) gfi_stop("w", "the bandwidth selectors weigh the points equally; not with weights")
      Hm <- .H_rule(H, x, method, tol, threads)
      fit$selector <- H
    } else {
      Hm <- .Hmat(if (missing(H)) NULL else H, if (missing(h)) NULL else h, D)
    }
    fit$type <- "gauss"
    fit$H <- Hm
  } else {
    fit$type <- "fourier"
    fit$phi <- .phi(phi)
    if (is.character(R)) {
      if (!identical(R, "lscv")) gfi_stop("R", "R must be radii or \"lscv\", got '", R[1L], "'")
      if (!is.null(w)) gfi_stop("w", "R = \"lscv\" weighs the points equally; not with weights")
      fit$selection <- flscv(x, phi = fit$phi, method = method, tol = tol, threads = threads)
      fit$R <- fit$selection$R
    } else {
      fit$R <- .radii(R, D)
    }
  }
  fit$plan <- .fkde_plan(fit)
  if (!missing(eval.points)) {
    q <- .points(eval.points, "eval.points", D)
    v <- .Call(C_density_eval, fit$plan, q, "eval.points")
    fit$eval.points <- if (D == 1L) as.vector(q) else q
    fit$estimate <- as.vector(v)
    fit$route <- attr(v, "info")
    fit$gridded <- FALSE
  } else {
    if (D > 3L) gfi_stop("eval.points", "D > 3: give eval.points (a grid needs D <= 3)", status = 6L, name = "edim")
    n <- if (missing(gridsize)) rep(.default_gridsize(D), D) else rep_len(gridsize, D)
    ends <- .grid_ends(x, fit$H)
    lo <- if (missing(xmin)) ends$lo else rep_len(as.double(xmin), D)
    hi <- if (missing(xmax)) ends$hi else rep_len(as.double(xmax), D)
    g <- .eval_grid(fit$plan, lo, hi, n)
    fit$eval.points <- if (D == 1L) g$axes[[1L]] else g$axes
    fit$estimate <- g$estimate
    fit$route <- g$info
    fit$gridded <- TRUE
  }
  structure(fit, class = "fkde")
}

predict.fkde <- function(object, ..., x) {
  if (missing(x)) {
    dots <- list(...)
    if (length(dots) == 0L) gfi_stop("x", "give the points x to evaluate at")
    x <- dots[[1L]]
  }
  D <- ncol(object$x)
  q <- .points(x, "x", D)
  as.vector(.Call(C_density_eval, .plan_of(object), q, "x"))
}

print.fkde <- function(x, ...) {
  D <- ncol(x$x)
  cat(if (x$type == "fourier") sprintf("Generalized Fourier density estimate (phi = %s)\n", .phi_label(x$phi))
      else "Gaussian kernel density estimate\n")
  cat(sprintf("  %d points in %d dimension%s", nrow(x$x), D, if (D > 1) "s" else ""),
      if (!is.null(x$w)) "(weighted)", "\n")
  if (x$type == "fourier") {
    cat("  R =", format(x$R, digits = 6), if (!is.null(x$selection)) "(LSCV)", "\n")
  } else {
    cat("  H =", if (D == 1L) format(x$H[1L], digits = 6) else "", if (!is.null(x$selector)) paste0("(", x$selector, ")"), "\n")
    if (D > 1L) print(x$H, digits = 6)
  }
  cat(sprintf("  evaluated at %s; route %s\n",
              if (x$gridded) paste0("a grid of ", paste(lengths(if (D == 1L) list(x$eval.points) else x$eval.points), collapse = " x "))
              else paste(length(x$estimate), "points"), x$route$route))
  invisible(x)
}

summary.fkde <- function(object, ...) {
  D <- ncol(object$x)
  s <- list(type = object$type, N = nrow(object$x), D = D, R = object$R, H = object$H,
            phi = object$phi, route = object$route, range = range(object$estimate))
  if (object$gridded) {
    ax <- if (D == 1L) list(object$eval.points) else object$eval.points
    cell <- prod(vapply(ax, function(a) if (length(a) > 1L) a[2L] - a[1L] else 1, 0))
    s$integral <- sum(object$estimate) * cell
  }
  structure(s, class = "summary.fkde")
}

print.summary.fkde <- function(x, ...) {
  cat(if (x$type == "fourier") sprintf("Generalized Fourier density estimate, phi = %s, R = %s\n",
                                       .phi_label(x$phi), paste(format(x$R, digits = 6), collapse = ", "))
      else "Gaussian kernel density estimate\n")
  cat(sprintf("  N = %d, D = %d; estimate in [%.6g, %.6g]\n", x$N, x$D, x$range[1L], x$range[2L]))
  if (!is.null(x$integral)) cat(sprintf("  integral over the grid (Riemann sum): %.6g\n", x$integral))
  cat(sprintf("  route: %s", x$route$route))
  if (identical(x$route$route, "fast")) cat(sprintf(", error bound %.3g (absolute)", x$route$bound_abs))
  cat("\n")
  invisible(x)
}

plot.fkde <- function(x, display = c("contour", "image", "persp"), add = FALSE, xlab, ylab, main, ...) {
  display <- .choice(display, c("contour", "image", "persp"), "display")
  D <- ncol(x$x)
  if (missing(main)) main <- if (x$type == "fourier") paste("Fourier", .phi_label(x$phi)) else "Gaussian KDE"
  if (D == 1L) {
    o <- order(x$eval.points)
    if (missing(xlab)) xlab <- "x"
    if (missing(ylab)) ylab <- "density"
    if (add) graphics::lines(x$eval.points[o], x$estimate[o], ...)
    else graphics::plot(x$eval.points[o], x$estimate[o], type = "l", xlab = xlab, ylab = ylab, main = main, ...)
  } else if (D == 2L && x$gridded) {
    if (missing(xlab)) xlab <- "x1"
    if (missing(ylab)) ylab <- "x2"
    ax <- x$eval.points
    if (display == "contour") graphics::contour(ax[[1L]], ax[[2L]], x$estimate, add = add, xlab = xlab,
                                                ylab = ylab, main = main, ...)
    else if (display == "image") graphics::image(ax[[1L]], ax[[2L]], x$estimate, add = add, xlab = xlab,
                                                 ylab = ylab, main = main, ...)
    else graphics::persp(ax[[1L]], ax[[2L]], x$estimate, xlab = xlab, ylab = ylab, main = main, ...)
  } else {
    gfi_stop("x", "plot draws 1-D estimates and 2-D estimates on a grid", status = 14L, name = "eunsupported")
  }
  invisible(x)
}

# ---- bandwidth selectors with ks's names and conventions ----

.h1 <- function(x, rule, method, tol, threads) {
  x <- .points(x, "x")
  if (ncol(x) != 1L) gfi_stop("x", "a 1-D selector: x must be a vector", status = 6L, name = "edim")
  sqrt(.H_rule(rule, x, method, tol, threads)[1L])
}
.Hd <- function(x, rule, method, tol, threads) .H_rule(rule, .points(x, "x"), method, tol, threads)

fhlscv <- function(x, method = "auto", tol = 0, threads = NULL) .h1(x, "hlscv", method, tol, threads)
fhpi <- function(x, method = "auto", tol = 0, threads = NULL) .h1(x, "hpi", method, tol, threads)
fhns <- function(x) .h1(x, "hns", "auto", 0, NULL)
fHlscv <- function(x, method = "auto", tol = 0, threads = NULL) .Hd(x, "Hlscv", method, tol, threads)
fHpi <- function(x, method = "auto", tol = 0, threads = NULL) .Hd(x, "Hpi", method, tol, threads)
fHpi.diag <- function(x, method = "auto", tol = 0, threads = NULL) .Hd(x, "Hpi.diag", method, tol, threads)
fHns <- function(x) .Hd(x, "Hns", "auto", 0, NULL)

# ---- radius selection and its curve ----

flscv <- function(x, phi = 4, R.range = NULL, nscan = 100, per.axis = FALSE,
                  method = c("auto", "direct", "fast"), tol = 0, threads = NULL) {
  method <- .choice(method, c("auto", "direct", "fast"), "method")
  x <- .points(x, "x")
  if (!is.null(R.range)) R.range <- .radii(R.range, 2L, "R.range")
  .nscan(nscan)
  s <- .Call(C_select_lscv, x, .phi(phi), R.range, as.integer(nscan), as.logical(per.axis),
             .method(method), .tol(tol), .threads(threads))
  s$criterion <- "LSCV"
  s$phi <- .phi(phi)
  if (isTRUE(s$at.edge))
    gfi_warn("R.range", sprintf("the LSCV minimum is at the edge of the scan [%g, %g]: widen R.range",
                                s$R.range[1L], s$R.range[2L]))
  structure(s, class = "gfi_selection")
}

print.gfi_selection <- function(x, ...) {
  cat(sprintf("%s radius: R = %s (criterion %.8g, route %s)\n", x$criterion,
              paste(format(x$R, digits = 8), collapse = ", "), x$value, x$route))
  cat(sprintf("  scan of %d radii over [%.4g, %.4g]; %d local minim%s%s\n", as.integer(x$nscan),
              x$R.range[1L], x$R.range[2L], as.integer(x$nlocal), if (x$nlocal == 1) "um" else "a",
              if (x$at.edge) "; the minimum is at the edge of the scan" else ""))
  invisible(x)
}

plot.gfi_selection <- function(x, xlab = "R", ylab = x$criterion, main = paste(x$criterion, "curve"), ...) {
  cv <- x$curve
  ok <- is.finite(cv[, 2L])
  graphics::plot(cv[ok, 1L], cv[ok, 2L], type = "l", log = "x", xlab = xlab, ylab = ylab, main = main, ...)
  graphics::abline(v = x$R[1L], lty = 2)
  invisible(x)
}
