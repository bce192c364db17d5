/* Compiler launchers (launcher.h). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher.h"
#include "base/run_command.h"

static bool want_ccache(void)
{
    const char *v = getenv("TRILLIAN_CCACHE");
    return v && v[0] && strcmp(v, "0") != 0;
}

/* TRILLIAN_CCACHE=0: no ccache even where it is on by default (the gcc
 * stages, the emulators). A cache whose every compile runs once (a new
 * machine's first test run) pays ccache's bookkeeping on each of them and
 * gets nothing back. */
static bool refuse_ccache(void)
{
    const char *v = getenv("TRILLIAN_CCACHE");
    return v && strcmp(v, "0") == 0;
}

static const char *distcc_hosts(void)
{
    const char *v = getenv("TRILLIAN_DISTCC_HOSTS");
    return v && v[strspn(v, " \t")] ? v : NULL;
}

/* A host list as distcc reads it: words such as 10.0.0.2, host:3632,
 * host/4, host:3632/4,lzo, @host (ssh) or localhost. Here only the word
 * characters are checked, to catch a list pasted with quotes or commas
 * between hosts; distcc itself reports a host it cannot reach. */
static bool hosts_ok(const char *h, char *bad, size_t badlen)
{
    const char *p = h;
    while (*p) {
        p += strspn(p, " \t\n");
        size_t n = strcspn(p, " \t\n");
        if (!n)
            break;
        for (size_t i = 0; i < n; i++) {
            char c = p[i];
            if (!(c == '.' || c == ':' || c == '/' || c == ',' || c == '@' || c == '-' ||
                  c == '_' || c == '[' || c == ']' || c == '=' ||
                  (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) ||
                (c == ',' && i == 0)) {
                snprintf(bad, badlen, "%.*s", (int)n, p);
                return false;
            }
        }
        p += n;
    }
    return true;
}

int launcher_check(void)
{
    if (want_ccache()) {
        char *c = run_find_program("ccache", NULL, RUN_FIND_SBIN);
        if (!c) {
            fprintf(stderr, "trillian: --ccache (TRILLIAN_CCACHE) needs ccache, which is not on "
                            "PATH: install it (tools/install-deps does) or leave the option out\n");
            return 2;
        }
        free(c);
    }
    const char *h = distcc_hosts();
    if (h) {
        char bad[128];
        if (!hosts_ok(h, bad, sizeof bad)) {
            fprintf(stderr, "trillian: --distcc (TRILLIAN_DISTCC_HOSTS) '%s': '%s' is not a "
                            "distcc host (expected words such as 10.0.0.2/4 or "
                            "build1:3632/8, separated by spaces)\n", h, bad);
            return 2;
        }
        char *d = run_find_program("distcc", NULL, RUN_FIND_SBIN);
        if (!d) {
            fprintf(stderr, "trillian: --distcc (TRILLIAN_DISTCC_HOSTS) needs distcc, which is "
                            "not on PATH: install it (tools/install-deps does)\n");
            return 2;
        }
        free(d);
    }
    return 0;
}

char *launcher_prefix(const struct stage_ctx *cx, const char *area, const char *basedir,
                      bool always_ccache, struct strlist *env)
{
    const char *hosts = distcc_hosts();
    char *distcc = hosts ? run_find_program("distcc", NULL, RUN_FIND_SBIN) : NULL;
    char *ccache = (always_ccache || want_ccache()) && !refuse_ccache() && cx->cache_dir
                       ? run_find_program("ccache", NULL, RUN_FIND_SBIN)
                       : NULL;
    if (hosts && !distcc)
        cx_log(cx, "distcc is not on PATH: compiling here only");
    if (distcc) {
        strlist_pushf(env, "DISTCC_HOSTS=%s", hosts);
        if (cx->cache_dir) {
            /* distcc keeps its locks and host states there; it must exist */
            char *dir = xasprintf("%s/distcc", cx->cache_dir);
            if (mkdir_p(dir, 0755) == 0)
                strlist_pushf(env, "DISTCC_DIR=%s", dir);
            free(dir);
        }
    }
    if (ccache) {
        strlist_pushf(env, "CCACHE_DIR=%s/ccache/%s", cx->cache_dir, area);
        strlist_pushf(env, "CCACHE_BASEDIR=%s", basedir);
        strlist_push(env, "CCACHE_NOHASHDIR=1");
        strlist_push(env, "CCACHE_COMPILERCHECK=content");
        strlist_push(env, "CCACHE_SLOPPINESS=include_file_mtime,include_file_ctime,time_macros");
        strlist_push(env, "CCACHE_MAXSIZE=4G");
        /* Depend mode: a miss takes the headers from the compiler's own
         * -MD file instead of running the preprocessor first (a fifth of each
         * of gcc's compiles). It has no preprocessed-mode lookup, so a header
         * must be the same to the byte for a hit: the gcc stages configure by
         * a relative path for that (tc_gcc_setup_env). Without -MD, ccache falls
         * back to its normal mode by itself. */
        strlist_push(env, "CCACHE_DEPEND=1");
        if (distcc)
            strlist_pushf(env, "CCACHE_PREFIX=%s", distcc);
        cx_log(cx, "compiles through %s (CCACHE_DIR %s/ccache/%s)%s%s", ccache, cx->cache_dir,
               area, distcc ? ", then distcc to " : "", distcc ? hosts : "");
        free(distcc);
        return ccache;
    }
    if (distcc) {
        cx_log(cx, "compiles through %s to %s", distcc, hosts);
        return distcc;
    }
    return NULL;
}
