/* Reading and writing archives of file trees, reproducibly (libarchive).
 *
 * One job: turn a directory tree into a tar or cpio archive whose bytes
 * depend only on the tree's content and the options (entries sorted by path,
 * fixed mtimes, synthetic inode numbers, no user/group names, no atime or
 * ctime), and turn archives (and Debian .deb packages) back into trees.
 *
 * A tree built without root cannot hold root-owned files or device nodes, so
 * the writer takes a metadata table (struct arc_table) that supplies owners,
 * modes, device nodes, symlinks and directories by path. The extractor, when
 * not run as root, records the owners and device nodes it could not create
 * into such a table, so extract + write round-trips without root.
 *
 * Paths in entries and tables are relative to the tree's root, without a
 * leading "./" or "/" ("dev/console", "etc/shadow"); the root itself is "."
 * (only used in tables: the writer never emits an entry for the root unless
 * the table names ".").
 *
 * Errors: functions that can fail take `char err[ARC_ERRLEN]` and fill it
 * with a one-line message naming the file and what went wrong (no trailing
 * newline); the caller adds the stage and recipe key. */
#ifndef TRILLIAN_ARCHIVE_H
#define TRILLIAN_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>

#define ARC_ERRLEN 512

enum arc_format {
    ARC_TAR,  /* POSIX pax, restricted: ustar headers, pax extensions only
                 where needed (long names, xattrs, big ids) */
    ARC_CPIO, /* SVR4 "newc" without CRC: what the kernel's initramfs reads */
};

enum arc_filter { ARC_FILTER_NONE, ARC_GZIP, ARC_ZSTD, ARC_XZ };

enum arc_type {
    ARC_KEEP = 0, /* table only: override mode/owner of whatever is there */
    ARC_FILE,
    ARC_DIR,
    ARC_SYMLINK,
    ARC_HARDLINK, /* listing only: a hard link to `target` */
    ARC_CHR,
    ARC_BLK,
    ARC_FIFO,
    ARC_SOCK,
};

/* One entry: a listed archive member, or a metadata table row. */
struct arc_entry {
    char *path;          /* relative, see above */
    enum arc_type type;
    int mode;            /* permission bits with suid/sgid/sticky (07777);
                            -1 in a table: keep the tree's mode */
    long long uid, gid;  /* -1 in a table: keep (0 unless keep_owners) */
    unsigned rmajor, rminor; /* ARC_CHR, ARC_BLK */
    char *target;        /* ARC_SYMLINK: link text; ARC_HARDLINK: the path
                            of the entry it links to */
    long long size;      /* listing: data size (0 for non-files) */
    long long mtime;     /* listing: seconds since the epoch */
};

/* A metadata table: rows by path; a later row for the same path replaces an
 * earlier one. */
struct arc_table {
    struct arc_entry *v;
    size_t n, cap;
};

/* Appends a copy of E (its strings are copied). */
void arc_table_add(struct arc_table *t, const struct arc_entry *e);
/* Convenience: add a row. target may be NULL. */
void arc_table_addf(struct arc_table *t, const char *path, enum arc_type type,
                    int mode, long long uid, long long gid, unsigned rmajor,
                    unsigned rminor, const char *target);
/* The last row for PATH, or NULL. */
const struct arc_entry *arc_table_find(const struct arc_table *t,
                                       const char *path);
void arc_table_free(struct arc_table *t);

/* Text form of a table, one row per line, fields separated by blanks:
 *     PATH TYPE MODE UID GID [MAJOR MINOR | TARGET]
 * TYPE is keep, file, dir, slink, hlink, char, block, fifo or sock; MODE is
 * octal or "-" (keep); UID and GID are numbers or "-" (keep). char and block
 * take MAJOR MINOR, slink and hlink take TARGET. Blank lines and lines
 * starting with '#' are ignored. Space, tab, newline and backslash inside
 * PATH or TARGET are written as \ooo octal escapes (as in /etc/fstab).
 * Example:  dev/console char 0600 0 0 5 1
 * arc_table_parse: ORIGIN names the text in messages (a file name);
 * arc_table_load reads a file; arc_table_format returns a new string
 * with the rows sorted by path. */
int arc_table_parse(struct arc_table *t, const char *text, const char *origin,
                    char err[ARC_ERRLEN]);
int arc_table_load(struct arc_table *t, const char *path, char err[ARC_ERRLEN]);
char *arc_table_format(const struct arc_table *t);

/* Options for arc_write_tree. Start from ARC_WRITE_OPTS_INIT: tar, no
 * compression, the tree's mtimes, owners 0:0, xattrs kept, no table. */
struct arc_write_opts {
    enum arc_format format;
    enum arc_filter filter;
    long long mtime;    /* >= 0: every entry gets this mtime
                           (cx->source_date_epoch); < 0: the tree's mtimes */
    bool keep_owners;   /* take uid/gid from the tree (a tree built as root);
                           otherwise every entry is 0:0 */
    bool no_xattrs;     /* leave extended attributes out */
    int threads;        /* zstd: compress with this many threads (the output
                           is the same for any count >= 1); 0 = one, in
                           zstd's single-thread mode */
    const struct arc_table *meta; /* may be NULL */
};
#define ARC_WRITE_OPTS_INIT {.format = ARC_TAR, .mtime = -1}

/* Writes the tree below DIR (not DIR itself, unless the table has ".") to
 * the archive file OUT: entries sorted by path (bytewise), so parents
 * come before children; hard links within the tree kept (tar: the first path
 * has the data; cpio: all share an inode number, the last has the data);
 * symlinks, device nodes, fifos, sockets, modes (with suid) and xattrs kept;
 * no user/group names, atimes or ctimes; synthetic inode numbers. Table rows
 * override mode/owner of tree entries (the row's type must match the tree's,
 * or be ARC_KEEP) and add dir/slink/char/block/fifo entries missing from the
 * tree (their parent must exist in the tree or the table). OUT is written as
 * OUT.tmp and renamed; on failure nothing is left. Returns 0 or -1. */
int arc_write_tree(const char *dir, const char *out,
                   const struct arc_write_opts *o, char err[ARC_ERRLEN]);

/* Flags for arc_extract / arc_deb_extract. */
enum {
    ARC_X_NO_OWNERS = 1, /* never set owners, even as root */
    ARC_X_NO_XATTRS = 2, /* don't restore extended attributes */
    ARC_X_SAFE_MODES = 4, /* no setuid, setgid, sticky, group or other write
                             bits on disk (ARC_SAFE_PERM) */
    ARC_X_DIRS_STAY = 8,  /* a symlink member where DIR has a real directory
                             is left out, unrecorded: the directory stays, as
                             dpkg keeps it (base-files' /bin -> usr/bin over
                             a root whose /usr is not merged) */
};
#define ARC_SAFE_PERM 0755

/* Extracts the archive file IN (any format and filter libarchive reads)
 * into the existing directory DIR, refusing absolute paths, ".." and writes
 * through symlinks. As root, owners are set (unless ARC_X_NO_OWNERS) and
 * device nodes are created; otherwise files get our uid and device nodes
 * are skipped. If RECORD is not NULL, a row is added for every entry with
 * its type, mode, uid, gid and device numbers, so that
 * arc_write_tree(DIR, ..., meta = RECORD) restores what the archive held.
 * Returns 0 or -1. */
int arc_extract(const char *in, const char *dir, int flags,
                struct arc_table *record, char err[ARC_ERRLEN]);

/* What arc_extract_checked asks before it writes a member: 0 to write it
 * (*MAX: the most data bytes the member may have; -1 any), non-zero to
 * stop the extraction there (arc_extract_checked then returns that value). */
typedef int (*arc_admit_fn)(const struct arc_entry *e, long long *max, void *ud);
/* arc_extract for an archive from elsewhere: ADMIT is asked about every
 * member before anything of it is written; a file whose data goes past its
 * *MAX, or data past TOTAL bytes in all, stops the extraction at once (-1,
 * ERR says which member), so an archive that unpacks to far more than it
 * claims (a compression bomb) costs only what it was allowed. Modes as
 * ARC_X_SAFE_MODES. */
int arc_extract_checked(const char *in, const char *dir, int flags, arc_admit_fn admit,
                        void *ud, long long total, char err[ARC_ERRLEN]);

/* Calls FN for every entry of the archive file IN, in archive order. The
 * entry and its strings are valid only during the call. FN returns 0 to go
 * on; a non-zero value stops the walk and is returned. Returns 0, FN's
 * value, or -1 on a read error. */
typedef int (*arc_list_fn)(const struct arc_entry *e, void *ud);
int arc_list(const char *in, arc_list_fn fn, void *ud, char err[ARC_ERRLEN]);

/* Reads whole regular-file members of the archive file IN into memory: for
 * each NAMES[i] (NULL-terminated list of relative paths, compared after
 * dropping the member path's first STRIP components, as tar's
 * --strip-components: 1 skips a source tarball's top directory), DATA[i]
 * gets the first such member's bytes (new, NUL-terminated) and LEN[i] its
 * size, or NULL and 0 if the archive has none. Reading stops once every
 * name was found. A member larger than MAX bytes is an error. Returns 0, or
 * -1 with nothing kept. */
int arc_read_files(const char *in, int strip, const char *const *names, char **data,
                   size_t *len, size_t max, char err[ARC_ERRLEN]);

/* Debian packages (.deb: an ar archive holding debian-binary,
 * control.tar.* and data.tar.*). */
struct deb_info {
    char *package, *version, *architecture; /* from the control file */
    char *control;                          /* the whole control file */
};
/* Extracts data.tar.* of the package DEB into DIR, like arc_extract. */
int arc_deb_extract(const char *deb, const char *dir, int flags,
                    struct arc_table *record, char err[ARC_ERRLEN]);
/* Reads the control file of DEB; fields missing from it are NULL except
 * package, version and architecture, whose absence is an error. */
int arc_deb_info(const char *deb, struct deb_info *out, char err[ARC_ERRLEN]);
void deb_info_free(struct deb_info *d);
/* A field's value from control-file text (first paragraph), new string or
 * NULL. Continuation lines are joined with "\n". */
char *deb_control_field(const char *control, const char *field);

/* Names used in recipes: "tar"/"cpio", "none"/"gzip"/"zstd"/"xz".
 * Return -1 for an unknown name. */
int arc_format_from_name(const char *name);
int arc_filter_from_name(const char *name);
const char *arc_type_name(enum arc_type t); /* table keyword ("slink") */

#endif
