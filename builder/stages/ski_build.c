/* emulators, kind "ski": the HP Ski IA-64 simulator (bski) with its boot
 * loaders, built from source. Boot checks with emulator = "ski" take bski
 * and ski-bootloader from here, "ski-efi" bski and ski-efi.
 *
 * Source (emu_build.h): a `git archive` tarball of trofi/ski pinned by
 * sha256 (the mirror has ski-dfc2902.tar.xz), or, online, a clone at
 * `commit`. Build as the mirror's README measured it, a table of steps
 * for the generic source-package build (pkg_build.h): autogen.sh,
 * configure, make, make install into a scratch DESTDIR; then each boot
 * loader with the toolchain stage's cross compiler (they are freestanding:
 * -nostdinc, no libc).
 *
 * Outputs: bin/ski, bin/bski (a link to ski), share/ski/ski-bootloader,
 * share/ski/ski-efi, stage-manifest.json {"source", "sha256", "from",
 * "loaders"}. */
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

static const char *const tools[] = {"make", "gcc", "autoconf", "automake", "libtoolize",
                                    "gperf", "flex", "bison", "pkg-config", NULL};
static const struct emu_file_dep files[] = {
    {"/usr/include/libelf.h", "libelf-dev"},
    {"/usr/include/ncurses.h", "libncurses-dev"},
    {"/usr/share/aclocal/ax_check_compile_flag.m4", "autoconf-archive"},
    {0},
};

static const char *const outputs[] = {"bin/ski", "bin/bski", "share/ski/ski-bootloader",
                                      "share/ski/ski-efi", "stage-manifest.json", NULL};

static int declare(struct stage *st)
{
    return emu_declare(st, files);
}

/* The build (pkg_build.h): the source by emu_source (the pinned tarball,
 * or a clone), the host part with the host gcc behind ccache, the boot
 * loaders with the toolchain stage's cross compiler. */
struct ski_state {
    bool from_git;
    char *launch; /* "ccache" before the host gcc, or NULL */
};

static char *get_source(const struct stage_ctx *cx, void *arg)
{
    struct ski_state *s = arg;
    return emu_source(cx, &s->from_git);
}

static void setup_env(const struct stage_ctx *cx, struct strlist *env, void *arg)
{
    struct ski_state *s = arg;
    s->launch = launcher_prefix(cx, "ski", cx->work, true, env);
}

static const char *var(void *arg, const char *name)
{
    struct ski_state *s = arg;
    return strcmp(name, "launch") == 0 ? s->launch : NULL;
}

static const struct pkg_source sources[] = {
    {.name = "ski", .get = get_source},
    {0},
};

static const char *const autogen[] = {"${src:ski}/autogen.sh", NULL};
static const char *const configure[] = {"${src:ski}/configure", "--prefix=/usr",
                                        "?CC=${kind:launch} gcc", "${list:configure}", NULL};
static const char *const make[] = {"make", NULL};
static const char *const install_argv[] = {"make", "install", "DESTDIR=${work}/dest", NULL};
static const char *const bootloader[] = {"make", "-C", "${src:ski}/ski-bootloader",
                                         "CROSS_COMPILE=${cross}", "ski-bootloader", NULL};
static const char *const efi[] = {"make", "-C", "${src:ski}/ski-efi", "CROSS_COMPILE=${cross}",
                                  "ski-efi", NULL};

static const struct pkg_step steps[] = {
    {.label = "autogen", .cwd = "${src:ski}", .argv = autogen,
     .hint = "it needs autoconf, automake, libtool and autoconf-archive: tools/install-deps"},
    {.label = "configure", .cwd = "${src:ski}", .argv = configure,
     .hint = "see config.log in the source tree"},
    {.label = "make", .cwd = "${src:ski}", .argv = make,
     .hint = "building Ski with the host gcc"},
    {.label = "install", .cwd = "${src:ski}", .argv = install_argv,
     .hint = "make install into the scratch directory"},
    {.label = "move-install", .fn = emu_move_install_step},
    /* the boot loaders: freestanding (-nostdinc, no libc) */
    {.label = "ski-bootloader", .cwd = "${src:ski}", .argv = bootloader,
     .hint = "it is built with the toolchain stage's ia64 gcc"},
    {.label = "ski-efi", .cwd = "${src:ski}", .argv = efi,
     .hint = "it is built with the toolchain stage's ia64 gcc"},
    {0},
};

static const struct pkg_file install[] = {
    {.from = "${src:ski}/ski-bootloader/ski-bootloader", .to = "share/ski/ski-bootloader"},
    {.from = "${src:ski}/ski-efi/ski-efi", .to = "share/ski/ski-efi"},
    {0},
};

static const struct pkg_desc desc = {
    .what = "Ski", .sources = sources, .steps = steps, .install = install, .cross = true,
    .setup_env = setup_env, .var = var,
};

static int run(struct stage_ctx *cx)
{
    struct ski_state s = {false, NULL};
    int rc = pkg_build(cx, &desc, &s);
    if (!rc) {
        json_object *extra = json_object_new_object(), *l = json_object_new_array();
        for (const struct pkg_file *f = install; f->from; f++)
            json_object_array_add(l, json_str(f->to));
        json_object_object_add(extra, "loaders", l);
        rc = emu_manifest(cx, s.from_git, extra);
    }
    free(s.launch);
    return rc;
}

/* What the stage is, for the report and the SBOM (stage.h). No licence:
 * the SBOM says NOASSERTION. */
static const struct stage_component made[] = {
    {.name = "Ski", .commit = "commit", .source = "source", .sha256 = "sha256"},
    {0},
};

const struct stage_kind stage_ski = {
    .name = "ski",
    .section = "emulators",
    .version = 1,
    .summary = "the HP Ski IA-64 simulator (bski) with ski-bootloader and ski-efi built from "
               "source pinned by sha256, for boot checks with emulator ski or ski-efi",
    .fields = fields,
    .tools = tools,
    .outputs = outputs,
    .components = made,
    .declare = declare,
    .run = run,
    .cost_hint = 150,
};
