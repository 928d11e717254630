/* gfi: generalized Fourier integral estimators. Umbrella header. */
#ifndef GFI_GFI_H
#define GFI_GFI_H
#include "export.h"
#include "status.h"
#include "validate.h"
#include "opts.h"
#include "kernel.h"
#include "rng.h"
#include "model.h"
#include "regfun.h"
#include "table.h"
#include "npy.h"
#include "stats.h"
#include "progress.h"
#include "dat.h"
#include "density.h"
#include "attention.h"
#include "regression.h"
#include "regression_mse.h"
#include "rpe.h"
#include "flt.h"
#include "mise.h"
#endif
