/* Binary packages (.deb) from the generic package build (pkg_build.h): a
 * kind's struct pkg_desc may point to a struct pkg_debs, and then, after
 * its steps and install rows, pkg_build() splits the tree the steps
 * installed into (DESTDIR) into binary packages by the globs of each, and
 * writes them with formats/deb.h; their Depends come from the ELF files'
 * DT_NEEDED through shlibs (formats/shlibs.h).
 *
 * Every staged file (regular file or symlink) goes into exactly one
 * package: a file no package's globs take, or one that two packages take,
 * is an error naming the file (and both packages). A glob is matched with
 * fnmatch (FNM_PATHNAME) against the path relative to DESTDIR, and against
 * each of its parent directories, so "usr/bin" takes all below it.
 *
 * Outputs: OUT/debs/NAME_VERSION_ARCH.deb for each, and OUT/debs/shlibs,
 * the shlibs lines of every shared library the packages ship (what later
 * package stages read: shlibs_stages). The stage manifest gets "debs":
 * [{"package", "version", "architecture", "file", "size", "sha256"}]. */
#ifndef TRILLIAN_STAGES_PKG_DEB_H
#define TRILLIAN_STAGES_PKG_DEB_H

#include <stdbool.h>

#include "base/json_out.h"
#include "stage.h"

struct pkg_vars;

/* One binary package. Strings are used as they are, except where said. */
struct pkg_deb {
    const char *name;
    const char *const *files; /* globs relative to DESTDIR, NULL-terminated */
    const char *section, *priority;
    bool essential;
    const char *summary;      /* the Description's first line */
    const char *description;  /* the long description, or NULL */
    /* Added to the computed Depends (after it), and the other relations;
     * Debian syntax ("foo (>= 1), bar"), or NULL. */
    const char *depends, *pre_depends, *provides, *conflicts, *replaces, *breaks;
    const char *multi_arch;   /* same, foreign, allowed, or NULL */
    /* Templates (pkg_expand): files copied in as preinst, postinst, prerm,
     * postrm; and the copyright file installed as
     * usr/share/doc/NAME/copyright (NULL: DESTDIR must have one there). */
    const char *scripts[4];
    const char *copyright;
    /* Absolute paths in the package; NULL: every file under /etc. */
    const char *const *conffiles;
};

struct pkg_debs {
    const char *destdir;     /* template: where the steps installed */
    const char *version;     /* of every binary package */
    const char *maintainer;
    const struct pkg_deb *debs;           /* {.name = NULL}-terminated */
    const char *const *shlibs_files;      /* absolute paths, NULL-terminated, or NULL */
    const char *const *shlibs_stages;     /* stages whose debs/shlibs are read, or NULL */
};

/* Plan time: names and versions checked (Debian policy), dpkg-deb as a
 * tool, debs/ as an output, the shlibs files as inputs, a need of each
 * shlibs stage's debs/shlibs. -1 after st_error, else 0. */
int pkg_debs_declare(struct stage *st, const struct pkg_debs *d);

/* Which package takes each of FILES (relative paths): OWNER[i] its index
 * in D->debs. -1 with err for a file none or two take. */
int pkg_debs_split(const struct pkg_debs *d, const struct strlist *files, size_t *owner,
                   char *err, size_t errlen);

/* Run time, after the install rows: the split, the copyright files, the
 * Depends, the .debs and shlibs in OUT/debs/. 0, or 1 after cx_fail. */
int pkg_debs_build(const struct stage_ctx *cx, const struct pkg_vars *v,
                   const struct pkg_debs *d);

/* Adds "debs" to the stage manifest M. 0, or 1 after cx_fail. */
int pkg_debs_manifest(const struct stage_ctx *cx, const struct pkg_debs *d, json_object *m);

#endif
