/* A cache entry's file list (entry_files.h). */
#define _GNU_SOURCE
#include "entry_files.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json_out.h"
#include "base/sha256.h"

bool efiles_path_ok(const char *p)
{
    if (!p || !*p || *p == '/' || strchr(p, '\n') || strlen(p) > EFILES_PATH_MAX)
        return false;
    for (const char *c = p; *c;) {
        size_t n = strcspn(c, "/");
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return false;
        c += n;
        if (*c == '/')
            c++;
        else
            break;
    }
    return p[strlen(p) - 1] != '/';
}

bool efiles_link_inside(const char *path, const char *target)
{
    if (!target || !*target || *target == '/')
        return false;
    long depth = 0; /* directories above the link, inside the entry */
    for (const char *c = path; *c; c++)
        depth += *c == '/';
    bool named = false;
    for (const char *c = target; *c;) {
        size_t n = strcspn(c, "/");
        if (n == 2 && c[0] == '.' && c[1] == '.') {
            if (named || --depth < 0)
                return false; /* ".." after a name could climb through a symlink */
        } else if (n > 0 && !(n == 1 && c[0] == '.')) {
            named = true;
        }
        c += n;
        if (*c == '/')
            c++;
    }
    return true;
}

static void push(struct efiles *f, const struct efile *e)
{
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 64;
        f->v = xrealloc(f->v, f->cap * sizeof *f->v);
    }
    f->v[f->n++] = *e;
}

static int scan(const char *top, const char *rel, struct efiles *out, char **why)
{
    char *dir = rel[0] ? path_join(top, rel) : xstrdup(top);
    struct strlist names = {0};
    int rc = dir_list(dir, &names);
    if (rc < 0)
        *why = xasprintf("cannot read %s: %s", dir, strerror(errno));
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        char *r = rel[0] ? xasprintf("%s/%s", rel, names.v[i]) : xstrdup(names.v[i]);
        char *full = path_join(dir, names.v[i]);
        struct stat sb;
        struct efile e = {.path = r, .mode = 0};
        if (lstat(full, &sb) < 0) {
            *why = xasprintf("cannot stat %s: %s", full, strerror(errno));
            rc = -1;
        } else if (!efiles_path_ok(r)) {
            *why = xasprintf("%s: a name an entry may not hold", r);
            rc = -1;
        } else {
            e.mode = sb.st_mode & 07777;
            e.mtime_ns = (long long)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec;
            if (S_ISREG(sb.st_mode)) {
                e.type = 'f';
                e.size = (long long)sb.st_size;
                if (sha256_file(full, e.sha) < 0) {
                    *why = xasprintf("cannot read %s: %s", full, strerror(errno));
                    rc = -1;
                }
            } else if (S_ISLNK(sb.st_mode)) {
                e.type = 'l';
                char buf[4096];
                ssize_t n = readlink(full, buf, sizeof buf - 1);
                buf[n > 0 ? n : 0] = 0;
                e.target = xstrdup(buf);
                if (n <= 0 || !efiles_link_inside(r, e.target)) {
                    *why = xasprintf("%s: a symlink pointing outside the entry (-> %s)", r,
                                     e.target);
                    rc = -1;
                }
            } else if (S_ISDIR(sb.st_mode)) {
                e.type = 'd';
            } else {
                *why = xasprintf("%s: neither a file, a symlink nor a directory", r);
                rc = -1;
            }
        }
        free(full);
        if (rc == 0) {
            push(out, &e);
            if (e.type == 'd')
                rc = scan(top, r, out, why);
        } else {
            free(e.path);
            free(e.target);
        }
    }
    strlist_free(&names);
    free(dir);
    return rc;
}

int efiles_cmp(const void *a, const void *b)
{
    return strcmp(((const struct efile *)a)->path, ((const struct efile *)b)->path);
}

int efiles_scan(const char *dir, struct efiles *out, char **why)
{
    memset(out, 0, sizeof *out);
    *why = NULL;
    int rc = scan(dir, "", out, why);
    if (out->n)
        qsort(out->v, out->n, sizeof *out->v, efiles_cmp);
    return rc;
}

static const char *type_name(char t)
{
    return t == 'f' ? "file" : t == 'l' ? "symlink" : "directory";
}

json_object *efiles_json(const struct efiles *f)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < f->n; i++) {
        const struct efile *e = &f->v[i];
        json_object *j = json_object_new_object();
        json_add_str(j, "path", e->path);
        json_add_str(j, "type", type_name(e->type));
        if (e->type == 'f') {
            char mode[8];
            snprintf(mode, sizeof mode, "%04o", e->mode);
            json_add_str(j, "mode", mode);
            json_object_object_add(j, "size", json_object_new_int64(e->size));
            json_add_str(j, "sha256", e->sha);
        } else if (e->type == 'l') {
            json_add_str(j, "target", e->target);
        }
        json_object_array_add(a, j);
    }
    return a;
}

static bool hex64(const char *s)
{
    size_t n = 0;
    for (; s && s[n]; n++)
        if (!isxdigit((unsigned char)s[n]) || isupper((unsigned char)s[n]))
            return false;
    return n == 64;
}

int efiles_from_json(json_object *arr, struct efiles *out, char **why)
{
    memset(out, 0, sizeof *out);
    *why = NULL;
    if (!arr || !json_object_is_type(arr, json_type_array)) {
        *why = xstrdup("its metadata has no \"files\" list");
        return -1;
    }
    size_t n = json_object_array_length(arr);
    for (size_t i = 0; i < n; i++) {
        json_object *j = json_object_array_get_idx(arr, i);
        const char *path = json_member_str(j, "path"), *type = json_member_str(j, "type");
        struct efile e = {0};
        if (!efiles_path_ok(path)) {
            *why = xasprintf("its metadata names a path an entry may not hold (%s)",
                             path ? path : "no path");
            efiles_free(out);
            return -1;
        }
        e.path = xstrdup(path);
        e.type = type && !strcmp(type, "file") ? 'f' : type && !strcmp(type, "symlink") ? 'l'
               : type && !strcmp(type, "directory") ? 'd' : 0;
        const char *sha = json_member_str(j, "sha256"), *mode = json_member_str(j, "mode");
        json_object *size = json_member(j, "size");
        const char *bad = NULL;
        if (!e.type) {
            bad = "an unknown type";
        } else if (e.type == 'f') {
            if (!hex64(sha) || !size || !json_object_is_type(size, json_type_int) ||
                json_object_get_int64(size) < 0 || !mode)
                bad = "a file without a sha256, size or mode";
            else {
                memcpy(e.sha, sha, 65);
                e.size = json_object_get_int64(size);
                e.mode = (unsigned)strtoul(mode, NULL, 8) & 07777;
            }
        } else if (e.type == 'l') {
            e.target = json_member_str(j, "target") ? xstrdup(json_member_str(j, "target"))
                                                    : NULL;
            if (!efiles_link_inside(path, e.target))
                bad = "a symlink pointing outside the entry";
        }
        if (!bad && out->n && strcmp(out->v[out->n - 1].path, path) >= 0)
            bad = "a path out of order or twice";
        if (bad) {
            *why = xasprintf("its metadata lists %s (%s)", bad, path);
            free(e.path);
            free(e.target);
            efiles_free(out);
            return -1;
        }
        push(out, &e);
    }
    return 0;
}

char *efiles_diff(const struct efiles *want, const struct efiles *have)
{
    size_t i = 0, j = 0;
    while (i < want->n || j < have->n) {
        int c = i == want->n ? 1 : j == have->n ? -1 : strcmp(want->v[i].path, have->v[j].path);
        if (c < 0)
            return xasprintf("%s: missing from the payload", want->v[i].path);
        if (c > 0)
            return xasprintf("%s: in the payload but not in its metadata", have->v[j].path);
        const struct efile *w = &want->v[i++], *h = &have->v[j++];
        if (w->type != h->type)
            return xasprintf("%s: a %s, not a %s", w->path, type_name(h->type),
                             type_name(w->type));
        if (w->type == 'f' && w->size != h->size)
            return xasprintf("%s: %lld bytes, not %lld", w->path, h->size, w->size);
        if (w->type == 'f' && strcmp(w->sha, h->sha))
            return xasprintf("%s: sha256 %.16s…, not %.16s…", w->path, h->sha, w->sha);
        if (w->type == 'f' && !(w->mode & 0111) != !(h->mode & 0111))
            return xasprintf("%s: mode %04o, not %04o", w->path, h->mode, w->mode);
        if (w->type == 'l' && strcmp(w->target, h->target))
            return xasprintf("%s: points to %s, not %s", w->path, h->target, w->target);
    }
    return NULL;
}

void efiles_sums(const struct efiles *have, struct buf *b)
{
    for (size_t i = 0; i < have->n; i++)
        if (have->v[i].type == 'f')
            buf_printf(b, "%s %lld %lld %s\n", have->v[i].sha, have->v[i].size,
                       have->v[i].mtime_ns, have->v[i].path);
}

long long efiles_bytes(const struct efiles *f)
{
    long long n = 0;
    for (size_t i = 0; i < f->n; i++)
        n += f->v[i].size;
    return n;
}

void efiles_free(struct efiles *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->v[i].path);
        free(f->v[i].target);
    }
    free(f->v);
    memset(f, 0, sizeof *f);
}
