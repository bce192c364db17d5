/* The content-addressed cache. Layout under the cache root:
 *   objects/KEY/out/   a stage's outputs; objects/KEY/log its log
 *   objects/KEY/used   touched on every use, for `clean --cache --older-than`
 *   tmp/KEY.PID/       a stage being built; renamed to objects/KEY when done
 *   keep/RECIPE/STAGE/ persistent build directories (incremental kernels)
 *   last/RECIPE/STAGE  the input list of the last build, for `plan`
 *   objects/KEY/sums   sha256 of each output file (the stage writes it)
 *   objects/KEY/ids    each output's identity at commit (ids_write), so a
 *                      reuse notices a touched object without hashing it
 *   bad/KEY.TIME       entries whose content changed after they were built
 *   locks/KEY          flock'd while a build builds KEY (its pid inside)
 * An entry appears only by rename(2), so a killed build leaves no half entry. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "base/sha256.h"
#include "formats/archive.h"
#include "testhook.h"

const char *cache_default_dir(void)
{
    static char *dir;
    if (dir)
        return dir;
    const char *env = getenv("TRILLIAN_CACHE");
    if (env && *env)
        return dir = xstrdup(env);
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && *xdg)
        return dir = path_join(xdg, "trillian");
    const char *home = getenv("HOME");
    return dir = xasprintf("%s/.cache/trillian", home && *home ? home : "/tmp");
}

char *cache_entry(const char *cache, const char *key)
{
    return xasprintf("%s/objects/%s", cache, key);
}

bool cache_has(const char *cache, const char *key)
{
    char *e = xasprintf("%s/objects/%s/out", cache, key);
    bool ok = is_dir(e);
    free(e);
    return ok;
}

void cache_touch(const char *cache, const char *key)
{
    char *u = xasprintf("%s/objects/%s/used", cache, key);
    int fd = open(u, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
        futimens(fd, NULL);
        close(fd);
    }
    free(u);
}

/* ---- one builder per key -------------------------------------------------
 * CACHE/locks/KEY is flock'd by the build that builds KEY, its pid inside
 * for the message of a build that waits. The kernel drops the lock when its
 * holder dies, so a dead build's lock is taken over at once. */

static int *held;
static size_t nheld, capheld;

int cache_lock(const char *cache, const char *key, pid_t *holder)
{
    *holder = 0;
    char *dir = path_join(cache, "locks");
    char *path = path_join(dir, key);
    int fd = -1;
    if (mkdir_p(dir, 0755) == 0)
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    int locked = -1; /* 1 ours, 0 another build's, -1 no lock here */
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
        locked = 1;
    else if (fd >= 0 && errno == EWOULDBLOCK)
        locked = 0;
    if (fd >= 0 && locked < 0) {
        close(fd); /* a file system without locks (ENOLCK): build unlocked */
        fd = -1;
    } else if (locked == 0) {
        char text[32] = "";
        ssize_t n = pread(fd, text, sizeof text - 1, 0);
        if (n > 0)
            text[n] = 0;
        long pid = atol(text);
        *holder = pid > 0 ? (pid_t)pid : 1; /* busy even if it has not written its pid yet */
        close(fd);
        fd = -1;
    } else if (fd >= 0) {
        char text[32];
        int len = snprintf(text, sizeof text, "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) < 0 || pwrite(fd, text, (size_t)len, 0) < 0) {
            /* the pid is only for the waiting build's message */
        }
        if (nheld == capheld) {
            capheld = capheld ? 2 * capheld : 16;
            held = xrealloc(held, capheld * sizeof *held);
        }
        held[nheld++] = fd;
    }
    free(path);
    free(dir);
    return fd;
}

void cache_unlock(int fd)
{
    if (fd < 0)
        return;
    for (size_t i = 0; i < nheld; i++)
        if (held[i] == fd) {
            held[i] = held[--nheld];
            break;
        }
    close(fd);
}

void cache_locks_forget(void)
{
    /* a forked child shares the parent's open lock files: were it to keep
     * them, another stage's lock would live as long as this child */
    for (size_t i = 0; i < nheld; i++)
        close(held[i]);
    nheld = 0;
}

char *cache_keep_dir(const char *cache, const char *recipe, const char *stage)
{
    return xasprintf("%s/keep/%s/%s", cache, recipe, stage);
}

/* Cache files are read-only so a stray write into OUT (hard links) fails,
 * and no entry holds setuid, setgid, sticky or group/other-writable modes,
 * built here or substituted alike (ARC_SAFE_PERM; docs/publish.md). */
static void make_readonly(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) < 0 || S_ISLNK(sb.st_mode))
        return;
    if (S_ISDIR(sb.st_mode)) {
        struct strlist names = {0};
        dir_list(path, &names);
        for (size_t i = 0; i < names.n; i++) {
            char *sub = path_join(path, names.v[i]);
            make_readonly(sub);
            free(sub);
        }
        strlist_free(&names);
        if ((sb.st_mode & 07777) != (sb.st_mode & ARC_SAFE_PERM))
            chmod(path, sb.st_mode & ARC_SAFE_PERM);
        return;
    }
    chmod(path, sb.st_mode & ARC_SAFE_PERM & ~(mode_t)0222);
}

/* ---- verified reuse ------------------------------------------------------
 * ids: one line per file and symlink of out/: "T SIZE MTIME_NS CTIME_NS INO
 * PATH" (T is f or l). A write through any path, even by root, changes
 * mtime or ctime, and a replaced file has another inode; only then is the
 * file hashed against sums. So a warm reuse costs an lstat per file. */

struct rec {
    char *path;
    char type;
    long long size, mtime, ctime;
    unsigned long long ino;
    char hex[65];
};
struct recs {
    struct rec *v;
    size_t n;
};

static long long ns(struct timespec t)
{
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void rec_of(const struct stat *sb, struct rec *r)
{
    r->type = S_ISLNK(sb->st_mode) ? 'l' : S_ISREG(sb->st_mode) ? 'f' : 'o';
    r->size = (long long)sb->st_size;
    r->mtime = ns(sb->st_mtim);
    r->ctime = ns(sb->st_ctim);
    r->ino = (unsigned long long)sb->st_ino;
}

static int cmp_rec(const void *a, const void *b)
{
    return strcmp(((const struct rec *)a)->path, ((const struct rec *)b)->path);
}

static void recs_push(struct recs *rs, size_t *cap, const struct rec *r)
{
    if (rs->n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        rs->v = xrealloc(rs->v, *cap * sizeof *rs->v);
    }
    rs->v[rs->n++] = *r;
}

/* Loads DIR/ids (ids=true) or DIR/sums; -1 if the file is absent. */
static int recs_load(const char *dir, bool ids, struct recs *rs)
{
    memset(rs, 0, sizeof *rs);
    char *p = path_join(dir, ids ? "ids" : "sums"), *text = NULL;
    int rc = read_file(p, &text, NULL);
    free(p);
    if (rc < 0)
        return -1;
    size_t cap = 0;
    for (char *l = text; *l;) {
        char *nl = strchr(l, '\n');
        if (nl)
            *nl = 0;
        struct rec r = {0};
        int off = 0;
        /* the path is everything after one space: it may begin with one */
        if (ids ? sscanf(l, "%c %lld %lld %lld %llu%n", &r.type, &r.size, &r.mtime, &r.ctime,
                         &r.ino, &off) == 5
                : sscanf(l, "%64s %lld %lld%n", r.hex, &r.size, &r.mtime, &off) == 3) {
            if (off > 0 && l[off] == ' ' && l[off + 1]) {
                r.path = xstrdup(l + off + 1);
                if (!ids)
                    r.type = 'f';
                recs_push(rs, &cap, &r);
            }
        }
        if (!nl)
            break;
        l = nl + 1;
    }
    free(text);
    if (rs->n)
        qsort(rs->v, rs->n, sizeof *rs->v, cmp_rec);
    return 0;
}

static void recs_free(struct recs *rs)
{
    for (size_t i = 0; i < rs->n; i++)
        free(rs->v[i].path);
    free(rs->v);
    memset(rs, 0, sizeof *rs);
}

static struct rec *recs_find(const struct recs *rs, const char *path)
{
    struct rec key = {.path = (char *)path};
    return rs->n ? bsearch(&key, rs->v, rs->n, sizeof *rs->v, cmp_rec) : NULL;
}

/* Every file and symlink under DIR with its lstat, sorted by relative path
 * (as list_tree names them). One fstatat per entry, relative to its open
 * directory: a warm reuse does this for every file of every stage. */
static int scan_dir(int dfd, const char *rel, struct recs *out, size_t *cap)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        struct stat sb;
        if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
            rc = -1;
            continue;
        }
        char *r = rel[0] ? xasprintf("%s/%s", rel, e->d_name) : xstrdup(e->d_name);
        if (S_ISDIR(sb.st_mode)) {
            int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0 || scan_dir(sub, r, out, cap) < 0)
                rc = -1;
            free(r);
        } else {
            struct rec x = {.path = r};
            rec_of(&sb, &x);
            recs_push(out, cap, &x);
        }
    }
    closedir(d);
    return rc;
}

static int scan_tree(const char *dir, struct recs *out)
{
    memset(out, 0, sizeof *out);
    size_t cap = 0;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = fd < 0 ? -1 : scan_dir(fd, "", out, &cap);
    if (out->n)
        qsort(out->v, out->n, sizeof *out->v, cmp_rec);
    return rc;
}

/* DIR/ids from DIR/out as it is now. */
static void ids_write(const char *dir)
{
    char *out = path_join(dir, "out");
    struct recs now;
    struct buf b = BUF_INIT;
    if (scan_tree(out, &now) == 0) {
        for (size_t i = 0; i < now.n; i++) {
            const struct rec *r = &now.v[i];
            if (!strchr(r->path, '\n'))
                buf_printf(&b, "%c %lld %lld %lld %llu %s\n", r->type, r->size, r->mtime,
                           r->ctime, r->ino, r->path);
        }
        char *ids = path_join(dir, "ids");
        write_file_atomic(ids, b.p, b.n, 0644);
        free(ids);
    }
    buf_free(&b);
    recs_free(&now);
    free(out);
}

static void problem(struct buf *why, int *bad, const char *fmt, const char *path)
{
    if ((*bad)++ == 0)
        buf_printf(why, fmt, path);
}

int cache_verify(const char *cache, const char *key, bool all, struct buf *why)
{
    char *entry = cache_entry(cache, key);
    char *out = path_join(entry, "out");
    struct recs ids, sums, files;
    bool have_ids = recs_load(entry, true, &ids) == 0;
    bool have_sums = recs_load(entry, false, &sums) == 0;
    int bad = 0;
    bool refresh = !have_ids;
    if (scan_tree(out, &files) < 0)
        problem(why, &bad, "%s cannot be read", "out/");
    for (size_t i = 0; i < files.n; i++) {
        const struct rec *now = &files.v[i];
        const char *rel = now->path;
        if (strchr(rel, '\n'))
            continue; /* a line-based record cannot name it (ids_write, sums) */
        const struct rec *id = have_ids ? recs_find(&ids, rel) : NULL;
        const struct rec *sum = have_sums ? recs_find(&sums, rel) : NULL;
        bool same = id && id->type == now->type && id->size == now->size &&
                    id->mtime == now->mtime && id->ctime == now->ctime && id->ino == now->ino;
        if (have_ids && !id && !sum) {
            problem(why, &bad, "%s was added after the build", rel);
        } else if (now->type == 'f' && have_sums && !sum) {
            /* in the tree at commit, yet not what the build recorded: a leftover */
            problem(why, &bad, "%s is not in the sha256 sums its build recorded", rel);
        } else if (now->type == 'f' && sum && (all || !same)) {
            char hex[65];
            char *full = path_join(out, rel);
            if (sha256_file(full, hex) < 0)
                problem(why, &bad, "%s cannot be read", rel);
            else if (strcmp(hex, sum->hex) != 0)
                problem(why, &bad, "%s: its sha256 is not the one recorded when it was built",
                        rel);
            else
                refresh |= !same;
            free(full);
        } else if (!same) {
            if (id && id->type != now->type)
                problem(why, &bad, "%s was replaced by another kind of file", rel);
            else
                refresh = true; /* a symlink, or no sums: nothing to hash against */
        }
    }
    /* files the build recorded that are gone */
    for (size_t i = 0; i < ids.n; i++)
        if (!recs_find(&files, ids.v[i].path))
            problem(why, &bad, "%s is missing", ids.v[i].path);
    for (size_t i = 0; i < sums.n; i++)
        if (!recs_find(&files, sums.v[i].path) && !recs_find(&ids, sums.v[i].path))
            problem(why, &bad, "%s is missing", sums.v[i].path);
    if (!bad && refresh)
        ids_write(entry);
    recs_free(&files);
    recs_free(&ids);
    recs_free(&sums);
    free(out);
    free(entry);
    return bad;
}

char *cache_quarantine(const char *cache, const char *key)
{
    char *dir = path_join(cache, "bad");
    char *entry = cache_entry(cache, key);
    char *to = xasprintf("%s/%s.%lld", dir, key, (long long)time(NULL));
    if (mkdir_p(dir, 0755) < 0 || rename(entry, to) < 0) {
        free(to);
        to = NULL;
    }
    free(entry);
    free(dir);
    return to;
}

bool cache_published_intact(const char *cache, const char *key, const char *dir,
                            struct buf *why)
{
    char *entry = cache_entry(cache, key);
    struct recs ids, files = {0};
    bool ok = recs_load(entry, true, &ids) == 0 && scan_tree(dir, &files) == 0;
    free(entry);
    for (size_t i = 0; ok && i < ids.n; i++)
        if (!recs_find(&files, ids.v[i].path)) {
            ok = false;
            buf_printf(why, "%s was deleted", ids.v[i].path);
        }
    for (size_t i = 0; ok && i < files.n; i++) {
        const struct rec *now = &files.v[i], *id = recs_find(&ids, now->path);
        if (!id && strchr(now->path, '\n'))
            continue; /* not recorded: see cache_verify */
        if (!id) {
            ok = false;
            buf_printf(why, "%s was added", now->path);
        } else if (now->type != id->type ||
                   (now->type == 'f' && (now->size != id->size || now->mtime != id->mtime))) {
            /* copies keep size and mtime, not inode or ctime */
            ok = false;
            buf_printf(why, "%s was changed", now->path);
        } else if (now->type == 'f' && now->ino == id->ino) {
            /* published by a trillian that hard-linked OUT to the cache */
            ok = false;
            buf_printf(why, "%s is the cache's own file (a hard link)", now->path);
        }
    }
    recs_free(&files);
    recs_free(&ids);
    return ok;
}

int cache_commit(const char *cache, const char *tmp, const char *key)
{
    char *objects = path_join(cache, "objects");
    char *dest = cache_entry(cache, key);
    int rc = mkdir_p(objects, 0755);
    char *out = path_join(tmp, "out");
    make_readonly(out);
    free(out);
    ids_write(tmp); /* after the chmods, which change ctime */
    if (rc == 0)
        rc = test_hook("commit"); /* the entry complete, not yet in objects/ */
    if (rc == 0 && rename(tmp, dest) < 0) {
        if (errno == EEXIST || errno == ENOTEMPTY) {
            /* --force: replace the old entry */
            char *old = xasprintf("%s.old", tmp);
            rc = rename(dest, old);
            if (rc == 0)
                rc = rename(tmp, dest);
            rm_rf(old);
            free(old);
        } else {
            rc = -1;
        }
    }
    if (rc == 0)
        cache_touch(cache, key);
    free(objects);
    free(dest);
    return rc;
}

void cache_sweep_tmp(const char *cache)
{
    char *tmp = path_join(cache, "tmp");
    DIR *d = opendir(tmp);
    if (!d) {
        free(tmp);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *dot = strrchr(e->d_name, '.');
        if (!dot || e->d_name[0] == '.')
            continue;
        pid_t pid = (pid_t)atol(dot + 1);
        if (pid > 0 && (kill(pid, 0) == 0 || errno == EPERM))
            continue; /* its build is still running */
        char *p = path_join(tmp, e->d_name);
        rm_rf(p);
        free(p);
    }
    closedir(d);
    free(tmp);
}

int cache_prune(const char *cache, double older_than_days, bool all)
{
    int removed = 0;
    char *objects = path_join(cache, "objects");
    DIR *d = opendir(objects);
    time_t now = time(NULL);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char *entry = path_join(objects, e->d_name);
            char *used = path_join(entry, "used");
            struct stat sb;
            bool old = all;
            if (!all) {
                if (stat(used, &sb) < 0 && stat(entry, &sb) < 0)
                    old = true;
                else
                    old = difftime(now, sb.st_mtime) > older_than_days * 86400.0;
            }
            if (old && rm_rf(entry) == 0)
                removed++;
            free(used);
            free(entry);
        }
        closedir(d);
    }
    free(objects);
    if (all) {
        static const char *const extra[] = {"tmp", "keep", "last", "hashes", "bad", "locks"};
        for (size_t i = 0; i < ARRAY_LEN(extra); i++) {
            char *p = path_join(cache, extra[i]);
            rm_rf(p);
            free(p);
        }
    } else {
        cache_sweep_tmp(cache);
    }
    return removed;
}

static char *last_path(const char *cache, const struct stage *st)
{
    return xasprintf("%s/last/%s/%s", cache, st->recipe->name, st->name);
}

void cache_save_inputs(const char *cache, const struct stage *st)
{
    char *p = last_path(cache, st);
    char *dir = path_dirname(p);
    mkdir_p(dir, 0755);
    struct buf b = BUF_INIT;
    buf_printf(&b, "key %s\n", st->key);
    for (size_t i = 0; i < st->ninputs; i++)
        buf_printf(&b, "%s %s\n", st->inputs[i].hash, st->inputs[i].label);
    write_file_atomic(p, b.p, b.n, 0644);
    buf_free(&b);
    free(dir);
    free(p);
}

char *cache_load_inputs(const char *cache, const struct stage *st)
{
    char *p = last_path(cache, st);
    char *data = NULL;
    if (read_file(p, &data, NULL) < 0)
        data = NULL;
    free(p);
    return data;
}
