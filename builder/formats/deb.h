/* Debian binary packages (.deb) from a staged tree, as debhelper and
 * dpkg-gencontrol would make them, but without debian/ or a source package:
 * the control file from fields, Installed-Size as dpkg-gencontrol computes
 * it, DEBIAN/md5sums, conffiles, maintainer scripts and shlibs, then
 * `dpkg-deb --build --root-owner-group -Zxz`. Reproducible: every mtime
 * clamped to SOURCE_DATE_EPOCH, modes normalized as dh_fixperms does,
 * entries sorted (dpkg-deb sorts them), owner and group root.
 *
 * Functions that can fail return -1 and fill `char err[DEB_ERRLEN]` with a
 * one-line reason naming the package or file. */
#ifndef TRILLIAN_DEB_H
#define TRILLIAN_DEB_H

#include <stdbool.h>

#define DEB_ERRLEN 1024

/* Debian policy 5.6.1: at least two characters of [a-z0-9+.-], starting
 * with a letter or digit. 0, or -1 with err saying why. */
int deb_valid_name(const char *name, char err[DEB_ERRLEN]);
/* Policy 5.6.12: [EPOCH:]UPSTREAM[-REVISION]; the epoch digits, the
 * upstream version starting with a digit and made of [A-Za-z0-9.+~-:]
 * (a '-' only with a revision, a ':' only with an epoch), the revision
 * [A-Za-z0-9+.~]. 0, or -1 with err. */
int deb_valid_version(const char *version, char err[DEB_ERRLEN]);
/* The Debian architecture of a recipe's arch ("ia64", "amd64"; "x86_64"
 * is amd64), or NULL. */
const char *deb_arch(const char *recipe_arch);

struct deb_fields {
    const char *package, *version, *arch, *maintainer; /* required */
    const char *section, *priority;                    /* NULL: left out */
    bool essential;                                    /* "Essential: yes" */
    /* Relationship fields, Debian's comma-separated syntax; NULL or "": left out. */
    const char *depends, *pre_depends, *provides, *conflicts, *replaces, *breaks;
    const char *recommends, *suggests;
    const char *multi_arch;  /* same, foreign, allowed; NULL: left out */
    const char *summary;     /* the Description's first line (required) */
    const char *description; /* the long description, lines; NULL: none */
    long long installed_size; /* KiB; < 0: left out */
};

/* The control file's text (new string), fields in dpkg-gencontrol's order;
 * the long description's lines indented by one space, empty lines as " .". */
char *deb_control(const struct deb_fields *f);

/* Installed-Size as dpkg-gencontrol computes it over ROOT (the package
 * tree, DEBIAN/ with it): each regular file and symlink its size rounded up
 * to KiB (a hard-linked inode once), every other object (directories,
 * ROOT itself) 1. -1 with err when the tree cannot be read. */
long long deb_installed_size(const char *root, char err[DEB_ERRLEN]);

/* One binary package to write. SCRIPTS are files to copy in as
 * DEBIAN/preinst, postinst, prerm, postrm (0755), or NULL. CONFFILES:
 * NULL for every regular file under ROOT/etc (as dh_installdeb does), else
 * a NULL-terminated list of absolute paths in the package. SHLIBS: the
 * DEBIAN/shlibs text (packages that ship shared libraries; they get the
 * ldconfig trigger too), or NULL. EXECUTABLES: shared objects that are
 * programs too, kept 0755 (as Debian's glibc does for ld.so and libc.so).
 * TRIGGERS: DEBIAN/triggers lines ("interest-noawait ldconfig"), NULL or
 * empty for none; a package with SHLIBS gets its activation after them. */
struct deb_package {
    struct deb_fields f;
    const char *scripts[4];
    const char *const *conffiles;
    const char *shlibs;
    const char *const *triggers;
    /* Paths in the package (relative, no leading '/') made 0755 although
     * they are shared libraries (the dynamic loader, libc), or NULL. */
    const char *const *executables;
    /* Directories the package ships even when empty, "PATH" or "PATH MODE"
     * (octal: "tmp 1777", "root 0700"; default 0755, as dh_fixperms), as
     * Debian's debian/PACKAGE.dirs and the modes its rules set; or NULL. */
    const char *const *dirs;
};

/* Writes the package whose files are staged in ROOT (which gets DEBIAN/
 * and normalized modes and mtimes) to DEB, with dpkg-deb run from an argv
 * array (its output on stderr: a stage's log). Refuses a bad name or
 * version, and a tree without usr/share/doc/PACKAGE/copyright. 0 or -1. */
int deb_build(const struct deb_package *p, const char *root, const char *deb,
              long long source_date_epoch, char err[DEB_ERRLEN]);

/* The .deb's file name: NAME_VERSION_ARCH.deb, the version without its
 * epoch (as dpkg-name names it). New string. */
char *deb_file_name(const char *name, const char *version, const char *arch);

#endif
