/* Filesystem images from a rootfs tarball without root; see fsimage.h. */
#define _GNU_SOURCE
#include "fsimage.h"

#include "formats/archive.h"
#include "base/run_command.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLK 4096LL
#define MIB (1024LL * 1024LL)

static long long round_up(long long v, long long to) { return (v + to - 1) / to * to; }

long long fsimage_file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

/* ---- the tree ------------------------------------------------------------ */

static struct fs_entry *tree_push(struct fs_tree *t)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 256;
        t->v = xrealloc(t->v, t->cap * sizeof *t->v);
    }
    struct fs_entry *e = &t->v[t->n++];
    memset(e, 0, sizeof *e);
    return e;
}

void fstree_free(struct fs_tree *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].path);
        free(t->v[i].link);
    }
    free(t->v);
    free(t->dir);
    memset(t, 0, sizeof *t);
}

struct sortrec {
    struct fs_entry *e;
    size_t idx;
};

static int cmp_rec(const void *a, const void *b)
{
    const struct sortrec *x = a, *y = b;
    int c = strcmp(x->e->path, y->e->path);
    if (c)
        return c;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Sorts by path; of duplicates the last added wins (as when extracting). */
static void tree_sort(struct fs_tree *t)
{
    struct sortrec *r = xmalloc((t->n ? t->n : 1) * sizeof *r);
    struct fs_entry *copy = xmalloc((t->n ? t->n : 1) * sizeof *copy);
    if (t->n) /* an empty root's tree has no array yet */
        memcpy(copy, t->v, t->n * sizeof *copy);
    for (size_t i = 0; i < t->n; i++)
        r[i] = (struct sortrec){&copy[i], i};
    qsort(r, t->n, sizeof *r, cmp_rec);
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (i + 1 < t->n && strcmp(r[i].e->path, r[i + 1].e->path) == 0) {
            free(r[i].e->path);
            free(r[i].e->link);
            continue;
        }
        t->v[k++] = *r[i].e;
    }
    t->n = k;
    free(r);
    free(copy);
}

static bool tree_has(const struct fs_tree *t, const char *path)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(t->v[mid].path, path);
        if (c == 0)
            return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* Directories the tar implies but does not list get 0755 root:root. */
static void add_missing_parents(struct fs_tree *t, long long mtime)
{
    tree_sort(t);
    size_t n0 = t->n;
    for (size_t i = 0; i < n0; i++) {
        char *p = xstrdup(t->v[i].path);
        for (char *s = strrchr(p, '/'); s; s = strrchr(p, '/')) {
            *s = 0;
            if (!tree_has(t, p)) {
                bool again = false;
                for (size_t j = n0; j < t->n; j++)
                    if (strcmp(t->v[j].path, p) == 0)
                        again = true;
                if (!again) {
                    struct fs_entry *e = tree_push(t);
                    e->path = xstrdup(p);
                    e->type = 'd';
                    e->mode = 0755;
                    e->mtime = mtime;
                }
            }
        }
        free(p);
    }
    bool root = false;
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].path[0] == 0)
            root = true;
    if (!root) {
        struct fs_entry *e = tree_push(t);
        e->path = xstrdup("");
        e->type = 'd';
        e->mode = 0755;
        e->mtime = mtime;
    }
    tree_sort(t);
}

static void tree_totals(struct fs_tree *t)
{
    t->file_bytes = t->name_bytes = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (t->v[i].type == 'f')
            t->file_bytes += t->v[i].size;
        t->name_bytes += (long long)strlen(path_basename(t->v[i].path));
    }
}

static long long clamp_time(long long t, long long sde)
{
    if (t < 0)
        t = 0;
    return sde > 0 && t > sde ? sde : t;
}

/* Makes the unpacked copy readable and writable for us, whoever we are:
 * the real modes are in the tree and go into the image. */
static void make_accessible(const struct fs_tree *t)
{
    for (size_t i = 0; i < t->n; i++) {
        const struct fs_entry *e = &t->v[i];
        if (e->type != 'f' && e->type != 'd')
            continue;
        char *full = path_join(t->dir, e->path[0] ? e->path : ".");
        chmod(full, e->type == 'd' || (e->mode & 0111) ? 0755 : 0644);
        free(full);
    }
}

/* Sizes from the unpacked files, counting hard-linked data once. */
static void measure(struct fs_tree *t)
{
    struct seen {
        dev_t dev;
        ino_t ino;
        const char *path;
    } *seen = NULL;
    size_t nseen = 0, cap = 0;
    for (size_t i = 0; i < t->n; i++) {
        struct fs_entry *e = &t->v[i];
        if (e->type != 'f')
            continue;
        char *full = path_join(t->dir, e->path);
        struct stat sb;
        if (lstat(full, &sb) == 0 && S_ISREG(sb.st_mode)) {
            e->size = (long long)sb.st_size;
            if (sb.st_nlink > 1) {
                const char *first = NULL;
                for (size_t k = 0; k < nseen && !first; k++)
                    if (seen[k].dev == sb.st_dev && seen[k].ino == sb.st_ino)
                        first = seen[k].path;
                if (first) {
                    e->type = 'h'; /* same inode as an earlier path */
                    e->link = xstrdup(first);
                } else {
                    if (nseen == cap) {
                        cap = cap ? cap * 2 : 64;
                        seen = xrealloc(seen, cap * sizeof *seen);
                    }
                    seen[nseen++] = (struct seen){sb.st_dev, sb.st_ino, e->path};
                }
            }
        }
        free(full);
    }
    free(seen);
}

/* ---- one unpacked copy per cached tarball ---------------------------------
 *
 * The disk, netboot and iso stages all unpack the same userland rootfs.tar.
 * A tarball inside a cache entry (CACHE/objects/KEY/out/X.tar) never
 * changes, so it is unpacked once, under a lock, into CACHE/objects/KEY/
 * unpacked/X/ (pruned with the entry), and each stage gets a tree of hard
 * links to it: its own directories, the files shared. Stages never write
 * through those links (fstree_add replaces a file, it does not rewrite it).
 * Anything else, or a cache we may not write, is unpacked directly. */

static int record_entry(const struct arc_entry *e, void *ud)
{
    struct arc_entry row = *e;
    if (row.type == ARC_HARDLINK) { /* as arc_extract records it */
        row.type = ARC_FILE;
        row.target = NULL;
    }
    arc_table_add(ud, &row);
    return 0;
}

/* The shared unpacked copy of TAR, or NULL (then unpack directly). */
static char *shared_unpacked(const struct stage_ctx *cx, const char *tar)
{
    char *objects = cx->cache_dir ? path_join(cx->cache_dir, "objects") : NULL;
    char *outdir = path_dirname(tar), *entry = path_dirname(outdir);
    char *dir = NULL;
    if (!objects || !str_starts(entry, objects) || strcmp(path_basename(outdir), "out") != 0)
        goto out;
    char *base = path_join(entry, "unpacked");
    char *lock = xasprintf("%s/%s.lock", base, path_basename(tar));
    char *want = path_join(base, path_basename(tar));
    int fd = mkdir_p(base, 0755) < 0 ? -1 : open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0 && flock(fd, LOCK_EX) == 0) {
        if (is_dir(want)) {
            dir = xstrdup(want);
        } else {
            char *tmp = xasprintf("%s.tmp", want);
            char err[ARC_ERRLEN];
            rm_rf(tmp);
            if (mkdir_p(tmp, 0755) == 0 &&
                arc_extract(tar, tmp, ARC_X_NO_OWNERS | ARC_X_NO_XATTRS, NULL, err) == 0 &&
                rename(tmp, want) == 0)
                dir = xstrdup(want);
            else
                rm_rf(tmp);
            free(tmp);
        }
    }
    if (fd >= 0)
        close(fd); /* drops the lock */
    free(base);
    free(lock);
    free(want);
out:
    free(objects);
    free(outdir);
    free(entry);
    return dir;
}

/* DIR as hard links to SRC's entries, in the archive's order. 0, or -1. */
static int link_tree(const char *src, const char *dir, const struct arc_table *rec)
{
    for (size_t i = 0; i < rec->n; i++) {
        const struct arc_entry *a = &rec->v[i];
        if (strcmp(a->path, ".") == 0)
            continue;
        char *from = path_join(src, a->path), *to = path_join(dir, a->path);
        char *parent = path_dirname(to);
        int rc = mkdir_p(parent, 0755);
        free(parent);
        if (rc == 0 && a->type == ARC_DIR) {
            rc = mkdir_p(to, 0755);
        } else if (rc == 0) {
            unlink(to); /* a later entry for the same path replaces it */
            struct stat sb;
            if (lstat(from, &sb) == 0) /* absent: a device node made only as root */
                rc = link(from, to);
        }
        free(from);
        free(to);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* Unpacks TAR into DIR (shared copy + links, else directly), filling REC. */
static int unpack_tar(const struct stage_ctx *cx, const char *tar, const char *dir,
                      const char *label, struct arc_table *rec)
{
    char err[ARC_ERRLEN];
    double t0 = now_seconds();
    char *shared = shared_unpacked(cx, tar);
    if (shared) {
        if (arc_list(tar, record_entry, rec, err) < 0) {
            free(shared);
            return cx_fail(cx, "cannot read %s: %s; rebuild that stage", label, err);
        }
        int rc = link_tree(shared, dir, rec);
        if (rc == 0) {
            cx_log(cx, "(%s: linked from %s: %.1f s)", label, shared, now_seconds() - t0);
            free(shared);
            return 0;
        }
        cx_log(cx, "cannot link %s into %s (%s): unpacking it", shared, dir, strerror(errno));
        free(shared);
        arc_table_free(rec);
        memset(rec, 0, sizeof *rec);
        rm_rf(dir);
        mkdir_p(dir, 0755);
    }
    if (arc_extract(tar, dir, ARC_X_NO_OWNERS | ARC_X_NO_XATTRS, rec, err) < 0)
        return cx_fail(cx, "cannot unpack %s: %s; rebuild that stage", label, err);
    cx_log(cx, "(unpacked %s: %.1f s)", label, now_seconds() - t0);
    return 0;
}

int fstree_from_tar(const struct stage_ctx *cx, const char *tar, const char *dir,
                    const char *label, long long sde, struct fs_tree *t)
{
    memset(t, 0, sizeof *t);
    t->dir = xstrdup(dir);
    if (mkdir_p(dir, 0755) < 0)
        return cx_fail(cx, "cannot create %s: %s", dir, strerror(errno));
    struct arc_table rec = {0};
    int rc = 1;
    if (unpack_tar(cx, tar, dir, label, &rec))
        goto out;
    for (size_t i = 0; i < rec.n; i++) {
        const struct arc_entry *a = &rec.v[i];
        const char *p = strcmp(a->path, ".") == 0 ? "" : a->path;
        if (strpbrk(p, "\"\n\r")) {
            cx_fail(cx, "%s: entry '%s' has a double quote or newline in its name, which "
                    "the image tools cannot take; remove it from the root filesystem", label, p);
            goto out;
        }
        char type;
        switch (a->type) {
        case ARC_DIR: type = 'd'; break;
        case ARC_SYMLINK: type = 'l'; break;
        case ARC_CHR: type = 'c'; break;
        case ARC_BLK: type = 'b'; break;
        case ARC_FIFO: type = 'p'; break;
        case ARC_FILE:
        case ARC_HARDLINK: type = 'f'; break;
        default:
            cx_log(cx, "%s: skipping '%s' (socket)", label, p);
            continue;
        }
        struct fs_entry *e = tree_push(t);
        e->path = xstrdup(p);
        e->type = type;
        e->mode = (unsigned)a->mode & 07777;
        e->uid = (unsigned long)a->uid;
        e->gid = (unsigned long)a->gid;
        e->mtime = clamp_time(a->mtime, sde);
        e->rmajor = a->rmajor;
        e->rminor = a->rminor;
        e->size = type == 'l' && a->target ? (long long)strlen(a->target) : 0;
        if (type == 'c' || type == 'b') {
            /* Made as root: remove, so the image is built the same way
             * (same inode order) whoever runs the build. */
            char *full = path_join(dir, p);
            unlink(full);
            free(full);
        }
    }
    add_missing_parents(t, sde > 0 ? sde : 0);
    make_accessible(t);
    measure(t);
    tree_totals(t);
    rc = 0;
out:
    arc_table_free(&rec);
    return rc;
}

/* Whether the device node E exists in the unpacked tree (made when
 * extracting as root); otherwise the image tools create it. */
static bool on_disk(const struct fs_tree *t, const struct fs_entry *e)
{
    char *full = path_join(t->dir, e->path);
    struct stat sb;
    bool r = lstat(full, &sb) == 0;
    free(full);
    return r;
}

int fstree_add(const struct stage_ctx *cx, struct fs_tree *t, const char *relpath,
               const char *src, unsigned mode, long long mtime)
{
    char *full = path_join(t->dir, relpath);
    char *parent = path_dirname(full);
    int bad = mkdir_p(parent, 0755);
    free(parent);
    if (bad == 0 && src)
        unlink(full); /* maybe a hard link into a shared tree: replace, never rewrite */
    if (bad == 0)
        bad = src ? copy_file(src, full) : mkdir_p(full, 0755);
    if (bad < 0) {
        int e = errno;
        free(full);
        return cx_fail(cx, "cannot add %s to the image tree: %s", relpath, strerror(e));
    }
    if (src)
        chmod(full, (mode & 0111) ? 0755 : 0644);
    free(full);
    struct fs_entry *e = tree_push(t);
    e->path = xstrdup(relpath);
    e->type = src ? 'f' : 'd';
    e->mode = mode;
    e->mtime = mtime;
    e->size = src ? fsimage_file_size(src) : 0;
    add_missing_parents(t, mtime);
    tree_totals(t);
    return 0;
}

int fstree_add_text(const struct stage_ctx *cx, struct fs_tree *t, const char *relpath,
                    const char *text, unsigned mode, long long mtime)
{
    char *tmp = xasprintf("%s/.fstree-text", cx->work);
    if (write_file_atomic(tmp, text, strlen(text), 0644) < 0) {
        free(tmp);
        return cx_fail(cx, "cannot write a temporary file in %s: %s", cx->work, strerror(errno));
    }
    int rc = fstree_add(cx, t, relpath, tmp, mode, mtime);
    unlink(tmp);
    free(tmp);
    return rc;
}

static int add_tree_rec(const struct stage_ctx *cx, struct fs_tree *t, const char *rel,
                        const char *src, long long mtime, int depth)
{
    DIR *d = opendir(src);
    if (!d)
        return cx_fail(cx, "cannot read %s: %s", src, strerror(errno));
    struct strlist names = {0};
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            strlist_push(&names, de->d_name);
    closedir(d);
    strlist_sort(&names);
    int rc = 0;
    for (size_t i = 0; i < names.n && rc == 0; i++) {
        char *s = path_join(src, names.v[i]);
        char *r = path_join(rel, names.v[i]);
        char *dst = path_join(t->dir, r);
        struct stat sb;
        if (lstat(s, &sb) < 0) {
            rc = cx_fail(cx, "cannot read %s: %s", s, strerror(errno));
        } else if (S_ISDIR(sb.st_mode) || S_ISREG(sb.st_mode) || S_ISLNK(sb.st_mode)) {
            struct fs_entry *e = tree_push(t);
            e->path = xstrdup(r);
            e->mode = (unsigned)sb.st_mode & 07777;
            e->mtime = mtime;
            if (S_ISDIR(sb.st_mode)) {
                e->type = 'd';
                if (mkdir_p(dst, 0755) < 0)
                    rc = cx_fail(cx, "cannot create %s: %s", dst, strerror(errno));
                else if (depth < 64)
                    rc = add_tree_rec(cx, t, r, s, mtime, depth + 1);
            } else if (S_ISLNK(sb.st_mode)) {
                e->type = 'l';
                char target[4096];
                ssize_t n = readlink(s, target, sizeof target - 1);
                if (n < 0) {
                    rc = cx_fail(cx, "cannot read link %s: %s", s, strerror(errno));
                } else {
                    target[n] = 0;
                    e->size = n;
                    unlink(dst);
                    if (symlink(target, dst) < 0)
                        rc = cx_fail(cx, "cannot create %s: %s", dst, strerror(errno));
                }
            } else {
                e->type = 'f';
                e->size = (long long)sb.st_size;
                unlink(dst);
                if (copy_file(s, dst) < 0)
                    rc = cx_fail(cx, "cannot copy %s: %s", s, strerror(errno));
            }
        }
        free(s);
        free(r);
        free(dst);
    }
    strlist_free(&names);
    return rc;
}

int fstree_add_tree(const struct stage_ctx *cx, struct fs_tree *t, const char *relpath,
                    const char *src, long long mtime)
{
    char *dst = path_join(t->dir, relpath);
    int rc = mkdir_p(dst, 0755) < 0 ? cx_fail(cx, "cannot create %s: %s", dst, strerror(errno))
                                    : add_tree_rec(cx, t, relpath, src, mtime, 0);
    free(dst);
    if (rc == 0) {
        add_missing_parents(t, mtime);
        tree_totals(t);
    }
    return rc;
}

int fstree_add_kernel_modules(const struct stage_ctx *cx, struct fs_tree *t,
                              const char *kernel_out, long long mtime)
{
    char *mods = path_join(kernel_out, "modules/lib/modules");
    int rc = 0;
    if (!is_dir(mods)) {
        cx_log(cx, "the kernel stage has no modules (%s): none added", mods);
        free(mods);
        return 0;
    }
    /* Where lib/modules is in this root: merged /usr has lib -> usr/lib. */
    const char *base = "lib/modules";
    char *lib = path_join(t->dir, "lib");
    char target[256];
    ssize_t n = readlink(lib, target, sizeof target - 1);
    if (n > 0) {
        target[n] = 0;
        if (strcmp(target, "usr/lib") == 0 || strcmp(target, "/usr/lib") == 0)
            base = "usr/lib/modules";
    }
    free(lib);
    DIR *d = opendir(mods);
    struct dirent *de;
    struct strlist rel = {0};
    while (d && (de = readdir(d)))
        if (de->d_name[0] != '.')
            strlist_push(&rel, de->d_name);
    if (d)
        closedir(d);
    strlist_sort(&rel);
    for (size_t i = 0; i < rel.n && rc == 0; i++) {
        char *r = path_join(base, rel.v[i]);
        char *have = path_join(t->dir, r);
        if (path_exists(have)) {
            cx_log(cx, "the root filesystem has /%s already: kernel modules not added", r);
        } else {
            char *src = path_join(mods, rel.v[i]);
            rc = fstree_add_tree(cx, t, r, src, mtime);
            if (rc == 0) {
                /* the release directory itself */
                struct fs_entry *e = tree_push(t);
                e->path = xstrdup(r);
                e->type = 'd';
                e->mode = 0755;
                e->mtime = mtime;
                add_missing_parents(t, mtime);
                cx_log(cx, "added kernel modules as /%s", r);
            }
            free(src);
        }
        free(r);
        free(have);
    }
    strlist_free(&rel);
    free(mods);
    return rc;
}

/* ---- running tools ------------------------------------------------------- */

int fsimage_run_merged(const struct stage_ctx *cx, const char *const *argv, char **out)
{
    struct run_command cmd = {
        .argv = argv,
        .cwd = cx->work,
        .out = RUN_OUT_CAPTURE,
        .err = RUN_ERR_TO_OUT,
        .log = true,
    };
    int st = run_command(&cmd);
    *out = cmd.output;
    cmd.output = NULL;
    run_command_clear(&cmd);
    return st == 127 ? -1 : st; /* 127: env found no such tool */
}

/* ---- ext4 ---------------------------------------------------------------- */

static const char ext4_conf[] =
    "[defaults]\n"
    "\tbase_features = sparse_super,large_file,filetype,resize_inode,dir_index,ext_attr\n"
    "\tdefault_mntopts = acl,user_xattr\n"
    "\tenable_periodic_fsck = 0\n"
    "\tblocksize = 4096\n"
    "\tinode_size = 256\n"
    "\tinode_ratio = 16384\n"
    "[fs_types]\n"
    "\text4 = {\n"
    "\t\tfeatures = has_journal,extent,huge_file,flex_bg,metadata_csum,64bit,dir_nlink,"
    "extra_isize\n"
    "\t}\n";

static long long journal_blocks(long long blocks)
{
    /* ext2fs_default_journal_size() of e2fsprogs 1.47 */
    if (blocks < 2048)
        return 0;
    if (blocks < 32768)
        return 1024;
    if (blocks < 256 * 1024)
        return 4096;
    if (blocks < 512 * 1024)
        return 8192;
    if (blocks < 4096 * 1024)
        return 16384;
    if (blocks < 8192 * 1024)
        return 32768;
    if (blocks < 16384 * 1024)
        return 65536;
    if (blocks < 32768 * 1024)
        return 131072;
    return 262144;
}

static long long inode_count(const struct fs_tree *t, long long bytes)
{
    long long want = (long long)t->n + (long long)t->n / 4 + 256;
    long long by_ratio = bytes / 16384;
    long long n = want > by_ratio ? want : by_ratio;
    return round_up(n, 64);
}

static long long content_blocks(const struct fs_tree *t)
{
    long long b = 0, dirs = 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct fs_entry *e = &t->v[i];
        if (e->type == 'f')
            b += (e->size + BLK - 1) / BLK + (e->size > 128 * MIB ? e->size / (128 * MIB) : 0);
        else if (e->type == 'l' && e->size >= 60)
            b++;
        else if (e->type == 'd')
            dirs++;
    }
    /* directory entries: 8 bytes + name padded to 4; blocks fill to ~3/4 */
    long long dirbytes = t->name_bytes + 12 * (long long)t->n;
    return b + dirs + dirbytes * 4 / 3 / BLK + 1;
}

long long fsimage_ext4_min_bytes(const struct fs_tree *t)
{
    long long content = content_blocks(t) * BLK;
    long long size = round_up(content + 8 * MIB, MIB);
    for (int i = 0; i < 64; i++) {
        long long blocks = size / BLK;
        long long groups = (blocks + 32767) / 32768;
        long long need = content + content / 50 +                 /* 2% slack */
                         inode_count(t, size) * 256 +             /* inode tables */
                         journal_blocks(blocks) * BLK +           /* journal */
                         groups * 3 * BLK + 256 * BLK +           /* bitmaps, GDT reserve */
                         2 * MIB;                                 /* lost+found, misc */
        need = round_up(need, MIB);
        if (need <= size)
            return size;
        size = need;
    }
    return size;
}

static unsigned type_bits(char type)
{
    switch (type) {
    case 'd': return 040000;
    case 'l': return 0120000;
    case 'c': return 020000;
    case 'b': return 060000;
    case 'p': return 010000;
    default: return 0100000;
    }
}

static char *debugfs_script(const struct fs_tree *t)
{
    struct buf b = BUF_INIT;
    for (size_t i = 0; i < t->n; i++) {
        const struct fs_entry *e = &t->v[i];
        if (e->type == 'h')
            continue;
        const char *p = e->path;
        if ((e->type == 'c' || e->type == 'b') && !on_disk(t, e)) {
            char *parent = xstrdup(p);
            char *slash = strrchr(parent, '/');
            if (slash)
                *slash = 0;
            else
                parent[0] = 0;
            buf_printf(&b, "cd \"/%s\"\nmknod \"%s\" %c %u %u\ncd /\n", parent,
                       path_basename(p), e->type, e->rmajor, e->rminor);
            free(parent);
        }
        /* mke2fs -d copied owner, mode, atime and mtime from the unpacked
         * file: set only what differs (a third of the commands, usually).
         * ctime is the unpacking time, so always. */
        char *full = path_join(t->dir, p);
        struct stat sb;
        bool have = lstat(full, &sb) == 0;
        free(full);
        unsigned mode = type_bits(e->type) | e->mode;
        if (!have || sb.st_uid != e->uid)
            buf_printf(&b, "sif \"/%s\" uid %lu\n", p, e->uid);
        if (!have || sb.st_gid != e->gid)
            buf_printf(&b, "sif \"/%s\" gid %lu\n", p, e->gid);
        if (!have || (sb.st_mode & 0177777) != mode)
            buf_printf(&b, "sif \"/%s\" mode 0%o\n", p, mode);
        if (!have || sb.st_mtim.tv_sec != e->mtime || sb.st_mtim.tv_nsec != 0)
            buf_printf(&b, "sif \"/%s\" mtime @%lld\n", p, e->mtime);
        if (!have || sb.st_atim.tv_sec != e->mtime || sb.st_atim.tv_nsec != 0)
            buf_printf(&b, "sif \"/%s\" atime @%lld\n", p, e->mtime);
        buf_printf(&b, "sif \"/%s\" ctime @%lld\n", p, e->mtime);
    }
    return buf_detach(&b);
}

/* Lines of debugfs output that are not its banner or command echo ("" if
 * none). New string. */
static char *debugfs_errors(const char *out)
{
    struct buf b = BUF_INIT;
    int shown = 0;
    for (const char *l = out; l && *l;) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        bool ok = len == 0 || str_starts(l, "debugfs ") || str_starts(l, "debugfs:") ||
                  str_starts(l, "Allocated inode:");
        if (!ok && shown++ < 20) {
            buf_add(&b, l, len);
            buf_puts(&b, "\n");
        }
        l = nl ? nl + 1 : l + len;
    }
    return buf_detach(&b);
}

static bool out_of_space(const char *out)
{
    return out && (strstr(out, "Could not allocate") || strstr(out, "No space left") ||
                   strstr(out, "No free space") || strstr(out, "too small") ||
                   strstr(out, "Could not find enough"));
}

int fsimage_ext4(const struct stage_ctx *cx, const struct fs_tree *t, const char *image,
                 const struct ext4_opts *o)
{
    char *sizek = xasprintf("%lldk", o->bytes / 1024);
    char *inodes = xasprintf("%lld", inode_count(t, o->bytes));
    char *ext = xasprintf("hash_seed=%s,root_owner=0:0", o->hash_seed);
    char *fake = xasprintf("E2FSPROGS_FAKE_TIME=%lld", o->sde);
    char *sdee = xasprintf("SOURCE_DATE_EPOCH=%lld", o->sde);
    char *conf = xasprintf("%s/mke2fs.conf", cx->work);
    char *confenv = xasprintf("MKE2FS_CONFIG=%s", conf);
    char *out = NULL;
    int rc = 1;
    unlink(image);
    /* Our own mke2fs.conf: the host's must not change the result. */
    if (write_file_atomic(conf, ext4_conf, strlen(ext4_conf), 0644) < 0) {
        cx_fail(cx, "cannot write %s: %s", conf, strerror(errno));
        goto done;
    }
    const char *argv[] = {"env", fake, sdee, confenv, "mke2fs", "-q", "-F", "-t", "ext4",
                          "-T", "ext4", "-b", "4096", "-I", "256", "-N", inodes, "-m", "5",
                          "-U", o->uuid, "-E", ext, "-L", o->label ? o->label : "",
                          "-d", t->dir, image, sizek, NULL};
    int st = fsimage_run_merged(cx, argv, &out);
    if (out && *out)
        cx_log(cx, "%s", out);
    if (st != 0) {
        if (out_of_space(out)) {
            rc = 2;
            goto done;
        }
        cx_fail(cx, "mke2fs failed (exit %d) making %s; see the log above", st, image);
        goto done;
    }
    char *script = debugfs_script(t);
    char *spath = xasprintf("%s/debugfs.cmds", cx->work);
    if (write_file_atomic(spath, script, strlen(script), 0644) < 0) {
        cx_fail(cx, "cannot write %s: %s", spath, strerror(errno));
        free(script);
        free(spath);
        goto done;
    }
    free(script);
    free(out);
    out = NULL;
    const char *dargv[] = {"env", fake, sdee, "debugfs", "-w", "-f", spath, image, NULL};
    st = fsimage_run_merged(cx, dargv, &out);
    free(spath);
    char *errs = debugfs_errors(out);
    if (st != 0 || errs[0]) {
        if (out_of_space(errs)) {
            cx_log(cx, "%s", errs);
            free(errs);
            rc = 2;
            goto done;
        }
        cx_fail(cx, "debugfs could not restore owners and modes in %s (exit %d):\n%s", image, st,
                errs[0] ? errs : "(no message)");
        free(errs);
        goto done;
    }
    free(errs);
    cx_log(cx, "restored owner, mode and times of %zu entries with debugfs", t->n);
    free(out);
    out = NULL;
    const char *fargv[] = {"env", fake, sdee, "e2fsck", "-fn", image, NULL};
    st = fsimage_run_merged(cx, fargv, &out);
    if (st != 0) {
        cx_log(cx, "%s", out ? out : "");
        if (out_of_space(out)) {
            rc = 2;
            goto done;
        }
        cx_fail(cx, "e2fsck -fn finds errors in the new filesystem %s (exit %d); this is a "
                "bug in Trillian's image code or e2fsprogs", image, st);
        goto done;
    }
    rc = 0;
done:
    free(out);
    free(sizek);
    free(inodes);
    free(ext);
    free(fake);
    free(sdee);
    free(conf);
    free(confenv);
    return rc;
}

/* ---- squashfs ------------------------------------------------------------ */

/* mksquashfs 4.5 cannot restore owners without root: its pseudo "M"
 * definitions for a directory clash with definitions for its children. So
 * squashfs images are made with gensquashfs (squashfs-tools-ng) from a pack
 * file that lists every entry with its owner and mode; every timestamp is
 * SOURCE_DATE_EPOCH (like mksquashfs -all-time). */
/* A pack-file path: "/PATH" with backslashes doubled (names have no '"'). */
static const char *pack_path(const char *p, struct buf *b)
{
    b->n = 0;
    buf_puts(b, "\"/");
    for (; *p; p++) {
        if (*p == '\\')
            buf_puts(b, "\\");
        buf_add(b, p, 1);
    }
    buf_puts(b, "\"");
    return b->p;
}

/* gensquashfs -X level= ranges; lz4 has none. */
static const struct {
    const char *comp;
    long long lo, hi;
} squashfs_levels[] = {{"zstd", 1, 22}, {"xz", 0, 9}, {"gzip", 1, 9}, {"lzo", 1, 9}};

int fsimage_squashfs_check_level(struct stage *st, const char *comp_key,
                                 const char *level_key)
{
    const char *comp = st_str(st, comp_key);
    long long level = st_int(st, level_key, 0);
    if (level == 0 || !comp)
        return 0;
    for (size_t i = 0; i < ARRAY_LEN(squashfs_levels); i++)
        if (strcmp(squashfs_levels[i].comp, comp) == 0) {
            if (level >= squashfs_levels[i].lo && level <= squashfs_levels[i].hi)
                return 0;
            st_error(st, level_key, "must be 0 (the default) or %lld to %lld for %s (got %lld)",
                     squashfs_levels[i].lo, squashfs_levels[i].hi, comp, level);
            return 1;
        }
    st_error(st, level_key, "%s takes no level: leave %s at 0", comp, level_key);
    return 1;
}

int fsimage_squashfs(const struct stage_ctx *cx, const struct fs_tree *t, const char *image,
                     const char *comp, long long level, long long sde)
{
    struct buf q = BUF_INIT;
    struct buf pf = BUF_INIT;
    const struct fs_entry *root = NULL;
    /* hard links: the first path (in sorted order) of each inode */
    for (size_t i = 0; i < t->n; i++) {
        const struct fs_entry *e = &t->v[i];
        const char *p = e->path;
        if (!p[0]) {
            root = e;
            continue;
        }
        const char *qp = pack_path(p, &q);
        switch (e->type) {
        case 'd':
            buf_printf(&pf, "dir %s 0%o %lu %lu\n", qp, e->mode, e->uid, e->gid);
            break;
        case 'f':
            /* no location: gensquashfs reads the same path below -D */
            buf_printf(&pf, "file %s 0%o %lu %lu\n", qp, e->mode, e->uid, e->gid);
            break;
        case 'h':
            if (!e->link) {
                buf_free(&pf);
                buf_free(&q);
                return cx_fail(cx, "the hard link /%s has no target", p);
            }
            buf_printf(&pf, "link %s 0777 0 0 /%s\n", qp, e->link);
            break;
        case 'l': {
            char *full = path_join(t->dir, p);
            char target[4096];
            ssize_t n = readlink(full, target, sizeof target - 1);
            free(full);
            if (n < 0) {
                buf_free(&pf);
                buf_free(&q);
                return cx_fail(cx, "cannot read the symlink %s in %s: %s", p, t->dir,
                               strerror(errno));
            }
            target[n] = 0;
            if (strpbrk(target, "\n\r")) {
                buf_free(&pf);
                buf_free(&q);
                return cx_fail(cx, "the symlink /%s points to '%s', which has a newline "
                               "gensquashfs cannot take", p, target);
            }
            buf_printf(&pf, "slink %s 0777 %lu %lu %s\n", qp, e->uid, e->gid, target);
            break;
        }
        case 'c':
        case 'b':
            buf_printf(&pf, "nod %s 0%o %lu %lu %c %u %u\n", qp, e->mode, e->uid, e->gid,
                       e->type, e->rmajor, e->rminor);
            break;
        case 'p':
            buf_printf(&pf, "pipe %s 0%o %lu %lu\n", qp, e->mode, e->uid, e->gid);
            break;
        }
    }
    char *pfpath = xasprintf("%s/squashfs.pack", cx->work);
    int rc = 1;
    if (write_file_atomic(pfpath, pf.p, pf.n, 0644) < 0) {
        cx_fail(cx, "cannot write %s: %s", pfpath, strerror(errno));
        goto done;
    }
    unlink(image);
    char *defaults = xasprintf("uid=%lu,gid=%lu,mode=0%o,mtime=%lld", root ? root->uid : 0,
                               root ? root->gid : 0, root ? root->mode : 0755,
                               sde > 0 ? sde : 0);
    char *jobs = xasprintf("%d", cx->jobs > 0 ? cx->jobs : 1);
    char *xopt = level ? xasprintf("level=%lld", level) : NULL;
    const char *argv[] = {"gensquashfs", "-F", pfpath, "-D", t->dir, "-c", comp, "-j", jobs,
                          "-d", defaults, "-f", "-q", xopt ? "-X" : image, xopt,
                          xopt ? image : NULL, NULL};
    int st = cx_run(cx, argv);
    free(defaults);
    free(jobs);
    free(xopt);
    if (st != 0) {
        cx_fail(cx, "gensquashfs failed (exit %d) making %s; see the log above", st, image);
        goto done;
    }
    rc = 0;
done:
    free(pfpath);
    buf_free(&pf);
    buf_free(&q);
    return rc;
}

/* ---- cpio ---------------------------------------------------------------- */

static void cpio_header(struct buf *b, unsigned ino, unsigned mode, unsigned nlink,
                        long long mtime, unsigned long long size, const char *name)
{
    size_t namesize = strlen(name) + 1;
    buf_printf(b, "070701%08X%08X%08X%08X%08X%08X%08llX%08X%08X%08X%08X%08zX%08X", ino, mode,
               0u, 0u, nlink, (unsigned)mtime, size, 0u, 0u, 0u, 0u, namesize, 0u);
    buf_add(b, name, namesize);
    while (b->n % 4)
        buf_add(b, "", 1);
}

int fsimage_cpio_one(const struct stage_ctx *cx, const char *cpio, const char *name,
                     const char *src, long long sde)
{
    long long size = fsimage_file_size(src);
    if (size < 0)
        return cx_fail(cx, "cannot read %s: %s", src, strerror(errno));
    if (size > 0xffffffffLL)
        return cx_fail(cx, "%s is %lld bytes; a newc cpio entry holds at most 4 GiB; make the "
                       "root filesystem smaller", src, size);
    int in = open(src, O_RDONLY | O_CLOEXEC);
    int outfd = open(cpio, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = 1;
    if (in < 0 || outfd < 0) {
        cx_fail(cx, "cannot open %s or %s: %s", src, cpio, strerror(errno));
        goto done;
    }
    struct buf h = BUF_INIT;
    cpio_header(&h, 1, 0100644, 1, sde, (unsigned long long)size, name);
    if (write(outfd, h.p, h.n) != (ssize_t)h.n)
        goto werr;
    buf_free(&h);
    char *chunk = xmalloc(1 << 20);
    long long done_bytes = 0;
    for (;;) {
        ssize_t r = read(in, chunk, 1 << 20);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(chunk);
            goto werr;
        }
        if (r == 0)
            break;
        if (write(outfd, chunk, (size_t)r) != r) {
            free(chunk);
            goto werr;
        }
        done_bytes += r;
    }
    free(chunk);
    if (done_bytes != size)
        goto werr;
    struct buf tail = BUF_INIT;
    static const char zeros[4] = {0};
    buf_add(&tail, zeros, (size_t)((4 - size % 4) % 4));
    cpio_header(&tail, 0, 0, 1, 0, 0, "TRAILER!!!");
    if (write(outfd, tail.p, tail.n) != (ssize_t)tail.n) {
        buf_free(&tail);
        goto werr;
    }
    buf_free(&tail);
    if (close(outfd) < 0) {
        outfd = -1;
        goto werr;
    }
    outfd = -1;
    rc = 0;
    goto done;
werr:
    cx_fail(cx, "cannot write %s: %s", cpio, strerror(errno));
done:
    if (in >= 0)
        close(in);
    if (outfd >= 0)
        close(outfd);
    return rc;
}

/* ---- copying into an image ----------------------------------------------- */

static bool all_zero(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

int fsimage_copy_at(const struct stage_ctx *cx, const char *src, const char *dst,
                    long long offset)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    int out = open(dst, O_WRONLY | O_CLOEXEC);
    int rc = 1;
    char *chunk = xmalloc(1 << 20);
    if (in < 0 || out < 0) {
        cx_fail(cx, "cannot open %s or %s: %s", src, dst, strerror(errno));
        goto done;
    }
    /* Only SRC's data extents are read (SEEK_DATA/SEEK_HOLE; a file system
     * without them reads as one extent); zero blocks stay holes in DST. */
    struct stat sb;
    if (fstat(in, &sb) < 0) {
        cx_fail(cx, "cannot stat %s: %s", src, strerror(errno));
        goto done;
    }
    for (off_t pos = 0; pos < sb.st_size;) {
        off_t d = lseek(in, pos, SEEK_DATA);
        if (d < 0 && errno == ENXIO)
            break; /* only a hole is left */
        off_t h = d < 0 ? sb.st_size : lseek(in, d, SEEK_HOLE);
        if (d < 0)
            d = pos;
        if (h < 0 || h > sb.st_size)
            h = sb.st_size;
        for (off_t at = d; at < h;) {
            size_t want = (size_t)(h - at < (1 << 20) ? h - at : (1 << 20));
            ssize_t r = pread(in, chunk, want, at);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                cx_fail(cx, "cannot read %s: %s", src, r < 0 ? strerror(errno) : "short file");
                goto done;
            }
            for (ssize_t b = 0; b < r; b += 4096) {
                size_t n = (size_t)(r - b < 4096 ? r - b : 4096);
                if (all_zero(chunk + b, n))
                    continue;
                if (pwrite(out, chunk + b, n, (off_t)(offset + at + b)) != (ssize_t)n) {
                    cx_fail(cx, "cannot write %s: %s", dst, strerror(errno));
                    goto done;
                }
            }
            at += r;
        }
        pos = h;
    }
    if (close(out) < 0) {
        out = -1;
        cx_fail(cx, "cannot write %s: %s", dst, strerror(errno));
        goto done;
    }
    out = -1;
    rc = 0;
done:
    free(chunk);
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    return rc;
}
