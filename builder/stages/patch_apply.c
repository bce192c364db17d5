/* One way to apply a patch and say what did not apply (patch_apply.h). */
#define _GNU_SOURCE
#include "patch_apply.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"
#include "base/util.h"

/* The file a line of patch's report names, unquoted (new string), or NULL:
 * "patching file F", or the header of a file patch cannot find. */
static char *named_file(const char *line)
{
    /* "checking file F" in a dry run */
    if (str_starts(line, "patching file ") || str_starts(line, "checking file ")) {
        char *f = xstrdup(line + 14);
        size_t n = strlen(f);
        if (n >= 2 && f[0] == '\'' && f[n - 1] == '\'') {
            memmove(f, f + 1, n - 2);
            f[n - 2] = 0;
        }
        return f;
    }
    if (str_starts(line, "|--- ") || str_starts(line, "|+++ ")) {
        const char *f = line + 5, *slash = strchr(f, '/');
        if (slash)
            f = slash + 1;
        return xstrndup(f, strcspn(f, "\t "));
    }
    return NULL;
}

/* What patch says of a file it could not patch. Not "can't find file to
 * patch": the header naming that file comes after it, then "No file to
 * patch" with the name known. */
static bool is_failure(const char *line)
{
    return strstr(line, "FAILED") || strstr(line, "Reversed") ||
           strstr(line, "No file to patch") || strstr(line, "malformed patch") ||
           strstr(line, "Only garbage");
}

static bool is_fuzzy(const char *line)
{
    return strstr(line, "with fuzz") != NULL;
}

/* The lines of patch's report OUT (split in place) that MATCH accepts, each
 * as "FILE: LINE" with the file it was about, "; "-separated (new string),
 * or NULL for none. */
static char *report_lines(char *out, bool (*match)(const char *))
{
    struct buf b = BUF_INIT;
    char *file = NULL;
    for (char *l = out, *nl; l && *l; l = nl ? nl + 1 : NULL) {
        nl = strchr(l, '\n');
        if (nl)
            *nl = 0;
        char *f = named_file(l);
        if (f) {
            free(file);
            file = f;
        } else if (match(l)) {
            buf_printf(&b, "%s%s: %s", b.n ? "; " : "", file ? file : "?", l);
        }
    }
    free(file);
    char *r = b.n ? buf_detach(&b) : NULL;
    buf_free(&b);
    return r;
}

/* A dry run of PATCH in TREE with patch --fuzz=FUZZ (< 0: patch's own):
 * its exit status, its report in *OUT. */
static int dry_run(const struct stage_ctx *cx, const char *tree, const char *patch, int fuzz,
                   char **out)
{
    char fz[32];
    snprintf(fz, sizeof fz, "--fuzz=%d", fuzz);
    const char *argv[] = {"patch", "-p1", "--forward", "--batch", "--dry-run", "-d", tree,
                          "-i", patch, fuzz >= 0 ? fz : NULL, NULL};
    *out = NULL;
    return cx_capture(cx, argv, out);
}

/* With a fuzz limit the patch is first tried as a dry run (the tree is
 * untouched): if it fails within the limit but applies with patch's own
 * fuzz, the hunk that needs fuzz is named (new string) rather than
 * "FAILED", which would send the reader looking for a conflict. */
static char *fuzz_needed(const struct stage_ctx *cx, const char *tree, const char *patch,
                         int fuzz)
{
    char *out = NULL;
    int st = dry_run(cx, tree, patch, fuzz, &out);
    free(out);
    out = NULL;
    if (st == 0 || dry_run(cx, tree, patch, -1, &out) != 0) {
        free(out);
        return NULL;
    }
    if (out && out[0])
        cx_log(cx, "dry run with patch's own fuzz:\n%s", out);
    char *why = report_lines(out, is_fuzzy);
    free(out);
    return why;
}

int patch_apply(const struct stage_ctx *cx, const char *tree, const char *patch, char **why)
{
    return patch_apply_fuzz(cx, tree, patch, -1, why, NULL);
}

int patch_apply_fuzz(const struct stage_ctx *cx, const char *tree, const char *patch, int fuzz,
                     char **why, bool *fuzzy)
{
    char fz[32];
    snprintf(fz, sizeof fz, "--fuzz=%d", fuzz);
    const char *argv[] = {"patch", "-p1", "--forward", "--batch", "--no-backup-if-mismatch",
                          "-d", tree, "-i", patch, fuzz >= 0 ? fz : NULL, NULL};
    char *out = NULL;
    *why = NULL;
    if (fuzzy)
        *fuzzy = false;
    if (fuzz >= 0 && (*why = fuzz_needed(cx, tree, patch, fuzz)) != NULL) {
        if (fuzzy)
            *fuzzy = true;
        return 1;
    }
    int st = cx_capture(cx, argv, &out);
    if (out && out[0])
        cx_log(cx, "%s", out);
    if (st == 0) {
        if (out && strstr(out, "with fuzz"))
            cx_log(cx, "warning: %s applied with fuzz (refresh it)", patch);
        free(out);
        return 0;
    }
    *why = report_lines(out, is_failure);
    free(out);
    return st ? st : 1;
}

int patch_apply_or_fail(const struct stage_ctx *cx, const char *where, const char *tree,
                        const char *patch)
{
    char *why = NULL;
    int st = patch_apply(cx, tree, patch, &why);
    if (st == 0)
        return 0;
    if (why && strstr(why, "; "))
        *strstr(why, "; ") = 0; /* the first rejection leads */
    int rc = cx_fail(cx, "%s: %s does not apply: first rejected: %s (patch exited %d; "
                     "refresh the patch for this source or drop it); nothing was cached",
                     where, path_basename(patch), why ? why : "see patch's output above", st);
    free(why);
    return rc;
}

int patch_apply_all(const struct stage_ctx *cx, const char *label, const char *tree,
                    const char *const *own_list, const char *key, const char *keep,
                    json_object *manifest_list)
{
    struct strlist patches = {0};
    size_t own = 0;
    for (; own_list && own_list[own]; own++)
        strlist_push_owned(&patches, trillian_data_path(own_list[own]));
    int rc = key && cx_inputs(cx, key, &patches) < 0 ? 1 : 0;
    if (!rc && keep && patches.n && mkdir_p(keep, 0755) < 0)
        rc = cx_fail(cx, "cannot create %s: %s", keep, strerror(errno));
    for (size_t i = 0; !rc && i < patches.n; i++) {
        char *where = i < own ? xasprintf("%s (the kind's own patch)", label)
                              : cx_where(cx, key);
        rc = patch_apply_or_fail(cx, where, tree, patches.v[i]);
        free(where);
        /* the name as fetched: a download keeps the cache's sha256 prefix */
        const char *name = path_basename(patches.v[i]);
        if (!rc && keep) {
            char *to = xasprintf("%s/%02zu-%s", keep, i + 1, name);
            if (copy_file(patches.v[i], to) < 0)
                rc = cx_fail(cx, "cannot copy %s to %s: %s", patches.v[i], to, strerror(errno));
            free(to);
        }
        char hex[65];
        if (!rc && manifest_list && sha256_file(patches.v[i], hex) == 0) {
            json_object *o = json_object_new_object();
            json_add_str(o, "file", name);
            json_add_str(o, "sha256", hex);
            json_object_array_add(manifest_list, o);
        }
    }
    if (!rc && patches.n)
        cx_log(cx, "%s: %zu patch%s applied", label, patches.n, patches.n == 1 ? "" : "es");
    strlist_free(&patches);
    return rc;
}

int patch_apply_setting(const struct stage_ctx *cx, const char *key, const char *tree,
                        const char *keep, json_object *manifest_list)
{
    return patch_apply_all(cx, key, tree, NULL, key, keep, manifest_list);
}

int patch_apply_dir(const struct stage_ctx *cx, const char *what, const char *dir,
                    const char *tree)
{
    struct strlist names = {0};
    if (!is_dir(dir))
        return 0;
    if (dir_list(dir, &names) < 0)
        return cx_fail(cx, "cannot list %s: %s", dir, strerror(errno));
    int rc = 0;
    for (size_t i = 0; !rc && i < names.n; i++) {
        char *p = path_join(dir, names.v[i]);
        rc = patch_apply_or_fail(cx, what, tree, p);
        free(p);
    }
    if (!rc && names.n)
        cx_log(cx, "%s: %zu patch%s applied", what, names.n, names.n == 1 ? "" : "es");
    strlist_free(&names);
    return rc;
}
