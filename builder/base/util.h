/* Small helpers shared by the engine and the stage modules: memory, strings,
 * paths, files. Allocation failures abort: a build tool cannot do anything
 * useful after malloc fails. */
#ifndef TRILLIAN_UTIL_H
#define TRILLIAN_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) PRINTF_LIKE(1, 2);
char *xvasprintf(const char *fmt, va_list ap) PRINTF_LIKE(1, 0);

/* A growable array of owned strings, NULL-terminated so it can be an argv. */
struct strlist {
    char **v;
    size_t n, cap;
};
void strlist_push(struct strlist *l, const char *s);     /* copies s */
void strlist_push_owned(struct strlist *l, char *s);     /* takes s */
void strlist_pushf(struct strlist *l, const char *fmt, ...) PRINTF_LIKE(2, 3);
bool strlist_contains(const struct strlist *l, const char *s);
void strlist_sort(struct strlist *l);
void strlist_free(struct strlist *l);

/* A growable byte buffer, after git's strbuf: P is always a NUL-terminated
 * string of N bytes ("" until something is added, in a shared static byte
 * that CAP == 0 marks as not owned), so readers need no NULL check. Start it
 * with BUF_INIT or buf_init. Every buf function also takes a zeroed buf
 * (one in a calloc'd struct) and leaves P a string; only P read before any
 * call is NULL. */
struct buf {
    char *p;
    size_t n, cap;
};
extern char buf_empty[1]; /* never written: P of every empty buf */
#define BUF_INIT {buf_empty, 0, 0}
void buf_init(struct buf *b);
void buf_add(struct buf *b, const void *data, size_t n);
void buf_puts(struct buf *b, const char *s);
void buf_printf(struct buf *b, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* S as one single-quoted POSIX shell word ('it'\''s'), whatever it holds. */
void buf_shell_quote(struct buf *b, const char *s);
/* Frees the bytes and leaves B empty (as buf_init does), ready for reuse. */
void buf_free(struct buf *b);
/* The string, now the caller's to free (a new "" when B is empty); B is left
 * empty. */
char *buf_detach(struct buf *b);


bool str_starts(const char *s, const char *prefix);
bool str_ends(const char *s, const char *suffix);
/* S is non-empty and each byte an ASCII letter, a digit or one of EXTRA. */
bool str_all_alnum_or(const char *s, const char *extra);
/* Gives the owner write permission on everything below DIR that lacks it:
 * directories, and regular files too if FILES (a read-only tree out of the
 * cache or an archive made writable). Errors are ignored. */
void tree_owner_writable(const char *dir, bool files);
/* A copy of S safe to print on a terminal or into a log (new string):
 * control characters, C1 controls and bytes that are not UTF-8 as \n, \t or
 * \xNN, a backslash as \\ (names and URLs that came from elsewhere). */
char *str_printable(const char *s);
size_t edit_distance(const char *a, const char *b);

/* Paths. path_join returns a new string; "/" in b starting makes b win. */
char *path_join(const char *a, const char *b);
char *path_dirname(const char *p);
const char *path_basename(const char *p);
/* The program ARGV runs, for log lines: the base name of its first word,
 * or of the first word after `env` and its VAR=VALUE words. */
const char *argv_program(const char *const *argv);
char *path_absolute(const char *base_dir, const char *p); /* p if absolute */

/* Files. Functions return 0 on success, -1 with errno set on failure. */
int mkdir_p(const char *path, mode_t mode);
/* Removes PATH and everything below it, at any depth (read-only
 * directories included); -1 with errno at the first thing it cannot remove. */
int rm_rf(const char *path);
bool path_exists(const char *path);
bool is_dir(const char *path);
int read_file(const char *path, char **data, size_t *len); /* NUL-terminated */
/* The text in file PATH after the first MARKER, up to (not including) the
 * first character of STOP: "2.36" from version.h's `#define VERSION "2.36"`
 * with marker `#define VERSION "` and stop `"`. New string, or NULL if the
 * file cannot be read or has no MARKER. */
char *file_text_after(const char *path, const char *marker, const char *stop);
/* All LEN bytes of DATA to FD (EINTR retried); 0, or -1 with errno. */
int write_all(int fd, const void *data, size_t len);
/* Writes to PATH.tmp.PID then renames, so readers never see half a file. */
int write_file_atomic(const char *path, const void *data, size_t len, mode_t mode);
int copy_file(const char *src, const char *dst);   /* keeps mode */
int link_or_copy(const char *src, const char *dst); /* hard link, else copy */
/* Copies a directory tree (files, dirs, symlinks), keeping modes. */
int copy_tree(const char *src, const char *dst, bool hardlink);
/* A copy for OUT, never the source's inode: a reflink where the file system
 * can, else a copy; mtime kept (OUT is checked against the cache by size and
 * mtime) and writable by its owner. publish_tree does it for a tree. */
int publish_file(const char *src, const char *dst);
int publish_tree(const char *src, const char *dst);
/* The names in a directory (not . or ..), sorted; -1 if it cannot be read. */
int dir_list(const char *dir, struct strlist *names);
/* The same, but -1 with errno E2BIG as soon as it has more than MAX names
 * (a directory of millions is not read whole to learn that). */
int dir_list_max(const char *dir, struct strlist *names, size_t max);
/* Lists the regular files and symlinks under dir, relative, sorted. */
int list_tree(const char *dir, struct strlist *out);

/* Last n lines of a file, for failure reports. Caller frees. */
char *file_tail(const char *path, int n);

double now_seconds(void); /* monotonic */

#endif
