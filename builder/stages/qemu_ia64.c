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
 * Build as the mirror's qemu-ia64/README.md measured it, a table of steps
 * for the generic source-package build (pkg_build.h): configure with
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
#include <stdlib.h>
#include <string.h>

#include "drivers/launcher.h"
#include "stage.h"
#include "emu_build.h"
#include "pkg_build.h"

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

/* The build (pkg_build.h): the source by emu_source (the mirror's repack,
 * or a clone), configured in build/ with the host gcc behind ccache, the
 * emulator and the firmware made, meson install into scratch. */
struct qemu_state {
    bool from_git;
    char *launch; /* "ccache" before the host gcc, or NULL */
    char jobs[24];
};

static char *get_source(const struct stage_ctx *cx, void *arg)
{
    struct qemu_state *s = arg;
    return emu_source(cx, &s->from_git);
}

static void setup_env(const struct stage_ctx *cx, struct strlist *env, void *arg)
{
    struct qemu_state *s = arg;
    s->launch = launcher_prefix(cx, "qemu", cx->work, true, env);
    /* ninja 1.11 is no jobserver client: QEMU's Makefile would let it run
     * cores+2 jobs beside the engine's, so it gets -jN and no jobserver */
    strlist_push(env, "MAKEFLAGS=");
}

static const char *var(void *arg, const char *name)
{
    struct qemu_state *s = arg;
    if (strcmp(name, "launch") == 0)
        return s->launch;
    if (strcmp(name, "jobs") == 0)
        return s->jobs;
    if (strcmp(name, "disable_download") == 0) /* the repack carries the subprojects */
        return s->from_git ? NULL : "--disable-download";
    return NULL;
}

static const struct pkg_source sources[] = {
    {.name = "qemu", .get = get_source},
    {0},
};

/* The README's configure line, minus --prefix and --disable-download, plus
 * --disable-debug-info. */
static const char *const configure[] = {
    "../configure", "--prefix=/usr", "--python=/usr/bin/python3", "--target-list=ia64-softmmu",
    "--without-default-features", "--disable-docs", "--disable-werror", "--disable-user",
    "--disable-tools", "--disable-guest-agent", "--disable-rust", "--enable-system",
    "--enable-tcg", "--enable-pixman", "--enable-slirp", "--enable-fdt=system",
    /* no -g: 12 MB instead of 44 for the binary the boot checks and bundles
     * carry, and 4-11% fewer CPU seconds to build (docs/testing.md) */
    "--disable-debug-info",
    "?${kind:disable_download}", "?--cc=${kind:launch} gcc", "${list:configure}", NULL};
static const char *const make[] = {"make", "${kind:jobs}", "qemu-system-ia64", FIRMWARE_BUILT,
                                   "trace/trace-events-all", /* meson install wants it */
                                   NULL};
static const char *const install_argv[] = {"${src:qemu}/build/pyvenv/bin/meson", "install",
                                           "--no-rebuild", "--quiet", "--destdir",
                                           "${work}/dest", NULL};

static const struct pkg_step steps[] = {
    {.label = "configure", .cwd = "${src:qemu}/build", .argv = configure,
     .hint = "see meson-logs/ in the build directory; its build dependencies: tools/install-deps"},
    {.label = "make", .cwd = "${src:qemu}/build", .argv = make,
     .hint = "the firmware needs the toolchain stage's ia64-linux-gnu-gcc", .plain = true},
    {.label = "install", .cwd = "${src:qemu}/build", .argv = install_argv,
     .hint = "meson install into scratch"},
    {.label = "move-install", .fn = emu_move_install_step},
    {0},
};

static const struct pkg_file install[] = {
    {.from = "${src:qemu}/build/" FIRMWARE_BUILT, .to = "share/qemu/ia64-firmware.bin"},
    {0},
};

static const struct pkg_desc desc = {
    .what = "QEMU", .sources = sources, .steps = steps, .install = install, .cross = true,
    .setup_env = setup_env, .var = var,
};

static int run(struct stage_ctx *cx)
{
    struct qemu_state s = {false, NULL, ""};
    snprintf(s.jobs, sizeof s.jobs, "-j%d", cx->jobs > 0 ? cx->jobs : 1);
    json_object *machines = json_object_new_array();
    char *bin = path_join(cx->out, "bin/qemu-system-ia64");
    int rc = pkg_build(cx, &desc, &s);
    if (!rc)
        rc = check_binary(cx, bin, machines);
    if (!rc) {
        json_object *extra = json_object_new_object();
        json_object_object_add(extra, "machines", machines);
        machines = NULL;
        rc = emu_manifest(cx, s.from_git, extra);
    }
    json_object_put(machines);
    free(s.launch);
    free(bin);
    return rc;
}

/* What the stage is, for the report and the SBOM (stage.h). */
static const struct stage_component made[] = {
    {.name = "qemu-system-ia64", .commit = "commit", .source = "source", .sha256 = "sha256",
     .licence = "GPL-2.0-only"},
    {0},
};

const struct stage_kind stage_qemu_ia64 = {
    .name = "qemu-ia64",
    .section = "emulators",
    .version = 2, /* 2: configured --disable-debug-info */
    .summary = "qemu-system-ia64 (out-of-tree QEMU, itanium2-vpc machine) and its EFI firmware "
               "built from source pinned by sha256, for boot checks with emulator qemu-ia64",
    .fields = fields,
    .tools = tools,
    .outputs = outputs,
    .components = made,
    .declare = declare,
    .run = run,
    .cost_hint = 800,
};
