/* Small helpers shared by the engine and the stage modules. */
#define _GNU_SOURCE
#include "util.h"

#include <dirent.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void oom(void)
{
    fputs("trillian: out of memory\n", stderr);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom();
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom();
    return p;
}

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        oom();
    return p;
}

char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p)
        oom();
    return p;
}

char *xstrndup(const char *s, size_t n)
{
    char *p = strndup(s, n);
    if (!p)
        oom();
    return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
    char *s;
    if (vasprintf(&s, fmt, ap) < 0)
        oom();
    return s;
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = xvasprintf(fmt, ap);
    va_end(ap);
    return s;
}

void strlist_push_owned(struct strlist *l, char *s)
{
    if (l->n + 2 > l->cap) {
        l->cap = l->cap ? l->cap * 2 : 8;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = s;
    l->v[l->n] = NULL;
}

void strlist_push(struct strlist *l, const char *s) { strlist_push_owned(l, xstrdup(s)); }

void strlist_pushf(struct strlist *l, const char *fmt, ...)
{
    va_list ap;
    char *s;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        oom();
    va_end(ap);
    strlist_push_owned(l, s);
}

bool strlist_contains(const struct strlist *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return true;
    return false;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void strlist_sort(struct strlist *l)
{
    if (l->n > 1)
        qsort(l->v, l->n, sizeof *l->v, cmp_str);
}

void strlist_free(struct strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

char buf_empty[1];

void buf_init(struct buf *b)
{
    b->p = buf_empty;
    b->n = b->cap = 0;
}

void buf_add(struct buf *b, const void *data, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1)
            cap *= 2;
        /* CAP 0: P is buf_empty (or NULL), not ours to realloc */
        b->p = b->cap ? xrealloc(b->p, cap) : xmalloc(cap);
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
    b->p[b->n] = 0;
}

void buf_puts(struct buf *b, const char *s) { buf_add(b, s, strlen(s)); }

void buf_shell_quote(struct buf *b, const char *s)
{
    buf_puts(b, "'");
    for (; *s; s++) {
        if (*s == '\'')
            buf_puts(b, "'\\''");
        else
            buf_add(b, s, 1);
    }
    buf_puts(b, "'");
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    char *s;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        oom();
    buf_add(b, s, (size_t)n);
    free(s);
}

void buf_free(struct buf *b)
{
    if (b->cap)
        free(b->p);
    buf_init(b);
}

char *buf_detach(struct buf *b)
{
    char *s = b->cap ? b->p : xstrdup("");
    buf_init(b);
    return s;
}

bool str_starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool str_ends(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

bool str_all_alnum_or(const char *s, const char *extra)
{
    if (!s || !*s)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr(extra, *s))
            return false;
    return true;
}

void tree_owner_writable(const char *dir, bool files)
{
    struct strlist names = {0};
    if (dir_list(dir, &names) < 0)
        return;
    for (size_t i = 0; i < names.n; i++) {
        char *p = path_join(dir, names.v[i]);
        struct stat sb;
        if (lstat(p, &sb) == 0 && (S_ISDIR(sb.st_mode) || (files && S_ISREG(sb.st_mode)))) {
            if (!(sb.st_mode & 0200))
                chmod(p, (sb.st_mode & 07777) | 0200);
            if (S_ISDIR(sb.st_mode))
                tree_owner_writable(p, files);
        }
        free(p);
    }
    strlist_free(&names);
}

size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t *row = xcalloc(lb + 1, sizeof *row);
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    size_t d = row[lb];
    free(row);
    return d;
}

char *path_join(const char *a, const char *b)
{
    if (b[0] == '/' || !a || !a[0])
        return xstrdup(b);
    size_t la = strlen(a);
    return xasprintf("%s%s%s", a, a[la - 1] == '/' ? "" : "/", b);
}

char *path_dirname(const char *p)
{
    const char *slash = strrchr(p, '/');
    if (!slash)
        return xstrdup(".");
    if (slash == p)
        return xstrdup("/");
    return xstrndup(p, (size_t)(slash - p));
}

const char *path_basename(const char *p)
{
    const char *slash = strrchr(p, '/');
    return slash ? slash + 1 : p;
}

const char *argv_program(const char *const *argv)
{
    size_t i = 0;
    if (strcmp(path_basename(argv[0]), "env") == 0)
        for (i = 1; argv[i] && argv[i][0] != '-' && strchr(argv[i], '='); i++)
            ;
    return path_basename(argv[i] ? argv[i] : argv[0]);
}

char *path_absolute(const char *base_dir, const char *p)
{
    if (p[0] == '/')
        return xstrdup(p);
    if (base_dir && base_dir[0] == '/')
        return path_join(base_dir, p);
    char *cwd = getcwd(NULL, 0);
    if (!cwd)
        oom();
    char *base = base_dir ? path_join(cwd, base_dir) : xstrdup(cwd);
    char *r = path_join(base, p);
    free(base);
    free(cwd);
    return r;
}

int mkdir_p(const char *path, mode_t mode)
{
    char *p = xstrdup(path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        if (mkdir(p, mode) < 0 && errno != EEXIST) {
            free(p);
            return -1;
        }
        *s = '/';
    }
    int r = mkdir(p, mode);
    free(p);
    if (r < 0 && errno == EEXIST && is_dir(path))
        return 0;
    return r;
}

int dir_list_max(const char *dir, struct strlist *names, size_t max)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    size_t n = 0;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            if (n++ == max) {
                closedir(d);
                errno = E2BIG;
                return -1;
            }
            strlist_push(names, e->d_name);
        }
    closedir(d);
    strlist_sort(names);
    return 0;
}

int dir_list(const char *dir, struct strlist *names)
{
    return dir_list_max(dir, names, SIZE_MAX);
}

/* Empties the directory open as FD (closed here), at any depth: one open
 * directory at a time, back up through "..", checked against the device and
 * inode it came down from, so neither PATH_MAX nor the open-file limit
 * bounds the depth (a refused payload may nest thousands of directories). */
static int rm_below(int fd)
{
    struct id { dev_t dev; ino_t ino; } *up = NULL;
    size_t depth = 0, cap = 0;
    int rc = 0, err = 0;
    while (rc == 0) {
        struct stat sb;
        int dfd = fd < 0 ? -1 : dup(fd); /* fdopendir takes its fd */
        DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
        if (!d) {
            err = errno;
            if (dfd >= 0)
                close(dfd);
            rc = -1;
            break;
        }
        char *down = NULL;
        struct dirent *e;
        while (rc == 0 && !down && (e = readdir(d))) {
            const char *n = e->d_name;
            if (!strcmp(n, ".") || !strcmp(n, "..") || unlinkat(fd, n, 0) == 0)
                continue;
            if (errno == EISDIR && unlinkat(fd, n, AT_REMOVEDIR) == 0)
                continue;
            if (errno == ENOTEMPTY || errno == EEXIST)
                down = xstrdup(n);
            else
                err = errno, rc = -1;
        }
        closedir(d);
        if (rc < 0)
            break;
        if (down) { /* cache entries are read-only: the owner may write first */
            int sub = -1;
            if (fstat(fd, &sb) == 0 && fstatat(fd, down, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
                fchmodat(fd, down, (sb.st_mode & 07777) | 0700, 0) == 0)
                sub = openat(fd, down, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            free(down);
            if (sub < 0 || fstat(fd, &sb) < 0) {
                err = errno, rc = -1;
                if (sub >= 0)
                    close(sub);
                break;
            }
            if (depth == cap) {
                cap = cap ? 2 * cap : 64;
                up = xrealloc(up, cap * sizeof *up);
            }
            up[depth++] = (struct id){sb.st_dev, sb.st_ino};
            close(fd);
            fd = sub;
            continue;
        }
        if (depth == 0)
            break; /* FD, the top, is empty */
        int parent = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        depth--;
        if (parent < 0 || fstat(parent, &sb) < 0 || sb.st_dev != up[depth].dev ||
            sb.st_ino != up[depth].ino) {
            err = parent < 0 ? errno : EBUSY; /* moved meanwhile: stop, never climb elsewhere */
            if (parent >= 0)
                close(parent);
            rc = -1;
            break;
        }
        close(fd);
        fd = parent; /* its next pass removes the emptied directory */
    }
    if (fd >= 0)
        close(fd);
    free(up);
    if (rc < 0)
        errno = err;
    return rc;
}

int rm_rf(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) < 0)
        return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(sb.st_mode))
        return unlink(path);
    /* cache entries are read-only: make the directory writable first */
    if (chmod(path, (sb.st_mode & 07777) | 0700) < 0)
        return -1;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || rm_below(fd) < 0)
        return -1;
    return rmdir(path);
}

char *str_printable(const char *s)
{
    struct buf b = BUF_INIT;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        unsigned c = *p;
        size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
                 : (c & 0xf8) == 0xf0 ? 4 : 0;
        bool ok = n > 0 && c >= 0x20 && c != 0x7f && c != '\\';
        for (size_t i = 1; ok && i < n; i++)
            ok = (p[i] & 0xc0) == 0x80;
        if (ok && n == 2 && c == 0xc2 && p[1] < 0xa0)
            ok = false; /* C1 controls (U+0080..U+009F): some terminals obey them */
        if (ok && n == 2 && c < 0xc2)
            ok = false; /* an overlong form */
        if (ok) {
            buf_add(&b, p, n);
            p += n;
        } else {
            if (c == '\n')
                buf_puts(&b, "\\n");
            else if (c == '\t')
                buf_puts(&b, "\\t");
            else if (c == '\\')
                buf_puts(&b, "\\\\");
            else
                buf_printf(&b, "\\x%02x", c);
            p++;
        }
    }
    return buf_detach(&b);
}

bool path_exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

bool is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

int read_file(const char *path, char **data, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct buf b = BUF_INIT;
    char tmp[65536];
    for (;;) {
        ssize_t n = read(fd, tmp, sizeof tmp);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            buf_free(&b);
            errno = e;
            return -1;
        }
        if (n == 0)
            break;
        buf_add(&b, tmp, (size_t)n);
    }
    close(fd);
    if (len)
        *len = b.n;
    *data = buf_detach(&b);
    return 0;
}

char *file_text_after(const char *path, const char *marker, const char *stop)
{
    char *text = NULL, *v = NULL;
    if (read_file(path, &text, NULL) == 0) {
        const char *q = strstr(text, marker);
        if (q) {
            q += strlen(marker);
            v = xstrndup(q, strcspn(q, stop));
        }
    }
    free(text);
    return v;
}

int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int write_file_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
    /* rename() would put a regular file in place of a device or directory
     * (once, /dev/null): only a regular file or a link is replaced. */
    struct stat sb;
    if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode)) {
        errno = EEXIST;
        return -1;
    }
    char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0) {
        free(tmp);
        return -1;
    }
    if (write_all(fd, data, len) < 0 || fchmod(fd, mode) < 0 || close(fd) < 0 ||
        rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        errno = e;
        return -1;
    }
    free(tmp);
    return 0;
}

/* LEN bytes at *OFF of IN to the same offset of OUT: copy_file_range, else
 * pread/pwrite (another file system, or one that cannot). */
static int copy_range(int in, int out, off_t *off, off_t len)
{
    off_t end = *off + len, o2 = *off;
    while (*off < end) {
        ssize_t n = copy_file_range(in, off, out, &o2, (size_t)(end - *off), 0);
        if (n > 0)
            continue;
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            return -1; /* the file shrank under us */
        char buf[1 << 16];
        size_t want = (size_t)(end - *off) < sizeof buf ? (size_t)(end - *off) : sizeof buf;
        ssize_t r = pread(in, buf, want, *off);
        if (r <= 0 || pwrite(out, buf, (size_t)r, *off) != r)
            return -1;
        *off += r;
        o2 = *off;
    }
    return 0;
}

/* A file with holes (a disk image: 1 GiB with 160 MiB of data), its data
 * segments only (SEEK_DATA/SEEK_HOLE) and the holes left as holes: ext4's
 * copy_file_range writes them out as zeros. 1 where the file has no hole
 * or its file system cannot say: the caller copies it whole. */
static int copy_sparse(int in, int out, off_t size)
{
    off_t data = lseek(in, 0, SEEK_DATA);
    if (data < 0 && errno != ENXIO)
        return 1;
    if (data == 0 && lseek(in, 0, SEEK_HOLE) >= size)
        return 1;
    while (data >= 0 && data < size) {
        off_t hole = lseek(in, data, SEEK_HOLE);
        if (hole < 0 || copy_range(in, out, &data, (hole < size ? hole : size) - data) < 0)
            return -1;
        data = lseek(in, hole, SEEK_DATA); /* ENXIO: no data after it */
        if (data < 0 && errno != ENXIO)
            return -1;
    }
    return ftruncate(out, size) < 0 ? -1 : 0;
}

/* The bytes of IN into OUT: a reflink (FICLONE) where the file system shares
 * extents (btrfs, XFS), else the data of a file with holes (copy_sparse),
 * else copy_file_range (in-kernel, and server-side on NFS), else
 * read/write. */
static int copy_data(int in, int out, off_t size)
{
    /* small files: a failed FICLONE per file (ext4 has none) is a third of
     * publishing a tree of 20 000 of them */
    if (size >= 65536 && ioctl(out, FICLONE, in) == 0)
        return 0;
    if (size >= 65536) {
        int r = copy_sparse(in, out, size);
        if (r <= 0)
            return r;
        if (lseek(in, 0, SEEK_SET) < 0) /* SEEK_DATA moved it */
            return -1;
    }
    off_t done = 0;
    while (done < size) {
        ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)(size - done), 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            break; /* EXDEV, ENOSYS, EINVAL (proc-like files) or a short file: plain copy */
        }
        done += n;
    }
    if (done >= size)
        return 0;
    if (lseek(in, done, SEEK_SET) < 0 || lseek(out, done, SEEK_SET) < 0)
        return -1;
    char buf[1 << 16];
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -1 : 0;
        if (write_all(out, buf, (size_t)n) < 0)
            return -1;
    }
}

static int copy_file_how(const char *src, const char *dst, mode_t add_mode, bool keep_mtime)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    struct stat sb;
    if (fstat(in, &sb) < 0) {
        close(in);
        return -1;
    }
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out < 0) {
        close(in);
        return -1;
    }
    int rc = copy_data(in, out, sb.st_size);
    int e = errno;
    if (fchmod(out, (sb.st_mode & 07777) | add_mode) < 0)
        rc = -1;
    struct timespec times[2] = {sb.st_atim, sb.st_mtim};
    if (keep_mtime && futimens(out, times) < 0)
        rc = -1;
    if (close(out) < 0)
        rc = -1;
    close(in);
    if (rc < 0 && e)
        errno = e;
    return rc;
}

int copy_file(const char *src, const char *dst)
{
    return copy_file_how(src, dst, 0, false);
}

int publish_file(const char *src, const char *dst)
{
    return copy_file_how(src, dst, S_IWUSR, true);
}

int link_or_copy(const char *src, const char *dst)
{
    if (link(src, dst) == 0)
        return 0;
    return copy_file(src, dst);
}

static int copy_tree_how(const char *src, const char *dst, int how)
{
    struct stat sb;
    if (lstat(src, &sb) < 0)
        return -1;
    if (S_ISLNK(sb.st_mode)) {
        char target[4096];
        ssize_t n = readlink(src, target, sizeof target - 1);
        if (n < 0)
            return -1;
        target[n] = 0;
        return symlink(target, dst);
    }
    if (!S_ISDIR(sb.st_mode))
        return how == 1 ? link_or_copy(src, dst) : how == 2 ? publish_file(src, dst)
                                                            : copy_file(src, dst);
    if (mkdir(dst, 0700) < 0 && errno != EEXIST)
        return -1;
    struct strlist names = {0};
    if (dir_list(src, &names) < 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < names.n; i++) {
        char *s = path_join(src, names.v[i]), *t = path_join(dst, names.v[i]);
        if (copy_tree_how(s, t, how) < 0)
            rc = -1;
        free(s);
        free(t);
    }
    strlist_free(&names);
    if (chmod(dst, sb.st_mode & 07777) < 0)
        rc = -1;
    return rc;
}

int copy_tree(const char *src, const char *dst, bool hardlink)
{
    return copy_tree_how(src, dst, hardlink ? 1 : 0);
}

int publish_tree(const char *src, const char *dst)
{
    return copy_tree_how(src, dst, 2);
}

static int list_rec(const char *root, const char *rel, struct strlist *out)
{
    char *dir = rel[0] ? path_join(root, rel) : xstrdup(root);
    struct strlist names = {0};
    int rc = dir_list(dir, &names);
    free(dir);
    if (rc < 0)
        return -1;
    for (size_t i = 0; i < names.n; i++) {
        char *r = rel[0] ? xasprintf("%s/%s", rel, names.v[i]) : xstrdup(names.v[i]);
        char *full = path_join(root, r);
        struct stat sb;
        if (lstat(full, &sb) < 0)
            rc = -1;
        else if (S_ISDIR(sb.st_mode)) {
            if (list_rec(root, r, out) < 0)
                rc = -1;
        } else {
            strlist_push(out, r);
        }
        free(full);
        free(r);
    }
    strlist_free(&names);
    return rc;
}

int list_tree(const char *dir, struct strlist *out)
{
    int rc = list_rec(dir, "", out);
    strlist_sort(out);
    return rc;
}

char *file_tail(const char *path, int n)
{
    char *data;
    size_t len;
    if (read_file(path, &data, &len) < 0)
        return xstrdup("");
    size_t i = len;
    if (i && data[i - 1] == '\n')
        i--;
    int lines = 0;
    while (i > 0) {
        if (data[i - 1] == '\n' && ++lines == n)
            break;
        i--;
    }
    char *r = xstrdup(data + i);
    free(data);
    return r;
}

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
