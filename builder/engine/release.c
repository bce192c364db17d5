/* `trillian publish` (release.h). */
#define _GNU_SOURCE
#include "release.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json_out.h"
#include "base/run_command.h"
#include "base/sha256.h"
#include "drivers/fetch.h"
#include "drivers/sshsig.h"
#include "engine.h"
#include "entry_files.h"
#include "formats/archive.h"
#include "publish.h"
#include "report.h"

struct rel {
    const struct release_opts *o;
    char *cachedir; /* DIR/cache */
    int added, present, refused, failed;
    long long payload_bytes;
};

static long long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

static void human(struct buf *b, long long n)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)n;
    size_t u = 0;
    while (v >= 1024 && u + 1 < ARRAY_LEN(unit)) {
        v /= 1024;
        u++;
    }
    buf_printf(b, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

/* ---- cache/: one stage entry --------------------------------------------- */

/* The metadata of KEY's entry whose files are F and whose payload is
 * PAYLOAD (its size and sha256). */
static char *entry_metadata(const char *key, const char *stage, const char *kind,
                            const char *recipe, const struct efiles *f, long long size,
                            const char *sha)
{
    json_object *m = json_object_new_object();
    json_add_str(m, "format", RELEASE_FORMAT);
    json_add_str(m, "key", key);
    json_add_str(m, "stage", stage);
    json_add_str(m, "kind", kind);
    json_add_str(m, "recipe", recipe);
    json_object *p = json_object_new_object();
    char *name = xasprintf("%s.tar.zst", key);
    json_add_str(p, "path", name);
    free(name);
    json_object_object_add(p, "size", json_object_new_int64(size));
    json_add_str(p, "sha256", sha);
    json_object_object_add(m, "payload", p);
    json_object_object_add(m, "files", efiles_json(f));
    char *text = xasprintf("%s\n", json_object_to_json_string_ext(
                                       m, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(m);
    return text;
}

/* Publishes the cache entry KEY (stage STAGE of kind KIND) into DIR/cache/
 * unless it is there: payload, then signature, then metadata (whose
 * presence makes the entry), each by link(2), which never replaces. */
static void publish_entry(struct rel *R, const char *key, const char *stage, const char *kind,
                          const char *recipe)
{
    const char *cache = R->o->cache;
    char *meta = xasprintf("%s/%s.json", R->cachedir, key);
    if (path_exists(meta)) {
        R->present++;
        free(meta);
        return;
    }
    struct buf why = BUF_INIT;
    char *entry = cache_entry(cache, key), *out = path_join(entry, "out");
    char *ewhy = NULL;
    struct efiles f = {0};
    if (cache_verify(cache, key, true, &why) > 0) {
        fprintf(stderr, "trillian publish: %s (%.12s) not published: its cache entry changed "
                "after it was built (%s); `trillian cache verify --repair` and build again\n",
                stage, key, why.p);
        R->refused++;
    } else if (efiles_scan(out, &f, &ewhy) < 0) {
        fprintf(stderr, "trillian publish: %s (%.12s) not published: %s (a substituter could "
                "not hand it out safely)\n", stage, key, ewhy);
        R->refused++;
    } else {
        char *tmp = xasprintf("%s/.%s.%ld.tar.zst", R->cachedir, key, (long)getpid());
        char *payload = xasprintf("%s/%s.tar.zst", R->cachedir, key);
        char *mtmp = xasprintf("%s/.%s.%ld.json", R->cachedir, key, (long)getpid());
        char *mtsig = xasprintf("%s.sig", mtmp), *msig = xasprintf("%s.sig", meta);
        struct arc_write_opts ao = ARC_WRITE_OPTS_INIT;
        ao.filter = ARC_ZSTD;
        ao.no_xattrs = true;
        ao.threads = 2;
        char err[ARC_ERRLEN] = "", sha[65] = "";
        int rc = arc_write_tree(out, tmp, &ao, err);
        if (rc < 0)
            fprintf(stderr, "trillian publish: %s (%.12s): cannot write its payload: %s\n",
                    stage, key, err);
        long long size = rc == 0 ? file_size(tmp) : -1;
        if (rc == 0 && (size < 0 || sha256_file(tmp, sha) < 0)) {
            fprintf(stderr, "trillian publish: cannot read %s: %s\n", tmp, strerror(errno));
            rc = -1;
        }
        char *text = rc == 0 ? entry_metadata(key, stage, kind, recipe, &f, size, sha) : NULL;
        if (rc == 0 && write_file_atomic(mtmp, text, strlen(text), 0644) < 0) {
            fprintf(stderr, "trillian publish: cannot write %s: %s\n", mtmp, strerror(errno));
            rc = -1;
        }
        /* a payload without metadata is no entry (an interrupted publish):
         * it may be replaced; with metadata nothing here is replaced */
        if (rc == 0 && rename(tmp, payload) < 0) {
            fprintf(stderr, "trillian publish: cannot write %s: %s\n", payload, strerror(errno));
            rc = -1;
        }
        if (rc == 0 && R->o->sign) {
            char *w = NULL;
            rc = sshsig_sign(R->o->sign, mtmp, mtsig, &w);
            if (rc < 0)
                fprintf(stderr, "trillian publish: cannot sign %s's metadata: %s\n", stage, w);
            else if (rename(mtsig, msig) < 0)
                rc = -1;
            free(w);
        }
        if (rc == 0 && link(mtmp, meta) < 0 && errno != EEXIST) {
            fprintf(stderr, "trillian publish: cannot write %s: %s\n", meta, strerror(errno));
            rc = -1;
        }
        if (rc == 0) {
            R->added++;
            R->payload_bytes += size;
        } else {
            R->failed++;
        }
        unlink(tmp);
        unlink(mtmp);
        unlink(mtsig);
        free(text);
        free(tmp);
        free(payload);
        free(mtmp);
        free(mtsig);
        free(msig);
    }
    efiles_free(&f);
    free(ewhy);
    buf_free(&why);
    free(out);
    free(entry);
    free(meta);
}

/* ---- builds/RECIPE: the build's record and its images --------------------- */

/* Whether a file is downloaded as it is (already compressed, or an ISO that
 * is written to a medium as it is). */
static bool as_is(const char *name)
{
    static const char *const ext[] = {".iso", ".gz", ".xz", ".zst", ".bz2", ".tgz", ".txz",
                                      ".zip", ".json", ".txt", ".sh", ".cfg"};
    for (size_t i = 0; i < ARRAY_LEN(ext); i++)
        if (str_ends(name, ext[i]))
            return true;
    return file_size(name) < 64 * 1024;
}

static int zstd_file(const char *src, const char *dst)
{
    const char *argv[] = {"zstd", "-q", "-f", "-T2", "-3", "-o", dst, "--", src, NULL};
    struct run_command cmd = {.argv = argv, .out = RUN_OUT_NULL, .err = RUN_ERR_INHERIT};
    int rc = run_command(&cmd);
    run_command_clear(&cmd);
    return rc == 0 ? 0 : -1;
}

/* DIR/NAME: J as pretty JSON, written atomically; 0 or -1 (errno). */
static int write_json_in(const char *dir, const char *name, json_object *j)
{
    char *p = path_join(dir, name);
    const char *t = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
                                                          JSON_C_TO_STRING_NOSLASHESCAPE);
    int rc = write_file_atomic(p, t, strlen(t), 0644);
    free(p);
    return rc;
}

/* The images of OUT (its SHA256SUMS: every file of its images stages), each
 * checked against that sum, into STAGING, compressed where users expect it;
 * downloads.json lists them. */
static int copy_images(const char *out, const char *staging, json_object *manifest,
                       json_object *list)
{
    char *sums = path_join(out, "SHA256SUMS"), *text = NULL;
    if (read_file(sums, &text, NULL) < 0) {
        free(sums);
        return 0; /* a build that made no image */
    }
    free(sums);
    const char *primary = NULL;
    json_object *imgs = json_member(manifest, "images");
    for (size_t i = 0; imgs && i < json_object_array_length(imgs); i++) {
        json_object *e = json_object_array_get_idx(imgs, i);
        if (json_object_get_boolean(json_member(e, "primary")))
            primary = json_member_str(e, "path");
    }
    int rc = 0;
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l && rc == 0; l = strtok_r(NULL, "\n", &save)) {
        if (strlen(l) < 67 || l[64] != ' ')
            continue;
        const char *rel = l + 65 + (l[65] == ' ' || l[65] == '*');
        l[64] = 0;
        if (!efiles_path_ok(rel))
            continue;
        char *src = path_join(out, rel), hex[65] = "";
        if (sha256_file(src, hex) < 0 || strcmp(hex, l) != 0) {
            fprintf(stderr, "trillian publish: %s %s since its build (SHA256SUMS says %.16s…); "
                    "build again so the image is what the build made\n", src,
                    *hex ? "changed" : "is missing", l);
            free(src);
            rc = -1;
            break;
        }
        bool raw = as_is(src);
        char *name = raw ? xstrdup(rel) : xasprintf("%s.zst", rel);
        char *dst = path_join(staging, name), *dir = path_dirname(dst);
        if (mkdir_p(dir, 0755) < 0 || (raw ? copy_file(src, dst) : zstd_file(src, dst)) < 0) {
            fprintf(stderr, "trillian publish: cannot write %s: %s\n", dst, strerror(errno));
            rc = -1;
        } else {
            char dsha[65];
            sha256_file(dst, dsha);
            json_object *j = json_object_new_object();
            json_add_str(j, "file", name);
            json_object_object_add(j, "size", json_object_new_int64(file_size(dst)));
            json_add_str(j, "sha256", dsha);
            json_add_str(j, "image", rel);
            json_object_object_add(j, "image_size", json_object_new_int64(file_size(src)));
            json_add_str(j, "image_sha256", l);
            json_object_object_add(j, "compressed", json_object_new_boolean(!raw));
            json_object_object_add(j, "primary",
                                   json_object_new_boolean(primary && !strcmp(primary, rel)));
            json_object_array_add(list, j);
        }
        free(dir);
        free(dst);
        free(name);
        free(src);
    }
    free(text);
    return rc;
}

/* OUT's record into DIR/builds/RECIPE, swapped in whole. */
static int publish_build(struct rel *R, const char *out, json_object *m, const char *recipe)
{
    char *builds = path_join(R->o->to, "builds");
    char *dst = path_join(builds, recipe);
    char *staging = xasprintf("%s/.%s.%ld", builds, recipe, (long)getpid());
    rm_rf(staging);
    int rc = mkdir_p(staging, 0755);
    static const char *const files[] = {"manifest.json", "report.html", "junit.xml",
                                        "sbom.spdx.json"};
    for (size_t i = 0; rc == 0 && i < ARRAY_LEN(files); i++) {
        char *s = path_join(out, files[i]), *d = path_join(staging, files[i]);
        if (path_exists(s) && copy_file(s, d) < 0)
            rc = -1;
        free(s);
        free(d);
    }
    /* the boot checks' transcripts and logs */
    json_object *stages = json_member(m, "stages");
    for (size_t i = 0; rc == 0 && stages && i < json_object_array_length(stages); i++) {
        json_object *st = json_object_array_get_idx(stages, i);
        const char *name = json_member_str(st, "name"), *kind = json_member_str(st, "kind");
        if (!name || !kind || !str_starts(kind, "bootcheck/") || !efiles_path_ok(name))
            continue;
        char *s = path_join(out, name), *d = path_join(staging, name);
        if (is_dir(s) && copy_tree(s, d, false) < 0)
            rc = -1;
        free(s);
        free(d);
        char *log = xasprintf("%s/logs/%s.log", out, name);
        char *dlog = xasprintf("%s/logs/%s.log", staging, name), *ldir = path_dirname(dlog);
        if (path_exists(log) && (mkdir_p(ldir, 0755) < 0 || copy_file(log, dlog) < 0))
            rc = -1;
        free(log);
        free(dlog);
        free(ldir);
    }
    /* apt archives (packages/apt-archive) as they are, and apt.json naming them */
    json_object *apt = json_object_new_array();
    for (size_t i = 0; rc == 0 && stages && i < json_object_array_length(stages); i++) {
        json_object *st = json_object_array_get_idx(stages, i);
        const char *name = json_member_str(st, "name"), *kind = json_member_str(st, "kind");
        if (!name || !kind || strcmp(kind, "packages/apt-archive") || !efiles_path_ok(name))
            continue;
        char *s = path_join(out, name), *d = path_join(staging, name);
        char *sm = path_join(s, "stage-manifest.json");
        json_object *det = is_dir(s) ? json_object_from_file(sm) : NULL;
        if (det && copy_tree(s, d, false) < 0)
            rc = -1;
        if (det) {
            json_object *a = json_object_new_object();
            json_add_str(a, "stage", name);
            json_add_str(a, "suite", json_member_str(det, "suite"));
            json_add_str(a, "sources_line", json_member_str(det, "sources_line"));
            json_object_array_add(apt, a);
        }
        json_object_put(det);
        free(sm);
        free(s);
        free(d);
    }
    if (rc == 0 && json_object_array_length(apt))
        rc = write_json_in(staging, "apt.json", apt);
    json_object_put(apt);
    if (rc < 0)
        fprintf(stderr, "trillian publish: cannot copy %s's record into %s: %s\n", out, staging,
                strerror(errno));
    json_object *list = json_object_new_array();
    if (rc == 0)
        rc = copy_images(out, staging, m, list);
    if (rc == 0)
        rc = write_json_in(staging, "downloads.json", list);
    json_object_put(list);
    if (rc == 0 && publish_swap_in(staging, dst) < 0) {
        fprintf(stderr, "trillian publish: cannot put %s in place: %s\n", dst, strerror(errno));
        rc = -1;
    }
    rm_rf(staging); /* the old record, or a failed new one */
    free(staging);
    free(dst);
    free(builds);
    return rc;
}

/* ---- index.html and SHA256SUMS -------------------------------------------- */

/* A build's apt archives (its apt.json): the deb line for each, its URL
 * the stage's `url` when the recipe gave one, else this directory's. */
static void apt_html(struct buf *b, const char *dir, const char *build)
{
    char *p = xasprintf("%s/builds/%s/apt.json", dir, build);
    json_object *apt = json_object_from_file(p);
    free(p);
    for (size_t i = 0; apt && i < json_object_array_length(apt); i++) {
        json_object *e = json_object_array_get_idx(apt, i);
        const char *stage = json_member_str(e, "stage"), *line = json_member_str(e, "sources_line");
        const char *suite = json_member_str(e, "suite");
        if (!stage || !line || !suite)
            continue;
        char *path = xasprintf("builds/%s/%s", build, stage);
        buf_puts(b, "<p>apt archive <a href=\"");
        html_escape(b, path);
        buf_puts(b, "/\">");
        html_escape(b, stage);
        buf_puts(b, "</a> (suite ");
        html_escape(b, suite);
        buf_puts(b, ", key <a href=\"");
        html_escape(b, path);
        buf_puts(b, "/trillian-archive-keyring.gpg\">trillian-archive-keyring.gpg</a>, to put "
                    "in /usr/share/keyrings/):</p>\n<pre>");
        /* "deb [signed-by=...] URL SUITE main": URL is this directory's when unset */
        const char *url = strstr(line, "] URL ");
        if (url) {
            char *head = xstrndup(line, (size_t)(url - line) + 2);
            html_escape(b, head);
            free(head);
            buf_puts(b, "BASE/");
            html_escape(b, path);
            html_escape(b, url + 5);
        } else {
            html_escape(b, line);
        }
        buf_puts(b, "</pre>\n");
        if (url)
            buf_puts(b, "<p>BASE: the address of this page's directory.</p>\n");
        free(path);
    }
    json_object_put(apt);
}

/* The downloads of every build in DIR/builds, as HTML. */
static char *downloads_html(const struct strlist *names, const char *dir, bool signed_)
{
    struct buf b = BUF_INIT;
    buf_puts(&b, "<h2>Downloads</h2>\n<p>Every file below is listed in <a href=\"SHA256SUMS\">"
                 "SHA256SUMS</a>");
    if (signed_)
        buf_puts(&b, ", signed in <a href=\"SHA256SUMS.sig\">SHA256SUMS.sig</a> by the key "
                     "<a href=\"signing-key.pub\">signing-key.pub</a>. Check the key's "
                     "fingerprint against one you got from the publisher, then:</p>\n<pre>"
                     "echo \"trillian $(cat signing-key.pub)\" &gt; allowed_signers\n"
                     "ssh-keygen -Y verify -f allowed_signers -I trillian -n trillian "
                     "-s SHA256SUMS.sig &lt; SHA256SUMS\n"
                     "sha256sum -c --ignore-missing SHA256SUMS</pre>\n");
    else
        buf_puts(&b, " (not signed).</p>\n");
    buf_puts(&b, "<p><code>.zst</code> files: <code>zstd -d FILE</code> gives the image; "
                 "its sha256 is the one in the build's report.</p>\n");
    for (size_t i = 0; i < names->n; i++) {
        char *p = xasprintf("%s/builds/%s/downloads.json", dir, names->v[i]);
        json_object *list = json_object_from_file(p);
        free(p);
        buf_puts(&b, "<h3 id=\"images-");
        html_escape(&b, names->v[i]);
        buf_puts(&b, "\">");
        html_escape(&b, names->v[i]);
        buf_puts(&b, " (<a href=\"builds/");
        html_escape(&b, names->v[i]);
        buf_puts(&b, "/report.html\">report</a>)</h3>\n<table><tr><th>file</th><th>size</th>"
                     "<th>sha256</th><th>image</th><th>image sha256</th></tr>\n");
        for (size_t j = 0; list && j < json_object_array_length(list); j++) {
            json_object *e = json_object_array_get_idx(list, j);
            const char *f = json_member_str(e, "file");
            if (!f)
                continue;
            buf_puts(&b, "<tr><td><a href=\"builds/");
            html_escape(&b, names->v[i]);
            buf_puts(&b, "/");
            html_escape(&b, f);
            buf_puts(&b, "\">");
            html_escape(&b, f);
            buf_puts(&b, "</a>");
            if (json_object_get_boolean(json_member(e, "primary")))
                buf_puts(&b, " (primary)");
            buf_puts(&b, "</td><td>");
            human(&b, json_object_get_int64(json_member(e, "size")));
            buf_puts(&b, "</td><td><code>");
            html_escape(&b, json_member_str(e, "sha256") ? json_member_str(e, "sha256") : "");
            buf_puts(&b, "</code></td><td>");
            human(&b, json_object_get_int64(json_member(e, "image_size")));
            buf_puts(&b, "</td><td><code>");
            html_escape(&b, json_member_str(e, "image_sha256") ? json_member_str(e, "image_sha256")
                                                               : "");
            buf_puts(&b, "</code></td></tr>\n");
        }
        if (!list || !json_object_array_length(list))
            buf_puts(&b, "<tr><td colspan=\"5\">no images</td></tr>\n");
        buf_puts(&b, "</table>\n");
        json_object_put(list);
        apt_html(&b, dir, names->v[i]);
    }
    return buf_detach(&b);
}

static int write_index(struct rel *R)
{
    const char *dir = R->o->to;
    char *builds = path_join(dir, "builds");
    struct strlist all = {0}, names = {0}, rel = {0};
    dir_list(builds, &all);
    for (size_t i = 0; i < all.n; i++) {
        char *m = xasprintf("%s/%s/manifest.json", builds, all.v[i]);
        if (all.v[i][0] != '.' && path_exists(m)) {
            strlist_push(&names, all.v[i]);
            strlist_pushf(&rel, "builds/%s", all.v[i]);
        }
        free(m);
    }
    char *sigpath = path_join(dir, "signing-key.pub");
    char *pre = downloads_html(&names, dir, path_exists(sigpath));
    free(sigpath);
    /* the page's links are relative to DIR, and so are the paths it reads */
    int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = -1;
    if (cwd >= 0 && chdir(dir) == 0) {
        rc = report_matrix_page((const char *const *)rel.v, rel.n, pre, "index.html");
        if (fchdir(cwd) < 0)
            rc = -1;
    }
    if (cwd >= 0)
        close(cwd);
    free(pre);
    strlist_free(&all);
    strlist_free(&names);
    strlist_free(&rel);
    free(builds);
    return rc;
}

/* SHA256SUMS over index.html, signing-key.pub and builds/, sorted. */
static int write_sums(struct rel *R)
{
    const char *dir = R->o->to;
    struct strlist files = {0};
    char *builds = path_join(dir, "builds");
    list_tree(builds, &files);
    struct buf b = BUF_INIT;
    static const char *const top[] = {"index.html", "signing-key.pub"};
    int rc = 0;
    for (size_t i = 0; i < ARRAY_LEN(top); i++) {
        char *p = path_join(dir, top[i]), hex[65];
        if (path_exists(p) && sha256_file(p, hex) == 0)
            buf_printf(&b, "%s  %s\n", hex, top[i]);
        free(p);
    }
    for (size_t i = 0; i < files.n; i++) {
        char *p = path_join(builds, files.v[i]), hex[65];
        bool hidden = files.v[i][0] == '.';
        if (!hidden && sha256_file(p, hex) == 0)
            buf_printf(&b, "%s  builds/%s\n", hex, files.v[i]);
        else if (!hidden)
            rc = -1;
        free(p);
    }
    char *sums = path_join(dir, "SHA256SUMS"), *tmp = xasprintf("%s.%ld", sums, (long)getpid());
    if (rc == 0)
        rc = write_file_atomic(tmp, b.p, b.n, 0644);
    if (rc == 0 && R->o->sign) {
        char *sig = path_join(dir, "SHA256SUMS.sig"), *why = NULL;
        rc = sshsig_sign(R->o->sign, tmp, sig, &why);
        if (rc < 0)
            fprintf(stderr, "trillian publish: cannot sign SHA256SUMS: %s\n", why);
        free(why);
        free(sig);
    }
    if (rc == 0)
        rc = rename(tmp, sums);
    else
        fprintf(stderr, "trillian publish: cannot write %s\n", sums);
    unlink(tmp);
    free(tmp);
    free(sums);
    buf_free(&b);
    strlist_free(&files);
    free(builds);
    return rc;
}

/* DIR/signing-key.pub: KEY's public half (never the private key). */
static int write_public_key(struct rel *R)
{
    if (!R->o->sign)
        return 0;
    char *why = NULL, *pub = sshsig_public(R->o->sign, &why);
    if (!pub) {
        fprintf(stderr, "trillian publish: --sign %s: %s\n", R->o->sign, why);
        free(why);
        return -1;
    }
    char *text = xasprintf("%s\n", pub), *p = path_join(R->o->to, "signing-key.pub");
    int rc = write_file_atomic(p, text, strlen(text), 0644);
    free(p);
    free(text);
    free(pub);
    return rc;
}

int release_publish(const struct release_opts *o)
{
    double t0 = now_seconds();
    struct rel R = {.o = o, .cachedir = path_join(o->to, "cache")};
    json_object **ms = xcalloc(o->nouts ? o->nouts : 1, sizeof *ms);
    int rc = 0;
    for (size_t i = 0; i < o->nouts; i++) {
        char *p = path_join(o->outs[i], "manifest.json");
        ms[i] = json_object_from_file(p);
        if (!ms[i] || !json_member_str(ms[i], "name") ||
            !efiles_path_ok(json_member_str(ms[i], "name"))) {
            fprintf(stderr, "trillian publish: %s: cannot read a build's manifest (%s); name the "
                    "output directory of a finished build\n", o->outs[i], p);
            rc = 2;
        }
        free(p);
    }
    if (rc == 0 && (mkdir_p(R.cachedir, 0755) < 0 || write_public_key(&R) < 0)) {
        if (errno)
            fprintf(stderr, "trillian publish: cannot write in %s: %s\n", o->to, strerror(errno));
        rc = 1;
    }
    if (rc == 0 && !o->sign)
        fprintf(stderr, "trillian publish: no --sign KEY: nothing is signed, so substituters "
                "will refuse these entries (docs/publish.md)\n");
    for (size_t i = 0; rc == 0 && i < o->nouts; i++) {
        const char *recipe = json_member_str(ms[i], "name");
        json_object *stages = json_member(ms[i], "stages");
        for (size_t s = 0; stages && s < json_object_array_length(stages); s++) {
            json_object *st = json_object_array_get_idx(stages, s);
            const char *key = json_member_str(st, "key"), *name = json_member_str(st, "name");
            const char *kind = json_member_str(st, "kind");
            if (key && name && kind && fetch_valid_sha256(key) && cache_has(o->cache, key))
                publish_entry(&R, key, name, kind, recipe);
        }
        if (publish_build(&R, o->outs[i], ms[i], recipe) < 0)
            rc = 1;
    }
    if (rc == 0 && write_index(&R) < 0)
        rc = 1;
    if (rc == 0 && write_sums(&R) < 0)
        rc = 1;
    if (R.failed)
        rc = rc ? rc : 1;
    if (rc != 2) {
        struct buf b = BUF_INIT;
        human(&b, R.payload_bytes);
        printf("trillian: published %zu build%s into %s in %.1f s: %d cache entr%s added (%s), "
               "%d already there, %d refused%s%s\n", o->nouts, o->nouts == 1 ? "" : "s", o->to,
               now_seconds() - t0, R.added, R.added == 1 ? "y" : "ies", b.p, R.present,
               R.refused, R.failed ? ", failed: " : "", R.failed ? "see above" : "");
        buf_free(&b);
    }
    for (size_t i = 0; i < o->nouts; i++)
        json_object_put(ms[i]);
    free(ms);
    free(R.cachedir);
    return rc;
}
