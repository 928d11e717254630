# Nadaraya-Watson regression: the generalized Fourier estimator and the
# Gaussian baseline, vector responses.

.FLAGS <- c("ok", "empty", "negative", "small")

.fnw_plan <- function(fit) {
  if (fit$type == "fourier")
    .Call(C_nw_plan, fit$x, fit$y, fit$R, NULL, fit$phi, fit$denom.tol, .method(fit$method), fit$tol,
          .threads(fit$threads))
  else
    .Call(C_nw_plan, fit$x, fit$y, NULL, fit$H, 0L, fit$denom.tol, .method(fit$method), fit$tol,
          .threads(fit$threads))
}

floocv <- function(x, y, phi = 4, R.range = NULL, nscan = 100, per.axis = FALSE, denom.tol = 0,
                   method = c("auto", "direct", "fast"), tol = 0, threads = NULL) {
  method <- .choice(method, c("auto", "direct", "fast"), "method")
  x <- .points(x, "x")
  y <- .points(y, "y")
  if (nrow(y) != nrow(x)) gfi_stop("y", "y has ", nrow(y), " rows, x has ", nrow(x), status = 6L, name = "edim")
  if (!is.null(R.range)) R.range <- .radii(R.range, 2L, "R.range")
  .nscan(nscan)
  s <- .Call(C_select_loocv, x, y, .phi(phi), R.range, as.integer(nscan), as.logical(per.axis),
             as.double(denom.tol), .method(method), .tol(tol), .threads(threads))
  s$criterion <- "LOO-CV"
  s$phi <- .phi(phi)
  if (isTRUE(s$at.edge))
    gfi_warn("R.range", sprintf("the LOO-CV minimum is at the edge of the scan [%g, %g]: widen R.range",
                                s$R.range[1L], s$R.range[2L]))
  structure(s, class = "gfi_selection")
}

fnw <- function(x, y, R, phi = 4, H, h, eval.points, denom.tol = 0,
                method = c("auto", "direct", "fast"), tol = 0, threads = NULL) {
  method <- .choice(method, c("auto", "direct", "fast"), "method")
  x <- .points(x, "x")
  D <- ncol(x)
  vector_y <- is.null(dim(y))
  y <- .points(y, "y")
  if (nrow(y) != nrow(x)) gfi_stop("y", "y has ", nrow(y), " rows, x has ", nrow(x), status = 6L, name = "edim")
  if (!is.numeric(denom.tol) || length(denom.tol) != 1L)  # its range: checked by the library
    gfi_stop("denom.tol", "denom.tol must be one number in [0, 1) (0: 1e-8)")
  tol <- .tol(tol)
  .threads(threads)
  gauss <- !missing(H) || !missing(h)
  if (gauss && !missing(R)) gfi_stop("R", "give R (Fourier) or H/h (Gaussian), not both")
  if (!gauss && missing(R)) gfi_stop("R", "give a radius R (Fourier) or a bandwidth H or h (Gaussian)")
  fit <- list(x = x, y = y, vector_y = vector_y, method = method, tol = tol, threads = threads,
              denom.tol = as.double(denom.tol), selection = NULL)
  if (gauss) {
    fit$type <- "gauss"
    fit$H <- if (!missing(H) && is.character(H)) .H_rule(H, x, method, tol, threads)
             else .Hmat(if (missing(H)) NULL else H, if (missing(h)) NULL else h, D)
  } else {
    fit$type <- "fourier"
    fit$phi <- .phi(phi)
    if (is.character(R)) {
      if (!(R[1L] %in% c("loocv", "cv"))) gfi_stop("R", "R must be radii or \"loocv\", got '", R[1L], "'")
      fit$selection <- floocv(x, y, phi = fit$phi, denom.tol = denom.tol, method = method, tol = tol,
                              threads = threads)
      fit$R <- fit$selection$R
    } else {
      fit$R <- .radii(R, D)
    }
  }
  fit$plan <- .fnw_plan(fit)
  fit <- structure(fit, class = "fnw")
  if (!missing(eval.points)) {
    fit$eval.points <- eval.points
    fit$estimate <- predict(fit, eval.points)
  }
  fit
}

predict.fnw <- function(object, newdata, flags = FALSE, ...) {
  D <- ncol(object$x)
  q <- .points(newdata, "newdata", D)
  p <- object$plan
  if (is.null(p) || !.Call(C_ptr_ok, p)) p <- .fnw_plan(object)
  r <- .Call(C_nw_eval, p, q)
  V <- ncol(object$y)
  fit <- matrix(r$fit, nrow = nrow(q), ncol = V, byrow = TRUE)
  if (object$vector_y) fit <- as.vector(fit)
  if (!flags) {
    if (r$nflagged > 0)
      gfi_warn("newdata", sprintf("%d row%s with a vanishing denominator (NaN); predict(..., flags = TRUE) tells why",
                                  as.integer(r$nflagged), if (r$nflagged > 1) "s" else ""))
    return(fit)
  }
  list(fit = fit, flags = factor(.FLAGS[r$flags + 1L], levels = .FLAGS), nflagged = r$nflagged,
       route = r$info)
}

print.fnw <- function(x, ...) {
  cat(if (x$type == "fourier") sprintf("Generalized Fourier Nadaraya-Watson (phi = %s)\n", .phi_label(x$phi))
      else "Gaussian Nadaraya-Watson\n")
  cat(sprintf("  %d points, %d input dimension%s, %d response%s\n", nrow(x$x), ncol(x$x),
              if (ncol(x$x) > 1) "s" else "", ncol(x$y), if (ncol(x$y) > 1) "s" else ""))
  if (x$type == "fourier") cat("  R =", format(x$R, digits = 6), if (!is.null(x$selection)) "(LOO-CV)", "\n")
  else { cat("  H =\n"); print(x$H, digits = 6) }
  invisible(x)
}

summary.fnw <- function(object, ...) {
  res <- object$y - {
    p <- predict(object, object$x)
    if (is.null(dim(p))) matrix(p, ncol = 1L) else p
  }
  structure(list(type = object$type, N = nrow(object$x), D = ncol(object$x), V = ncol(object$y),
                 R = object$R, H = object$H, phi = object$phi, selection = object$selection,
                 mse = colMeans(res^2, na.rm = TRUE), nflagged = sum(!stats::complete.cases(res))),
            class = "summary.fnw")
}

print.summary.fnw <- function(x, ...) {
  cat(if (x$type == "fourier") sprintf("Generalized Fourier Nadaraya-Watson, phi = %s, R = %s\n",
                                       .phi_label(x$phi), paste(format(x$R, digits = 6), collapse = ", "))
      else "Gaussian Nadaraya-Watson\n")
  cat(sprintf("  N = %d, D = %d, V = %d\n", x$N, x$D, x$V))
  cat("  in-sample mean squared residual per response:", format(x$mse, digits = 6), "\n")
  if (x$nflagged > 0) cat("  rows with a vanishing denominator (NaN):", x$nflagged, "\n")
  if (!is.null(x$selection)) cat(sprintf("  LOO-CV at the chosen radius: %.6g\n", x$selection$value))
  invisible(x)
}

plot.fnw <- function(x, what = c("fit", "cv"), n = 401, xlab = "x", ylab = "y", main, ...) {
  what <- .choice(what, c("fit", "cv"), "what")
  if (what == "cv") {
    if (is.null(x$selection)) gfi_stop("what", "the fit has no selection (fit with R = \"loocv\")")
    return(invisible(plot(x$selection, ...)))
  }
  if (ncol(x$x) != 1L) gfi_stop("x", "plot draws fits of one input variable", status = 14L, name = "eunsupported")
  if (missing(main)) main <- if (x$type == "fourier") paste("Fourier NW", .phi_label(x$phi)) else "Gaussian NW"
  r <- range(x$x)
  g <- seq(r[1L], r[2L], length.out = n)
  p <- predict(x, g)
  graphics::plot(x$x[, 1L], x$y[, 1L], pch = 20, col = "grey50", xlab = xlab, ylab = ylab, main = main, ...)
  graphics::lines(g, if (is.null(dim(p))) p else p[, 1L], lwd = 2)
  invisible(x)
}
