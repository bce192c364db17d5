/* A cache entry's files as a substituter describes them: every file,
 * symlink and directory below an entry's out/, with type, mode, size,
 * sha256 (files) and target (symlinks). The publisher writes the list into
 * an entry's signed metadata; the client compares what it unpacked with it.
 * Paths are relative ("bin/gcc"), never absolute, never with "." or ".."
 * components; a symlink must point inside the entry (no absolute target,
 * ".." only at its start and not above the entry's top), so nothing
 * unpacked can reach outside it. */
#ifndef TRILLIAN_ENTRY_FILES_H
#define TRILLIAN_ENTRY_FILES_H

#include <json-c/json.h>
#include <stdbool.h>

#include "base/util.h"

struct efile {
    char *path;
    char type;         /* 'f' file, 'l' symlink, 'd' directory */
    unsigned mode;     /* permission bits */
    long long size;    /* files */
    long long mtime_ns;
    char sha[65];      /* files */
    char *target;      /* symlinks */
};
struct efiles {
    struct efile *v;
    size_t n, cap;
};

/* The longest path an entry may hold: a quarter of PATH_MAX, so that with
 * the cache's or OUT's own directories before it every file can still be
 * named (a tree deeper than PATH_MAX breaks path-based tools, and did). */
#define EFILES_PATH_MAX 1024

/* Whether P is a path an entry may hold (relative, no "."/".." components,
 * no empty component, no newline, at most EFILES_PATH_MAX bytes). */
bool efiles_path_ok(const char *p);
/* Whether a symlink at PATH with TARGET points inside the entry. */
bool efiles_link_inside(const char *path, const char *target);

/* Every entry below DIR, sorted by path, files hashed. -1 with *WHY (new
 * string) on an unreadable tree, another file type (device, fifo), a bad
 * name or a symlink that points outside DIR. */
int efiles_scan(const char *dir, struct efiles *out, char **why);
/* Orders struct efile by path (qsort, bsearch). */
int efiles_cmp(const void *a, const void *b);
/* The list as a JSON array of {path, type, mode, size, sha256, target}. */
json_object *efiles_json(const struct efiles *f);
/* The list from metadata (ARR), checked: names and links as above, types
 * known, sha256 of 64 hex digits, sorted without duplicates. -1 with *WHY. */
int efiles_from_json(json_object *arr, struct efiles *out, char **why);
/* The first difference between WANT and HAVE (a new string: "bin/gcc:
 * sha256 differs", "lib/x: missing", "extra: y"), or NULL if they agree
 * (mode: only whether a file is executable). */
char *efiles_diff(const struct efiles *want, const struct efiles *have);
/* HAVE's files in the cache's sums format ("SHA SIZE MTIME_NS PATH"). */
void efiles_sums(const struct efiles *have, struct buf *b);
/* The sum of the files' sizes. */
long long efiles_bytes(const struct efiles *f);
void efiles_free(struct efiles *f);

#endif
