/* Where recipes/, kernel-config/, overlays/ and firmware/ live. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>

#include "stage.h"

#ifndef TRILLIAN_DATADIR
#define TRILLIAN_DATADIR "/usr/local/share/trillian"
#endif

static char *dir;
static const char *source; /* why DIR: for --version and the missing-data line */

static bool has(const char *d, const char *sub)
{
    char *p = path_join(d, sub);
    bool yes = is_dir(p);
    free(p);
    return yes;
}

const char *trillian_data_dir(void)
{
    if (dir)
        return dir;
    const char *env = getenv("TRILLIAN_DATA");
    if (env && *env) {
        source = "TRILLIAN_DATA";
        return dir = xstrdup(env);
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *share = NULL; /* PREFIX/share/trillian for PREFIX/bin/trillian */
    if (n > 0) {
        exe[n] = 0;
        /* a source tree: ./trillian, or a variant one level down
           (build-san/trillian) */
        char *d = path_dirname(exe);
        for (int up = 0; up < 2; up++) {
            if (has(d, "recipes") && has(d, "builder")) {
                source = "the source tree the binary is in";
                return dir = d;
            }
            char *parent = path_dirname(d);
            free(d);
            d = parent;
        }
        free(d);
        char *bin = path_dirname(exe);
        if (str_ends(bin, "/bin")) {
            char *prefix = path_dirname(bin);
            share = path_join(prefix, "share/trillian");
            free(prefix);
        }
        free(bin);
    }
    /* installed: beside the binary (wherever PREFIX and DESTDIR put it),
       else where make install was told; when neither is there, the one
       beside the binary is named as missing */
    if (share && is_dir(share)) {
        source = "installed: PREFIX/share/trillian beside PREFIX/bin/trillian";
        return dir = share;
    }
    if (!share || is_dir(TRILLIAN_DATADIR)) {
        free(share);
        source = "built in: make install's DATADIR";
        return dir = xstrdup(TRILLIAN_DATADIR);
    }
    source = "installed: PREFIX/share/trillian beside PREFIX/bin/trillian";
    return dir = share;
}

const char *trillian_data_source(void)
{
    trillian_data_dir();
    return source;
}

bool trillian_data_present(void)
{
    return is_dir(trillian_data_dir());
}

char *trillian_data_path(const char *rel)
{
    return path_join(trillian_data_dir(), rel);
}
