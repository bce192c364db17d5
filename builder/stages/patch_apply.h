/* Applying a patch to a source tree, for every kind that patches a source
 * (the kernel's series, the packages of pkg_build). */
#ifndef TRILLIAN_PATCH_APPLY_H
#define TRILLIAN_PATCH_APPLY_H

#include "stage.h"

/* Applies PATCH (-p1, forward only, no backups) in TREE, patch's report to
 * the stage log; a fuzzy hunk is a warning there. 0 when it applied; else
 * patch's exit status, with *WHY (new string, first failure first) naming
 * each rejected file and what patch said of it ("F: Hunk #1 FAILED at 3."),
 * or NULL when patch named none. The caller fails the stage with it. */
int patch_apply(const struct stage_ctx *cx, const char *tree, const char *patch, char **why);

#endif
