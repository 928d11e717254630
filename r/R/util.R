# Conditions, options and argument checks shared by the package's functions.

# Called from C (src/gfi_r.c) and from R: signals a condition of class
# c("gfi_<status>", "gfi_error", "error", "condition") carrying the library's
# status code, the parameter's name and the message.
.gfi_signal <- function(status, name, param, message) {
  if (nzchar(param) && !startsWith(message, paste0(param, ":")) && !startsWith(message, paste0(param, " ")))
    message <- paste0(param, ": ", message)
  cond <- structure(class = c(paste0("gfi_", name), "gfi_error", "error", "condition"),
                    list(message = message, call = NULL, status = as.integer(status), param = param))
  stop(cond)
}

# A warning of class c("gfi_warning", "warning", "condition").
gfi_warn <- function(param, ...) {
  w <- structure(class = c("gfi_warning", "warning", "condition"),
                 list(message = paste0(...), call = NULL, param = param))
  warning(w)
}

gfi_stop <- function(param, ..., status = 1L, name = "einval")
  .gfi_signal(status, name, param, paste0(...))

.threads <- function(threads) {
  if (is.null(threads)) threads <- getOption("gfi.threads", 0L)
  if (!is.numeric(threads) || length(threads) != 1L || is.na(threads) || threads < 0 ||
      threads != round(threads))
    gfi_stop("threads", "threads must be an integer >= 0 (0: all cores), got ", format(threads))
  as.integer(threads)
}

# match.arg with a gfi condition: the first choice when the argument is left
# at its default vector, else one of the choices.
.choice <- function(arg, choices, name) {
  if (identical(arg, choices)) return(choices[1L])
  if (!is.character(arg) || length(arg) != 1L || is.na(arg) || !(arg %in% choices))
    gfi_stop(name, name, " must be one of ", paste0("\"", choices, "\"", collapse = ", "))
  arg
}

.method <- function(method) {
  m <- c(auto = 0L, direct = 1L, fast = 2L)
  if (!is.character(method) || length(method) < 1L || !(method[1L] %in% names(m)))
    gfi_stop("method", "method must be \"auto\", \"direct\" or \"fast\"")
  m[[method[1L]]]
}

.tol <- function(tol) {
  if (!is.numeric(tol) || length(tol) != 1L || is.na(tol) || tol < 0 || tol >= 1)
    gfi_stop("tol", "tol must be a number in [0, 1) (0: 1e-10)")
  as.double(tol)
}

# phi: an integer power l (phi = z^l), "pow:L", or polynomial coefficients
# a_1..a_deg ("poly:a1,a2,..." or a numeric vector of length > 1).
.phi <- function(phi) {
  if (is.character(phi) && length(phi) == 1L) {
    s <- trimws(phi)
    if (grepl("^(pow:)?[0-9]+$", s)) return(as.integer(sub("^pow:", "", s)))
    if (startsWith(s, "poly:")) {
      a <- suppressWarnings(as.numeric(strsplit(substring(s, 6L), ",", fixed = TRUE)[[1L]]))
      if (length(a) == 0L || anyNA(a)) gfi_stop("phi", "phi '", phi, "': expected poly:a1,a2,...")
      return(a)
    }
    gfi_stop("phi", "phi '", phi, "': expected an integer l, 'pow:L' or 'poly:a1,a2,...'")
  }
  if (is.numeric(phi) && length(phi) == 1L && !is.na(phi) && phi == round(phi))
    return(as.integer(phi))
  if (is.numeric(phi) && length(phi) > 1L) return(as.double(phi))
  gfi_stop("phi", "phi must be an integer power 1..8 or polynomial coefficients, got ",
           paste(format(phi), collapse = ","))
}

.phi_label <- function(phi) {
  if (is.integer(phi)) sprintf("sinc^%d", phi) else paste0("poly(", paste(format(phi), collapse = ","), ")")
}

# A double matrix of points (a vector is one column, or one row of a D-column
# object when D > 1). NA/Inf are reported by the C side with their row.
.points <- function(x, name, D = NULL) {
  if (is.data.frame(x)) x <- as.matrix(x)
  if (!is.numeric(x) && !is.logical(x))
    gfi_stop(name, name, " must be numeric (a vector or a matrix), got ", class(x)[1L])
  if (is.null(dim(x))) {
    x <- if (!is.null(D) && D > 1L && length(x) == D) matrix(as.double(x), nrow = 1L)
         else matrix(as.double(x), ncol = 1L)
  } else {
    if (length(dim(x)) != 2L) gfi_stop(name, name, " must be a vector or a matrix", status = 6L, name = "edim")
    storage.mode(x) <- "double"
  }
  if (!is.null(D) && ncol(x) != D)
    gfi_stop(name, name, " has ", ncol(x), " columns, expected ", D, status = 6L, name = "edim")
  dimnames(x) <- NULL
  x
}

# A bandwidth matrix from h (scalar: h^2 I; D values: diag(h^2)) or H.
.Hmat <- function(H, h, D) {
  if (!is.null(H)) {
    H <- as.matrix(H)
    storage.mode(H) <- "double"
    if (D == 1L && length(H) == 1L) H <- matrix(H, 1L, 1L)
    if (!identical(dim(H), c(D, D)))
      gfi_stop("H", "H must be a ", D, " x ", D, " matrix", status = 6L, name = "edim")
    return(H)
  }
  if (!is.numeric(h) || !(length(h) %in% c(1L, D)) || anyNA(h))
    gfi_stop("h", "h must be one bandwidth or one per axis", status = 17L, name = "ebandwidth")
  if (any(!is.finite(h)) || any(h <= 0))
    gfi_stop("h", "h must be positive and finite", status = 17L, name = "ebandwidth")
  diag(rep_len(as.double(h)^2, D), D)
}

.nscan <- function(nscan) {
  if (!is.numeric(nscan) || length(nscan) != 1L || is.na(nscan) || nscan < 3 || nscan > 1e6 ||
      nscan != round(nscan))
    gfi_stop("nscan", "nscan must be an integer in 3..1e6")
}

.radii <- function(R, D, name = "R") {
  if (!is.numeric(R) || !(length(R) %in% c(1L, D)) || anyNA(R))
    gfi_stop(name, name, " must be one radius or one per axis (", D, ")", status = 4L, name = "eradius")
  if (any(!is.finite(R)) || any(R <= 0))
    gfi_stop(name, name, " must be positive and finite, got ", paste(format(R), collapse = ","),
             status = 4L, name = "eradius")
  rep_len(as.double(R), D)
}

gfi_info <- function() c(.Call(C_info), rates = .Call(C_have_rates))
