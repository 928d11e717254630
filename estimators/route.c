/* The one route decision of every sum client (bandlimited.h: bl_decide) and
 * the one rule from tol to the accuracy of a squared empirical cf
 * (bl_cf2_tol). Clients describe the two routes' costs in the cost model's
 * units (bl_nufft_cost, bl_direct_units) and what cannot run; only this unit
 * and the engine's own bl_choose / bl_run (bandlimited.c) compare them. */
#include "bandlimited.h"
#include "gfi/status.h"

int bl_decide(gfi_method asked, const bl_cost *c, gfi_method *route, int *reason) {
  int why = GFI_ROUTE_REQUESTED;
  gfi_method r;
  if (asked == GFI_METHOD_DIRECT) {
    if (!c->direct_ok) return GFI_EUNSUPPORTED;
    r = GFI_METHOD_DIRECT;
  } else if (asked == GFI_METHOD_FAST) {
    if (c->fast_why) return c->fast_why == GFI_ROUTE_DIM ? GFI_EUNSUPPORTED : GFI_ERANGE;
    r = GFI_METHOD_FAST;
  } else if (c->fast_why) {
    /* auto: the fast route cannot run */
    if (!c->direct_ok) return c->fast_why == GFI_ROUTE_DIM ? GFI_EUNSUPPORTED : GFI_ERANGE;
    r = GFI_METHOD_DIRECT;
    why = c->fast_why;
  } else if (!c->direct_ok) {
    r = GFI_METHOD_FAST;
    why = GFI_ROUTE_COST;
  } else if (c->fast_bytes > BL_AUTO_MEM_MAX) {
    /* auto does not allocate gigabytes where the direct sum needs none */
    r = GFI_METHOD_DIRECT;
    why = GFI_ROUTE_NODES;
  } else {
    r = c->fast < c->direct ? GFI_METHOD_FAST : GFI_METHOD_DIRECT;
    why = GFI_ROUTE_COST;
  }
  *route = r;
  if (reason) *reason = why;
  return GFI_OK;
}

double bl_tighter(double e, double bound, double tol, double emin) {
  if (!(bound > tol) || !(e > emin)) return 0;
  double e2 = e * BL_TIGHTEN_MARGIN * tol / bound;
  return e2 > emin ? e2 : emin;
}

int bl_keep_fast(gfi_method asked, double bound, double tol, int direct_ok) {
  return asked == GFI_METHOD_FAST || bound <= tol || !direct_ok;
}

double bl_cf2_tol(double tol) {
  double t = (tol > 0 ? tol : GFI_FAST_TOL_DEFAULT) / 3.0;
  return t < BL_CF2_TOL_MIN ? BL_CF2_TOL_MIN : t;
}
