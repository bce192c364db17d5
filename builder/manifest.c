/* OUT/manifest.json: every artifact (path, size, sha256, stage, key), each
 * stage's wall time and cache status, and the recipe and overrides used. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"
#include "sha256.h"

/* ---- SUMS: the stage's own hashes of its outputs --------------------------
 * A stage's process hashes its outputs as it ends (stages run in parallel;
 * the manifest is written once, at the end, and the outputs may be
 * gigabytes). One line per regular file: "SHA256 SIZE MTIME_NS PATH". The
 * manifest trusts a line only while the file's size and mtime still match. */

static void sum_file(const char *dir, const char *rel, FILE *f)
{
    char *full = path_join(dir, rel);
    struct stat sb;
    char hex[65];
    if (lstat(full, &sb) == 0 && S_ISREG(sb.st_mode) && !strchr(rel, '\n') &&
        sha256_file(full, hex) == 0)
        fprintf(f, "%s %lld %lld %s\n", hex, (long long)sb.st_size,
                (long long)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec, rel);
    free(full);
}

void manifest_sums_write(const char *outdir, const char *sums)
{
    struct strlist files = {0};
    char *tmp = xasprintf("%s.tmp", sums);
    FILE *f = fopen(tmp, "w");
    if (f && list_tree(outdir, &files) == 0)
        for (size_t i = 0; i < files.n; i++)
            sum_file(outdir, files.v[i], f);
    if (f && fclose(f) == 0)
        rename(tmp, sums);
    else
        unlink(tmp);
    free(tmp);
    strlist_free(&files);
}

struct sum {
    char *path;
    char hex[65];
    long long size, mtime_ns;
};
struct sums {
    struct sum *v;
    size_t n;
};

static int cmp_sum(const void *a, const void *b)
{
    return strcmp(((const struct sum *)a)->path, ((const struct sum *)b)->path);
}

/* The sums file beside OUTDIR, sorted by path (empty if there is none). */
static void sums_load(const char *outdir, struct sums *s)
{
    memset(s, 0, sizeof *s);
    char *p = xasprintf("%s/../sums", outdir), *text = NULL;
    if (read_file(p, &text, NULL) == 0) {
        size_t cap = 0;
        for (char *l = text; *l;) {
            char *nl = strchr(l, '\n');
            if (nl)
                *nl = 0;
            struct sum e = {0};
            int off = 0;
            if (sscanf(l, "%64s %lld %lld %n", e.hex, &e.size, &e.mtime_ns, &off) == 3 &&
                off > 0 && l[off]) {
                if (s->n == cap) {
                    cap = cap ? cap * 2 : 64;
                    s->v = xrealloc(s->v, cap * sizeof *s->v);
                }
                e.path = xstrdup(l + off);
                s->v[s->n++] = e;
            }
            if (!nl)
                break;
            l = nl + 1;
        }
        if (s->n)
            qsort(s->v, s->n, sizeof *s->v, cmp_sum);
    }
    free(text);
    free(p);
}

static void sums_free(struct sums *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].path);
    free(s->v);
}

/* HEX of REL from the sums if its line still describes the file. */
static bool sums_lookup(const struct sums *s, const char *rel, const struct stat *sb,
                        char hex[65])
{
    struct sum key = {.path = (char *)rel};
    const struct sum *e = s->n ? bsearch(&key, s->v, s->n, sizeof *s->v, cmp_sum) : NULL;
    if (!e || e->size != (long long)sb->st_size ||
        e->mtime_ns != (long long)sb->st_mtim.tv_sec * 1000000000LL + sb->st_mtim.tv_nsec)
        return false;
    memcpy(hex, e->hex, 65);
    return true;
}

static const char *state_name(const struct stage *st)
{
    switch (st->state) {
    case ST_DONE: return st->cached ? "cached" : "built";
    case ST_FAILED: return "failed";
    case ST_SKIPPED: return "skipped";
    case ST_BLOCKED: return "blocked";
    case ST_RUNNING: return "interrupted";
    default: return "not-started";
    }
}

/* Why a stage did not end built or cached, in a line (NULL if it did). */
static char *state_reason(const struct stage *st, int result)
{
    switch (st->state) {
    case ST_DONE: return NULL;
    case ST_FAILED:
    case ST_SKIPPED: return xstrdup(st->why ? st->why : "no reason recorded");
    case ST_BLOCKED:
        return xasprintf("blocked by '%s' (%s)", st->blocker ? st->blocker->name : "?",
                         st->blocker && st->blocker->state == ST_SKIPPED ? "skipped" : "failed");
    default:
        return xstrdup(result == 130 ? "the build was interrupted first"
                                     : "the build stopped at a failure first (--keep-going "
                                       "runs what does not need it)");
    }
}

/* The file an images stage is for (the disk's NAME.img, the ISO, a bundle's
 * tarball): its first declared output that is a regular file named after
 * the stage, else its first declared output (a netboot tree). New string,
 * relative to the stage's output directory; NULL if it declares none. */
static char *image_main_file(const struct stage *st)
{
    size_t n = strlen(st->name);
    for (size_t i = 0; st->outdir && i < st->outputs.n; i++) {
        const char *o = st->outputs.v[i];
        char *full = path_join(st->outdir, o);
        struct stat sb;
        bool reg = lstat(full, &sb) == 0 && S_ISREG(sb.st_mode);
        free(full);
        if (reg && !strncmp(o, st->name, n) && (o[n] == '.' || o[n] == 0))
            return xstrdup(o);
    }
    return st->outputs.n ? xstrdup(st->outputs.v[0]) : NULL;
}

static bool is_image_stage(const struct stage *st)
{
    return !strcmp(st->kind->section, "images");
}

/* OUT/SHA256SUMS from the images' files (sorted by path), or none. */
static int write_sha256sums(const char *out, struct sums *img)
{
    char *path = path_join(out, "SHA256SUMS");
    int rc = 0;
    if (img->n) {
        qsort(img->v, img->n, sizeof *img->v, cmp_sum);
        struct buf b = {0};
        for (size_t i = 0; i < img->n; i++)
            buf_printf(&b, "%s  %s\n", img->v[i].hex, img->v[i].path);
        rc = write_file_atomic(path, b.p, b.n, 0644);
        buf_free(&b);
    } else if (unlink(path) < 0 && errno != ENOENT) {
        rc = -1;
    }
    free(path);
    return rc;
}

/* The sha256 of REL (relative to OUT) among the images' files, or NULL. */
static const char *image_sum(const struct sums *img, const char *rel)
{
    for (size_t i = 0; i < img->n; i++)
        if (!strcmp(img->v[i].path, rel))
            return img->v[i].hex;
    return NULL;
}

int manifest_write(const struct recipe *r, const struct build_opts *o, int result)
{
    struct buf b = {0};
    buf_puts(&b, "{\n  \"trillian\": ");
    json_string(&b, TRILLIAN_VERSION);
    buf_puts(&b, ",\n  \"recipe\": ");
    char *abs = path_absolute(NULL, r->file);
    json_string(&b, abs);
    free(abs);
    buf_puts(&b, ",\n  \"name\": ");
    json_string(&b, r->name);
    buf_puts(&b, ",\n  \"arch\": ");
    json_string(&b, r->arch);
    buf_printf(&b, ",\n  \"source_date_epoch\": %lld,\n  \"result\": %d,\n  \"overrides\": [",
               r->source_date_epoch, result);
    for (size_t i = 0; i < r->overrides.n; i++) {
        buf_puts(&b, i ? ", " : "");
        json_string(&b, r->overrides.v[i]);
    }
    buf_puts(&b, "],\n  \"stages\": [");
    bool first = true;
    for (size_t i = 0; i < r->nstages; i++) {
        const struct stage *st = r->stages[i];
        if (!st->wanted)
            continue;
        buf_puts(&b, first ? "\n    {" : ",\n    {");
        first = false;
        buf_puts(&b, "\"name\": ");
        json_string(&b, st->name);
        buf_puts(&b, ", \"kind\": ");
        char *kind = xasprintf("%s/%s", st->kind->section, st->kind->name);
        json_string(&b, kind);
        free(kind);
        buf_printf(&b, ", \"key\": \"%s\", \"status\": \"%s\", \"cached\": %s, "
                   "\"wall_seconds\": %.3f", st->key, state_name(st), st->cached ? "true" : "false",
                   st->state == ST_DONE && !st->cached ? st->t_end - st->t_start : 0.0);
        char *reason = state_reason(st, result);
        if (reason) {
            buf_puts(&b, ", \"reason\": ");
            json_string(&b, reason);
            free(reason);
        }
        /* the timeline of the build report: seconds from the build's start */
        if (r->t_build > 0 && st->t_start > 0)
            buf_printf(&b, ", \"start\": %.3f, \"end\": %.3f", st->t_start - r->t_build,
                       (st->t_end > st->t_start ? st->t_end : st->t_start) - r->t_build);
        buf_puts(&b, ", \"needs\": [");
        for (size_t d = 0; d < st->deps.n; d++) {
            buf_puts(&b, d ? ", " : "");
            json_string(&b, st->deps.v[d]);
        }
        buf_puts(&b, "]");
        if (st->outdir) {
            char *details = path_join(st->outdir, "stage-manifest.json");
            char *data;
            if (read_file(details, &data, NULL) == 0) {
                /* trust only an object; anything else is a stage bug */
                const char *p = data;
                while (*p == ' ' || *p == '\n' || *p == '\t')
                    p++;
                if (*p == '{') {
                    size_t n = strlen(data);
                    while (n && (data[n - 1] == '\n' || data[n - 1] == ' '))
                        data[--n] = 0;
                    buf_printf(&b, ", \"details\": %s", data);
                }
                free(data);
            }
            free(details);
        }
        buf_puts(&b, "}");
    }
    buf_puts(&b, "\n  ],\n  \"artifacts\": [");
    first = true;
    struct sums img = {0};
    size_t img_cap = 0;
    for (size_t i = 0; i < r->nstages; i++) {
        const struct stage *st = r->stages[i];
        if (!st->wanted || st->state != ST_DONE || !st->outdir)
            continue;
        struct strlist files = {0};
        list_tree(st->outdir, &files);
        struct sums sums;
        sums_load(st->outdir, &sums);
        for (size_t j = 0; j < files.n; j++) {
            char *full = path_join(st->outdir, files.v[j]);
            struct stat sb;
            char hex[65] = "";
            if (lstat(full, &sb) < 0 || !S_ISREG(sb.st_mode) ||
                (!sums_lookup(&sums, files.v[j], &sb, hex) && hash_path(full, hex) < 0)) {
                free(full);
                continue;
            }
            free(full);
            char *rel = xasprintf("%s/%s", st->name, files.v[j]);
            buf_puts(&b, first ? "\n    {" : ",\n    {");
            first = false;
            buf_puts(&b, "\"path\": ");
            json_string(&b, rel);
            buf_printf(&b, ", \"size\": %lld, \"sha256\": \"%s\", \"stage\": ", (long long)sb.st_size,
                       hex);
            json_string(&b, st->name);
            buf_printf(&b, ", \"key\": \"%s\"}", st->key);
            /* sha256sum escapes names with a backslash or newline; none
             * of Trillian's has one. The stage's own manifest is not an
             * image file. */
            if (is_image_stage(st) && strcmp(files.v[j], "stage-manifest.json") &&
                !strpbrk(rel, "\\\n")) {
                if (img.n == img_cap) {
                    img_cap = img_cap ? img_cap * 2 : 16;
                    img.v = xrealloc(img.v, img_cap * sizeof *img.v);
                }
                img.v[img.n] = (struct sum){.path = rel};
                memcpy(img.v[img.n++].hex, hex, 65);
                rel = NULL;
            }
            free(rel);
        }
        sums_free(&sums);
        strlist_free(&files);
    }
    buf_puts(&b, "\n  ],\n  \"images\": [");
    /* each built image's main file, in the recipe's order; the first
     * entry of `images` is the primary image */
    first = true;
    for (int idx = 0;; idx++) {
        const struct stage *st = NULL;
        bool more = false;
        for (size_t i = 0; i < r->nstages; i++)
            if (is_image_stage(r->stages[i]) && r->stages[i]->cfg) {
                int at = config_setting_index(r->stages[i]->cfg);
                more |= at > idx;
                if (at == idx)
                    st = r->stages[i];
            }
        if (!st && !more)
            break;
        if (!st || !st->wanted || st->state != ST_DONE)
            continue;
        char *file = image_main_file(st);
        if (!file)
            continue;
        char *rel = xasprintf("%s/%s", st->name, file);
        const char *hex = image_sum(&img, rel);
        buf_puts(&b, first ? "\n    {" : ",\n    {");
        first = false;
        buf_puts(&b, "\"stage\": ");
        json_string(&b, st->name);
        buf_puts(&b, ", \"kind\": ");
        json_string(&b, st->kind->name);
        buf_puts(&b, ", \"path\": ");
        json_string(&b, rel);
        if (hex)
            buf_printf(&b, ", \"sha256\": \"%s\"", hex);
        buf_printf(&b, ", \"primary\": %s}", idx == 0 ? "true" : "false");
        free(rel);
        free(file);
    }
    buf_puts(&b, "\n  ]\n}\n");
    char *path = path_join(o->out, "manifest.json");
    int rc = write_file_atomic(path, b.p, b.n, 0644);
    if (rc == 0 && write_sha256sums(o->out, &img) < 0)
        rc = -1;
    sums_free(&img);
    free(path);
    buf_free(&b);
    return rc;
}
