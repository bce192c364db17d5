/* Substituters (substitute.h). */
#define _GNU_SOURCE
#include "substitute.h"

#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json_out.h"
#include "base/sha256.h"
#include "drivers/fetch.h"
#include "drivers/sshsig.h"
#include "engine.h"
#include "entry_files.h"
#include "formats/archive.h"
#include "release.h"

#define META_MAX (64LL << 20) /* metadata: a million files' worth */
#define SIG_MAX (64LL << 10)

static bool is_url(const char *s) { return strstr(s, "://") != NULL; }

char *subst_config_trust(void)
{
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        return xasprintf("%s/trillian/trusted-keys", xdg);
    return xasprintf("%s/.config/trillian/trusted-keys", home && *home ? home : "/nonexistent");
}

bool subst_active(const struct substituters *s)
{
    return s && s->urls.n > 0;
}

int subst_init(struct substituters *s, const struct strlist *urls, const struct strlist *trust,
               const char *cache, FILE *err)
{
    memset(s, 0, sizeof *s);
    s->cache = xstrdup(cache);
    const char *t = getenv("TRILLIAN_SUBSTITUTER_TIMEOUT");
    s->timeout = t && atoi(t) > 0 ? atoi(t) : 30;
    for (size_t i = 0; i < urls->n; i++) {
        char *u = xstrdup(urls->v[i]);
        size_t n = strlen(u);
        while (n > 1 && u[n - 1] == '/')
            u[--n] = 0;
        bool ok = str_starts(u, "http://") || str_starts(u, "https://") ||
                  str_starts(u, "file:///");
        if (!ok && !is_url(u) && is_dir(u)) {
            char *abs = path_absolute(NULL, u);
            free(u);
            u = abs;
            ok = true;
        }
        if (ok) {
            strlist_push_owned(&s->urls, u);
        } else {
            fprintf(err, "trillian: substituter %s: not an http(s) URL, a file:// URL or a "
                    "directory; not used\n", u);
            free(u);
        }
    }
    if (!s->urls.n)
        return 0;
    if (!trust->n) {
        fprintf(err, "trillian: substituters are set but no key is trusted: give --trust FILE "
                "(the publisher's signing-key.pub) or put keys in %s (docs/publish.md)\n",
                "~/.config/trillian/trusted-keys");
        subst_free(s);
        return -1;
    }
    char *why = NULL, *text = sshsig_allowed((const char *const *)trust->v, (int)trust->n, &why);
    if (!text) {
        fprintf(err, "trillian: %s\n", why);
        free(why);
        subst_free(s);
        return -1;
    }
    char *tmp = path_join(cache, "tmp");
    s->allowed = xasprintf("%s/trust.%ld", tmp, (long)getpid());
    if (mkdir_p(tmp, 0755) < 0 || write_file_atomic(s->allowed, text, strlen(text), 0644) < 0) {
        fprintf(err, "trillian: cannot write %s: %s (choose another --cache)\n", s->allowed,
                strerror(errno));
        free(text);
        free(tmp);
        subst_free(s);
        return -1;
    }
    free(text);
    free(tmp);
    return 0;
}

void subst_free(struct substituters *s)
{
    if (s->allowed)
        unlink(s->allowed);
    free(s->allowed);
    free(s->cache);
    strlist_free(&s->urls);
    memset(s, 0, sizeof *s);
}

bool subst_eligible(const struct stage *st)
{
    return !st->kind->uncached && strcmp(st->section, "bootcheck") != 0;
}

/* REL (below the substituter's top) into TO. */
static int get(const struct substituters *s, int i, const char *rel, const char *to,
               long long max, bool progress, char **why)
{
    const char *u = s->urls.v[i];
    *why = NULL;
    if (is_url(u)) {
        char *url = xasprintf("%s/%s", u, rel);
        int rc = fetch_download(url, to, s->timeout, max, progress, why);
        free(url);
        return rc;
    }
    char *src = path_join(u, rel);
    int rc = copy_file(src, to);
    if (rc < 0)
        *why = xstrdup(errno == ENOENT ? "no such file" : strerror(errno));
    free(src);
    return rc;
}

static char *dl_dir(const struct substituters *s, const struct stage *st)
{
    return xasprintf("%s/tmp/subst-%.16s.%ld", s->cache, st->key, (long)getpid());
}

static bool hex64(const char *h)
{
    size_t n = 0;
    for (; h && h[n]; n++)
        if (!isxdigit((unsigned char)h[n]) || isupper((unsigned char)h[n]))
            return false;
    return n == 64;
}

/* Substituter I's metadata for ST, checked: 0 with *FILES, *SIZE and SHA;
 * -1 with *WHY. */
static int metadata(const struct substituters *s, int i, const struct stage *st, const char *dir,
                    struct efiles *files, long long *size, char sha[65], char **why)
{
    char *rel = xasprintf("cache/%s.json", st->key), *relsig = xasprintf("%s.sig", rel);
    char *meta = path_join(dir, "meta.json"), *sig = path_join(dir, "meta.json.sig"), *w = NULL;
    json_object *m = NULL;
    int rc = -1;
    if (get(s, i, rel, meta, META_MAX, false, &w) < 0) {
        *why = xasprintf("has no entry for it (%s: %s)", rel, w);
    } else if (get(s, i, relsig, sig, SIG_MAX, false, &w) < 0) {
        *why = xasprintf("its entry has no signature (%s: %s)", relsig, w);
    } else if (!sshsig_verify(s->allowed, meta, sig, &w)) {
        *why = xasprintf("its entry's signature is refused: %s", w);
    } else if (!(m = json_object_from_file(meta)) || !json_object_is_type(m, json_type_object)) {
        *why = xstrdup("its metadata is not a JSON object");
    } else if (!json_member_str(m, "format") || strcmp(json_member_str(m, "format"), RELEASE_FORMAT)) {
        *why = xasprintf("its metadata is not in the format " RELEASE_FORMAT " (a newer "
                         "Trillian's?)");
    } else if (!json_member_str(m, "key") || strcmp(json_member_str(m, "key"), st->key)) {
        *why = xasprintf("its metadata names another key (%.64s)",
                         json_member_str(m, "key") ? json_member_str(m, "key") : "none");
    } else {
        json_object *p = json_member(m, "payload"), *sz = json_member(p, "size");
        char *want = xasprintf("%s.tar.zst", st->key);
        const char *ps = json_member_str(p, "sha256"), *pp = json_member_str(p, "path");
        if (!pp || strcmp(pp, want) || !sz || !json_object_is_type(sz, json_type_int) ||
            json_object_get_int64(sz) < 0 || !hex64(ps)) {
            *why = xstrdup("its metadata has no payload path, size or sha256 for this key");
        } else if (efiles_from_json(json_member(m, "files"), files, &w) == 0) {
            *size = json_object_get_int64(sz);
            memcpy(sha, ps, 65);
            rc = 0;
        } else {
            *why = xstrdup(w);
        }
        free(want);
    }
    json_object_put(m);
    free(w);
    free(rel);
    free(relsig);
    free(meta);
    free(sig);
    return rc;
}

bool subst_query(const struct substituters *s, const struct stage *st, struct subst_offer *offer,
                 FILE *err)
{
    if (!subst_active(s) || !subst_eligible(st))
        return false;
    char *dir = dl_dir(s, st);
    bool got = false;
    for (size_t i = 0; i < s->urls.n && !got; i++) {
        rm_rf(dir);
        mkdir_p(dir, 0755);
        struct efiles f = {0};
        char sha[65], *why = NULL;
        long long size = 0;
        if (metadata(s, (int)i, st, dir, &f, &size, sha, &why) == 0) {
            *offer = (struct subst_offer){(int)i, size, efiles_bytes(&f)};
            got = true;
        } else if (err) {
            fprintf(err, "trillian: %s: substituter %s %s\n", st->name, s->urls.v[i], why);
        }
        efiles_free(&f);
        free(why);
    }
    rm_rf(dir);
    free(dir);
    return got;
}

/* Whether an archive member may be unpacked: a name an entry may hold, a
 * file, directory, symlink inside the entry or hard link to another member. */
static int member_ok(const struct arc_entry *e, void *ud)
{
    char **why = ud;
    const char *p = e->path;
    while (p[0] == '.' && p[1] == '/')
        p += 2;
    if (e->type == ARC_DIR && (!strcmp(p, ".") || !*p))
        return 0; /* the entry's top itself ("tar -C DIR -c .") */
    if (!efiles_path_ok(p))
        *why = xasprintf("its payload holds a path that leaves the entry (%s)", e->path);
    else if (e->type == ARC_SYMLINK && !efiles_link_inside(p, e->target))
        *why = xasprintf("its payload holds a symlink pointing outside the entry (%s -> %s)", p,
                         e->target);
    else if (e->type == ARC_HARDLINK && !efiles_path_ok(e->target))
        *why = xasprintf("its payload holds a hard link to %s", e->target);
    else if (e->type != ARC_FILE && e->type != ARC_DIR && e->type != ARC_SYMLINK &&
             e->type != ARC_HARDLINK)
        *why = xasprintf("its payload holds a device, fifo or socket (%s)", p);
    return *why ? 1 : 0;
}

/* Substituter I's payload for ST into CACHE/tmp/KEY.PID/out, checked
 * against WANT, and committed. */
static int payload(const struct substituters *s, int i, const struct stage *st, const char *dir,
                   const struct efiles *want, long long size, const char *sha, char **why)
{
    char *rel = xasprintf("cache/%s.tar.zst", st->key), *file = path_join(dir, "payload.tar.zst");
    char *entry = xasprintf("%s/tmp/%.40s.%ld", s->cache, st->key, (long)getpid());
    char *out = path_join(entry, "out"), *w = NULL, hex[65] = "";
    char err[ARC_ERRLEN] = "";
    struct efiles have = {0};
    int rc = -1;
    rm_rf(entry);
    if (get(s, i, rel, file, size, isatty(2), &w) < 0) {
        *why = xasprintf("cannot download its payload (%s: %s)", rel, w);
    } else if (sha256_file(file, hex) < 0 || strcmp(hex, sha)) {
        struct buf b = BUF_INIT;
        buf_printf(&b, "its payload is not what its metadata says (sha256 %.16s…, not %.16s…",
                   hex, sha);
        long long got = -1;
        FILE *f = fopen(file, "rb");
        if (f && fseek(f, 0, SEEK_END) == 0)
            got = ftell(f);
        if (f)
            fclose(f);
        if (got != size)
            buf_printf(&b, "; %lld bytes, not %lld", got, size);
        buf_puts(&b, ")");
        *why = buf_detach(&b);
    } else if (arc_list(file, member_ok, why, err) != 0) {
        const char *unsafe = strstr(err, "unsafe member name ");
        if (!*why && unsafe)
            *why = xasprintf("its payload holds a path that leaves the entry (%s)", unsafe + 19);
        else if (!*why)
            *why = xasprintf("its payload cannot be read: %s", err);
    } else if (mkdir_p(out, 0755) < 0) {
        *why = xasprintf("cannot create %s: %s", out, strerror(errno));
    } else if (arc_extract(file, out, ARC_X_NO_OWNERS | ARC_X_NO_XATTRS, NULL, err) < 0) {
        *why = xasprintf("its payload cannot be unpacked: %s", err);
    } else if (efiles_scan(out, &have, &w) < 0) {
        *why = xasprintf("its payload unpacked to something else: %s", w);
    } else if ((w = efiles_diff(want, &have))) {
        *why = xasprintf("its payload differs from its signed file list: %s", w);
    } else {
        struct buf sums = BUF_INIT, log = BUF_INIT;
        efiles_sums(&have, &sums);
        buf_printf(&log, "trillian: %s: substituted from %s (payload %s, sha256 %s); the "
                   "publisher's log is not part of an entry\n", st->name, s->urls.v[i], rel, sha);
        char *sp = path_join(entry, "sums"), *lp = path_join(entry, "log");
        if (write_file_atomic(sp, sums.p, sums.n, 0644) < 0 ||
            write_file_atomic(lp, log.p, log.n, 0644) < 0 ||
            cache_commit(s->cache, entry, st->key) < 0)
            *why = xasprintf("cannot store it in the cache %s: %s", s->cache, strerror(errno));
        else
            rc = 0;
        free(sp);
        free(lp);
        buf_free(&sums);
        buf_free(&log);
    }
    if (rc < 0)
        rm_rf(entry);
    efiles_free(&have);
    free(w);
    free(rel);
    free(file);
    free(entry);
    free(out);
    return rc;
}

int subst_fetch(const struct substituters *s, const struct stage *st, const char **from,
                FILE *err)
{
    if (!subst_active(s) || !subst_eligible(st))
        return -1;
    char *dir = dl_dir(s, st);
    int rc = -1;
    for (size_t i = 0; i < s->urls.n && rc < 0; i++) {
        rm_rf(dir);
        mkdir_p(dir, 0755);
        struct efiles want = {0};
        char sha[65], *why = NULL;
        long long size = 0;
        if (metadata(s, (int)i, st, dir, &want, &size, sha, &why) == 0 &&
            payload(s, (int)i, st, dir, &want, size, sha, &why) == 0) {
            rc = 0;
            *from = s->urls.v[i];
        } else {
            fprintf(err, "trillian: %s: substituter %s %s\n", st->name, s->urls.v[i], why);
        }
        efiles_free(&want);
        free(why);
    }
    rm_rf(dir);
    free(dir);
    return rc;
}
