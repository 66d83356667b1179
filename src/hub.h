/*
 * hub.h - the published models (MODEL.md sections 7 and 10): the language table with its
 * repositories, revisions and text rules, the preset voices, and the gated-then-open choice of
 * weights.
 */
#ifndef PTTS_HUB_H
#define PTTS_HUB_H

#include "common.h"

/* Fetch `primary` (the gated weights with voice cloning); when that fails for a reason other
 * than the local disk or a cancel, fetch `fallback` (the open weights) instead and say why
 * through the log (a refusal of the gated repository is explained once per process).
 * *used_primary (may be NULL) says which one *path is. `fallback` may be NULL. */
int ptts_hub_fetch_weights(char **path, const char *primary, const char *fallback,
                           int *used_primary, ptts_error *e);

#endif
