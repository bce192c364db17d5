/* What the `emulators` kinds share (qemu_ia64.c, ski_build.c).
 *
 * Source: a tarball pinned by `sha256`, found by fetch_pinned() in the
 * cache, the mirrors (by sha256 or `file`, its file name there; `name` is the stage's) or at `url`. A tarball that only
 * mirrors carry (the qemu-ia64 repack has no origin of its own) needs no
 * `url`. Online users without a mirror may give `git` and `commit`
 * instead: when no copy of the tarball can be had, the repository is cloned
 * and the commit checked out and verified with `git rev-parse HEAD`. The
 * cache key is the settings either way (the sha256 names what a mirror
 * holds; the commit what the clone holds).
 *
 * Build: the toolchain stage's bin/ first on PATH (the ia64 parts: QEMU's
 * firmware, Ski's boot loaders), host compiles through ccache in
 * CACHE/ccache/AREA (CCACHE_BASEDIR = the scratch directory, so a rebuild in
 * another one hits), installed with DESTDIR and moved into the output. */
#ifndef TRILLIAN_STAGES_EMU_BUILD_H
#define TRILLIAN_STAGES_EMU_BUILD_H

#include "base/json_out.h"
#include "stage.h"

#define EMU_SOURCE_FIELDS                                                                   \
    {"url", F_STRING, false, NULL, NULL,                                                    \
     "origin URL of the source tarball (optional: mirrors find it by sha256 or name)"},     \
    {"file", F_STRING, false, NULL, NULL,                                                   \
     "the tarball's file name in mirrors and the cache (default: the url's)"},              \
    {"sha256", F_STRING, true, NULL, NULL, "SHA-256 of the source tarball"},                \
    {"git", F_STRING, false, NULL, NULL,                                                    \
     "online fallback: repository cloned when no copy of the tarball is found"},            \
    {"commit", F_STRING, false, NULL, NULL,                                                 \
     "the commit of `git` to build (40 hex digits, checked with git rev-parse HEAD)"},      \
    {"configure", F_STRING_LIST, false, NULL, NULL, "extra configure flags, after Trillian's"}

/* A file whose absence at plan time names the Debian package to install
 * (headers and data that st_tool cannot see). */
struct emu_file_dep {
    const char *glob;    /* absolute path, may hold glob(7) wildcards */
    const char *package; /* Debian package that provides it */
};

/* Plan time: checks the source settings and FILES, needs the toolchain
 * stage; returns -1 after errors, else 0. */
int emu_declare(struct stage *st, const struct emu_file_dep *files);

/* Run time: the unpacked source tree (new string; *from_git tells whether it
 * is a clone) or NULL after cx_fail. */
char *emu_source(const struct stage_ctx *cx, bool *from_git);

/* ENV for the build steps: PATH with the toolchain's bin/ first, LC_ALL=C,
 * SOURCE_DATE_EPOCH, and ccache's variables (area AREA) when ccache is on
 * PATH. Returns the launcher to put before the host compiler ("ccache"),
 * or NULL (new string). */
char *emu_env(const struct stage_ctx *cx, const char *area, struct strlist *env);

/* Moves what `make install DESTDIR=DEST` put below DEST/PREFIX into cx->out. */
int emu_move_install(const struct stage_ctx *cx, const char *dest, const char *prefix);
/* A pkg_build step (its hook signature): emu_move_install of WORK/dest's
 * usr/ prefix, where the emulators' `make install DESTDIR=` put it. */
int emu_move_install_step(const struct stage_ctx *cx, void *arg);

/* Writes stage-manifest.json: {"source", "sha256", "from", "git"?, "commit"?,
 * then EXTRA's keys}. EXTRA (or NULL) is taken. */
int emu_manifest(const struct stage_ctx *cx, bool from_git, json_object *extra);

#endif
