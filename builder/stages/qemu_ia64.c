/* emulators, kind "qemu-ia64": the out-of-tree QEMU IA-64 system emulator
 * (qemu-system-ia64, syunnPC/qemu-system-ia64) and its EFI firmware, built
 * from source. Boot checks with emulator = "qemu-ia64" take both from here.
 *
 * Source (emu_build.h): the mirror's repack (the git tree at a pinned
 * commit plus the three meson subprojects QEMU would download, so it builds
 * offline with --disable-download), by sha256; or, online, a clone of `git`
 * at `commit`, configured without --disable-download so meson fetches the
 * subprojects itself.
 *
 * Build as the mirror's qemu-ia64/README.md measured it: configure with
 * Debian's /usr/bin/python3 (a Python without `wheel`, such as a pyenv
 * build, fails at "qemu.qmp"), the ia64-softmmu target only, no tools, docs
 * or guest agent; make the emulator and the firmware (compiled by the
 * toolchain stage's ia64-linux-gnu-gcc), meson install into a scratch
 * DESTDIR, then the firmware into share/qemu/. QEMU finds its data relative
 * to its binary, so the output works wherever the cache puts it.
 *
 * Outputs: bin/qemu-system-ia64, share/qemu/ia64-firmware.bin (the -bios
 * image), stage-manifest.json {"source", "sha256", "from", "machines"}. */
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

/* ninja and make drive the build; meson comes from the tree (python/wheels) */
static const char *const tools[] = {"make", "ninja", "gcc", "/usr/bin/python3", "pkg-config",
                                    "flex", "bison", NULL};
static const struct emu_file_dep files[] = {
    {"/usr/lib/python3*/ensurepip/__init__.py", "python3-venv"},
    {"/usr/include/glib-2.0/glib.h", "libglib2.0-dev"},
    {"/usr/include/pixman-1/pixman.h", "libpixman-1-dev"},
    {"/usr/include/libfdt.h", "libfdt-dev"},
    {"/usr/include/slirp/libslirp.h", "libslirp-dev"},
    {"/usr/include/zlib.h", "zlib1g-dev"},
    {0},
};
static const char *const outputs[] = {"bin/qemu-system-ia64", "share/qemu/ia64-firmware.bin",
                                      "stage-manifest.json", NULL};

#define FIRMWARE_BUILT "roms/ia64-firmware/ia64-firmware.bin" /* in the build dir */

/* The README's configure line, minus --prefix and --disable-download. */
static const char *const configure_flags[] = {
    "--python=/usr/bin/python3", "--target-list=ia64-softmmu", "--without-default-features",
    "--disable-docs", "--disable-werror", "--disable-user", "--disable-tools",
    "--disable-guest-agent", "--disable-rust", "--enable-system", "--enable-tcg",
    "--enable-pixman", "--enable-slirp", "--enable-fdt=system", NULL};

static int declare(struct stage *st)
{
    return emu_declare(st, files);
}

/* The machines `-machine help` lists, added to MACHINES (an array); checks
 * the binary runs and has itanium2-vpc (the machine boot checks use). */
static int check_binary(const struct stage_ctx *cx, const char *bin, json_object *machines)
{
    const char *argv[] = {bin, "-machine", "help", NULL};
    char *out = NULL;
    int rc = 0;
    if (cx_capture(cx, argv, &out) != 0 || !out || !strstr(out, "itanium2-vpc"))
        rc = cx_fail(cx, "the built %s does not run or lists no itanium2-vpc machine "
                     "(`-machine help` printed: %.200s)", bin, out ? out : "nothing");
    for (char *l = out, *nl; !rc && l && *l; l = nl ? nl + 1 : NULL) {
        nl = strchr(l, '\n');
        if (nl)
            *nl = 0;
        if (str_starts(l, "Supported machines") || !*l)
            continue;
        size_t n = strcspn(l, " ");
        char *name = xstrndup(l, n);
        json_object_array_add(machines, json_str(name));
        free(name);
    }
    free(out);
    return rc;
}

static int run(struct stage_ctx *cx)
{
    json_object *machines = json_object_new_array();
    struct strlist env = {0}, argv = {0};
    bool from_git = false;
    int rc = 1;
    char *where = cx_where(cx, NULL);
    char *src = emu_source(cx, &from_git);
    char *build = src ? path_join(src, "build") : NULL, *dest = path_join(cx->work, "dest");
    char *launch = NULL, *bin = NULL, *fw_from = NULL, *fw_to = NULL;
    if (!src)
        goto out;
    launch = emu_env(cx, "qemu", &env);
    /* ninja 1.11 is no jobserver client: QEMU's Makefile would let it run
     * cores+2 jobs beside the engine's, so it gets -jN and no jobserver */
    strlist_push(&env, "MAKEFLAGS=");
    if (mkdir_p(build, 0755) < 0) {
        rc = cx_fail(cx, "cannot create %s: %s", build, strerror(errno));
        goto out;
    }
    strlist_push(&argv, "../configure");
    strlist_push(&argv, "--prefix=/usr");
    for (size_t i = 0; configure_flags[i]; i++)
        strlist_push(&argv, configure_flags[i]);
    if (!from_git) /* the repack carries the subprojects */
        strlist_push(&argv, "--disable-download");
    if (launch)
        strlist_pushf(&argv, "--cc=%s gcc", launch);
    cx_list(cx, "configure", &argv);
    if (tc_run_step(cx, build, (const char *const *)env.v, (const char *const *)argv.v,
                    "configure") != 0) {
        cx_fail(cx, "%s: QEMU's configure failed (see the log and %s/meson-logs/; its "
                "build dependencies: tools/install-deps)", where, build);
        goto out;
    }
    strlist_free(&argv);
    strlist_push(&argv, "make");
    strlist_pushf(&argv, "-j%d", cx->jobs > 0 ? cx->jobs : 1);
    strlist_push(&argv, "qemu-system-ia64");
    strlist_push(&argv, FIRMWARE_BUILT);
    strlist_push(&argv, "trace/trace-events-all"); /* meson install wants it */
    if (tc_run_step(cx, build, (const char *const *)env.v, (const char *const *)argv.v,
                    "make") != 0) {
        cx_fail(cx, "%s: building qemu-system-ia64 and its firmware failed (see the log; the "
                "firmware needs the toolchain stage's ia64-linux-gnu-gcc)", where);
        goto out;
    }
    strlist_free(&argv);
    char *meson = path_join(build, "pyvenv/bin/meson");
    const char *inst[] = {meson, "install", "--no-rebuild", "--quiet", "--destdir", dest, NULL};
    int ir = tc_run_step(cx, build, (const char *const *)env.v, inst, "install");
    free(meson);
    if (ir != 0) {
        cx_fail(cx, "%s: meson install failed (see the log)", where);
        goto out;
    }
    if (emu_move_install(cx, dest, "usr"))
        goto out;
    fw_from = path_join(build, FIRMWARE_BUILT);
    fw_to = path_join(cx->out, "share/qemu/ia64-firmware.bin");
    char *fw_dir = path_dirname(fw_to);
    int cr = mkdir_p(fw_dir, 0755) < 0 ? -1 : copy_file(fw_from, fw_to);
    free(fw_dir);
    if (cr < 0) {
        cx_fail(cx, "cannot install the firmware %s as %s: %s", fw_from, fw_to,
                strerror(errno));
        goto out;
    }
    bin = path_join(cx->out, "bin/qemu-system-ia64");
    if (check_binary(cx, bin, machines))
        goto out;
    json_object *extra = json_object_new_object();
    json_object_object_add(extra, "machines", machines);
    machines = NULL;
    rc = emu_manifest(cx, from_git, extra);
out:
    json_object_put(machines);
    strlist_free(&env);
    strlist_free(&argv);
    free(where);
    free(src);
    free(build);
    free(dest);
    free(launch);
    free(bin);
    free(fw_from);
    free(fw_to);
    return rc;
}

const struct stage_kind stage_qemu_ia64 = {
    .name = "qemu-ia64",
    .section = "emulators",
    .version = 1, /* not bumped for dropping the step times from the manifest:
                     * no input decided them (docs/engine.md) */
    .summary = "qemu-system-ia64 (out-of-tree QEMU, itanium2-vpc machine) and its EFI firmware "
               "built from source pinned by sha256, for boot checks with emulator qemu-ia64",
    .fields = fields,
    .tools = tools,
    .outputs = outputs,
    .declare = declare,
    .run = run,
};
