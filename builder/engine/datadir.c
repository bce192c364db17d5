/* Where recipes/, kernel-config/, overlays/ and firmware/ live. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>

#include "stage.h"

#ifndef TRILLIAN_DATADIR
#define TRILLIAN_DATADIR "/usr/local/share/trillian"
#endif

const char *trillian_data_dir(void)
{
    static char *dir;
    if (dir)
        return dir;
    const char *env = getenv("TRILLIAN_DATA");
    if (env && *env)
        return dir = xstrdup(env);
    /* Running from a source tree: the binary sits at its top. */
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        /* ./trillian, or a variant one level down (build-san/trillian) */
        char *d = path_dirname(exe);
        for (int up = 0; up < 2; up++) {
            char *probe = path_join(d, "recipes");
            char *probe2 = path_join(d, "builder");
            bool tree = is_dir(probe) && is_dir(probe2);
            free(probe);
            free(probe2);
            if (tree)
                return dir = d;
            char *parent = path_dirname(d);
            free(d);
            d = parent;
        }
        free(d);
        /* installed: PREFIX/bin/trillian beside PREFIX/share/trillian */
        char *bin = path_dirname(exe);
        d = path_dirname(bin);
        free(bin);
        char *share = path_join(d, "share/trillian");
        char *probe = path_join(share, "recipes");
        bool installed = is_dir(probe);
        free(probe);
        free(d);
        if (installed)
            return dir = share;
        free(share);
    }
    return dir = xstrdup(TRILLIAN_DATADIR);
}

char *trillian_data_path(const char *rel)
{
    return path_join(trillian_data_dir(), rel);
}
