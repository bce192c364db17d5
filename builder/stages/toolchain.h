/* Helpers of the toolchain stage kinds (toolchain.c) shared with the kinds
 * that build more of the toolchain on top of it: glibc (glibc.c) and the
 * stage-2 gcc (gcc_stage2.c). Source tarballs given as a path or a URL with a
 * SHA-256, unpacking, timed steps, the GCC build steps and the compiler
 * check every toolchain-like output passes. */
#ifndef TRILLIAN_STAGES_TOOLCHAIN_H
#define TRILLIAN_STAGES_TOOLCHAIN_H

#include "base/json_out.h"
#include "pkg_build.h"
#include "stage.h"

bool tc_is_url(const char *s);
/* GNU triplet of a recipe arch ("ia64" -> "ia64-linux-gnu"), NULL if none. */
const char *tc_default_target(const char *arch);
/* ELF e_machine a recipe arch's programs carry (50 for ia64), -1 if none. */
int tc_arch_machine(const char *arch);

/* Plan time: KEY is a tarball path (relative to the recipe; must exist, and
 * enters the key by content) or a URL (SHAKEY then required). */
void tc_declare_source(struct stage *st, const char *key, const char *shakey);
/* The same for a value taken elsewhere (another section's setting): V as
 * written, PATH its absolute form, SHA the hash or NULL. Errors name KEY. */
void tc_declare_source_value(struct stage *st, const char *key, const char *shakey,
                             const char *v, const char *path, const char *sha);
/* Run time: the local tarball for setting KEY (downloaded into
 * CACHE/downloads/toolchain/ when a URL), its SHA-256 checked against
 * SHAKEY when set. RKEY is how messages name the recipe section
 * ("toolchain", "packages.glibc"). New string, or NULL after cx_fail. */
char *tc_get_source(const struct stage_ctx *cx, const char *rkey, const char *key,
                    const char *shakey);
char *tc_get_source_value(const struct stage_ctx *cx, const char *rkey, const char *key,
                          const char *shakey, const char *v, const char *path,
                          const char *sha);
/* Adds KEY: the sha256 of the source FILE to manifest M (what the report
 * names the source by: the same whether or not the recipe pins it). A file
 * that cannot be read adds nothing (the build already used it). */
void tc_manifest_sha256(const struct stage_ctx *cx, json_object *m, const char *key,
                        const char *file);
/* Unpacks TARBALL into DIR; returns the directory holding the content (DIR's
 * single top-level directory, if that is all there is). New string, or NULL
 * after cx_fail naming RKEY.KEY. */
char *tc_unpack(const struct stage_ctx *cx, const char *rkey, const char *key,
                const char *tarball, const char *dir);
/* tc_unpack for a GCC source, into WORK/gcc-src (the time logged): also
 * Debian's gcc-N orig tarball, which wraps gcc-X.Y.Z-dfsg.tar.xz (unpacked
 * in turn). */
char *tc_unpack_gcc(const struct stage_ctx *cx, const char *rkey, const char *key,
                    const char *tarball);
/* Where the toolchain stage keeps the patches it applied to GCC (NN-NAME,
 * in order), relative to its output: the stage-2 gcc applies them too. */
#define TC_GCC_PATCHES_DIR "gcc-patches"
/* Runs ARGV in CWD with ENV and logs STEP's seconds and exit status (the
 * log, not the manifest: a manifest describes the output, and two builds of
 * it take different times). Returns the exit status. */
int tc_run_step(const struct stage_ctx *cx, const char *cwd, const char *const *env,
                const char *const *argv, const char *step);
/* `make` with the engine's jobserver (MAKEFLAGS), or -j JOBS without one,
 * then ARGS: an argv for tc_run_step (caller frees with strlist_free). */
void tc_make_argv(const struct stage_ctx *cx, struct strlist *argv, const char *const *args);

/* The triplet in a toolchain-like stage's `target` file (new string), or
 * NULL after cx_fail. */
char *tc_read_target(const struct stage_ctx *cx, const char *toolchain_dir);
/* Makes PREFIX/bin/TARGET-{as,ld,...} and PREFIX/TARGET/bin/{as,ld,...}
 * point at the binutils of toolchain prefix FROM (symlinks to what they
 * resolve to outside FROM, copies of what lives inside it: the cache may
 * prune FROM). */
int tc_link_binutils_from(const struct stage_ctx *cx, const char *from, const char *prefix,
                          const char *target);

/* The GCC build both GCC kinds share (stage 1 in toolchain.c, stage 2 in
 * gcc_stage2.c) as steps of the generic package build (pkg_build.h): in
 * WORK/gcc-obj, configure (by a relative path) with the kind's flags, make
 * all-gcc and all-target-libgcc (and all-target-libstdc++-v3 with C++),
 * install-strip-gcc install-target-libgcc (install-target-libstdc++-v3),
 * share/ removed. A kind's state (pkg_build's ARG) begins with a struct
 * tc_gcc, and its desc's hooks are the three below (its own var hook, if it
 * has names of its own, hands the others to tc_gcc_var). */
struct tc_gcc {
    const char *rkey;        /* the recipe key in messages: "toolchain", "packages.gcc" */
    char *src;               /* the patched GCC tree (set by the kind's source) */
    struct strlist flags;    /* configure's arguments: --prefix, --target, ... */
    const char *host_cflags; /* CFLAGS and CXXFLAGS of GCC's own programs; NULL: -O2 */
    bool cxx;                /* C++ and libstdc++ too */
    char *configure;         /* tc_gcc_setup_env: configure, relative to WORK/gcc-obj */
    char *cc, *cxx_cmd;      /* tc_gcc_setup_env: "LAUNCHER gcc", "LAUNCHER g++", or NULL */
};
extern const struct pkg_step tc_gcc_steps[];
/* setup_env: adds to ENV PATH with the prefix's bin/ first (the binutils
 * linked or built into it) and what puts the host compiler behind the
 * cache's shared GCC ccache, when ccache is installed (see toolchain.c);
 * sets ARG's configure, cc and cxx_cmd. */
void tc_gcc_setup_env(const struct stage_ctx *cx, struct strlist *env, void *arg);
/* var: ${kind:host_cflags}, gcc_configure, gcc_cc, gcc_cxx, cxx,
 * cxx_install, gcc_rkey; NULL for another name or no value. */
const char *tc_gcc_var(void *arg, const char *name);
/* list: ${kindlist:gcc_flags}; NULL for another name. */
const struct strlist *tc_gcc_list(void *arg, const char *name);
void tc_gcc_free(struct tc_gcc *g);

struct tc_probe {
    int machine;
    char *version, *dumpmachine;
};
/* PREFIX/bin/TARGET-gcc compiles and links a freestanding program whose ELF
 * machine is the recipe arch's; refuses it otherwise, naming KEY and ORIGIN. */
int tc_check_compiler(const struct stage_ctx *cx, const char *key, const char *origin,
                      const char *prefix, const char *target, struct tc_probe *pr);
/* Writes `target` and stage-manifest.json (target, e_machine, gcc_version,
 * dumpmachine, then the keys of KIND_DETAILS, an object taken, or NULL). */
int tc_finish(const struct stage_ctx *cx, const char *target, const struct tc_probe *pr,
              json_object *kind_details);
void tc_probe_free(struct tc_probe *pr);

#endif
