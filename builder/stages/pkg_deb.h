/* Binary packages (.deb) from the generic package build (pkg_build.h): a
 * kind's struct pkg_desc may point to a struct pkg_debs, and then, after
 * its steps and install rows, pkg_build() splits the tree the steps
 * installed into (DESTDIR) into binary packages by the globs of each, and
 * writes them with formats/deb.h; their Depends come from the ELF files'
 * DT_NEEDED through shlibs (formats/shlibs.h).
 *
 * Every staged file (regular file or symlink) goes into exactly one
 * package, or is one the kind leaves out on purpose (not_installed, as
 * Debian's debian/not-installed; it narrows the packages' globs: "usr/include"
 * and not_installed "usr/include/linux" package the headers but the
 * kernel's): a file no package's globs take, or one that two take, is an
 * error naming the file (and both); so is a glob that takes no file (a
 * typo, or a file the build stopped installing). A glob is matched with fnmatch (FNM_PATHNAME)
 * against the path relative to DESTDIR, and against each of its parent
 * directories, so "usr/bin" takes all below it.
 *
 * DESTDIR may be another stage's output (the package kind's destdir_from):
 * it is only read; the packages' files are copies, stripped there.
 *
 * Outputs: OUT/debs/NAME_VERSION_ARCH.deb for each, and OUT/debs/shlibs,
 * the shlibs lines of every shared library the packages ship (what later
 * package stages read: shlibs_stages). The stage manifest gets "debs":
 * [{"package", "version", "architecture", "file", "size", "sha256"}].
 *
 * Later stages take them back by entries "STAGE[/PACKAGE]" (userland.debs,
 * build_depends), parsed and walked here: pkg_deb_entry_stage, pkg_deb_iter. */
#ifndef TRILLIAN_STAGES_PKG_DEB_H
#define TRILLIAN_STAGES_PKG_DEB_H

#include <stdbool.h>

#include "base/json_out.h"
#include "formats/archive.h"
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
    const char *recommends, *suggests;
    const char *multi_arch;   /* same, foreign, allowed, or NULL */
    /* "all" for a package of no architecture (terminfo, scripts, data: no
     * ELF file in it); NULL: the recipe's */
    const char *arch;
    /* Templates (pkg_expand): files copied in as preinst, postinst, prerm,
     * postrm; and the copyright file installed as
     * usr/share/doc/NAME/copyright (NULL: DESTDIR must have one there). */
    const char *scripts[4];
    const char *copyright;
    /* Absolute paths in the package; NULL: every file under /etc. */
    const char *const *conffiles;
    /* Globs (as files) of shared objects that are programs too, 0755 where
     * dh_fixperms would make them 0644: the dynamic loader (the kernel
     * maps a program's PT_INTERP only when it is executable) and libc. */
    const char *const *executables;
    /* DEBIAN/triggers lines (deb-triggers(5)): libc-bin's "interest-noawait
     * ldconfig"; NULL: none but the ldconfig activation of a library's */
    const char *const *triggers;
    /* directories shipped even when empty, "PATH" or "PATH MODE"
     * (deb_package.dirs); NULL: none */
    const char *const *dirs;
    /* the DT_NEEDED dependencies into Pre-Depends, not Depends (Debian's
     * Essential packages: dpkg-shlibdeps -dPre-Depends) */
    bool shlibs_pre;
    /* its own Version, where Debian gives one binary package another
     * (util-linux's bsdutils: an epoch, debputy's binary-version); NULL:
     * the packages' (pkg_debs.version) */
    const char *version;
    const char *where; /* "FILE:LINE" of its row, for messages; NULL: the stage's */
};

struct pkg_debs {
    const char *destdir;     /* template: where the steps installed */
    const char *version;     /* of every binary package without its own */
    const char *maintainer;
    const struct pkg_deb *debs;           /* {.name = NULL}-terminated */
    const char *const *shlibs_files;      /* absolute paths, NULL-terminated, or NULL */
    const char *const *shlibs_stages;     /* stages whose debs/shlibs are read, or NULL */
    /* Globs of DESTDIR left out of every package, or NULL; where: its
     * "FILE:LINE" (NULL: the stage's). */
    const char *const *not_installed;
    const char *not_installed_where;
    /* The version in the shlibs lines the packages' libraries get
     * (dh_makeshlibs -V: "libc 6.1 libc6.1 (>= 2.43)"); NULL: VERSION. */
    const char *shlibs_version;
    /* Strip the packages' ELF files as dh_strip does, with ${cross}strip
     * (cross and target kinds) or the host's strip: shared libraries
     * --strip-unneeded, programs of their symbol tables, static libraries
     * --strip-debug (deterministic), .comment and .note sections out;
     * object files (crt1.o) as they are. */
    bool strip;
};

/* Plan time: names and versions checked (Debian policy), dpkg-deb as a
 * tool, debs/ as an output, the shlibs files as inputs, a need of each
 * shlibs stage's debs/shlibs. -1 after st_error, else 0. */
int pkg_debs_declare(struct stage *st, const struct pkg_debs *d);

/* An entry naming a stage's binary packages, "STAGE" (all of them) or
 * "STAGE/PACKAGE" (one): the stage's name (new string), and in *PKG the
 * package's, or NULL. */
char *pkg_deb_entry_stage(const char *e, const char **pkg);

/* The .debs an entry "STAGE[/PACKAGE]" takes from that stage's OUT/debs/
 * (every one, or those of the package named), in file-name order: the walk
 * userland.debs and build_depends share; each unpacks them its own way.
 *
 *     pkg_deb_iter_open(&it, cx, entry)    -1: the stage has no debs/
 *     while ((r = pkg_deb_iter_next(&it, err)) > 0)
 *         ... it.file, it.path, it.info ...
 *     r < 0: a .deb whose control file cannot be read (err says which);
 *     it.taken == 0: the entry took none
 *     pkg_deb_iter_close(&it)
 *
 * After a failed open, next gives none: a caller may let that say it. */
struct pkg_deb_iter {
    char *stage;          /* the entry's stage */
    const char *want;     /* the entry's package (in the entry), or NULL: all */
    const char *file;     /* the current .deb's name in debs/ */
    char *path;           /* and its path */
    struct deb_info info; /* its control file's fields */
    size_t taken;         /* how many next has given */
    char *dir;            /* private: the stage's debs/, its names, the next's index */
    struct strlist names;
    size_t at;
};

int pkg_deb_iter_open(struct pkg_deb_iter *it, const struct stage_ctx *cx, const char *entry);
/* 1 with the next .deb the entry takes, 0 after the last, -1 with err. */
int pkg_deb_iter_next(struct pkg_deb_iter *it, char err[ARC_ERRLEN]);
void pkg_deb_iter_close(struct pkg_deb_iter *it);

/* OWNER[i] of a file not_installed takes. */
#define PKG_NOT_INSTALLED ((size_t)-1)

/* Which package takes each of FILES (relative paths): OWNER[i] its index
 * in D->debs, or PKG_NOT_INSTALLED. -1 with err for a file none or two
 * take, or a glob that takes none (WHERE: "FILE:LINE: KEY" of the stage,
 * for rows without their own). */
int pkg_debs_split(const struct pkg_debs *d, const struct strlist *files, size_t *owner,
                   const char *where, char *err, size_t errlen);

/* A symlink's target as dh_link writes it (policy 10.5): absolute between
 * top-level directories, else relative and short; REL is the link's path
 * relative to the package root. New string. */
char *pkg_link_target(const char *rel, const char *target);

/* Run time, after the install rows: the split, the copyright files, the
 * Depends, the .debs and shlibs in OUT/debs/. 0, or 1 after cx_fail. */
int pkg_debs_build(const struct stage_ctx *cx, const struct pkg_vars *v,
                   const struct pkg_debs *d);

/* Adds "debs" to the stage manifest M. 0, or 1 after cx_fail. */
int pkg_debs_manifest(const struct stage_ctx *cx, const struct pkg_debs *d, json_object *m);

#endif
