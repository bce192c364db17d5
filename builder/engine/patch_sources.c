/* Where a stage's patches come from, for OUT/manifest.json's
 * "patch_sources": one entry per origin (a forge repository at a commit, a
 * download directory, Trillian's own data, a local directory) with how many
 * patches come from it. Read from the recipe's settings that the stage's
 * kind declares as patch settings (stage.h, patch_fields) and the downloads
 * its declare() gave st_remote under them: what the engine knows at build
 * time, so a cached stage gets it too without its output or key changing
 * (its stage-manifest.json names patches by file name and sha256 only). */
#define _GNU_SOURCE
#include <ctype.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_out.h"
#include "engine.h"

/* REF as the origin shows it: a commit id cut to 12 digits (as git's short
 * ids, and long enough to find it), a branch or tag name as it is. */
static char *ref12(const char *ref, size_t n)
{
    bool hex = n > 12;
    for (size_t i = 0; hex && i < n; i++)
        hex = isxdigit((unsigned char)ref[i]);
    return xstrndup(ref, hex ? 12 : n);
}

char *patch_origin_url(const char *url)
{
    const char *s = strstr(url, "://");
    s = s ? s + 3 : url;
    char *t = xstrndup(s, strcspn(s, "?#"));
    struct strlist p = {0}; /* host, then the path's parts */
    for (char *c = t, *e; c; c = e ? e + 1 : NULL) {
        e = strchr(c, '/');
        strlist_push_owned(&p, xstrndup(c, e ? (size_t)(e - c) : strlen(c)));
    }
    char *r = NULL;
    /* forges' raw files: the repository and the commit say whose patches
       they are; the rest of the path is only where in the tree */
    if (p.n >= 5 && !strcmp(p.v[0], "raw.githubusercontent.com")) {
        char *ref = ref12(p.v[3], strlen(p.v[3]));
        r = xasprintf("%s/%s@%s", p.v[1], p.v[2], ref);
        free(ref);
    } else if (p.n >= 6 && !strcmp(p.v[0], "github.com") &&
               (!strcmp(p.v[3], "raw") || !strcmp(p.v[3], "blob"))) {
        char *ref = ref12(p.v[4], strlen(p.v[4]));
        r = xasprintf("%s/%s@%s", p.v[1], p.v[2], ref);
        free(ref);
    } else if (p.n == 5 && !strcmp(p.v[0], "github.com") &&
               (!strcmp(p.v[3], "commit") || !strcmp(p.v[3], "compare"))) {
        /* a commit's or a range's diff: ".../commit/C.patch", ".../compare/A...B.diff" */
        char *v = p.v[4], *dots;
        if (str_ends(v, ".patch") || str_ends(v, ".diff"))
            *strrchr(v, '.') = 0;
        if ((dots = strstr(v, "...")))
            *dots = 0;
        char *a = ref12(v, strlen(v)), *b = dots ? ref12(dots + 3, strlen(dots + 3)) : NULL;
        r = xasprintf("%s/%s@%s%s%s", p.v[1], p.v[2], a, b ? "..." : "", b ? b : "");
        free(a);
        free(b);
    } else {
        /* GitLab and its kin: HOST/GROUP/.../REPO/-/raw/REF/PATH */
        for (size_t i = 2; !r && i + 3 < p.n; i++)
            if (!strcmp(p.v[i], "-") && !strcmp(p.v[i + 1], "raw")) {
                struct buf b = BUF_INIT;
                for (size_t j = 0; j < i; j++)
                    buf_printf(&b, "%s%s", j ? "/" : "", p.v[j]);
                char *ref = ref12(p.v[i + 2], strlen(p.v[i + 2]));
                r = xasprintf("%s@%s", b.p, ref);
                free(ref);
                buf_free(&b);
            }
    }
    if (!r) { /* any other URL: its host and directory, without the scheme */
        char *slash = strrchr(t, '/');
        r = slash && slash != t ? xstrndup(t, (size_t)(slash - t)) : xstrdup(t);
    }
    strlist_free(&p);
    free(t);
    return r;
}

char *patch_origin_dir(const char *dir, const char *data_dir)
{
    char *d = realpath(dir, NULL), *data = data_dir ? realpath(data_dir, NULL) : NULL;
    if (!d)
        d = xstrdup(dir);
    size_t n = data ? strlen(data) : 0;
    char *r;
    if (data && !strncmp(d, data, n) && (d[n] == '/' || !d[n]))
        r = d[n] ? xasprintf("Trillian (%s)", d + n + 1) : xstrdup("Trillian");
    else
        r = xasprintf("local (%s)", d);
    free(d);
    free(data);
    return r;
}

struct source {
    const char *setting;
    char *series; /* the manifest that lists them, or NULL */
    char *origin;
    long long n;  /* -1: a directory, not counted */
};
struct sources {
    struct source *v;
    size_t n;
};

/* One more patch from ORIGIN (taken); entries stay in first-seen order. */
static void tally(struct sources *s, const char *setting, const char *series, char *origin,
                  bool counted)
{
    for (size_t i = 0; i < s->n; i++) {
        struct source *e = &s->v[i];
        if (!strcmp(e->setting, setting) && !strcmp(e->origin, origin) &&
            !strcmp(e->series ? e->series : "", series ? series : "")) {
            if (e->n >= 0 && counted)
                e->n++;
            free(origin);
            return;
        }
    }
    s->v = xrealloc(s->v, (s->n + 1) * sizeof *s->v);
    s->v[s->n++] = (struct source){setting, series ? xstrdup(series) : NULL, origin, counted ? 1 : -1};
}

/* A local path of the recipe: its directory's origin (a directory's own). */
static void tally_path(struct sources *s, const struct stage *st, const char *setting,
                       const char *rel)
{
    char *p = path_absolute(st->recipe->dir, rel);
    bool dir = is_dir(p);
    char *d = dir ? xstrdup(p) : path_dirname(p);
    tally(s, setting, NULL, patch_origin_dir(d, trillian_data_dir()), !dir);
    free(d);
    free(p);
}

static const struct field *field_named(const struct stage_kind *k, const char *key)
{
    for (size_t i = 0; k->fields && k->fields[i].key; i++)
        if (!strcmp(k->fields[i].key, key))
            return &k->fields[i];
    return NULL;
}

json_object *patch_sources_json(const struct stage *st)
{
    const struct stage_kind *k = st->kind;
    if (!k->patch_fields || !st->cfg)
        return NULL;
    struct sources s = {0};
    for (size_t f = 0; k->patch_fields[f]; f++) {
        const char *key = k->patch_fields[f];
        const struct field *fd = field_named(k, key);
        config_setting_t *set = config_setting_get_member(st->cfg, key);
        if (!fd || !set)
            continue;
        if (fd->type == F_PATH) {
            /* a manifest: the downloads it listed, each under its own origin */
            const char *v = config_setting_get_string(set);
            size_t kl = strlen(key), got = 0;
            for (size_t i = 0; v && i < st->remote_urls.n; i++) {
                const char *r = st->remote_urls.v[i];
                if (!strncmp(r, key, kl) && r[kl] == '\t') {
                    tally(&s, key, path_basename(v), patch_origin_url(r + kl + 1), true);
                    got++;
                }
            }
            if (v && !got)
                tally_path(&s, st, key, v);
            continue;
        }
        /* a list: each entry a path, or a download by its url */
        for (int i = 0; i < config_setting_length(set); i++) {
            config_setting_t *e = config_setting_get_elem(set, (unsigned)i);
            const char *url = NULL;
            if (config_setting_type(e) == CONFIG_TYPE_STRING)
                tally_path(&s, st, key, config_setting_get_string(e));
            else if (config_setting_lookup_string(e, "url", &url))
                tally(&s, key, NULL, patch_origin_url(url), true);
        }
    }
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < s.n; i++) {
        json_object *o = json_object_new_object();
        json_add_str(o, "origin", s.v[i].origin);
        if (s.v[i].series)
            json_add_str(o, "series", s.v[i].series);
        json_object_object_add(o, "patches", s.v[i].n >= 0 ? json_object_new_int64(s.v[i].n)
                                                             : NULL);
        json_add_str(o, "setting", s.v[i].setting);
        json_object_array_add(a, o);
        free(s.v[i].series);
        free(s.v[i].origin);
    }
    free(s.v);
    return a;
}
