/* Substituters (substitute.h). */
#define _GNU_SOURCE
#include "substitute.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json_out.h"
#include "base/sha256.h"
#include "drivers/fetch.h"
#include "drivers/sshsig.h"
#include "engine.h"
#include "entry_files.h"
#include "formats/archive.h"
#include "release.h"

#define META_MAX (16LL << 20) /* metadata: some 80,000 files' worth */
#define SIG_MAX (64LL << 10)  /* an SSH signature is some 300 bytes */
#define MAX_TIME 1800         /* seconds for one entry from one substituter */

static bool is_url(const char *s) { return strstr(s, "://") != NULL; }
static bool is_http(const char *s)
{
    return str_starts(s, "http://") || str_starts(s, "https://");
}

/* URL as it may be shown or recorded: without a user or password
 * ("http://u:p@host/x" is "http://host/x"), control characters escaped. */
static char *url_shown(const char *url)
{
    const char *auth = strstr(url, "://");
    char *bare = xstrdup(url);
    if (auth) {
        auth += 3;
        size_t alen = strcspn(auth, "/?#");
        const char *at = memrchr(auth, '@', alen);
        if (at) {
            free(bare);
            bare = xasprintf("%.*s%s", (int)(auth - url), url, at + 1);
        }
    }
    char *shown = str_printable(bare);
    free(bare);
    return shown;
}

/* The directory a file:/// URL names (%XX decoded; new string), or NULL. */
static char *file_url_path(const char *url)
{
    struct buf b = BUF_INIT;
    for (const char *c = url + strlen("file://"); *c; c++) {
        int hi, lo;
        if (*c != '%') {
            buf_add(&b, c, 1);
            continue;
        }
        hi = isxdigit((unsigned char)c[1]) ? c[1] : -1;
        lo = hi >= 0 && isxdigit((unsigned char)c[2]) ? c[2] : -1;
        char byte = lo < 0 ? 0 : (char)strtol((char[]){(char)hi, (char)lo, 0}, NULL, 16);
        if (!byte) { /* malformed, or %00 */
            buf_free(&b);
            return NULL;
        }
        buf_add(&b, &byte, 1);
        c += 2;
    }
    return buf_detach(&b);
}

static bool has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return true;
    return false;
}

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

/* The files of TRUST that only their owner may write, each other one said
 * in one line on ERR. A key file others may write lets them add a key. */
static void trust_usable(const struct strlist *trust, struct strlist *usable, FILE *err)
{
    size_t bad = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < trust->n; i++) {
            struct stat sb;
            bool open_to_others = stat(trust->v[i], &sb) == 0 && (sb.st_mode & 022);
            if (pass == 0) {
                bad += open_to_others;
                if (!open_to_others)
                    strlist_push(usable, trust->v[i]);
                continue;
            }
            if (!open_to_others)
                continue;
            char *p = str_printable(trust->v[i]);
            fprintf(err, "trillian: the trusted key file %s is writable by %s (mode %04o): not "
                    "used, as whoever can write it could add a key (chmod go-w %s)%s\n", p,
                    sb.st_mode & 02 ? "others" : "its group", (unsigned)(sb.st_mode & 07777), p,
                    bad == trust->n ? "; no key is trusted, so no substituter is asked" : "");
            free(p);
        }
}

int subst_init(struct substituters *s, const struct strlist *urls, const struct strlist *trust,
               const char *cache, FILE *err)
{
    memset(s, 0, sizeof *s);
    s->cache = xstrdup(cache);
    const char *t = getenv("TRILLIAN_SUBSTITUTER_TIMEOUT");
    s->timeout = t && atoi(t) > 0 ? atoi(t) : 30;
    t = getenv("TRILLIAN_SUBSTITUTER_MAX_TIME");
    s->max_time = t && atoi(t) > 0 ? atoi(t) : MAX_TIME;
    for (size_t i = 0; i < urls->n; i++) {
        char *u = xstrdup(urls->v[i]), *shown = url_shown(u), *local = NULL;
        size_t n = strlen(u);
        while (n > 1 && u[n - 1] == '/')
            u[--n] = 0;
        const char *no = NULL;
        if (has_control(u))
            no = "holds control characters";
        else if (str_starts(u, "file:///") && !(local = file_url_path(u)))
            no = "is a file:// URL with a malformed %-escape";
        else if (!is_http(u) && !local && (is_url(u) || !is_dir(u)))
            no = "not an http(s) URL, a file:// URL or a directory";
        if (no) {
            fprintf(err, "trillian: substituter %s: %s; not used\n", shown, no);
            free(u);
            free(shown);
            free(local);
            continue;
        }
        if (!is_http(u)) { /* read here, as files: a path */
            free(shown);
            if (!local)
                shown = str_printable(local = path_absolute(NULL, u));
            else
                shown = url_shown(u);
            free(u);
            u = local;
        }
        strlist_push_owned(&s->urls, u);
        strlist_push_owned(&s->shown, shown);
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
    struct strlist usable = {0};
    trust_usable(trust, &usable, err);
    if (!usable.n) { /* said: the build goes on without substituters */
        strlist_free(&usable);
        subst_free(s);
        return 0;
    }
    char *why = NULL, *text = sshsig_allowed((const char *const *)usable.v, (int)usable.n, &why);
    strlist_free(&usable);
    if (!text) {
        char *w = str_printable(why);
        fprintf(err, "trillian: %s\n", w);
        free(w);
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
    strlist_free(&s->shown);
    memset(s, 0, sizeof *s);
}

bool subst_eligible(const struct stage *st)
{
    return !st->kind->uncached && strcmp(st->section, "bootcheck") != 0;
}

/* SRC, a file of a local substituter, into TO: only a regular file (a FIFO
 * or device is never opened for reading: it could block or act), never
 * more than MAX bytes, even if it grows while read. */
static int copy_bounded(const char *src, const char *to, long long max, char **why)
{
    struct stat sb, fsb;
    if (stat(src, &sb) < 0) {
        *why = xstrdup(errno == ENOENT ? "no such file" : strerror(errno));
        return -1;
    }
    if (!S_ISREG(sb.st_mode)) {
        *why = xstrdup("not a regular file (a FIFO, device or directory is not read)");
        return -1;
    }
    if (sb.st_size > max) {
        *why = xasprintf("more than the %lld bytes allowed for it (%lld bytes)", max,
                         (long long)sb.st_size);
        return -1;
    }
    /* O_NONBLOCK: should it have become a FIFO since, the open does not wait */
    int in = open(src, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), out = -1;
    if (in < 0 || fstat(in, &fsb) < 0 || !S_ISREG(fsb.st_mode) || fsb.st_ino != sb.st_ino ||
        fsb.st_dev != sb.st_dev) {
        *why = in < 0 ? xstrdup(strerror(errno)) : xstrdup("replaced while it was opened");
        if (in >= 0)
            close(in);
        return -1;
    }
    out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    long long have = 0;
    char chunk[65536];
    ssize_t n = out < 0 ? -1 : 0;
    while (out >= 0 && (n = read(in, chunk, sizeof chunk)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || (have += n) > max || write(out, chunk, (size_t)n) != n)
            break;
    }
    int e = errno;
    close(in);
    if (out >= 0 && close(out) < 0 && n == 0)
        n = -1, e = errno;
    if (n == 0)
        return 0;
    *why = have > max ? xasprintf("more than the %lld bytes allowed for it", max)
                      : xasprintf("cannot copy it to %s: %s", to, strerror(e));
    unlink(to);
    return -1;
}

/* REL (below substituter I's top) into TO: at most MAX bytes, by DEADLINE. */
static int get(const struct substituters *s, int i, const char *rel, const char *to,
               long long max, double deadline, bool progress, char **why)
{
    const char *u = s->urls.v[i];
    *why = NULL;
    if (is_http(u)) {
        char *url = xasprintf("%s/%s", u, rel);
        struct fetch_bounds b = {max, s->timeout, s->max_time, deadline};
        int rc = fetch_download(url, to, &b, progress, why);
        free(url);
        return rc;
    }
    char *src = path_join(u, rel);
    int rc = copy_bounded(src, to, max, why);
    free(src);
    return rc;
}

/* Whether a failed get's WHY says the file is not there at all. */
static bool absent(const char *why)
{
    return !strcmp(why, "no such file") || !strcmp(why, "HTTP 404") || !strcmp(why, "HTTP 410");
}

/* One line on ERR: substituter I does not give ST's entry, WHY (names from
 * the substituter escaped: no control character reaches a terminal). */
static void say_refused(FILE *err, const struct substituters *s, size_t i,
                        const struct stage *st, const char *why)
{
    char *w = str_printable(why);
    fprintf(err, "trillian: %s: substituter %s %s\n", st->name, s->shown.v[i], w);
    free(w);
}

/* DIR emptied for substituter I's files, or -1 with *WHY. */
static int fresh_dir(const char *dir, char **why)
{
    if (rm_rf(dir) == 0 && mkdir_p(dir, 0755) == 0)
        return 0;
    *why = xasprintf("was not asked: cannot clear %s: %s (remove it by hand)", dir,
                     strerror(errno));
    return -1;
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
                    double deadline, struct efiles *files, long long *size, char sha[65],
                    char **why)
{
    char *rel = xasprintf("cache/%s.json", st->key), *relsig = xasprintf("%s.sig", rel);
    char *meta = path_join(dir, "meta.json"), *sig = path_join(dir, "meta.json.sig"), *w = NULL;
    json_object *m = NULL;
    int rc = -1;
    if (get(s, i, rel, meta, META_MAX, deadline, false, &w) < 0) {
        *why = absent(w) ? xasprintf("has no entry for it (%s: %s)", rel, w)
                         : xasprintf("its entry's metadata is refused (%s: %s)", rel, w);
    } else if (get(s, i, relsig, sig, SIG_MAX, deadline, false, &w) < 0) {
        *why = absent(w) ? xasprintf("its entry has no signature (%s: %s)", relsig, w)
                         : xasprintf("its entry's signature is refused (%s: %s)", relsig, w);
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
        struct efiles f = {0};
        char sha[65], *why = NULL;
        long long size = 0;
        double deadline = now_seconds() + s->max_time;
        if (fresh_dir(dir, &why) == 0 &&
            metadata(s, (int)i, st, dir, deadline, &f, &size, sha, &why) == 0) {
            *offer = (struct subst_offer){(int)i, size, efiles_bytes(&f)};
            got = true;
        } else if (err) {
            say_refused(err, s, i, st, why);
        }
        efiles_free(&f);
        free(why);
    }
    if (rm_rf(dir) < 0 && err)
        fprintf(err, "trillian: cannot remove %s: %s (remove it by hand)\n", dir,
                strerror(errno));
    free(dir);
    return got;
}

struct admit {
    const struct efiles *want;
    bool *seen;            /* by index into want */
    char **why;
};

static const struct efile *wanted(const struct efiles *want, const char *path)
{
    struct efile key = {.path = (char *)path};
    return want->n ? bsearch(&key, want->v, want->n, sizeof *want->v, efiles_cmp) : NULL;
}

/* Whether an archive member may be unpacked, asked before anything of it
 * is written: a name an entry may hold, a file, directory, symlink inside
 * the entry or hard link, and in the signed list with that type, once, no
 * larger than the list says (*MAX: its data's bound while it is written). */
static int admit(const struct arc_entry *e, long long *max, void *ud)
{
    struct admit *a = ud;
    const char *p = e->path;
    while (p[0] == '.' && p[1] == '/')
        p += 2;
    if (e->type == ARC_DIR && (!strcmp(p, ".") || !*p))
        return 0; /* the entry's top itself ("tar -C DIR -c .") */
    const struct efile *w = efiles_path_ok(p) ? wanted(a->want, p) : NULL;
    char type = e->type == ARC_DIR ? 'd' : e->type == ARC_SYMLINK ? 'l'
              : e->type == ARC_FILE || e->type == ARC_HARDLINK ? 'f' : 0;
    const struct efile *to = e->type == ARC_HARDLINK ? wanted(a->want, e->target) : NULL;
    if (!efiles_path_ok(p))
        *a->why = xasprintf("its payload holds a name an entry may not hold (%.200s)", e->path);
    else if (e->type == ARC_SYMLINK && !efiles_link_inside(p, e->target))
        *a->why = xasprintf("its payload holds a symlink pointing outside the entry (%.200s -> %.200s)",
                            p, e->target);
    else if (e->type == ARC_HARDLINK && !efiles_path_ok(e->target))
        *a->why = xasprintf("its payload holds a hard link to %.200s", e->target);
    else if (!type)
        *a->why = xasprintf("its payload holds a device, fifo or socket (%.200s)", p);
    else if (!w)
        *a->why = xasprintf("its payload differs from its signed file list: %.200s: in the payload "
                            "but not in its metadata", p);
    else if (a->seen[w - a->want->v])
        *a->why = xasprintf("its payload holds %.200s twice", p);
    else if (w->type != type)
        *a->why = xasprintf("its payload differs from its signed file list: %.200s: not a %s",
                            p, type == 'f' ? "file" : type == 'l' ? "symlink" : "directory");
    else if (type == 'f' && (e->size > w->size || (to && (to->type != 'f' ||
                                                          to->size != w->size))))
        *a->why = xasprintf("its payload differs from its signed file list: %.200s: %lld bytes, "
                            "not %lld", p, to ? to->size : e->size, w->size);
    if (*a->why)
        return 1;
    a->seen[w - a->want->v] = true;
    *max = type == 'f' ? w->size : 0;
    return 0;
}

/* Substituter I's payload for ST into DIR/entry/out, checked against WANT
 * while it is unpacked, and committed. A name of its own: a refused entry
 * never shares a directory with the stage's local build. */
static int payload(const struct substituters *s, int i, const struct stage *st, const char *dir,
                   double deadline, const struct efiles *want, long long size, const char *sha,
                   char **why)
{
    char *rel = xasprintf("cache/%s.tar.zst", st->key), *file = path_join(dir, "payload.tar.zst");
    char *entry = path_join(dir, "entry");
    char *out = path_join(entry, "out"), *w = NULL, hex[65] = "";
    char err[ARC_ERRLEN] = "";
    struct efiles have = {0};
    struct admit adm = {want, xcalloc(want->n + 1, sizeof(bool)), why};
    int rc = -1;
    if (get(s, i, rel, file, size, deadline, isatty(2), &w) < 0) {
        *why = strstr(w, "allowed for it") /* larger than its signed size */
                   ? xasprintf("its payload is not what its metadata says (%s: %s)", rel, w)
                   : xasprintf("cannot download its payload (%s: %s)", rel, w);
    } else if (sha256_file(file, hex) < 0 || strcmp(hex, sha)) {
        struct buf b = BUF_INIT;
        buf_printf(&b, "its payload is not what its metadata says (sha256 %.16s…, not %.16s…",
                   hex, sha);
        struct stat sb;
        long long got = stat(file, &sb) == 0 ? (long long)sb.st_size : -1;
        if (got != size)
            buf_printf(&b, "; %lld bytes, not %lld", got, size);
        buf_puts(&b, ")");
        *why = buf_detach(&b);
    } else if (mkdir_p(out, 0755) < 0) {
        *why = xasprintf("cannot create %s: %s", out, strerror(errno));
    } else if (arc_extract_checked(file, out, ARC_X_NO_OWNERS | ARC_X_NO_XATTRS, admit, &adm,
                                   efiles_bytes(want), err) != 0) {
        const char *unsafe = strstr(err, "unsafe member name ");
        if (!*why && unsafe)
            *why = xasprintf("its payload holds a path that leaves the entry (%s)", unsafe + 19);
        else if (!*why)
            *why = xasprintf("its payload cannot be unpacked within its signed file list: %s",
                             err);
    } else if (efiles_scan(out, &have, &w) < 0) {
        *why = xasprintf("its payload unpacked to something else: %s", w);
    } else if ((w = efiles_diff(want, &have))) {
        *why = xasprintf("its payload differs from its signed file list: %s", w);
    } else {
        struct buf sums = BUF_INIT, log = BUF_INIT;
        efiles_sums(&have, &sums);
        buf_printf(&log, "trillian: %s: substituted from %s (payload %s, sha256 %s); the "
                   "publisher's log is not part of an entry\n", st->name, s->shown.v[i], rel, sha);
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
    efiles_free(&have);
    free(adm.seen);
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
        struct efiles want = {0};
        char sha[65], *why = NULL;
        long long size = 0;
        double deadline = now_seconds() + s->max_time;
        if (fresh_dir(dir, &why) == 0 &&
            metadata(s, (int)i, st, dir, deadline, &want, &size, sha, &why) == 0 &&
            payload(s, (int)i, st, dir, deadline, &want, size, sha, &why) == 0) {
            rc = 0;
            *from = s->shown.v[i];
        } else {
            say_refused(err, s, i, st, why);
        }
        efiles_free(&want);
        free(why);
    }
    /* whatever a refused payload left, at any depth, goes: never silently kept */
    if (rm_rf(dir) < 0)
        fprintf(err, "trillian: %s: cannot remove %s: %s (remove it by hand)\n", st->name, dir,
                strerror(errno));
    free(dir);
    return rc;
}
