/* Compiler launchers: ccache and distcc in front of a stage's compiler, as
 * the user chose for this machine (`trillian build --ccache`, `--distcc
 * HOSTS`, or TRILLIAN_CCACHE=1 and TRILLIAN_DISTCC_HOSTS). They change how
 * compiles run, never what they produce, so no cache key includes them. */
#ifndef TRILLIAN_LAUNCHER_H
#define TRILLIAN_LAUNCHER_H

#include <stdbool.h>

#include "stage.h"
#include "base/util.h"

/* Checks the environment's choice before a build: the programs it names are
 * installed and the host list is well formed. Returns 0, or 2 after a
 * message saying what to do. */
int launcher_check(void);

/* The command to put before a stage's compiler: "ccache" (with distcc
 * behind it when hosts are set), "distcc", or NULL for none. The
 * environment it needs goes onto ENV: CCACHE_DIR = CACHE/ccache/AREA,
 * CCACHE_BASEDIR = BASEDIR (paths below it are hashed relative, so a rebuild
 * in another scratch directory hits), DISTCC_HOSTS, DISTCC_DIR. ALWAYS_CCACHE
 * uses ccache even when the user did not ask for it (the gcc stages share
 * objects through it). Logs the choice to the stage log. */
char *launcher_prefix(const struct stage_ctx *cx, const char *area, const char *basedir,
                      bool always_ccache, struct strlist *env);

#endif
