/* GRUB from the recipe's grub packages stage; see grub_pkg.h. */
#define _GNU_SOURCE
#include "grub_pkg.h"

#include <stdlib.h>
#include <unistd.h>

const char *grub_pkg_stage(const struct stage *st)
{
    size_t it = 0;
    const struct stage *g = st_peers(st, "packages", "grub", &it);
    return g ? st_name(g) : NULL;
}

const char *grub_pkg_declare(struct stage *st)
{
    const char *g = grub_pkg_stage(st);
    if (g) {
        st_need_file(st, g, "bin/grub-mkimage");
        st_need_file(st, g, "lib/grub");
    }
    return g;
}

int grub_pkg_files(const struct stage_ctx *cx, const char *platform, char **mkimage,
                   char **moddir)
{
    const char *g = grub_pkg_stage(cx->st);
    *mkimage = *moddir = NULL;
    if (!g)
        return cx_fail(cx, "the recipe has no packages stage of kind grub (a bug: the plan "
                       "checked it)");
    char *mk = path_join(cx_dep(cx, g), "bin/grub-mkimage");
    char *rel = xasprintf("lib/grub/%s", platform);
    char *dir = path_join(cx_dep(cx, g), rel);
    free(rel);
    if (access(mk, X_OK) != 0 || !is_dir(dir)) {
        cx_fail(cx, "packages stage '%s' has no %s or no %s; build it again (trillian build "
                "--force %s)", g, mk, dir, g);
        free(mk);
        free(dir);
        return 1;
    }
    *mkimage = mk;
    *moddir = dir;
    return 0;
}
