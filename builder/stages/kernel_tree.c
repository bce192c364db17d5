/* kernel, kind "source" (kernel_source.c): the source tree. A tarball (local,
 * downloaded, or Debian's orig) or a git clone, unpacked and patched once
 * into KEEP/src-ID, ID hashing the source's content (or the git URL and ref)
 * and every patch; old trees and their build directories are removed. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"
#include "drivers/debfetch.h"
#include "drivers/fetch.h"
#include "formats/archive.h"
#include "kernel_build.h"
#include "patch_apply.h"

/* A full git commit id (then fetched by itself, not cloned by name). */
static bool valid_hex40(const char *s)
{
    if (!s || strlen(s) != 40)
        return false;
    for (const char *p = s; *p; p++)
        if (!isxdigit((unsigned char)*p))
            return false;
    return true;
}

/* Removes KEEP entries starting with PREFIX other than KEEPNAME: old source
 * trees and build directories, which are large. */
static void prune_keep(const struct stage_ctx *cx, const char *prefix,
                       const char *keepname)
{
    DIR *d = opendir(cx->keep);
    if (!d)
        return;
    struct strlist gone = {0};
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (str_starts(de->d_name, prefix) && strcmp(de->d_name, keepname))
            strlist_push(&gone, de->d_name);
    closedir(d);
    for (size_t i = 0; i < gone.n; i++) {
        char *p = path_join(cx->keep, gone.v[i]);
        cx_log(cx, "removing old %s", p);
        rm_rf(p);
        free(p);
    }
    strlist_free(&gone);
}

/* The only subdirectory of DIR when DIR holds nothing else (a tarball's
 * top-level directory), else DIR itself. New string. */
static char *tree_root(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return xstrdup(dir);
    char *only = NULL;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        n++;
        if (!only)
            only = path_join(dir, de->d_name);
    }
    closedir(d);
    if (n == 1 && only && is_dir(only))
        return only;
    free(only);
    return xstrdup(dir);
}

/* ---- getting the source --------------------------------------------------- */

/* The tarball at kernel.url, from the cache, a mirror or its origin. */
static char *fetch_url(const struct stage_ctx *cx, const char *url, const char *sha)
{
    char *where = cx_where(cx, "sha256");
    char *got = fetch_pinned(cx, url, NULL, sha, where);
    free(where);
    return got;
}

/* debian_version: Debian's `linux` source package fetched with a private apt
 * (its files' SHA-256 from debian_suite's signed Sources index, kept in
 * CACHE/downloads/sources/). Only the orig tarball is used: Debian's own
 * patches (the .debian.tar.xz) are not what out-of-tree series are made
 * against. Returns the orig tarball's path, or NULL after cx_fail. */
static char *fetch_debian_orig(const struct stage_ctx *cx)
{
    const char *dver = cx_str(cx, "debian_version");
    const char *suite = cx_str(cx, "debian_suite");
    char *got = NULL, *orig = NULL;
    /* "kernel.debian_" names kernel.debian_suite, kernel.debian_mirror, ... */
    char *dsc = debfetch_source(
        cx, cx_str(cx, "debian_mirror") ? cx_str(cx, "debian_mirror") : KERNEL_DEBIAN_MIRROR,
        suite, cx_str(cx, "debian_keyring") ? cx_str(cx, "debian_keyring") : KERNEL_DEBIAN_KEYRING,
        "kernel.debian_", "linux", dver, "kernel.debian_version", &got);
    if (dsc) {
        /* 6.12.8-1 -> linux_6.12.8.orig.tar.*, beside the .dsc */
        const char *v = strchr(got, ':') ? strchr(got, ':') + 1 : got;
        const char *dash = strrchr(v, '-');
        char *up = dash ? xstrndup(v, (size_t)(dash - v)) : xstrdup(v);
        char *dir = xstrndup(dsc, (size_t)(path_basename(dsc) - dsc));
        static const char *const comp[] = {"xz", "gz", "bz2", NULL};
        for (size_t i = 0; comp[i] && !orig; i++) {
            char *p = xasprintf("%slinux_%s.orig.tar.%s", dir, up, comp[i]);
            if (path_exists(p))
                orig = p;
            else
                free(p);
        }
        if (!orig)
            cx_fail(cx, "kernel.debian_version: linux %s has no orig tarball "
                    "(linux_%s.orig.tar.*) beside %s: a native package cannot be "
                    "told from Debian's patches; use kernel.url or kernel.tarball",
                    got, up, dsc);
        else
            cx_log(cx, "Debian's linux %s (%s): %s", got, suite, orig);
        free(up);
        free(dir);
    }
    free(dsc);
    free(got);
    return orig;
}

/* kernel_build.h */
int ksrc_series_dir_list(const char *dir, struct strlist *out, char **why)
{
    char *sf = path_join(dir, "series"), *text = NULL;
    int n0 = (int)out->n;
    if (read_file(sf, &text, NULL) == 0) {
        char *save = NULL;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            line[strcspn(line, "#")] = 0;
            char *name = line + strspn(line, " \t");
            name[strcspn(name, " \t\r")] = 0;
            if (!name[0])
                continue;
            char *p = path_join(dir, name);
            if (!path_exists(p) || is_dir(p)) {
                *why = xasprintf("%s names %s, which is not a file", sf, name);
                free(p);
                free(text);
                free(sf);
                return -1;
            }
            strlist_push_owned(out, p);
        }
        free(text);
    } else {
        struct strlist all = {0};
        DIR *d = opendir(dir);
        for (struct dirent *e; d && (e = readdir(d));)
            if (str_ends(e->d_name, ".patch") || str_ends(e->d_name, ".diff"))
                strlist_push(&all, e->d_name);
        if (d)
            closedir(d);
        strlist_sort(&all);
        for (size_t i = 0; i < all.n; i++)
            strlist_push_owned(out, path_join(dir, all.v[i]));
        strlist_free(&all);
    }
    free(sf);
    if ((int)out->n == n0) {
        *why = xasprintf("%s has no `series` file and no *.patch or *.diff files", dir);
        return -1;
    }
    return (int)out->n - n0;
}

/* One line of a series manifest, "SHA256  NAME" (blank lines and # comments
 * skipped), into PINS; the name must be a plain file name under the base
 * URL. -1 with *why. */
static int manifest_line(char *line, const char *file, unsigned lineno, const char *base,
                         struct ksrc_pins *pins, char **why)
{
    line[strcspn(line, "#\r")] = 0;
    char *save = NULL, *sha = strtok_r(line, " \t", &save);
    if (!sha)
        return 0;
    char *name = strtok_r(NULL, " \t", &save), *extra = strtok_r(NULL, " \t", &save);
    if (!fetch_valid_sha256(sha) || !name || extra) {
        *why = xasprintf("%s:%u: expected SHA256  NAME (64 hex digits, then the patch's "
                         "file name, as sha256sum prints them)", file, lineno);
        return -1;
    }
    if (strchr(name, '/') || name[0] == '.' || name[0] == '-') {
        *why = xasprintf("%s:%u: '%s' is not a plain file name (the manifest names files "
                         "directly under kernel.series_base)", file, lineno, name);
        return -1;
    }
    /* the manifest comes first: every earlier entry is BASE + a name */
    for (size_t i = 0; i < pins->url.n; i++)
        if (strcmp(pins->url.v[i] + strlen(base), name) == 0) {
            *why = xasprintf("%s:%u: %s is listed twice (also%s)", file, lineno, name,
                             pins->label.v[i]);
            return -1;
        }
    strlist_pushf(&pins->url, "%s%s", base, name);
    strlist_push(&pins->sha, sha);
    strlist_push(&pins->key, "series_file");
    strlist_pushf(&pins->label, " (%s, %s:%u)", name, file, lineno);
    return 0;
}

/* kernel_build.h */
int ksrc_series_pins(const struct stage *st, struct ksrc_pins *pins, char **why)
{
    char *mf = st_path(st, "series_file");
    if (mf) {
        const char *base = st_str(st, "series_base") ? st_str(st, "series_base") : "";
        char *text = NULL;
        if (read_file(mf, &text, NULL) < 0) {
            *why = xasprintf("cannot read %s: %s", mf, strerror(errno));
            free(mf);
            return -1;
        }
        size_t n0 = pins->url.n;
        unsigned lineno = 1;
        int rc = 0;
        for (char *l = text, *nl; !rc && l && *l; l = nl ? nl + 1 : NULL, lineno++) {
            nl = strchr(l, '\n');
            if (nl)
                *nl = 0;
            rc = manifest_line(l, path_basename(mf), lineno, base, pins, why);
        }
        free(text);
        if (!rc && pins->url.n == n0) {
            *why = xasprintf("%s lists no patches (one SHA256  NAME line per patch)", mf);
            rc = -1;
        }
        free(mf);
        if (rc)
            return -1;
    }
    const struct st_node *urls = st_node(st, "series_urls");
    for (size_t i = 0; i < node_len(urls); i++) {
        const struct st_node *e = node_elem(urls, i);
        const char *u = node_member_str(e, "url"), *h = node_member_str(e, "sha256");
        /* a missing member stays "" for declare() to report */
        strlist_push(&pins->url, u ? u : "");
        strlist_push(&pins->sha, h ? h : "");
        strlist_push(&pins->key, "series_urls");
        strlist_pushf(&pins->label, "[%zu]", i);
    }
    return 0;
}

void ksrc_pins_free(struct ksrc_pins *pins)
{
    strlist_free(&pins->url);
    strlist_free(&pins->sha);
    strlist_free(&pins->key);
    strlist_free(&pins->label);
}

/* Every patch in the order it is applied: the `series` directory, then the
 * `series_file` manifest's and the `series_urls` (downloaded into
 * CACHE/downloads/, sha256 checked), then `patches`. Absolute paths; false after a failure (logged). */
static bool all_patches(const struct stage_ctx *cx, struct strlist *out)
{
    char *dir = cx_path(cx, "series");
    if (dir) {
        char *why = NULL;
        int n = ksrc_series_dir_list(dir, out, &why);
        free(dir);
        if (n < 0) {
            cx_fail(cx, "kernel.series: %s", why);
            free(why);
            return false;
        }
    }
    struct ksrc_pins pins = {0};
    char *why = NULL;
    if (ksrc_series_pins(cx->st, &pins, &why) < 0) {
        cx_fail(cx, "kernel.series_file: %s", why);
        free(why);
        ksrc_pins_free(&pins);
        return false;
    }
    for (size_t i = 0; i < pins.url.n; i++) {
        char *w = cx_where(cx, pins.key.v[i]);
        char *where = xasprintf("%s%s", w, pins.label.v[i]);
        char *got = fetch_pinned(cx, pins.url.v[i], NULL, pins.sha.v[i], where);
        free(w);
        free(where);
        if (!got) {
            ksrc_pins_free(&pins);
            return false;
        }
        strlist_push_owned(out, got);
    }
    ksrc_pins_free(&pins);
    return cx_inputs(cx, "patches", out) >= 0;
}

/* Clones URL at REF (branch or tag) into DIR. */
static int git_clone(const struct stage_ctx *cx, const char *url,
                     const char *ref, const char *dir)
{
    static const char *const env[] = {"GIT_TERMINAL_PROMPT=0", NULL};
    if (valid_hex40(ref)) {
        /* a commit: fetch just it (servers allow fetching reachable SHAs) */
        const char *init[] = {"git", "init", "--quiet", dir, NULL};
        const char *fetch[] = {"git", "-C", dir, "fetch", "--quiet", "--depth",
                               "1", "--", url, ref, NULL};
        const char *co[] = {"git", "-C", dir, "checkout", "--quiet",
                            "FETCH_HEAD", NULL};
        if (cx_run_in(cx, NULL, env, init) != 0 ||
            cx_run_in(cx, NULL, env, fetch) != 0)
            return cx_fail(cx, "kernel.ref: cannot fetch commit %s from %s "
                           "(see the log; is it in the repository?)", ref,
                           url);
        if (cx_run_in(cx, NULL, env, co) != 0)
            return cx_fail(cx, "kernel.ref: cannot check out %s", ref);
        return 0;
    }
    char *heads = NULL;
    const char *lsargv[] = {"git", "ls-remote", "--heads", "--tags", url, ref,
                            NULL};
    (void)env;
    int st = cx_capture(cx, lsargv, &heads);
    if (st != 0) {
        free(heads);
        return cx_fail(cx, "kernel.git: cannot list %s (git ls-remote exited "
                       "%d; check the URL and the network)", url, st);
    }
    bool found = heads && heads[0];
    free(heads);
    if (!found)
        return cx_fail(cx, "kernel.ref: %s has no branch or tag named '%s' "
                       "(check git ls-remote %s)", url, ref, url);
    const char *argv[] = {"git", "clone", "--quiet", "--depth", "1",
                          "--branch", ref, "--", url, dir, NULL};
    if (cx_run_in(cx, NULL, env, argv) != 0)
        return cx_fail(cx, "kernel.git: git clone of %s at %s failed (see "
                       "the log)", url, ref);
    return 0;
}

/* Applies PATCH in TREE; on failure names the patch and the files. */
static int apply_patch(const struct stage_ctx *cx, const char *tree, const char *patch)
{
    char *why = NULL;
    bool fuzzy = false;
    int fuzz = cx_isset(cx, "fuzz") ? (int)cx_int(cx, "fuzz", 2) : -1;
    int st = patch_apply_fuzz(cx, tree, patch, fuzz, &why, &fuzzy);
    if (st == 0)
        return 0;
    if (fuzzy) {
        char *w = cx_where(cx, "fuzz");
        int rc = cx_fail(cx, "%s: %s applies only with more fuzz than %d: %s (refresh the "
                         "patch for this kernel, or raise kernel.fuzz); nothing was kept",
                         w, path_basename(patch), fuzz, why);
        free(w);
        free(why);
        return rc;
    }
    int rc = cx_fail(cx, "kernel.patches: %s does not apply: %s (patch exited "
                     "%d; rebase the patch onto this kernel or drop it)",
                     patch, why ? why : "see patch's output above", st);
    free(why);
    return rc;
}

/* ---- the prepared tree ----------------------------------------------------- */

/* Hashes the source into ID and names it in DESC: the git URL and ref, or
 * the tarball's sha256 (the tarball fetched or found, its path in *TARBALL).
 * false after cx_fail. */
static bool source_id(const struct stage_ctx *cx, struct sha256 *id, json_object *desc,
                      char **tarball)
{
    const char *url = cx_str(cx, "url"), *git = cx_str(cx, "git");
    char hex[65];
    if (git) {
        const char *ref = cx_str(cx, "ref");
        sha256_update(id, "git\n", 4);
        sha256_update(id, git, strlen(git));
        sha256_update(id, "\n", 1);
        sha256_update(id, ref, strlen(ref));
        json_add_str(desc, "git", git);
        json_add_str(desc, "ref", ref);
        return true;
    }
    if (url) {
        *tarball = fetch_url(cx, url, cx_str(cx, "sha256"));
        if (!*tarball)
            return false;
        snprintf(hex, sizeof hex, "%s", cx_str(cx, "sha256"));
    } else {
        *tarball = cx_str(cx, "debian_version") ? fetch_debian_orig(cx)
                                                : cx_path(cx, "tarball");
        if (!*tarball)
            return false;
        double t0 = now_seconds();
        if (sha256_file(*tarball, hex) < 0) {
            cx_fail(cx, "kernel.%s: cannot read %s: %s",
                    cx_str(cx, "debian_version") ? "debian_version" : "tarball", *tarball,
                    strerror(errno));
            return false;
        }
        cx_log(cx, "%s: sha256 %s (%.1f s)", *tarball, hex,
               now_seconds() - t0);
    }
    sha256_update(id, "tar\n", 4);
    sha256_update(id, hex, 64);
    if (cx_str(cx, "debian_version")) {
        char *d = xasprintf("linux %s (%s)", cx_str(cx, "debian_version"),
                            cx_str(cx, "debian_suite"));
        json_add_str(desc, "debian", d);
        free(d);
    }
    json_add_str(desc, "tarball", url ? url : path_basename(*tarball));
    json_add_str(desc, "sha256", hex);
    return true;
}

/* Hashes every patch of PATCHES into ID and lists them in DESC (after the
 * series directory, if any). false after cx_fail. */
static bool patches_id(const struct stage_ctx *cx, const struct strlist *patches,
                       struct sha256 *id, json_object *desc)
{
    char hex[65];
    if (cx_str(cx, "series"))
        json_add_str(desc, "series", cx_str(cx, "series"));
    if (cx_str(cx, "series_file"))
        json_add_str(desc, "series_file", cx_str(cx, "series_file"));
    if (cx_isset(cx, "fuzz")) {
        /* a tree patched with fuzz must not stand in for one checked without */
        char *f = xasprintf("fuzz %lld\n", cx_int(cx, "fuzz", 2));
        sha256_update(id, f, strlen(f));
        free(f);
    }
    json_object *list = json_object_new_array();
    json_object_object_add(desc, "patches", list);
    for (size_t i = 0; i < patches->n; i++) {
        const char *p = patches->v[i];
        if (sha256_file(p, hex) < 0) {
            cx_fail(cx, "kernel.patches: cannot read %s: %s", p,
                    strerror(errno));
            return false;
        }
        sha256_update(id, "patch\n", 6);
        sha256_update(id, hex, 64);
        /* name and sha256 of every patch, for the build report */
        json_object *e = json_object_new_object();
        json_add_str(e, "name", path_basename(p));
        json_add_str(e, "sha256", hex);
        json_one_line(e);
        json_object_array_add(list, e);
    }
    return true;
}

/* Unpacks TARBALL (or clones kernel.git) into TREE.tmp, applies PATCHES
 * and renames it to TREE. 0, or -1 after cx_fail. */
static int unpack_tree(const struct stage_ctx *cx, const char *tree, const char *tarball,
                       const struct strlist *patches)
{
    const char *url = cx_str(cx, "url"), *git = cx_str(cx, "git");
    char *tmp = xasprintf("%s.tmp", tree);
    rm_rf(tmp);
    double t0 = now_seconds();
    char *root = NULL;
    int ok = -1;
    if (git) {
        if (mkdir_p(cx->keep, 0755) == 0 &&
            git_clone(cx, git, cx_str(cx, "ref"), tmp) == 0) {
            root = xstrdup(tmp);
            ok = 0;
        }
    } else {
        char aerr[ARC_ERRLEN];
        if (mkdir_p(tmp, 0755) < 0)
            cx_fail(cx, "cannot create %s: %s", tmp, strerror(errno));
        else if (arc_extract(tarball, tmp,
                             ARC_X_NO_OWNERS | ARC_X_NO_XATTRS, NULL,
                             aerr) < 0)
            cx_fail(cx, "kernel.%s: cannot unpack %s: %s",
                    url ? "url" : "tarball", tarball, aerr);
        else {
            root = tree_root(tmp);
            ok = 0;
        }
    }
    if (ok == 0) {
        cx_log(cx, "source ready in %.1f s", now_seconds() - t0);
        char *mk = path_join(root, "Makefile");
        char *kc = path_join(root, "Kconfig");
        if (!path_exists(mk) || !path_exists(kc)) {
            cx_fail(cx, "kernel.%s: %s holds no kernel source tree (no "
                    "top-level Makefile and Kconfig)",
                    git ? "git" : url ? "url" : "tarball",
                    git ? git : tarball);
            ok = -1;
        }
        free(mk);
        free(kc);
    }
    for (size_t i = 0; ok == 0 && i < patches->n; i++) {
        cx_log(cx, "applying %s", patches->v[i]);
        if (apply_patch(cx, root, patches->v[i]) != 0)
            ok = -1;
    }
    if (ok == 0 && rename(root, tree) < 0) {
        cx_fail(cx, "cannot move %s to %s: %s", root, tree,
                strerror(errno));
        ok = -1;
    }
    rm_rf(tmp);
    free(root);
    free(tmp);
    return ok;
}

/* kernel_build.h */
char *ksrc_prepare_source(const struct stage_ctx *cx, json_object *desc)
{
    const char *git = cx_str(cx, "git");
    char *tarball = NULL;
    struct strlist patches = {0};
    struct sha256 id;
    sha256_init(&id);
    if (!source_id(cx, &id, desc, &tarball) || !all_patches(cx, &patches) ||
        !patches_id(cx, &patches, &id, desc)) {
        strlist_free(&patches);
        free(tarball);
        sha256_discard(&id);
        return NULL;
    }
    char hex[65];
    sha256_final_hex(&id, hex);
    char *name = xasprintf("src-%.16s", hex);
    char *tree = path_join(cx->keep, name);

    if (is_dir(tree)) {
        cx_log(cx, "using the prepared source tree %s", tree);
    } else if (unpack_tree(cx, tree, tarball, &patches) != 0) {
        free(tree);
        tree = NULL;
    } else {
        /* old trees and their build directories are gigabytes */
        prune_keep(cx, "src-", name);
        char *bname = xasprintf("build-%.16s", hex);
        prune_keep(cx, "build-", bname);
        free(bname);
    }
    if (tree && git) {
        /* the commit built, for the manifest */
        const char *argv[] = {"git", "-C", tree, "rev-parse", "HEAD", NULL};
        char *head = NULL;
        if (cx_capture(cx, argv, &head) == 0 && head) {
            head[strcspn(head, "\n")] = '\0';
            json_add_str(desc, "commit", head);
        }
        free(head);
    }
    free(name);
    strlist_free(&patches);
    free(tarball);
    return tree;
}

/* One patch of ksrc_patch_check in TREE: tried without fuzz, then (if only
 * fuzz stood in the way) within the recipe's limit; the line printed says
 * which. Whether it applied. */
static bool check_one(struct stage_ctx *cx, const char *tree, const char *patch, size_t n)
{
    char *why = NULL;
    bool fuzzy = false, ok = patch_apply_fuzz(cx, tree, patch, 0, &why, &fuzzy) == 0;
    int limit = cx_isset(cx, "fuzz") ? (int)cx_int(cx, "fuzz", 2) : -1;
    if (ok) {
        printf("%3zu %s: applies\n", n, path_basename(patch));
    } else if (fuzzy && limit != 0) {
        char *fz = why, *why2 = NULL;
        ok = patch_apply_fuzz(cx, tree, patch, limit, &why2, NULL) == 0;
        printf("%3zu %s: %s: %s\n", n, path_basename(patch),
               ok ? "applies with fuzz" : "fails: needs more fuzz than kernel.fuzz allows", fz);
        free(fz);
        why = why2;
    } else {
        if (why && strstr(why, "; "))
            *strstr(why, "; ") = 0; /* the first rejection */
        printf("%3zu %s: fails: %s%s\n", n, path_basename(patch),
               fuzzy ? "needs fuzz and kernel.fuzz = 0: " : "", why ? why : "see the log");
    }
    free(why);
    return ok;
}

/* kernel_build.h */
int ksrc_patch_check(struct stage_ctx *cx, const char *tarball)
{
    struct strlist patches = {0};
    char *tmp = path_join(cx->work, "tree"), *root = NULL;
    char aerr[ARC_ERRLEN];
    int bad = -1;
    if (!all_patches(cx, &patches)) {
        /* all_patches said why */
    } else if (mkdir_p(tmp, 0755) < 0) {
        cx_fail(cx, "cannot create %s: %s", tmp, strerror(errno));
    } else if (arc_extract(tarball, tmp, ARC_X_NO_OWNERS | ARC_X_NO_XATTRS, NULL, aerr) < 0) {
        cx_fail(cx, "cannot unpack %s: %s", tarball, aerr);
    } else {
        root = tree_root(tmp);
        bad = 0;
        for (size_t i = 0; i < patches.n; i++)
            bad += !check_one(cx, root, patches.v[i], i + 1);
        if (bad)
            printf("%d of %zu patches do not apply (each later one was tried on the tree "
                   "without them)\n", bad, patches.n);
        else
            printf("all %zu patches apply\n", patches.n);
        fflush(stdout);
    }
    rm_rf(tmp);
    free(tmp);
    free(root);
    strlist_free(&patches);
    return bad;
}
