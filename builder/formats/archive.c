/* Reading and writing archives of file trees, reproducibly. See archive.h. */
#define _GNU_SOURCE
#include "archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/util.h"

PRINTF_LIKE(2, 3)
static int fail(char *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, ARC_ERRLEN, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *aerr(struct archive *a)
{
    const char *s = archive_error_string(a);
    return s ? s : "unknown libarchive error";
}

/* ---- names ------------------------------------------------------------- */

static const char *const type_names[] = {
    [ARC_KEEP] = "keep",   [ARC_FILE] = "file", [ARC_DIR] = "dir",
    [ARC_SYMLINK] = "slink", [ARC_HARDLINK] = "hlink", [ARC_CHR] = "char",
    [ARC_BLK] = "block",   [ARC_FIFO] = "fifo", [ARC_SOCK] = "sock",
};

const char *arc_type_name(enum arc_type t)
{
    if ((size_t)t < ARRAY_LEN(type_names) && type_names[t])
        return type_names[t];
    return "?";
}

int arc_format_from_name(const char *name)
{
    if (!name)
        return -1;
    if (strcmp(name, "tar") == 0)
        return ARC_TAR;
    if (strcmp(name, "cpio") == 0)
        return ARC_CPIO;
    return -1;
}

int arc_filter_from_name(const char *name)
{
    static const char *const names[] = {
        [ARC_FILTER_NONE] = "none", [ARC_GZIP] = "gzip",
        [ARC_ZSTD] = "zstd", [ARC_XZ] = "xz"};
    for (size_t i = 0; name && i < ARRAY_LEN(names); i++)
        if (strcmp(name, names[i]) == 0)
            return (int)i;
    return -1;
}

/* ---- tables ------------------------------------------------------------ */

void arc_table_add(struct arc_table *t, const struct arc_entry *e)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->v = xrealloc(t->v, t->cap * sizeof *t->v);
    }
    struct arc_entry *d = &t->v[t->n++];
    *d = *e;
    d->path = xstrdup(e->path);
    d->target = e->target ? xstrdup(e->target) : NULL;
}

void arc_table_addf(struct arc_table *t, const char *path, enum arc_type type,
                    int mode, long long uid, long long gid, unsigned rmajor,
                    unsigned rminor, const char *target)
{
    struct arc_entry e = {
        .path = (char *)path, .type = type, .mode = mode, .uid = uid,
        .gid = gid, .rmajor = rmajor, .rminor = rminor,
        .target = (char *)target,
    };
    arc_table_add(t, &e);
}

const struct arc_entry *arc_table_find(const struct arc_table *t,
                                       const char *path)
{
    for (size_t i = t ? t->n : 0; i-- > 0;)
        if (strcmp(t->v[i].path, path) == 0)
            return &t->v[i];
    return NULL;
}

void arc_table_free(struct arc_table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].path);
        free(t->v[i].target);
    }
    free(t->v);
    t->v = NULL;
    t->n = t->cap = 0;
}

static void put_escaped(struct buf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\\' || c < 32)
            buf_printf(b, "\\%03o", c);
        else
            buf_add(b, s, 1);
    }
}

/* Unescapes \ooo in place; returns false on a malformed escape. */
static bool unescape(char *s)
{
    char *d = s;
    for (; *s; s++) {
        if (*s != '\\') {
            *d++ = *s;
            continue;
        }
        if (s[1] < '0' || s[1] > '3' || s[2] < '0' || s[2] > '7' ||
            s[3] < '0' || s[3] > '7')
            return false;
        *d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
        s += 3;
    }
    *d = 0;
    return true;
}

/* Dedup by path (last row wins), sorted bytewise by path. Pointers into T. */
static int cmp_row_ptr(const void *a, const void *b)
{
    const struct arc_entry *x = *(const struct arc_entry *const *)a;
    const struct arc_entry *y = *(const struct arc_entry *const *)b;
    int c = strcmp(x->path, y->path);
    if (c)
        return c;
    return x < y ? -1 : x > y;
}

static size_t table_final_rows(const struct arc_table *t,
                               const struct arc_entry ***rows)
{
    size_t n = t ? t->n : 0, m = 0;
    const struct arc_entry **r = xcalloc(n + 1, sizeof *r);
    for (size_t i = 0; i < n; i++)
        r[i] = &t->v[i];
    qsort(r, n, sizeof *r, cmp_row_ptr);
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && strcmp(r[i]->path, r[i + 1]->path) == 0)
            continue; /* a later row for the same path wins */
        r[m++] = r[i];
    }
    *rows = r;
    return m;
}

char *arc_table_format(const struct arc_table *t)
{
    const struct arc_entry **rows;
    size_t n = table_final_rows(t, &rows);
    struct buf b = BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        const struct arc_entry *e = rows[i];
        put_escaped(&b, e->path);
        buf_printf(&b, " %s ", arc_type_name(e->type));
        if (e->mode >= 0)
            buf_printf(&b, "%04o", (unsigned)e->mode & 07777);
        else
            buf_puts(&b, "-");
        if (e->uid >= 0)
            buf_printf(&b, " %lld", e->uid);
        else
            buf_puts(&b, " -");
        if (e->gid >= 0)
            buf_printf(&b, " %lld", e->gid);
        else
            buf_puts(&b, " -");
        if (e->type == ARC_CHR || e->type == ARC_BLK)
            buf_printf(&b, " %u %u", e->rmajor, e->rminor);
        else if ((e->type == ARC_SYMLINK || e->type == ARC_HARDLINK) &&
                 e->target) {
            buf_puts(&b, " ");
            put_escaped(&b, e->target);
        }
        buf_puts(&b, "\n");
    }
    free(rows);
    return buf_detach(&b);
}

static bool parse_id(const char *s, long long *out)
{
    if (strcmp(s, "-") == 0) {
        *out = -1;
        return true;
    }
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || end == s || v < 0 || v > UINT32_MAX)
        return false;
    *out = v;
    return true;
}

static bool parse_uint(const char *s, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || end == s || v > UINT_MAX || *s == '-')
        return false;
    *out = (unsigned)v;
    return true;
}

static bool valid_relpath(const char *p)
{
    if (strcmp(p, ".") == 0)
        return true;
    if (!*p || *p == '/')
        return false;
    for (const char *s = p; *s;) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 0 || (n == 1 && s[0] == '.') ||
            (n == 2 && s[0] == '.' && s[1] == '.'))
            return false;
        s += n;
        if (*s)
            s++;
        if (e && !*s)
            return false; /* trailing slash */
    }
    return true;
}

int arc_table_parse(struct arc_table *t, const char *text, const char *origin,
                    char err[ARC_ERRLEN])
{
    char *copy = xstrdup(text);
    int lineno = 0, rc = 0;
    for (char *line = copy, *next; line && rc == 0; line = next) {
        lineno++;
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        char *tok[8];
        int nt = 0;
        for (char *s = strtok(line, " \t\r"); s; s = strtok(NULL, " \t\r")) {
            if (nt == 0 && s[0] == '#')
                break;
            if (nt == 8) {
                nt = 9;
                break;
            }
            tok[nt++] = s;
        }
        if (nt == 0)
            continue;
        struct arc_entry e = {.mode = -1};
        int type = -1;
        for (size_t i = 0; nt >= 2 && i < ARRAY_LEN(type_names); i++)
            if (type_names[i] && strcmp(tok[1], type_names[i]) == 0)
                type = (int)i;
        int want = (type == ARC_CHR || type == ARC_BLK) ? 7
                   : (type == ARC_SYMLINK || type == ARC_HARDLINK) ? 6
                                                                   : 5;
        if (nt < 2 || type < 0) {
            rc = fail(err, "%s:%d: expected `PATH TYPE MODE UID GID`, TYPE "
                      "one of keep, file, dir, slink, hlink, char, block, "
                      "fifo, sock", origin, lineno);
            break;
        }
        e.type = (enum arc_type)type;
        if (nt != want) {
            rc = fail(err, "%s:%d: a `%s` row has %d fields, not %d", origin,
                      lineno, tok[1], want, nt);
            break;
        }
        if (!unescape(tok[0]) || !valid_relpath(tok[0])) {
            rc = fail(err, "%s:%d: bad path `%s` (relative, no `..`, no "
                      "leading `/` or `./`)", origin, lineno, tok[0]);
            break;
        }
        e.path = tok[0];
        if (strcmp(tok[2], "-") != 0) {
            char *end;
            long m = strtol(tok[2], &end, 8);
            if (*end || end == tok[2] || m < 0 || m > 07777) {
                rc = fail(err, "%s:%d: bad mode `%s` (octal, at most 7777, "
                          "or -)", origin, lineno, tok[2]);
                break;
            }
            e.mode = (int)m;
        }
        if (!parse_id(tok[3], &e.uid) || !parse_id(tok[4], &e.gid)) {
            rc = fail(err, "%s:%d: bad uid or gid (a number or -)", origin,
                      lineno);
            break;
        }
        if (want == 7 && (!parse_uint(tok[5], &e.rmajor) ||
                          !parse_uint(tok[6], &e.rminor))) {
            rc = fail(err, "%s:%d: bad device numbers `%s %s`", origin,
                      lineno, tok[5], tok[6]);
            break;
        }
        if (want == 6) {
            if (!unescape(tok[5])) {
                rc = fail(err, "%s:%d: bad escape in target", origin, lineno);
                break;
            }
            e.target = tok[5];
        }
        arc_table_add(t, &e);
    }
    free(copy);
    return rc;
}

int arc_table_load(struct arc_table *t, const char *path, char err[ARC_ERRLEN])
{
    char *text;
    size_t len;
    if (read_file(path, &text, &len) != 0)
        return fail(err, "cannot read %s: %s", path, strerror(errno));
    int rc = arc_table_parse(t, text, path, err);
    free(text);
    return rc;
}

/* ---- writing ----------------------------------------------------------- */

struct node {
    char *rel;                   /* "." for the root */
    char *src;                   /* on-disk path, NULL if from the table */
    struct stat st;
    const struct arc_entry *row; /* table row, or NULL */
    long long ino;               /* synthetic */
    unsigned nlink;
    const char *link_first;      /* tar: hard link to this earlier path */
    bool no_data;                /* cpio: a hard link whose data comes later */
};

struct nodes {
    struct node *v;
    size_t n, cap;
};

static struct node *node_push(struct nodes *ns)
{
    if (ns->n == ns->cap) {
        ns->cap = ns->cap ? ns->cap * 2 : 256;
        ns->v = xrealloc(ns->v, ns->cap * sizeof *ns->v);
    }
    struct node *n = &ns->v[ns->n++];
    memset(n, 0, sizeof *n);
    return n;
}

static int walk(const char *full, const char *rel, struct nodes *ns, char *err)
{
    DIR *d = opendir(full);
    if (!d)
        return fail(err, "cannot read directory %s: %s", full,
                    strerror(errno));
    struct strlist names = {0};
    struct dirent *de;
    errno = 0;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            strlist_push(&names, de->d_name);
        errno = 0;
    }
    int e = errno;
    closedir(d);
    if (e) {
        strlist_free(&names);
        return fail(err, "cannot read directory %s: %s", full, strerror(e));
    }
    int rc = 0;
    for (size_t i = 0; i < names.n && rc == 0; i++) {
        struct node *n = node_push(ns);
        n->src = path_join(full, names.v[i]);
        n->rel = *rel ? xasprintf("%s/%s", rel, names.v[i])
                      : xstrdup(names.v[i]);
        if (lstat(n->src, &n->st) != 0) {
            rc = fail(err, "cannot stat %s: %s", n->src, strerror(errno));
            break;
        }
        if (S_ISDIR(n->st.st_mode)) {
            char *s = xstrdup(n->src), *r = xstrdup(n->rel);
            rc = walk(s, r, ns, err); /* may move ns->v */
            free(s);
            free(r);
        }
    }
    strlist_free(&names);
    return rc;
}

static int cmp_node(const void *a, const void *b)
{
    const struct node *x = a, *y = b;
    bool xr = strcmp(x->rel, ".") == 0, yr = strcmp(y->rel, ".") == 0;
    if (xr || yr)
        return yr - xr;
    return strcmp(x->rel, y->rel);
}

static struct node *node_find(struct nodes *ns, const char *rel)
{
    struct node key = {.rel = (char *)rel};
    return bsearch(&key, ns->v, ns->n, sizeof *ns->v, cmp_node);
}

static enum arc_type type_of_mode(mode_t m)
{
    if (S_ISREG(m))
        return ARC_FILE;
    if (S_ISDIR(m))
        return ARC_DIR;
    if (S_ISLNK(m))
        return ARC_SYMLINK;
    if (S_ISCHR(m))
        return ARC_CHR;
    if (S_ISBLK(m))
        return ARC_BLK;
    if (S_ISFIFO(m))
        return ARC_FIFO;
    return ARC_SOCK;
}

/* Hard-link groups: regular files with st_nlink > 1, by (dev, ino). */
static int cmp_inode(const void *a, const void *b)
{
    const struct node *x = *(const struct node *const *)a;
    const struct node *y = *(const struct node *const *)b;
    if (x->st.st_dev != y->st.st_dev)
        return x->st.st_dev < y->st.st_dev ? -1 : 1;
    if (x->st.st_ino != y->st.st_ino)
        return x->st.st_ino < y->st.st_ino ? -1 : 1;
    return x < y ? -1 : x > y; /* path order, since ns is sorted */
}

static void link_groups(struct nodes *ns, enum arc_format fmt)
{
    struct node **v = xcalloc(ns->n + 1, sizeof *v);
    size_t m = 0;
    long long ino = 0;
    for (size_t i = 0; i < ns->n; i++) {
        struct node *n = &ns->v[i];
        n->ino = ++ino;
        n->nlink = S_ISDIR(n->st.st_mode) ? 2 : 1;
        if (n->src && S_ISREG(n->st.st_mode) && n->st.st_nlink > 1)
            v[m++] = n;
    }
    qsort(v, m, sizeof *v, cmp_inode);
    for (size_t i = 0; i < m;) {
        size_t j = i + 1;
        while (j < m && v[j]->st.st_dev == v[i]->st.st_dev &&
               v[j]->st.st_ino == v[i]->st.st_ino)
            j++;
        for (size_t k = i; k < j; k++) {
            v[k]->ino = v[i]->ino; /* the first path's number */
            v[k]->nlink = (unsigned)(j - i);
            if (fmt == ARC_TAR && k > i)
                v[k]->link_first = v[i]->rel;
            if (fmt == ARC_CPIO && k + 1 < j)
                v[k]->no_data = true;
        }
        i = j;
    }
    free(v);
}

struct xattr {
    char *name;
    void *value;
    size_t size;
};

static int cmp_xattr(const void *a, const void *b)
{
    return strcmp(((const struct xattr *)a)->name,
                  ((const struct xattr *)b)->name);
}

static void sort_xattrs(struct archive_entry *e)
{
    int n = archive_entry_xattr_reset(e);
    if (n <= 1)
        return;
    struct xattr *v = xcalloc((size_t)n, sizeof *v);
    int m = 0;
    const char *name;
    const void *value;
    size_t size;
    while (m < n && archive_entry_xattr_next(e, &name, &value, &size) ==
                        ARCHIVE_OK) {
        v[m].name = xstrdup(name);
        v[m].value = xmalloc(size + 1);
        memcpy(v[m].value, value, size);
        v[m].size = size;
        m++;
    }
    qsort(v, (size_t)m, sizeof *v, cmp_xattr);
    archive_entry_xattr_clear(e);
    for (int i = 0; i < m; i++) {
        archive_entry_xattr_add_entry(e, v[i].name, v[i].value, v[i].size);
        free(v[i].name);
        free(v[i].value);
    }
    free(v);
}

static int copy_data(struct archive *a, const char *src, long long size,
                     char *err)
{
    int fd = open(src, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(err, "cannot open %s: %s", src, strerror(errno));
    static char block[65536];
    long long left = size;
    while (left > 0) {
        size_t want = left < (long long)sizeof block ? (size_t)left
                                                     : sizeof block;
        ssize_t got = read(fd, block, want);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            int e = got < 0 ? errno : 0;
            close(fd);
            return fail(err, "%s: %s while archiving", src,
                        e ? strerror(e) : "file shrank");
        }
        if (archive_write_data(a, block, (size_t)got) != got) {
            close(fd);
            return fail(err, "writing %s: %s", src, aerr(a));
        }
        left -= got;
    }
    close(fd);
    return 0;
}

static const mode_t ae_types[] = {
    [ARC_FILE] = AE_IFREG, [ARC_DIR] = AE_IFDIR, [ARC_SYMLINK] = AE_IFLNK,
    [ARC_HARDLINK] = AE_IFREG, [ARC_CHR] = AE_IFCHR, [ARC_BLK] = AE_IFBLK,
    [ARC_FIFO] = AE_IFIFO, [ARC_SOCK] = AE_IFSOCK,
};

static int write_node(struct archive *a, struct archive *ad,
                      const struct node *n, const struct arc_write_opts *o,
                      char *err)
{
    struct archive_entry *e = archive_entry_new();
    const struct arc_entry *row = n->row;
    int rc = 0;
    if (n->src) {
        archive_entry_copy_sourcepath(e, n->src);
        int r = archive_read_disk_entry_from_file(ad, e, -1, &n->st);
        if (r < ARCHIVE_WARN) {
            rc = fail(err, "cannot read %s: %s", n->src, aerr(ad));
            goto out;
        }
        archive_entry_copy_sourcepath(e, NULL);
        archive_entry_set_uid(e, o->keep_owners ? n->st.st_uid : 0);
        archive_entry_set_gid(e, o->keep_owners ? n->st.st_gid : 0);
        if (o->mtime < 0)
            archive_entry_set_mtime(e, n->st.st_mtime, 0);
    } else {
        archive_entry_set_filetype(e, ae_types[row->type]);
        int def = row->type == ARC_DIR       ? 0755
                  : row->type == ARC_SYMLINK ? 0777
                                             : 0600;
        archive_entry_set_perm(e, (mode_t)def);
        archive_entry_set_uid(e, 0);
        archive_entry_set_gid(e, 0);
        if (row->type == ARC_CHR || row->type == ARC_BLK)
            archive_entry_set_rdev(e, makedev(row->rmajor, row->rminor));
        if (row->type == ARC_SYMLINK)
            archive_entry_copy_symlink(e, row->target ? row->target : "");
        archive_entry_set_size(e, 0);
        if (o->mtime < 0)
            archive_entry_set_mtime(e, 0, 0);
    }
    archive_entry_copy_pathname(e, n->rel);
    if (row) {
        if (row->mode >= 0)
            archive_entry_set_perm(e, (mode_t)row->mode & 07777);
        if (row->uid >= 0)
            archive_entry_set_uid(e, row->uid);
        if (row->gid >= 0)
            archive_entry_set_gid(e, row->gid);
    }
    archive_entry_set_uname(e, NULL);
    archive_entry_set_gname(e, NULL);
    archive_entry_unset_atime(e);
    archive_entry_unset_ctime(e);
    archive_entry_unset_birthtime(e);
    if (o->mtime >= 0)
        archive_entry_set_mtime(e, o->mtime, 0);
    archive_entry_set_fflags(e, 0, 0);
    archive_entry_acl_clear(e);
    archive_entry_sparse_clear(e);
    archive_entry_set_dev(e, 0);
    archive_entry_set_ino64(e, n->ino);
    archive_entry_set_nlink(e, n->nlink);
    if (o->no_xattrs)
        archive_entry_xattr_clear(e);
    else
        sort_xattrs(e);
    long long size = archive_entry_size(e);
    if (n->link_first) {
        archive_entry_copy_hardlink(e, n->link_first);
        archive_entry_set_size(e, 0);
        size = 0;
    } else if (n->no_data) {
        archive_entry_set_size(e, 0);
        size = 0;
    }
    if (!S_ISREG(archive_entry_mode(e)))
        size = 0;
    if (archive_write_header(a, e) < ARCHIVE_WARN) {
        rc = fail(err, "cannot write entry %s: %s", n->rel, aerr(a));
        goto out;
    }
    if (size > 0)
        rc = copy_data(a, n->src, size, err);
out:
    archive_entry_free(e);
    return rc;
}

static void nodes_free(struct nodes *ns)
{
    for (size_t i = 0; i < ns->n; i++) {
        free(ns->v[i].rel);
        free(ns->v[i].src);
    }
    free(ns->v);
}

/* Applies the table to the sorted node list: overrides and additions. */
static int apply_table(struct nodes *ns, const char *dir,
                       const struct arc_table *t, char *err)
{
    const struct arc_entry **rows;
    size_t nr = table_final_rows(t, &rows);
    size_t base = ns->n;
    int rc = 0;
    for (size_t i = 0; i < nr && rc == 0; i++) {
        const struct arc_entry *r = rows[i];
        if (!valid_relpath(r->path)) {
            rc = fail(err, "metadata table: bad path `%s`", r->path);
            break;
        }
        struct node key = {.rel = r->path};
        struct node *n = bsearch(&key, ns->v, base, sizeof *ns->v, cmp_node);
        if (!n && strcmp(r->path, ".") == 0) {
            n = node_push(ns);
            n->rel = xstrdup(".");
            n->src = xstrdup(dir);
            if (lstat(dir, &n->st) != 0)
                rc = fail(err, "cannot stat %s: %s", dir, strerror(errno));
            n->row = r;
            continue;
        }
        if (n) {
            enum arc_type have = type_of_mode(n->st.st_mode);
            enum arc_type want = r->type == ARC_HARDLINK ? ARC_FILE : r->type;
            if (want != ARC_KEEP && want != have)
                rc = fail(err, "metadata table: %s is a %s in the tree but "
                          "a %s in the table", r->path, arc_type_name(have),
                          arc_type_name(r->type));
            n->row = r;
            continue;
        }
        if (r->type == ARC_KEEP || r->type == ARC_FILE ||
            r->type == ARC_HARDLINK) {
            rc = fail(err, "metadata table: %s (%s) is not in the tree %s; "
                      "only dir, slink, char, block, fifo and sock rows can "
                      "add entries", r->path, arc_type_name(r->type), dir);
            break;
        }
        n = node_push(ns);
        n->rel = xstrdup(r->path);
        n->st.st_mode = ae_types[r->type];
        n->row = r;
    }
    free(rows);
    if (rc)
        return rc;
    qsort(ns->v, ns->n, sizeof *ns->v, cmp_node);
    /* Every added entry needs its parent directory in the archive or the
     * tree (the kernel's cpio reader does not create parents). */
    for (size_t i = 0; i < ns->n; i++) {
        struct node *n = &ns->v[i];
        if (n->src || !strchr(n->rel, '/'))
            continue;
        char *parent = path_dirname(n->rel);
        struct node *p = node_find(ns, parent);
        if (!p || !S_ISDIR(p->st.st_mode))
            rc = fail(err, "metadata table: %s: its parent %s is neither a "
                      "directory in the tree nor a dir row", n->rel, parent);
        free(parent);
        if (rc)
            return rc;
    }
    return 0;
}

int arc_write_tree(const char *dir, const char *out,
                   const struct arc_write_opts *o, char err[ARC_ERRLEN])
{
    struct arc_write_opts def = ARC_WRITE_OPTS_INIT;
    if (!o)
        o = &def;
    if (!is_dir(dir))
        return fail(err, "%s is not a directory", dir);
    struct nodes ns = {0};
    int rc = walk(dir, "", &ns, err);
    if (rc == 0) {
        qsort(ns.v, ns.n, sizeof *ns.v, cmp_node);
        rc = apply_table(&ns, dir, o->meta, err);
    }
    if (rc) {
        nodes_free(&ns);
        return rc;
    }
    link_groups(&ns, o->format);

    char *tmp = xasprintf("%s.tmp", out);
    struct archive *a = archive_write_new();
    struct archive *ad = archive_read_disk_new();
    archive_read_disk_set_symlink_physical(ad);
    archive_read_disk_set_behavior(
        ad, ARCHIVE_READDISK_NO_ACL | ARCHIVE_READDISK_NO_FFLAGS |
                ARCHIVE_READDISK_NO_SPARSE |
                (o->no_xattrs ? ARCHIVE_READDISK_NO_XATTR : 0));
    int r = o->format == ARC_CPIO ? archive_write_set_format_cpio_newc(a)
                                  : archive_write_set_format_pax_restricted(a);
    if (r == ARCHIVE_OK) {
        switch (o->filter) {
        case ARC_FILTER_NONE: break;
        case ARC_GZIP:
            r = archive_write_add_filter_gzip(a);
            /* no timestamp in the gzip header */
            if (r == ARCHIVE_OK)
                r = archive_write_set_filter_option(a, "gzip", "timestamp",
                                                    NULL);
            break;
        case ARC_ZSTD:
            r = archive_write_add_filter_zstd(a);
            if (r == ARCHIVE_OK && o->threads > 0) {
                char n[16];
                snprintf(n, sizeof n, "%d", o->threads);
                r = archive_write_set_filter_option(a, "zstd", "threads", n);
            }
            break;
        case ARC_XZ: r = archive_write_add_filter_xz(a); break;
        }
    }
    if (r != ARCHIVE_OK)
        rc = fail(err, "cannot set up the archive writer for %s: %s", out,
                  aerr(a));
    if (rc == 0 && archive_write_open_filename(a, tmp) != ARCHIVE_OK)
        rc = fail(err, "cannot create %s: %s", tmp, aerr(a));
    for (size_t i = 0; rc == 0 && i < ns.n; i++)
        rc = write_node(a, ad, &ns.v[i], o, err);
    if (rc == 0 && archive_write_close(a) != ARCHIVE_OK)
        rc = fail(err, "cannot finish %s: %s", tmp, aerr(a));
    archive_write_free(a);
    archive_read_free(ad);
    if (rc == 0 && rename(tmp, out) != 0)
        rc = fail(err, "cannot rename %s to %s: %s", tmp, out,
                  strerror(errno));
    if (rc)
        unlink(tmp);
    free(tmp);
    nodes_free(&ns);
    return rc;
}

/* ---- reading ----------------------------------------------------------- */

/* An archive's member name as a relative path: strips leading "/" and
 * "./"; "" becomes ".". NULL if it has a ".." component. New string. */
static char *rel_name(const char *name)
{
    for (;;) {
        if (name[0] == '/')
            name++;
        else if (name[0] == '.' && name[1] == '/')
            name += 2;
        else
            break;
    }
    char *s = xstrdup(*name ? name : ".");
    size_t l = strlen(s);
    while (l > 1 && s[l - 1] == '/')
        s[--l] = 0;
    /* collapse "a//b" and "a/./b" */
    char *d = s;
    for (char *p = s; *p;) {
        if (p[0] == '/' && (p[1] == '/' || (p[1] == '.' && p[2] == '/'))) {
            p += p[1] == '/' ? 1 : 2;
            continue;
        }
        *d++ = *p++;
    }
    *d = 0;
    if (d > s + 2 && strcmp(d - 2, "/.") == 0)
        d[-2] = 0;
    if (!valid_relpath(s)) {
        free(s);
        return NULL;
    }
    return s;
}

static void entry_to_arc(struct archive_entry *ae, struct arc_entry *e,
                         char *rel, char *hl)
{
    memset(e, 0, sizeof *e);
    e->path = rel;
    mode_t ft = archive_entry_filetype(ae);
    e->type = hl                ? ARC_HARDLINK
              : ft == AE_IFDIR  ? ARC_DIR
              : ft == AE_IFLNK  ? ARC_SYMLINK
              : ft == AE_IFCHR  ? ARC_CHR
              : ft == AE_IFBLK  ? ARC_BLK
              : ft == AE_IFIFO  ? ARC_FIFO
              : ft == AE_IFSOCK ? ARC_SOCK
                                : ARC_FILE;
    e->mode = (int)(archive_entry_perm(ae) & 07777);
    e->uid = archive_entry_uid(ae);
    e->gid = archive_entry_gid(ae);
    e->rmajor = (unsigned)archive_entry_rdevmajor(ae);
    e->rminor = (unsigned)archive_entry_rdevminor(ae);
    e->target = hl ? hl : (char *)archive_entry_symlink(ae);
    e->size = archive_entry_size_is_set(ae) ? archive_entry_size(ae) : 0;
    e->mtime = archive_entry_mtime(ae);
}

static struct archive *open_reader(const char *in, char *err)
{
    struct archive *a = archive_read_new();
    archive_read_support_filter_all(a);
    archive_read_support_format_all(a);
    if (archive_read_open_filename(a, in, 65536) != ARCHIVE_OK) {
        fail(err, "cannot open archive %s: %s", in, aerr(a));
        archive_read_free(a);
        return NULL;
    }
    return a;
}

int arc_list(const char *in, arc_list_fn fn, void *ud, char err[ARC_ERRLEN])
{
    struct archive *a = open_reader(in, err);
    if (!a)
        return -1;
    struct archive_entry *ae;
    int rc = 0, r;
    while (rc == 0 && (r = archive_read_next_header(a, &ae)) != ARCHIVE_EOF) {
        if (r < ARCHIVE_WARN) {
            rc = fail(err, "%s: %s", in, aerr(a));
            break;
        }
        char *rel = rel_name(archive_entry_pathname(ae));
        const char *h = archive_entry_hardlink(ae);
        char *hl = h ? rel_name(h) : NULL;
        if (!rel || (h && !hl)) {
            rc = fail(err, "%s: unsafe member name %s", in,
                      archive_entry_pathname(ae));
        } else {
            struct arc_entry e;
            entry_to_arc(ae, &e, rel, hl);
            rc = fn(&e, ud);
        }
        free(rel);
        free(hl);
    }
    archive_read_free(a);
    return rc;
}

/* PATH without its first STRIP components, or NULL if it has fewer. */
static const char *strip_components(const char *path, int strip)
{
    for (; strip > 0; strip--) {
        const char *sl = strchr(path, '/');
        if (!sl)
            return NULL;
        path = sl + 1;
    }
    return path;
}

int arc_read_files(const char *in, int strip, const char *const *names, char **data,
                   size_t *len, size_t max, char err[ARC_ERRLEN])
{
    size_t n = 0, found = 0;
    while (names[n])
        n++;
    for (size_t i = 0; i < n; i++) {
        data[i] = NULL;
        len[i] = 0;
    }
    struct archive *a = open_reader(in, err);
    if (!a)
        return -1;
    struct archive_entry *ae;
    int rc = 0, r;
    /* stops once every name was found: the rest is never decompressed */
    while (rc == 0 && found < n && (r = archive_read_next_header(a, &ae)) != ARCHIVE_EOF) {
        if (r < ARCHIVE_WARN) {
            rc = fail(err, "%s: %s", in, aerr(a));
            break;
        }
        if (archive_entry_filetype(ae) != AE_IFREG || archive_entry_hardlink(ae))
            continue;
        char *rel = rel_name(archive_entry_pathname(ae));
        const char *p = rel ? strip_components(rel, strip) : NULL;
        for (size_t i = 0; p && i < n; i++) {
            if (data[i] || strcmp(p, names[i]) != 0)
                continue;
            la_int64_t size = archive_entry_size(ae);
            if (size < 0 || (unsigned long long)size > max) {
                rc = fail(err, "%s: member %s is %lld bytes, more than the %zu expected", in,
                          rel, (long long)size, max);
                break;
            }
            char *buf = xmalloc((size_t)size + 1);
            la_ssize_t got = archive_read_data(a, buf, (size_t)size);
            if (got != (la_ssize_t)size) {
                free(buf);
                rc = fail(err, "%s: cannot read member %s: %s", in, rel,
                          got < 0 ? aerr(a) : "short read");
                break;
            }
            buf[size] = 0;
            data[i] = buf;
            len[i] = (size_t)size;
            found++;
            break;
        }
        free(rel);
    }
    archive_read_free(a);
    if (rc)
        for (size_t i = 0; i < n; i++) {
            free(data[i]);
            data[i] = NULL;
            len[i] = 0;
        }
    return rc;
}

/* arc_extract_checked's bounds; NULL for an archive of our own. */
struct xlimits {
    arc_admit_fn admit;
    void *ud;
    long long total; /* data bytes in all */
};

static int extract_stream(struct archive *in, const char *what,
                          const char *dir, int flags,
                          struct arc_table *record,
                          const struct xlimits *lim, char *err)
{
    long long written = 0;
    char *root = realpath(dir, NULL);
    if (!root || !is_dir(root)) {
        free(root);
        return fail(err, "cannot extract %s: %s is not a directory", what,
                    dir);
    }
    bool as_root = geteuid() == 0;
    int xf = ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
             ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
             ARCHIVE_EXTRACT_UNLINK;
    if (as_root && !(flags & ARC_X_NO_OWNERS))
        xf |= ARCHIVE_EXTRACT_OWNER;
    if (!(flags & ARC_X_NO_XATTRS))
        xf |= ARCHIVE_EXTRACT_XATTR;
    struct archive *out = archive_write_disk_new();
    archive_write_disk_set_options(out, xf);
    struct archive_entry *ae;
    int rc = 0, r;
    while (rc == 0 && (r = archive_read_next_header(in, &ae)) != ARCHIVE_EOF) {
        if (r < ARCHIVE_WARN) {
            rc = fail(err, "%s: %s", what, aerr(in));
            break;
        }
        char *rel = rel_name(archive_entry_pathname(ae));
        const char *h = archive_entry_hardlink(ae);
        char *hl = h ? rel_name(h) : NULL;
        if (!rel || (h && !hl)) {
            rc = fail(err, "%s: unsafe member name %s", what,
                      archive_entry_pathname(ae));
            free(rel);
            free(hl);
            break;
        }
        struct arc_entry e;
        entry_to_arc(ae, &e, rel, hl);
        if ((flags & ARC_X_DIRS_STAY) && e.type == ARC_SYMLINK) {
            char *full = path_join(root, rel);
            struct stat sb;
            bool dir_stays = lstat(full, &sb) == 0 && S_ISDIR(sb.st_mode);
            free(full);
            if (dir_stays) {
                free(rel);
                free(hl);
                continue;
            }
        }
        long long max = -1; /* a file's data: at most this (-1: any) */
        if (lim && (rc = lim->admit(&e, &max, lim->ud)) != 0) {
            free(rel);
            free(hl);
            break;
        }
        if (flags & ARC_X_SAFE_MODES)
            archive_entry_set_perm(ae, archive_entry_perm(ae) & ARC_SAFE_PERM);
        if (record) {
            struct arc_entry row = e;
            if (row.type == ARC_HARDLINK) {
                row.type = ARC_FILE;
                row.target = NULL;
            }
            arc_table_add(record, &row);
        }
        bool skip = strcmp(rel, ".") == 0 || e.type == ARC_SOCK ||
                    (!as_root && (e.type == ARC_CHR || e.type == ARC_BLK));
        if (!skip) {
            char *full = path_join(root, rel);
            archive_entry_copy_pathname(ae, full);
            free(full);
            if (hl) {
                char *t = path_join(root, hl);
                archive_entry_copy_hardlink(ae, t);
                free(t);
            }
            r = archive_write_header(out, ae);
            if (r < ARCHIVE_WARN) {
                rc = fail(err, "%s: cannot extract %s: %s", what, rel,
                          aerr(out));
            } else if (archive_entry_size(ae) > 0) {
                const void *block;
                size_t size;
                la_int64_t off;
                while ((r = archive_read_data_block(in, &block, &size,
                                                    &off)) == ARCHIVE_OK) {
                    /* checked before the bytes land: a bomb stops here */
                    written += (long long)size;
                    if (max >= 0 && off + (long long)size > max) {
                        rc = fail(err, "%s: %s has more data than the %lld bytes allowed for "
                                  "it", what, rel, max);
                        break;
                    }
                    if (lim && written > lim->total) {
                        rc = fail(err, "%s: it unpacks to more than the %lld bytes allowed in "
                                  "all (at %s)", what, lim->total, rel);
                        break;
                    }
                    if (archive_write_data_block(out, block, size, off) <
                        ARCHIVE_WARN) {
                        rc = fail(err, "%s: cannot write %s: %s", what, rel,
                                  aerr(out));
                        break;
                    }
                }
                if (rc == 0 && r != ARCHIVE_EOF)
                    rc = fail(err, "%s: reading %s: %s", what, rel, aerr(in));
            }
            if (rc == 0 && archive_write_finish_entry(out) < ARCHIVE_WARN)
                rc = fail(err, "%s: cannot finish %s: %s", what, rel,
                          aerr(out));
        }
        free(rel);
        free(hl);
    }
    if (archive_write_close(out) < ARCHIVE_WARN && rc == 0)
        rc = fail(err, "%s: cannot finish extraction: %s", what, aerr(out));
    archive_write_free(out);
    free(root);
    return rc;
}

int arc_extract(const char *in, const char *dir, int flags,
                struct arc_table *record, char err[ARC_ERRLEN])
{
    struct archive *a = open_reader(in, err);
    if (!a)
        return -1;
    int rc = extract_stream(a, in, dir, flags, record, NULL, err);
    archive_read_free(a);
    return rc;
}

int arc_extract_checked(const char *in, const char *dir, int flags, arc_admit_fn admit,
                        void *ud, long long total, char err[ARC_ERRLEN])
{
    struct archive *a = open_reader(in, err);
    if (!a)
        return -1;
    struct xlimits lim = {admit, ud, total};
    int rc = extract_stream(a, in, dir, flags | ARC_X_SAFE_MODES, NULL, &lim, err);
    archive_read_free(a);
    return rc;
}

/* ---- Debian packages --------------------------------------------------- */

struct nested {
    struct archive *outer;
    char buf[65536];
};

static la_ssize_t nested_read(struct archive *a, void *ud, const void **p)
{
    (void)a;
    struct nested *n = ud;
    *p = n->buf;
    return archive_read_data(n->outer, n->buf, sizeof n->buf);
}

/* Positions the ar reader of DEB on the member whose name starts with
 * PREFIX and opens a reader on it. */
static struct archive *open_member(const char *deb, const char *prefix,
                                   struct archive **outer,
                                   struct nested **nest, char *err)
{
    struct archive *a = archive_read_new();
    archive_read_support_format_ar(a);
    if (archive_read_open_filename(a, deb, 65536) != ARCHIVE_OK) {
        fail(err, "%s is not a Debian package (ar archive): %s", deb, aerr(a));
        archive_read_free(a);
        return NULL;
    }
    struct archive_entry *ae;
    int r;
    bool saw_binary = false;
    while ((r = archive_read_next_header(a, &ae)) == ARCHIVE_OK ||
           r == ARCHIVE_WARN) {
        const char *name = archive_entry_pathname(ae);
        if (name && strcmp(name, "debian-binary") == 0)
            saw_binary = true;
        if (name && str_starts(name, prefix)) {
            struct nested *n = xcalloc(1, sizeof *n);
            n->outer = a;
            struct archive *in = archive_read_new();
            archive_read_support_filter_all(in);
            archive_read_support_format_tar(in);
            if (archive_read_open(in, n, NULL, nested_read, NULL) !=
                ARCHIVE_OK) {
                fail(err, "%s: cannot read member %s: %s", deb, name,
                     aerr(in));
                archive_read_free(in);
                free(n);
                break;
            }
            *outer = a;
            *nest = n;
            return in;
        }
    }
    if (r == ARCHIVE_EOF)
        fail(err, "%s is not a Debian package: %s", deb,
             saw_binary ? "no data.tar or control.tar member"
                        : "no debian-binary member");
    else if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
        fail(err, "%s is not a Debian package (ar archive): %s", deb, aerr(a));
    archive_read_free(a);
    return NULL;
}

int arc_deb_extract(const char *deb, const char *dir, int flags,
                    struct arc_table *record, char err[ARC_ERRLEN])
{
    struct archive *outer;
    struct nested *n;
    struct archive *in = open_member(deb, "data.tar", &outer, &n, err);
    if (!in)
        return -1;
    int rc = extract_stream(in, deb, dir, flags, record, NULL, err);
    archive_read_free(in);
    archive_read_free(outer);
    free(n);
    return rc;
}

char *deb_control_field(const char *control, const char *field)
{
    size_t fl = strlen(field);
    struct buf b = BUF_INIT;
    bool in = false;
    for (const char *l = control; l && *l;) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        if (len == 0 || (len == 1 && l[0] == '\r'))
            break; /* end of the first paragraph */
        if (in && (l[0] == ' ' || l[0] == '\t')) {
            buf_puts(&b, "\n");
            buf_add(&b, l + 1, len - 1);
        } else if (in) {
            break;
        } else if (len > fl && strncasecmp(l, field, fl) == 0 &&
                   l[fl] == ':') {
            const char *v = l + fl + 1;
            while (v < l + len && (*v == ' ' || *v == '\t'))
                v++;
            size_t vl = (size_t)(l + len - v);
            while (vl > 0 && isspace((unsigned char)v[vl - 1]))
                vl--;
            buf_add(&b, v, vl);
            in = true;
        }
        l = nl ? nl + 1 : NULL;
    }
    if (!in) {
        buf_free(&b);
        return NULL;
    }
    return buf_detach(&b);
}

int arc_deb_info(const char *deb, struct deb_info *out, char err[ARC_ERRLEN])
{
    memset(out, 0, sizeof *out);
    struct archive *outer;
    struct nested *n;
    struct archive *in = open_member(deb, "control.tar", &outer, &n, err);
    if (!in)
        return -1;
    struct archive_entry *ae;
    int r, rc = -1;
    bool found = false;
    while ((r = archive_read_next_header(in, &ae)) == ARCHIVE_OK ||
           r == ARCHIVE_WARN) {
        char *rel = rel_name(archive_entry_pathname(ae));
        bool is_control = rel && strcmp(rel, "control") == 0;
        free(rel);
        if (!is_control)
            continue;
        found = true;
        struct buf b = BUF_INIT;
        char chunk[8192];
        la_ssize_t got;
        while ((got = archive_read_data(in, chunk, sizeof chunk)) > 0)
            buf_add(&b, chunk, (size_t)got);
        if (got < 0) {
            fail(err, "%s: cannot read control: %s", deb, aerr(in));
            buf_free(&b);
            break;
        }
        out->control = buf_detach(&b);
        out->package = deb_control_field(out->control, "Package");
        out->version = deb_control_field(out->control, "Version");
        out->architecture = deb_control_field(out->control, "Architecture");
        if (!out->package || !out->version || !out->architecture)
            fail(err, "%s: control file lacks Package, Version or "
                 "Architecture", deb);
        else
            rc = 0;
        break;
    }
    if (!found && rc != 0)
        fail(err, "%s: control.tar has no control file%s%s", deb,
             r == ARCHIVE_EOF ? "" : ": ", r == ARCHIVE_EOF ? "" : aerr(in));
    archive_read_free(in);
    archive_read_free(outer);
    free(n);
    if (rc)
        deb_info_free(out);
    return rc;
}

void deb_info_free(struct deb_info *d)
{
    free(d->package);
    free(d->version);
    free(d->architecture);
    free(d->control);
    memset(d, 0, sizeof *d);
}
