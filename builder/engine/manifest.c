/* OUT/manifest.json: every artifact (path, size, sha256, stage, key), each
 * stage's wall time and cache status, and the recipe and overrides used. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "report.h"
#include "base/json_out.h"
#include "base/sha256.h"

/* ---- SUMS: the stage's own hashes of its outputs --------------------------
 * A stage's process hashes its outputs as it ends (stages run in parallel;
 * the manifest is written once, at the end, and the outputs may be
 * gigabytes). One line per regular file: "SHA256 SIZE MTIME_NS PATH". The
 * manifest trusts a line only while the file's size and mtime still match. */

static int sum_file(const char *dir, const char *rel, FILE *f)
{
    char *full = path_join(dir, rel);
    struct stat sb;
    char hex[65];
    int rc = lstat(full, &sb);
    if (rc == 0 && S_ISREG(sb.st_mode) && !strchr(rel, '\n')) {
        rc = sha256_file(full, hex);
        if (rc == 0)
            fprintf(f, "%s %lld %lld %s\n", hex, (long long)sb.st_size,
                    (long long)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec, rel);
    }
    free(full);
    return rc;
}

int manifest_sums_write(const char *outdir, const char *sums)
{
    struct strlist files = {0};
    char *tmp = xasprintf("%s.tmp", sums);
    FILE *f = fopen(tmp, "w");
    int rc = f && list_tree(outdir, &files) == 0 ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < files.n; i++)
        rc = sum_file(outdir, files.v[i], f);
    int e = errno;
    if (f && fclose(f) < 0 && rc == 0)
        rc = -1, e = errno;
    if (rc == 0 && rename(tmp, sums) < 0)
        rc = -1, e = errno;
    if (rc < 0)
        unlink(tmp);
    free(tmp);
    strlist_free(&files);
    errno = e;
    return rc;
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
        struct buf b = BUF_INIT;
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

/* The stage's own manifest (cx_write_manifest), if it is a JSON object;
 * anything else is a stage bug, left out. New object or NULL. */
static json_object *stage_details(const struct stage *st)
{
    char *path = path_join(st->outdir, "stage-manifest.json"), *data;
    json_object *d = NULL;
    if (read_file(path, &data, NULL) == 0) {
        d = json_tokener_parse(data);
        if (d && !json_object_is_type(d, json_type_object)) {
            json_object_put(d);
            d = NULL;
        }
        free(data);
    }
    free(path);
    return d;
}

/* A cached stage's times from the build that made its entry, as the
 * previous OUT/manifest.json (PREV, of the build at PREV_AT) has them: a
 * stage it built, or one it had kept already. NULL when PREV does not know
 * that stage with that key (another output directory, a new key). */
static json_object *kept_times(json_object *prev, const char *prev_at, const struct stage *st)
{
    json_object *stages = json_member(prev, "stages");
    size_t n = stages && json_object_is_type(stages, json_type_array)
                   ? json_object_array_length(stages) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *p = json_object_array_get_idx(stages, i);
        const char *name = json_member_str(p, "name"), *key = json_member_str(p, "key");
        const char *status = json_member_str(p, "status");
        if (!name || !key || !status || strcmp(name, st->name) || strcmp(key, st->key))
            continue;
        json_object *k = json_member(p, "kept");
        if (!strcmp(status, "cached") && k && json_object_is_type(k, json_type_object))
            return json_object_get(k);
        if (strcmp(status, "built") || !json_member(p, "start"))
            return NULL;
        k = json_object_new_object();
        json_object_object_add(k, "seconds", json_object_get(json_member(p, "wall_seconds")));
        json_object_object_add(k, "start", json_object_get(json_member(p, "start")));
        json_object_object_add(k, "end", json_object_get(json_member(p, "end")));
        if (prev_at)
            json_add_str(k, "built_at", prev_at);
        return k;
    }
    return NULL;
}

static json_object *stage_json(const struct recipe *r, const struct stage *st, int result,
                               json_object *prev)
{
    json_object *j = json_object_new_object();
    json_add_str(j, "name", st->name);
    char *kind = xasprintf("%s/%s", st->kind->section, st->kind->name);
    json_add_str(j, "kind", kind);
    free(kind);
    json_add_str(j, "key", st->key);
    json_add_str(j, "status", state_name(st));
    json_object_object_add(j, "cached", json_object_new_boolean(st->cached));
    if (st->subst_from)
        json_add_str(j, "substituted_from", st->subst_from);
    json_object_object_add(j, "wall_seconds",
                           json_fixed(st->state == ST_DONE && !st->cached ? st->t_end - st->t_start
                                                                         : 0.0, 3));
    json_object_object_add(j, "cpu_seconds",
                           json_fixed(st->state == ST_DONE && !st->cached ? st->cpu : 0.0, 3));
    char *reason = state_reason(st, result);
    if (reason)
        json_add_str(j, "reason", reason);
    free(reason);
    /* the timeline of the build report: seconds from the build's start */
    if (r->t_build > 0 && st->t_start > 0) {
        json_object_object_add(j, "start", json_fixed(st->t_start - r->t_build, 3));
        json_object_object_add(j, "end", json_fixed((st->t_end > st->t_start ? st->t_end
                                                                                : st->t_start) -
                                                         r->t_build, 3));
    }
    json_object_object_add(j, "needs", json_strlist(&st->deps));
    /* from the recipe, not the stage's details: a cached entry names its
       patches without their URLs, and must not be rebuilt to name them */
    json_object *ps = patch_sources_json(st);
    if (ps)
        json_object_object_add(j, "patch_sources", ps);
    json_object *kept = st->state == ST_DONE && st->cached
                            ? kept_times(prev, json_member_str(prev, "built_at"), st) : NULL;
    if (kept)
        json_object_object_add(j, "kept", kept);
    json_object *details = st->outdir ? stage_details(st) : NULL;
    if (details)
        json_object_object_add(j, "details", details);
    json_one_line(j);
    return j;
}

/* Every regular file of the built stages, with its size and sha256 (from
 * the stage's sums while they hold); the images' files also go to IMG. */
static json_object *artifacts_json(const struct recipe *r, struct sums *img)
{
    json_object *a = json_object_new_array();
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
            bool ok = lstat(full, &sb) == 0 && S_ISREG(sb.st_mode) &&
                      (sums_lookup(&sums, files.v[j], &sb, hex) || hash_path(full, hex, NULL) == 0);
            free(full);
            if (!ok)
                continue;
            char *rel = xasprintf("%s/%s", st->name, files.v[j]);
            json_object *e = json_object_new_object();
            json_add_str(e, "path", rel);
            json_object_object_add(e, "size", json_object_new_int64((int64_t)sb.st_size));
            json_add_str(e, "sha256", hex);
            json_add_str(e, "stage", st->name);
            json_add_str(e, "key", st->key);
            json_one_line(e);
            json_object_array_add(a, e);
            /* sha256sum escapes names with a backslash or newline; none
             * of Trillian's has one. The stage's own manifest is not an
             * image file. */
            if (is_image_stage(st) && strcmp(files.v[j], "stage-manifest.json") &&
                !strpbrk(rel, "\\\n")) {
                if (img->n == img_cap) {
                    img_cap = img_cap ? img_cap * 2 : 16;
                    img->v = xrealloc(img->v, img_cap * sizeof *img->v);
                }
                img->v[img->n] = (struct sum){.path = rel};
                memcpy(img->v[img->n++].hex, hex, 65);
                rel = NULL;
            }
            free(rel);
        }
        sums_free(&sums);
        strlist_free(&files);
    }
    return a;
}

/* Each built image's main file, in the recipe's order; the first entry is
 * the primary image. */
static json_object *images_json(const struct recipe *r, const struct sums *img)
{
    json_object *a = json_object_new_array();
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
        const char *hex = image_sum(img, rel);
        json_object *e = json_object_new_object();
        json_add_str(e, "stage", st->name);
        json_add_str(e, "kind", st->kind->name);
        json_add_str(e, "path", rel);
        if (hex)
            json_add_str(e, "sha256", hex);
        json_object_object_add(e, "primary", json_object_new_boolean(idx == 0));
        json_one_line(e);
        json_object_array_add(a, e);
        free(rel);
        free(file);
    }
    return a;
}

int manifest_write(const struct recipe *r, const struct build_opts *o, int result)
{
    json_object *m = json_object_new_object();
    json_add_str(m, "trillian", TRILLIAN_VERSION);
    char *abs = path_absolute(NULL, r->file);
    json_add_str(m, "recipe", abs);
    free(abs);
    json_add_str(m, "name", r->name);
    json_add_str(m, "arch", r->arch);
    json_object_object_add(m, "source_date_epoch", json_object_new_int64(r->source_date_epoch));
    json_object_object_add(m, "result", json_object_new_int(result));
    json_object *overrides = json_strlist(&r->overrides);
    json_one_line(overrides);
    json_object_object_add(m, "overrides", overrides);
    /* when this build ran, for the stages a later no-op build keeps */
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_add_str(m, "built_at", when);
    char *prev_path = path_join(o->out, "manifest.json");
    json_object *prev = json_object_from_file(prev_path);
    free(prev_path);
    json_object *stages = json_object_new_array();
    for (size_t i = 0; i < r->nstages; i++)
        if (r->stages[i]->wanted)
            json_object_array_add(stages, stage_json(r, r->stages[i], result, prev));
    json_object_put(prev);
    json_object_object_add(m, "stages", stages);
    json_object_object_add(m, "components", report_components(stages));
    struct sums img = {0};
    json_object_object_add(m, "artifacts", artifacts_json(r, &img));
    json_object_object_add(m, "images", images_json(r, &img));
    char *doc = xasprintf("%s\n", json_object_to_json_string_ext(m, JSON_FLAGS));
    json_object_put(m);
    char *path = path_join(o->out, "manifest.json");
    int rc = write_file_atomic(path, doc, strlen(doc), 0644);
    if (rc == 0 && write_sha256sums(o->out, &img) < 0)
        rc = -1;
    sums_free(&img);
    free(path);
    free(doc);
    return rc;
}
