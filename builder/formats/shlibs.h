/* Shared-library dependencies, as dpkg-shlibdeps computes them from shlibs
 * files (not symbols files): each ELF file's DT_NEEDED SONAMEs looked up in
 * a map SONAME -> "package (>= version)", the map built from the shared
 * libraries of the packages being built (their DT_SONAME) and the shlibs
 * files of packages built before.
 *
 * A shlibs file has one line per library, "NAME VERSION DEPENDENCY", NAME
 * and VERSION from the SONAME as dpkg splits it: libfoo.so.1 is "libfoo 1",
 * libfoo-2.0.so is "libfoo 2.0". Lines with a type ("udeb: ..."), comments
 * and empty lines are skipped. */
#ifndef TRILLIAN_SHLIBS_H
#define TRILLIAN_SHLIBS_H

#include <stddef.h>

#include "base/util.h"

#define SHLIBS_ERRLEN 1024

/* The dynamic section of an ELF file (ELF32 or ELF64, either byte order, any
 * machine). */
struct elf_dynamic {
    int machine;           /* e_machine */
    char *soname;          /* DT_SONAME, or NULL */
    struct strlist needed; /* DT_NEEDED, in order */
};

/* Reads PATH: 1 for an ELF file with a dynamic section (a program or shared
 * library linked dynamically), D filled; 0 for anything else (not ELF, a
 * static program, an object file); -1 with err for a malformed ELF file
 * (truncated, a string outside its table) or one that cannot be read. */
int elf_dynamic_read(const char *path, struct elf_dynamic *d, char err[SHLIBS_ERRLEN]);
void elf_dynamic_free(struct elf_dynamic *d);

/* "libfoo.so.1" -> NAME "libfoo", VERSION "1" (new strings); -1 for a
 * SONAME dpkg cannot split (then no shlibs line names it). */
int shlibs_split(const char *soname, char **name, char **version);

struct shlibs_entry {
    char *name, *version; /* the SONAME split */
    char *dep;            /* "libfoo1 (>= 1.0-1)" */
    char *package;        /* the dependency's first package name: libfoo1 */
};
struct shlibs {
    struct shlibs_entry *v;
    size_t n, cap;
};

/* Adds SONAME -> DEP. The first entry for a library wins (the packages of
 * the build first, then the shlibs files, as dpkg-shlibdeps prefers the
 * package being built). -1 (nothing added) for a SONAME shlibs_split
 * refuses. */
int shlibs_add(struct shlibs *m, const char *soname, const char *dep);
/* Adds the lines of a shlibs file's TEXT; WHERE names it in messages. -1
 * with err for a line that is not NAME VERSION DEPENDENCY. */
int shlibs_parse(struct shlibs *m, const char *text, const char *where,
                 char err[SHLIBS_ERRLEN]);
const struct shlibs_entry *shlibs_find(const struct shlibs *m, const char *soname);
/* "libfoo 1 libfoo1 (>= 1.0-1)\n" for SONAME (new string), or NULL. */
char *shlibs_line(const char *soname, const char *dep);
void shlibs_free(struct shlibs *m);

/* Adds to DEPS (without duplicates) the dependency of each of NEEDED, the
 * DT_NEEDED of FILE in package PACKAGE; a library of PACKAGE itself adds
 * none. -1 with err naming FILE, the SONAME and PACKAGE for a SONAME no
 * package provides. */
int shlibs_depends(const struct shlibs *m, const char *package, const char *file,
                   const struct strlist *needed, struct strlist *deps,
                   char err[SHLIBS_ERRLEN]);

#endif
