/* `trillian kernel-bump`: moves a recipe's kernel to another release. */
#ifndef TRILLIAN_BUMP_H
#define TRILLIAN_BUMP_H

#include <stdbool.h>

#include "engine/engine.h"

struct bump_opts {
    const char *version; /* the upstream release, e.g. 7.2.9 */
    const char *url;     /* the tarball's URL, or NULL: Debian's pool for VERSION */
    const char *sha256;  /* the sha256 it must have, or NULL: the download's */
    const char *cache;   /* where the download is kept (CACHE/downloads/) */
    bool force;          /* write even if a patch does not apply */
};

/* Downloads the new source, tries R's kernel patches on it (one line per
 * patch on stdout) and, if all apply or O->force, rewrites kernel.url and
 * kernel.sha256 where the recipe (or its include) sets them. Returns the
 * exit status: 0 written (with --force, also when a patch did not apply),
 * 1 a patch does not apply (nothing written), 2 a usage or download error. */
int bump_kernel(struct recipe *r, const struct bump_opts *o);

#endif
