/* What the userland-component kinds (debian-libc, busybox, the minimal root)
 * share: the C library's names per arch, finding the recipe's libc and
 * compiler stages, the runtime files of a sysroot.
 *
 * A libc stage (kind glibc or debian-libc, section "packages") outputs
 * sysroot/ (usable as TARGET-gcc --sysroot), `version` and
 * stage-manifest.json; a compiler stage (toolchain, or the stage-2 gcc) is a
 * prefix with bin/TARGET-gcc and a `target` file. */
#ifndef TRILLIAN_STAGES_SYSROOT_H
#define TRILLIAN_STAGES_SYSROOT_H

#include "stage.h"

/* The C library of one architecture as Debian and glibc name it. */
struct libc_names {
    const char *arch;    /* recipe arch */
    const char *triplet; /* Debian multiarch directory */
    const char *ldso;    /* dynamic loader's file name */
    const char *interp;  /* PT_INTERP programs carry */
    const char *libc;    /* libc's soname */
    const char *libc_pkg, *dev_pkg; /* Debian package names */
};
const struct libc_names *libc_names_of(const char *arch); /* NULL if unknown */

/* Plan time. The libc stage: KEY's value if set (any packages or stages
 * entry whose output has sysroot/; checked at run time), else "glibc" if the
 * recipe has it, else the only stage of kind glibc or debian-libc in
 * `packages`. Recipe error (naming KEY) and NULL when there is none or
 * several. */
const char *sr_libc_stage(struct stage *st, const char *key);
/* The compiler stage: KEY's value if set, else "gcc" if the recipe has a
 * packages stage of that name, else "toolchain". Recipe error and NULL if
 * missing. */
const char *sr_compiler_stage(struct stage *st, const char *key);
/* The same names at run time (no checks, no side effects). */
const char *sr_libc_name(const struct stage *st, const char *key);
const char *sr_compiler_name(const struct stage *st, const char *key);
/* The kind of the stage named NAME (packages and stages lists, sections),
 * or NULL. */
const char *sr_stage_kind(const struct stage *st, const char *name);
/* The same kind's table (its declared components), or NULL. */
const struct stage_kind *sr_stage_kind_def(const struct stage *st, const char *name);

/* The Debian archive a kind fetches from: its own mirror, suite, keyring
 * and components settings, else the debootstrap userland's, else Debian
 * bookworm. SR_ARCHIVE_FIELDS are the four field rows. */
#define SR_DEFAULT_MIRROR "http://deb.debian.org/debian"
#define SR_DEFAULT_SUITE "bookworm"
#define SR_DEFAULT_KEYRING "/usr/share/keyrings/debian-archive-keyring.gpg"
#define SR_ARCHIVE_FIELDS                                                                   \
    {"mirror", F_STRING, false, NULL, NULL,                                                 \
     "archive URL (default: userland.mirror for a debootstrap userland, else "              \
     SR_DEFAULT_MIRROR ")"},                                                                \
    {"suite", F_STRING, false, NULL, NULL,                                                  \
     "suite or codename (default: userland.suite, else " SR_DEFAULT_SUITE ")"},            \
    {"keyring", F_STRING, false, NULL, NULL,                                                \
     "keyring that must sign the Release file (default: userland.keyring, else Debian's)"}, \
    {"components", F_STRING_LIST, false, NULL, NULL,                                        \
     "archive components (default: userland.components, else main)"}
struct sr_archive {
    const char *mirror, *suite, *keyring;
    struct strlist components;
};
bool sr_debootstrap_userland(const struct stage *st);
void sr_archive_of(const struct stage *st, struct sr_archive *a);
/* Plan time: checks the URL and keyring, puts the archive into the key. */
void sr_declare_archive(struct stage *st, const struct sr_archive *a);

/* A path inside the sysroot/root ROOT found among the libc directories
 * (lib, lib64, lib/TRIPLET, usr/lib, usr/lib/TRIPLET), relative, new string;
 * NULL if none has NAME. */
char *sr_find_lib(const char *root, const char *triplet, const char *name);
/* Whether NAME is a runtime shared object a root needs from a libc sysroot
 * (ld.so, libc, libm, libresolv, libnss_files, ... and libgcc_s): versioned
 * .so.N files only, never headers, static libraries or linker scripts. */
bool sr_runtime_lib(const char *name);
/* Rewrites absolute symlinks below ROOT into relative ones, so the tree
 * works wherever it is (a sysroot must not point into the build host).
 * Returns the number rewritten, or -1. */
int sr_relative_links(const char *root);
/* PATH (absolute, inside ROOT) with the root's symlinks resolved inside
 * ROOT; new string (absolute host path). */
char *sr_resolve_in_root(const char *root, const char *path);

#endif
