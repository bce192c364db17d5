/* Cache keys: every input of a stage is reduced to a labelled sha256, and
 * the key is the sha256 of those lines. File hashes are remembered by
 * (path, size, mtime, inode) in CACHE/hashes so a warm plan does not re-read
 * large tarballs. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine.h"
#include "base/run_command.h"
#include "base/sha256.h"

struct memo {
    char *path;
    long long size, mtime_s, mtime_ns;
    unsigned long long ino;
    char hex[65];
    struct memo *next;
};

#define MEMO_BUCKETS 1024
static struct memo *memo[MEMO_BUCKETS];
static char *memo_file;
static bool memo_dirty;

static unsigned bucket(const char *s)
{
    unsigned h = 5381;
    while (*s)
        h = h * 33 + (unsigned char)*s++;
    return h % MEMO_BUCKETS;
}

static struct memo *memo_find(const char *path)
{
    for (struct memo *m = memo[bucket(path)]; m; m = m->next)
        if (strcmp(m->path, path) == 0)
            return m;
    return NULL;
}

static struct memo *memo_put(const char *path)
{
    struct memo *m = memo_find(path);
    if (!m) {
        m = xcalloc(1, sizeof *m);
        m->path = xstrdup(path);
        unsigned b = bucket(path);
        m->next = memo[b];
        memo[b] = m;
    }
    return m;
}

void key_set_cache_dir(const char *cache_dir)
{
    free(memo_file);
    memo_file = path_join(cache_dir, "hashes");
    char *data;
    if (read_file(memo_file, &data, NULL) < 0)
        return;
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char hex[65];
        long long size, ms, mns;
        unsigned long long ino;
        int off = 0;
        if (sscanf(line, "%64s %lld %lld %lld %llu %n", hex, &size, &ms, &mns, &ino, &off) != 5 ||
            !off || strlen(hex) != 64)
            continue;
        struct memo *m = memo_put(line + off);
        memcpy(m->hex, hex, 65);
        m->size = size;
        m->mtime_s = ms;
        m->mtime_ns = mns;
        m->ino = ino;
    }
    free(data);
}

void key_save_memo(void)
{
    if (!memo_file || !memo_dirty)
        return;
    struct buf b = BUF_INIT;
    for (size_t i = 0; i < MEMO_BUCKETS; i++)
        for (struct memo *m = memo[i]; m; m = m->next)
            if (m->hex[0])
                buf_printf(&b, "%s %lld %lld %lld %llu %s\n", m->hex, m->size, m->mtime_s,
                           m->mtime_ns, m->ino, m->path);
    char *dir = path_dirname(memo_file);
    mkdir_p(dir, 0755);
    free(dir);
    write_file_atomic(memo_file, b.p, b.n, 0644);
    buf_free(&b);
    memo_dirty = false;
}

/* The memo entry for KEY if it was made for a file with SB's identity. */
static bool memo_lookup(const char *key, const struct stat *sb, char hex[65])
{
    struct memo *m = memo_find(key);
    if (!m || m->size != (long long)sb->st_size || m->mtime_s != (long long)sb->st_mtim.tv_sec ||
        m->mtime_ns != (long long)sb->st_mtim.tv_nsec || m->ino != (unsigned long long)sb->st_ino)
        return false;
    memcpy(hex, m->hex, 65);
    return true;
}

static void memo_store(const char *key, const struct stat *sb, const char hex[65])
{
    struct memo *m = memo_put(key);
    memcpy(m->hex, hex, 65);
    m->size = (long long)sb->st_size;
    m->mtime_s = (long long)sb->st_mtim.tv_sec;
    m->mtime_ns = (long long)sb->st_mtim.tv_nsec;
    m->ino = (unsigned long long)sb->st_ino;
    memo_dirty = true;
}

static int hash_file_memo(const char *path, const struct stat *sb, char hex[65])
{
    char *abs = path_absolute(NULL, path);
    int rc = 0;
    if (!memo_lookup(abs, sb, hex)) {
        rc = sha256_file(path, hex);
        if (rc == 0)
            memo_store(abs, sb, hex);
    }
    free(abs);
    return rc < 0 ? -1 : 0;
}

/* A walk of one input tree, within its bounds (engine.h). */
struct walk {
    const char *root;
    int max_depth;
    size_t max_entries, left; /* left: entries still allowed */
    char *why;                /* why it stopped */
};

/* One line per entry: type, permission bits, relative path, content.
 * Symlinks are hashed by their target, never followed, so a link to an
 * ancestor cannot make the walk go round. */
static int hash_tree_into(struct walk *w, const char *rel, int depth, struct sha256 *s)
{
    char *dir = rel[0] ? path_join(w->root, rel) : xstrdup(w->root);
    struct strlist names = {0};
    int rc = dir_list_max(dir, &names, w->left);
    if (rc < 0 && errno == E2BIG)
        w->why = xasprintf("the tree %s has more than %zu entries (expected at most %zu files, "
                           "directories and links: an input tree is hashed whole into the "
                           "stage's key before anything runs; name a smaller directory, or "
                           "pack the tree into a tarball and name that)", w->root,
                           w->max_entries, w->max_entries);
    else if (rc < 0)
        w->why = xasprintf("cannot read %s: %s (expected an existing, readable path)", dir,
                           strerror(errno));
    else if (names.n && depth >= w->max_depth) {
        w->why = xasprintf("the tree %s is more than %d directories deep (%s has entries at "
                           "depth %d; expected at most %d: a directory mounted inside itself "
                           "never ends; name a shallower tree, or pack it into a tarball and "
                           "name that)", w->root, w->max_depth, dir, depth + 1, w->max_depth);
        rc = -1;
    }
    free(dir);
    if (rc < 0) {
        strlist_free(&names);
        return -1;
    }
    w->left -= names.n;
    for (size_t i = 0; i < names.n && rc == 0; i++) {
        char *r = rel[0] ? xasprintf("%s/%s", rel, names.v[i]) : xstrdup(names.v[i]);
        char *full = path_join(w->root, r);
        struct stat sb;
        struct buf line = BUF_INIT;
        if (lstat(full, &sb) < 0) {
            rc = -1;
        } else if (S_ISDIR(sb.st_mode)) {
            buf_printf(&line, "d %o %s\n", sb.st_mode & 07777, r);
            sha256_update(s, line.p, line.n);
            rc = hash_tree_into(w, r, depth + 1, s);
        } else if (S_ISLNK(sb.st_mode)) {
            char target[4096];
            ssize_t n = readlink(full, target, sizeof target - 1);
            if (n < 0)
                rc = -1;
            else {
                target[n] = 0;
                buf_printf(&line, "l %s -> %s\n", r, target);
                sha256_update(s, line.p, line.n);
            }
        } else if (S_ISREG(sb.st_mode)) {
            char hex[65];
            if (hash_file_memo(full, &sb, hex) < 0)
                rc = -1;
            else {
                buf_printf(&line, "f %o %s %s\n", sb.st_mode & 07777, r, hex);
                sha256_update(s, line.p, line.n);
            }
        } else {
            buf_printf(&line, "o %o %s\n", sb.st_mode, r);
            sha256_update(s, line.p, line.n);
        }
        if (rc < 0 && !w->why)
            w->why = xasprintf("cannot read %s: %s (expected an existing, readable path)", full,
                               strerror(errno));
        buf_free(&line);
        free(full);
        free(r);
    }
    strlist_free(&names);
    return rc;
}

int hash_tree_bounded(const char *dir, int max_depth, size_t max_entries, char hex[65],
                      char **why)
{
    struct walk w = {dir, max_depth, max_entries, max_entries, NULL};
    struct sha256 s;
    sha256_init(&s);
    if (hash_tree_into(&w, "", 0, &s) < 0) {
        sha256_discard(&s);
        if (why)
            *why = w.why;
        else
            free(w.why);
        return -1;
    }
    sha256_final_hex(&s, hex);
    return 0;
}

int hash_path(const char *path, char hex[65], char **why)
{
    struct stat sb;
    if (stat(path, &sb) < 0) {
        if (why)
            *why = xasprintf("cannot read %s: %s (expected an existing, readable path)", path,
                             strerror(errno));
        return -1;
    }
    if (S_ISDIR(sb.st_mode))
        return hash_tree_bounded(path, TREE_MAX_DEPTH, TREE_MAX_ENTRIES, hex, why);
    if (!S_ISREG(sb.st_mode)) {
        errno = EINVAL; /* a FIFO or device: reading it may never end */
        if (why)
            *why = xasprintf("%s is not a regular file or a directory", path);
        return -1;
    }
    if (hash_file_memo(path, &sb, hex) == 0)
        return 0;
    if (why)
        *why = xasprintf("cannot read %s: %s (expected an existing, readable path)", path,
                         strerror(errno));
    return -1;
}

/* First line of `program --version`, or "" if it has none. */
static char *version_line(const char *abs)
{
    const char *argv[] = {abs, "--version", NULL};
    char *out = NULL;
    if (run_capture_quiet(argv, &out) != 0) {
        free(out);
        return xstrdup("");
    }
    out[strcspn(out, "\n")] = 0;
    return out;
}

struct toolmemo {
    char *program;
    bool asked;
    char hex[65];
    int rc;
};
static struct toolmemo *tools;
static size_t ntools;

int tool_version_hash(const char *program, bool ask_version, char hex[65])
{
    for (size_t i = 0; i < ntools; i++)
        if (strcmp(tools[i].program, program) == 0 && tools[i].asked == ask_version) {
            memcpy(hex, tools[i].hex, 65);
            return tools[i].rc;
        }
    int rc = -1;
    char *abs = run_find_program(program, NULL, RUN_FIND_SBIN);
    if (abs) {
        char fh[65];
        struct stat sb;
        /* The version line is remembered with the program file's identity
         * (as file hashes are): asking every tool costs a warm plan a
         * second, most of it in wrappers such as pyenv's shims. */
        char *vkey = xasprintf("version:%s", abs);
        if (stat(abs, &sb) != 0) {
            /* rc stays -1 */
        } else if (ask_version && memo_lookup(vkey, &sb, hex)) {
            rc = 0;
        } else if (hash_file_memo(abs, &sb, fh) == 0) {
            char *ver = ask_version ? version_line(abs) : xstrdup("");
            char *text = xasprintf("%s\n%s\n", fh, ver);
            sha256_hex(text, strlen(text), hex);
            free(text);
            free(ver);
            if (ask_version)
                memo_store(vkey, &sb, hex);
            rc = 0;
        }
        free(vkey);
        free(abs);
    }
    tools = xrealloc(tools, (ntools + 1) * sizeof *tools);
    tools[ntools].program = xstrdup(program);
    tools[ntools].asked = ask_version;
    memcpy(tools[ntools].hex, rc == 0 ? hex : "", rc == 0 ? 65 : 1);
    tools[ntools].rc = rc;
    ntools++;
    return rc;
}

void stage_add_input(struct stage *st, const char *label, const char *hash)
{
    if (st->ninputs == st->cap_inputs) {
        st->cap_inputs = st->cap_inputs ? st->cap_inputs * 2 : 8;
        st->inputs = xrealloc(st->inputs, st->cap_inputs * sizeof *st->inputs);
    }
    st->inputs[st->ninputs].label = xstrdup(label);
    memcpy(st->inputs[st->ninputs].hash, hash, 64);
    st->inputs[st->ninputs].hash[64] = 0;
    st->ninputs++;
}

void keys_compute(struct recipe *r)
{
    for (size_t i = 0; i < r->nstages; i++) {
        struct stage *st = r->stages[i];
        if (st->key_ok)
            continue;
        for (size_t d = 0; d < st->deps.n; d++) {
            struct stage *dep = r->stages[st->dep_idx[d]];
            char *label = xasprintf("dep:%s", dep->name);
            stage_add_input(st, label, dep->key);
            free(label);
        }
        struct sha256 s;
        sha256_init(&s);
        sha256_update(&s, "trillian-key-1\n", 15);
        for (size_t j = 0; j < st->ninputs; j++) {
            sha256_update(&s, st->inputs[j].label, strlen(st->inputs[j].label));
            sha256_update(&s, "=", 1);
            sha256_update(&s, st->inputs[j].hash, 64);
            sha256_update(&s, "\n", 1);
        }
        sha256_final_hex(&s, st->key);
        st->key_ok = true;
    }
}
