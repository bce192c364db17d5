/* A source package described by a table (pkg_build.c): the one build that
 * source-built kinds share, after Buildroot's generic-package. A kind gives
 * a `struct pkg_desc`: its sources (tarballs pinned by sha256, with their
 * settings made by PKG_SOURCE_FIELDS), the steps (argv templates run in a
 * directory, never through a shell), the files it installs into the output,
 * and whether the recipe's cross compiler builds it. The kind's run() calls
 * pkg_build(), checks what it built, and writes the manifest with
 * pkg_manifest().
 *
 * What pkg_build() does, in order:
 *   1. fetch every source (fetch.h: the cache, the mirrors by sha256 or file
 *      name, the origin URL) and verify its sha256, before anything is
 *      unpacked: a wrong hash fails naming FILE:LINE of the setting, the
 *      expected and the actual hash; a source given by .dsc is the .dsc and
 *      every file it lists, each checked against the .dsc's sha256;
 *   2. unpack each into WORK/NAME (the tarball's single top directory is the
 *      tree: ${src:NAME}; a .dsc's tree as dpkg-source -x makes it);
 *   3. apply each source's patches with patch -p1: the kind's own (in the
 *      data directory), then the recipe's KEY_patches (F_INPUT_LIST: paths
 *      or pinned downloads), or for a source the kind gets itself those of
 *      its patches_key; one that does not apply fails the stage naming
 *      the patch and the first rejected file and hunk;
 *   4. run the steps in order; a failing step names its label, the stage and
 *      the step's hint;
 *   5. copy each install row's file (or tree) into the output (both ends
 *      templates);
 *   6. with debs, split the DESTDIR the steps installed into binary
 *      packages and write them to OUT/debs/ (pkg_deb.h).
 *
 * In target mode with build_depends, step 4 runs against a copy of the
 * sysroot with those packages unpacked into it.
 *
 * Templates: ${src:NAME} (a source's tree), ${work} (the scratch directory),
 * ${out} (the output directory), ${cross} (the toolchain stage's compiler
 * prefix, TOOLCHAIN/bin/TARGET-), ${target}, ${toolchain}, ${jobs} (the
 * engine's -j, for builders that are no jobserver client: ninja), ${sysroot}
 * (target mode), ${launch} (target mode: the user's ccache or distcc and a
 * space, else empty; launcher.h; ${launcher}: the same alone, no value when
 * there is none), ${cc} and ${cxx} (the build's compiler commands: the
 * mode's gcc or g++, in target mode behind ${launch} and with --sysroot,
 * then ${prefix_maps}), ${prefix_maps} (with map_paths the -ffile-prefix-map
 * options, space-separated, else empty), ${epoch}
 * (source_date_epoch), ${set:KEY} (a string setting), ${kind:NAME} (the
 * kind's var hook). An argv element that is exactly ${list:KEY} becomes the
 * entries of that list setting (none when unset), one that is exactly
 * ${kindlist:NAME} the kind's list of that name (its list hook); one that
 * starts with '?' is left out when a variable in it has no value (else used
 * without the '?'). An argv starting with "make" runs make with the engine's jobserver
 * (serial steps: -j1).
 *
 * Environment of every step: PATH with the toolchain's bin/ first (cross
 * kinds), LC_ALL=C, SOURCE_DATE_EPOCH (binutils stamps PE images with it),
 * CC and CXX (${cc}, ${cxx}) in target mode or with map_paths, then the
 * kind's `env` templates.
 *
 * map_paths: the build's paths are mapped out of what it compiles (__FILE__,
 * debug information), as Debian's builds do with -ffile-prefix-map, so that
 * the same inputs give the same bytes in any cache directory: the scratch
 * directory (CACHE/tmp/KEY.PID/work) to ".", the toolchain stage's entry to
 * /usr, the sysroot to / (pkg_path_maps). The maps are part of the compiler
 * command (CC, CXX, the presets' compilers), not of CFLAGS, so a recipe's
 * CFLAGS, configure arguments or a Makefile's own CFLAGS leave them in
 * place; ccache hashes that a map is there, not its paths, and still hits. */
#ifndef TRILLIAN_STAGES_PKG_BUILD_H
#define TRILLIAN_STAGES_PKG_BUILD_H

#include "base/json_out.h"
#include "stage.h"

/* The settings of one source: KEY_url, KEY_file, KEY_sha256 and
 * KEY_patches. URL, FILE and SHA256 are the default pin, written at the
 * call, in the kind's field table, as data a recipe overrides (its
 * KEY_url, KEY_sha256): never a C constant elsewhere. WHAT names the
 * source in the help text. */
#define PKG_SOURCE_FIELDS(KEY, WHAT, URL, FILE, SHA256)                                      \
    {.key = KEY "_url", .type = F_STRING, .def = URL,                                        \
     .help = "origin URL of the " WHAT " tarball (none: only mirrors and the cache have it)"}, \
    {.key = KEY "_file", .type = F_STRING, .def = FILE,                                      \
     .help = "the " WHAT " tarball's file name in mirrors and the cache (default: the url's)"}, \
    {.key = KEY "_sha256", .type = F_STRING, .def = SHA256,                                  \
     .help = "SHA-256 of the " WHAT " tarball"},                                            \
    {.key = KEY "_patches", .type = F_INPUT_LIST,                                            \
     .help = "patches applied to " WHAT " in order with patch -p1: paths, or downloads "     \
             "pinned by sha256 ({ url = \"https://...\"; sha256 = \"...\"; })"}

/* Or the source as a Debian source package (a pkg_source with .dsc set):
 * KEY_dsc, the URL of its .dsc, and KEY_dsc_sha256, the .dsc's SHA-256,
 * which pins the files it lists (debfetch_dsc_get); the tree is
 * dpkg-source -x's, debian/ and Debian's patches included. A recipe gives
 * these or the tarball's settings, not both. */
#define PKG_DSC_FIELDS(KEY, WHAT)                                                            \
    {.key = KEY "_dsc", .type = F_STRING,                                                     \
     .help = "or the " WHAT " as a Debian source package: the URL of its .dsc (the files it " \
             "lists are fetched from beside it and checked against its Checksums-Sha256, "  \
             "then unpacked by dpkg-source -x with Debian's patches)"},                      \
    {.key = KEY "_dsc_sha256", .type = F_STRING, .help = "SHA-256 of that .dsc"}

struct pkg_source {
    const char *name;    /* "gnu-efi": ${src:gnu-efi}, the manifest, messages */
    const char *key;     /* settings prefix ("gnu_efi": gnu_efi_url, ...) */
    bool dsc;            /* the kind has KEY_dsc and KEY_dsc_sha256 (PKG_DSC_FIELDS) */
    const char *version; /* of the default pin, for the manifest */
    /* The kind's own patches, applied first (before KEY_patches): paths
     * below the data directory (firmware/elilo/...), in the cache key by
     * content. NULL-terminated, or NULL. */
    const char *const *patches;
    /* Or the kind gets the tree itself (fetched and unpacked, or cloned:
     * the emulators' emu_source; a Debian source package by debfetch; a
     * tarball path or URL) with its own settings; new string, or NULL
     * after cx_fail. No KEY_patches then, but: */
    char *(*get)(const struct stage_ctx *cx, void *arg);
    /* with get, the setting (F_PATH_LIST or F_INPUT_LIST) whose patches
     * are applied to the tree get made (after Debian's series, if any):
     * "patches" for headers and GRUB; or NULL. The kind declares it (the
     * patch tool) and names it in its manifest. */
    const char *patches_key;
    /* A template: the source is fetched and unpacked only when every
     * variable in it has a value (the toolchain's binutils tarball, not
     * for binutils = "system"); ${src:NAME} then has none. NULL: always. */
    const char *when;
};

struct pkg_vars;

struct pkg_step {
    const char *label;        /* log, messages */
    const char *cwd;          /* template; created if missing */
    const char *const *argv;  /* templates, NULL-terminated */
    bool serial;              /* make -j1: a Makefile that races under -j */
    const char *hint;         /* what to do when it fails: a template (pkg_hint) */
    /* Or a step of the kind's own (argv NULL): 0, or 1 after cx_fail. */
    int (*fn)(const struct stage_ctx *cx, void *arg);
    /* Or one that needs the build's variables (a preset's cross file). */
    int (*vfn)(const struct pkg_vars *v);
    bool plain; /* "make" as written: the step sets its own -j (no jobserver) */
    /* A template: the step runs only when every variable in it has a value
     * (C++'s libstdc++ step, with ${kind:cxx}). NULL: always. */
    const char *when;
    /* Templates added to this step's environment after the build's (and
     * so overriding it): CFLAGS for GCC's own programs, not for binutils
     * built before them. NULL-terminated, or NULL. */
    const char *const *env;
    /* Or a table of steps shared between kinds, run here in order (the
     * GCC build of both GCC stages, toolchain.h); its label names it in
     * the log. */
    const struct pkg_step *sub;
};

struct pkg_file {
    const char *from; /* template: a built file */
    const char *to;   /* template, relative to the output (GRUB's lib/grub/${kind:platform}) */
    bool tree;        /* FROM is a directory, copied whole (GRUB's modules) */
};

struct pkg_desc {
    const char *what;                  /* "elilo", in messages */
    const struct pkg_source *sources;  /* {0}-terminated */
    const struct pkg_step *steps;      /* {0}-terminated */
    const struct pkg_file *install;    /* {0}-terminated */
    const char *const *env;            /* templates, NULL-terminated, or NULL */
    bool cross;                        /* needs the toolchain stage (${cross}) */
    /* Target mode: built for the recipe's arch against its C library, with
     * the compiler stage's gcc (the kind's `compiler` setting: default the
     * packages stage "gcc", else "toolchain") and the libc stage's sysroot/
     * (its `libc` setting: default "glibc", else the only C library stage),
     * sysroot.h. ${cross}, ${target} and ${sysroot} are set, and every step
     * gets CC, CXX (with --sysroot), AR, RANLIB, STRIP, NM and pkg-config's
     * variables for the sysroot. The kind has the two settings. */
    bool target;
    /* Run before the steps: adds to ENV (after PATH, LC_ALL and
     * SOURCE_DATE_EPOCH) what the kind's build wants (ccache's variables). */
    void (*setup_env)(const struct stage_ctx *cx, struct strlist *env, void *arg);
    /* ${kind:NAME}: the kind's own values (a launcher, a flag), or NULL. */
    const char *(*var)(void *arg, const char *name);
    /* An argv element that is exactly ${kindlist:NAME}: the kind's own list
     * of arguments (configure flags it computes), or NULL if it has none by
     * that name (a bug in the table). */
    const struct strlist *(*list)(void *arg, const char *name);
    /* Binary packages made from what the steps installed (pkg_deb.h), or NULL. */
    const struct pkg_debs *debs;
    /* Its compiles map the build's paths away (above; the kind's objects
     * then differ from a build without, so pkg_declare puts the maps in
     * its key). */
    bool map_paths;
    /* Target mode: the -dev packages it builds against, "STAGE/PACKAGE" (or
     * "STAGE": all its .debs), NULL-terminated, or NULL. Their data is
     * unpacked into a copy of the libc stage's sysroot, which ${sysroot},
     * --sysroot and pkg-config then are, and LDFLAGS searches its multiarch
     * directory (Debian's -dev packages put their libraries there; the
     * compiler stage's gcc knows only /lib and /usr/lib). */
    const char *const *build_depends;
};

/* The template language above, apart from a build (and for its unit test,
 * tests/unit/test_pkg_template.c): the values a step's templates see. */
struct pkg_vars {
    const struct stage_ctx *cx; /* ${set:}, ${list:}, ${work}, ${out}, ${epoch}; messages */
    const struct pkg_desc *d;   /* ${src:NAME} by its sources, ${kind:NAME} by its var */
    void *arg;                  /* to d->var */
    char **src;                 /* per source of D: its tree, or NULL (not unpacked) */
    char *cross, *target;       /* cross and target kinds, else NULL (unknown) */
    char *sysroot;              /* target kinds: the libc stage's sysroot/, else NULL */
    char *launcher;             /* target kinds: ccache or distcc when chosen, else NULL */
    const char *toolchain;
    struct strlist maps;        /* map_paths: the -ffile-prefix-map options, else none */
};

/* With D's map_paths, fills V's maps from its toolchain, work directory and
 * sysroot, in that order (GCC applies the last that matches: the sysroot of
 * build_depends is inside the work directory), each path also by its real
 * path when that differs (the compiler's working directory, in the debug
 * information, is a real path). */
void pkg_path_maps(struct pkg_vars *v);

/* T with its ${...} replaced (new string), or NULL after cx_fail naming the
 * unknown variable (a bug in the kind's table). */
char *pkg_expand(const struct pkg_vars *v, const char *t);

/* A step's hint T expanded (new string): where to look (${work}/obj/config.log)
 * and which setting to check (${kind:NAME}); as written when a variable in it
 * has no value, since a failure's message must not fail. */
char *pkg_hint(const struct pkg_vars *v, const char *t);

/* Appends argv template T to ARGV: exactly ${list:KEY} as the list's
 * entries (none when unset), "?T" left out when a variable in it has no
 * value, else the expansion. -1 after cx_fail. */
int pkg_push_arg(const struct pkg_vars *v, struct strlist *argv, const char *t);

/* Plan time: checks every source's settings (a sha256, a url or file) and
 * declares the downloads; a cross package needs the toolchain stage (a
 * recipe error naming what to add when the recipe has none). -1 after
 * errors, else 0. */
int pkg_declare(struct stage *st, const struct pkg_desc *d);

/* Run time: steps 1-5 above. ARG goes to the kind's hooks; each step's
 * time goes to the stage log, never to the manifest (docs/engine.md).
 * 0, or 1 after cx_fail. */
int pkg_build(const struct stage_ctx *cx, const struct pkg_desc *d, void *arg);

/* Writes stage-manifest.json: {"sources": [{"name", "version", "file",
 * "url"?, "sha256", "patches"}], then EXTRA's keys (taken; may be NULL)};
 * a source by .dsc is named by the .dsc: its file, URL, sha256 and Version.
 * No times: the manifest is a function of the inputs. */
int pkg_manifest(const struct stage_ctx *cx, const struct pkg_desc *d, json_object *extra);

#endif
