/* Private helpers shared by model.c, marron_wand.c and model_parse.c.
 * Not installed; the struct itself stays private to model.c. */
#ifndef GFI_MODEL_INTERNAL_H
#define GFI_MODEL_INTERNAL_H

#include "gfi/model.h"

/* Replace the text gfi_model_describe returns (copied). GFI_ENOMEM or
 * GFI_EINVAL on failure; the model is unchanged then. */
int gfi_model_set_description(gfi_model *m, const char *desc);

/* Largest node count of the Gauss-Jacobi rule behind the Beta cf. */
#define GFI_BETA_CF_MAX_NODES 4000

#endif
