/* The generic package build's presets (pkg_presets.h): data, one step table
 * per build system and mode. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "pkg_presets.h"

const char *const pkg_preset_names[] = {"autotools", "cmake", "meson", "make", NULL};

#define B "${work}/build"
#define DEST "DESTDIR=${kind:destdir}"

/* autotools: an out-of-tree build, as Debian's dh_auto_configure does */
static const char *const ac_conf[] = {"${src:source}/configure", "--prefix=/usr",
                                      "--sysconfdir=/etc", "--localstatedir=/var",
                                      "${list:configure}", NULL};
static const char *const ac_conf_x[] = {"${src:source}/configure", "--prefix=/usr",
                                        "--sysconfdir=/etc", "--localstatedir=/var",
                                        "--host=${target}", "${list:configure}", NULL};
static const char *const mk_build[] = {"make", "${list:make_args}", NULL};
static const char *const mk_install[] = {"make", "install", DEST, "${list:make_args}", NULL};

/* CMake with its Makefile generator: make, and so the engine's jobserver */
#define CMAKE_COMMON "cmake", "-S", "${src:source}", "-B", B, "-G", "Unix Makefiles", \
                     "-DCMAKE_INSTALL_PREFIX=/usr", "-DCMAKE_BUILD_TYPE=Release"
static const char *const cm_conf[] = {CMAKE_COMMON, "${list:configure}", NULL};
/* cross: CMake takes the compiler's own arguments as the rest of a list (in
 * its rules after the compiler, split as the shell splits them); the host's
 * compiler comes from CC, ${cc} in the environment */
static const char *const cm_conf_x[] = {CMAKE_COMMON, "-DCMAKE_SYSTEM_NAME=Linux",
                                        "-DCMAKE_C_COMPILER=${cross}gcc;${prefix_maps}",
                                        "-DCMAKE_CXX_COMPILER=${cross}g++;${prefix_maps}",
                                        "?-DCMAKE_SYSROOT=${sysroot}",
                                        "?-DCMAKE_C_COMPILER_LAUNCHER=${launcher}",
                                        "?-DCMAKE_CXX_COMPILER_LAUNCHER=${launcher}",
                                        "-DCMAKE_FIND_ROOT_PATH_MODE_PROGRAM=NEVER",
                                        "${list:configure}", NULL};

/* Meson and ninja (no jobserver client: -j the engine's jobs) */
#define MESON_COMMON "meson", "setup", B, "${src:source}", "--prefix=/usr", \
                     "--buildtype=release", "--wrap-mode=nodownload"
static const char *const me_conf[] = {MESON_COMMON, "${list:configure}", NULL};
static const char *const me_conf_x[] = {MESON_COMMON, "--cross-file=${work}/meson-cross.ini",
                                        "${list:configure}", NULL};
static const char *const me_build[] = {"ninja", "-C", B, "-j${jobs}", NULL};
static const char *const me_install[] = {"meson", "install", "-C", B, "--no-rebuild",
                                         "--destdir", "${kind:destdir}", NULL};

/* plain make in the source tree, every mode: the build's compilers on the
 * command line, where a Makefile's own CC = gcc cannot override them (nor
 * drop the path maps); make_args after them, so a recipe can */
#define PM_TOOLS "CC=${cc}", "CXX=${cxx}", "?AR=${cross}ar"
static const char *const pm_build[] = {"make", PM_TOOLS, "${list:make_args}", NULL};
static const char *const pm_install[] = {"make", "install", DEST, "PREFIX=/usr", PM_TOOLS,
                                         "${list:make_args}", NULL};

#define HINT_CONF "the preset's configure step: see its output above and the recipe's configure"
#define STEP(L, CWD, ARGV, H) {.label = L, .cwd = CWD, .argv = ARGV, .hint = H}
#define BUILD_STEPS(BUILD, INSTALL, CWD) \
    STEP("make", CWD, BUILD, "the build: see its output above"), \
    STEP("install", CWD, INSTALL, "the install into ${kind:destdir}: see its output above")

static const struct pkg_step autotools[] = {STEP("configure", B, ac_conf, HINT_CONF),
                                            BUILD_STEPS(mk_build, mk_install, B), {0}};
static const struct pkg_step autotools_x[] = {STEP("configure", B, ac_conf_x, HINT_CONF),
                                              BUILD_STEPS(mk_build, mk_install, B), {0}};
static const struct pkg_step cmake[] = {STEP("configure", B, cm_conf, HINT_CONF),
                                        BUILD_STEPS(mk_build, mk_install, B), {0}};
static const struct pkg_step cmake_x[] = {STEP("configure", B, cm_conf_x, HINT_CONF),
                                          BUILD_STEPS(mk_build, mk_install, B), {0}};
static const struct pkg_step meson[] = {STEP("configure", "${work}", me_conf, HINT_CONF),
                                        BUILD_STEPS(me_build, me_install, B), {0}};
static const struct pkg_step meson_x[] = {{.label = "cross file", .vfn = pkg_preset_meson_cross},
                                          STEP("configure", "${work}", me_conf_x, HINT_CONF),
                                          BUILD_STEPS(me_build, me_install, B), {0}};
static const struct pkg_step make[] = {BUILD_STEPS(pm_build, pm_install, "${src:source}"), {0}};

/* the cross rows serve target mode too (the sysroot they add by
 * "?...${sysroot}" arguments and the environment) */
static const struct {
    const char *name;
    const struct pkg_step *native, *cross;
} presets[] = {
    {.name = "autotools", .native = autotools, .cross = autotools_x},
    {.name = "cmake", .native = cmake, .cross = cmake_x},
    {.name = "meson", .native = meson, .cross = meson_x},
    {.name = "make", .native = make, .cross = make},
};

const struct pkg_step *pkg_preset_steps(const char *name, enum pkg_mode mode)
{
    for (size_t i = 0; name && i < sizeof presets / sizeof *presets; i++)
        if (!strcmp(presets[i].name, name))
            return mode == PKG_NATIVE ? presets[i].native : presets[i].cross;
    return NULL;
}

/* Meson's names for the CPUs of Trillian's arches (its reference table). */
static const char *meson_cpu_family(const char *arch)
{
    return !strcmp(arch, "amd64") ? "x86_64" : !strcmp(arch, "arm64") ? "aarch64" : arch;
}

int pkg_preset_meson_cross(const struct pkg_vars *v)
{
    const struct stage_ctx *cx = v->cx;
    if (!v->cross)
        return cx_fail(cx, "the meson preset's cross file needs the build's cross compiler");
    const char *fam = meson_cpu_family(cx->arch);
    char *sys = v->sysroot ? xasprintf("sys_root = '%s'\nc_args = ['--sysroot=%s']\n"
                                       "c_link_args = ['--sysroot=%s']\n"
                                       "cpp_args = ['--sysroot=%s']\n"
                                       "cpp_link_args = ['--sysroot=%s']\n"
                                       "pkg_config_libdir = '%s/usr/lib/pkgconfig'\n",
                                       v->sysroot, v->sysroot, v->sysroot, v->sysroot,
                                       v->sysroot, v->sysroot)
                           : xstrdup("");
    /* the user's ccache or distcc: Meson takes a launcher as the list's head,
     * the compiler's own arguments (the path maps) as its tail */
    char *l = v->launcher ? xasprintf("'%s', ", v->launcher) : xstrdup("");
    struct buf maps = BUF_INIT;
    for (size_t i = 0; i < v->maps.n; i++)
        buf_printf(&maps, ", '%s'", v->maps.v[i]);
    char *m = buf_detach(&maps);
    char *ini = xasprintf("[binaries]\n"
                          "c = [%s'%sgcc'%s]\ncpp = [%s'%sg++'%s]\nar = '%sar'\n"
                          "strip = '%sstrip'\npkg-config = 'pkg-config'\n\n"
                          "[properties]\n%s\n"
                          "[host_machine]\nsystem = 'linux'\ncpu_family = '%s'\ncpu = '%s'\n"
                          "endian = 'little'\n",
                          l, v->cross, m, l, v->cross, m, v->cross, v->cross, sys, fam, fam);
    free(m);
    free(l);
    int rc = cx_write_in(cx, cx->work, "meson-cross.ini", ini, strlen(ini), 0644);
    free(ini);
    free(sys);
    return rc;
}
