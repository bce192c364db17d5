/* emulators, kind "ski": the HP Ski IA-64 simulator (bski) with its boot
 * loaders, built from source. Boot checks with emulator = "ski" take bski
 * and ski-bootloader from here, "ski-efi" bski and ski-efi.
 *
 * Source (emu_build.h): a `git archive` tarball of trofi/ski pinned by
 * sha256 (the mirror has ski-dfc2902.tar.xz), or, online, a clone at
 * `commit`. Build as the mirror's README measured it: autogen.sh,
 * configure, make, make install into a scratch DESTDIR; then each boot
 * loader of `loaders` with the toolchain stage's cross compiler (they are
 * freestanding: -nostdinc, no libc).
 *
 * Outputs: bin/ski, bin/bski (a link to ski), share/ski/ski-bootloader,
 * share/ski/ski-efi, stage-manifest.json {"source", "sha256", "from",
 * "loaders"}. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stage.h"
#include "emu_build.h"
#include "toolchain.h"

static const struct field fields[] = {
    EMU_SOURCE_FIELDS,
    {0},
};

static const char *const tools[] = {"make", "gcc", "autoconf", "automake", "libtoolize",
                                    "gperf", "flex", "bison", "pkg-config", NULL};
static const struct emu_file_dep files[] = {
    {"/usr/include/libelf.h", "libelf-dev"},
    {"/usr/include/ncurses.h", "libncurses-dev"},
    {"/usr/share/aclocal/ax_check_compile_flag.m4", "autoconf-archive"},
    {0},
};

/* Ski's boot loaders: a directory of the source with a Makefile whose
 * target (the directory's name) is the loader, installed in share/ski/. */
static const char *const loaders[] = {"ski-bootloader", "ski-efi", NULL};

static const char *const outputs[] = {"bin/ski", "bin/bski", "share/ski/ski-bootloader",
                                      "share/ski/ski-efi", "stage-manifest.json", NULL};

static int declare(struct stage *st)
{
    return emu_declare(st, files);
}

static int build_loaders(const struct stage_ctx *cx, const char *src, const char *const *env,
                         const char *where)
{
    const char *tc = cx_dep(cx, "toolchain");
    char *target = tc_read_target(cx, tc);
    if (!target)
        return 1;
    char *cross = xasprintf("CROSS_COMPILE=%s/bin/%s-", tc, target);
    char *dir = path_join(cx->out, "share/ski");
    int rc = mkdir_p(dir, 0755) < 0 ? cx_fail(cx, "cannot create %s: %s", dir, strerror(errno))
                                    : 0;
    for (size_t i = 0; !rc && loaders[i]; i++) {
        char *sub = path_join(src, loaders[i]);
        const char *argv[] = {"make", "-C", sub, cross, loaders[i], NULL};
        if (tc_run_step(cx, src, env, argv, loaders[i]) != 0) {
            rc = cx_fail(cx, "%s: make -C %s %s failed (see the log; it is built with the "
                         "toolchain stage's %s-gcc)", where, loaders[i], cross, target);
        } else {
            char *from = path_join(sub, loaders[i]), *to = path_join(dir, loaders[i]);
            if (copy_file(from, to) < 0)
                rc = cx_fail(cx, "cannot copy %s to %s: %s", from, to, strerror(errno));
            free(from);
            free(to);
        }
        free(sub);
    }
    free(dir);
    free(cross);
    free(target);
    return rc;
}

static int run(struct stage_ctx *cx)
{
    struct strlist env = {0}, argv = {0};
    bool from_git = false;
    int rc = 1;
    char *where = cx_where(cx, NULL), *launch = NULL, *dd = NULL;
    char *src = emu_source(cx, &from_git), *dest = path_join(cx->work, "dest");
    if (!src)
        goto out;
    launch = emu_env(cx, "ski", &env);
    const char *const *e = (const char *const *)env.v;
    char *autogen = path_join(src, "autogen.sh");
    const char *ag[] = {autogen, NULL};
    int r = tc_run_step(cx, src, e, ag, "autogen");
    free(autogen);
    if (r != 0) {
        cx_fail(cx, "%s: Ski's autogen.sh failed (see the log; it needs autoconf, automake, "
                "libtool and autoconf-archive: tools/install-deps)", where);
        goto out;
    }
    strlist_pushf(&argv, "%s/configure", src);
    strlist_push(&argv, "--prefix=/usr");
    if (launch)
        strlist_pushf(&argv, "CC=%s gcc", launch);
    cx_list(cx, "configure", &argv);
    e = (const char *const *)env.v;
    if (tc_run_step(cx, src, e, (const char *const *)argv.v, "configure") != 0) {
        cx_fail(cx, "%s: Ski's configure failed (see the log and %s/config.log)", where, src);
        goto out;
    }
    strlist_free(&argv);
    tc_make_argv(cx, &argv, NULL);
    if (tc_run_step(cx, src, e, (const char *const *)argv.v, "make") != 0) {
        cx_fail(cx, "%s: building Ski failed (see the log)", where);
        goto out;
    }
    dd = xasprintf("DESTDIR=%s", dest);
    const char *inst[] = {"make", "install", dd, NULL};
    if (tc_run_step(cx, src, e, inst, "install") != 0) {
        cx_fail(cx, "%s: make install failed (see the log)", where);
        goto out;
    }
    if (emu_move_install(cx, dest, "usr") || build_loaders(cx, src, e, where))
        goto out;
    json_object *extra = json_object_new_object(), *loaders = json_object_new_array();
    json_object_array_add(loaders, json_str("share/ski/ski-bootloader"));
    json_object_array_add(loaders, json_str("share/ski/ski-efi"));
    json_object_object_add(extra, "loaders", loaders);
    rc = emu_manifest(cx, from_git, extra);
out:
    strlist_free(&env);
    strlist_free(&argv);
    free(where);
    free(launch);
    free(dd);
    free(src);
    free(dest);
    return rc;
}

const struct stage_kind stage_ski = {
    .name = "ski",
    .section = "emulators",
    .version = 1, /* not bumped for dropping the step times from the manifest:
                     * no input decided them (docs/engine.md) */
    .summary = "the HP Ski IA-64 simulator (bski) with ski-bootloader and ski-efi built from "
               "source pinned by sha256, for boot checks with emulator ski or ski-efi",
    .fields = fields,
    .tools = tools,
    .outputs = outputs,
    .declare = declare,
    .run = run,
};
