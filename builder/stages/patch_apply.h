/* Applying a patch to a source tree, for every kind that patches a source
 * (the kernel's series, the packages of pkg_build). */
#ifndef TRILLIAN_PATCH_APPLY_H
#define TRILLIAN_PATCH_APPLY_H

#include "base/json_out.h"
#include "stage.h"

/* Applies PATCH (-p1, forward only, no backups) in TREE, patch's report to
 * the stage log; a fuzzy hunk is a warning there. 0 when it applied; else
 * patch's exit status, with *WHY (new string, first failure first) naming
 * each rejected file and what patch said of it ("F: Hunk #1 FAILED at 3."),
 * or NULL when patch named none. The caller fails the stage with it. */
int patch_apply(const struct stage_ctx *cx, const char *tree, const char *patch, char **why);

/* patch_apply with patch --fuzz=FUZZ (FUZZ < 0: patch's default). When a
 * patch fails only for want of fuzz (a dry run with the default applies
 * it), *WHY names the hunk that needs it ("F: Hunk #1 succeeded at 4 with
 * fuzz 1.") and *FUZZY (if not NULL) is set. */
int patch_apply_fuzz(const struct stage_ctx *cx, const char *tree, const char *patch, int fuzz,
                     char **why, bool *fuzzy);

/* patch_apply, and on failure cx_fail naming WHERE (a recipe location or
 * "gnu-efi (the kind's own patch)"), the patch and the first rejected hunk.
 * 0, or 1 after cx_fail. */
int patch_apply_or_fail(const struct stage_ctx *cx, const char *where, const char *tree,
                        const char *patch);

/* Applies to TREE, in order, OWN_LIST (paths below the data directory: a
 * kind's own patches, named "LABEL (the kind's own patch)" when one fails;
 * NULL for none), then the files of the stage's F_INPUT_LIST setting KEY
 * (NULL for none; fetched here); logs "LABEL: N patches applied". KEEP and
 * MANIFEST_LIST as for patch_apply_setting. 0, or 1 after cx_fail. */
int patch_apply_all(const struct stage_ctx *cx, const char *label, const char *tree,
                    const char *const *own_list, const char *key, const char *keep,
                    json_object *manifest_list);

/* Applies the files of the stage's F_INPUT_LIST setting KEY (paths or pinned
 * downloads, fetched here) to TREE in order; with KEEP, copies each into
 * directory KEEP as NN-NAME (what a later stage rebuilding the same source
 * applies again: the stage-2 gcc) and adds their names and sha256 to
 * MANIFEST_LIST when given. 0, or 1 after cx_fail. */
int patch_apply_setting(const struct stage_ctx *cx, const char *key, const char *tree,
                        const char *keep, json_object *manifest_list);

/* Applies KEEP-directory patches (patch_apply_setting's copies) in name
 * order; a missing directory is no patches. 0, or 1 after cx_fail. */
int patch_apply_dir(const struct stage_ctx *cx, const char *what, const char *dir,
                    const char *tree);

#endif
