/* Remote inputs pinned by sha256 (fetch.h). */
#define _GNU_SOURCE
#include "fetch.h"

#include <ctype.h>
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/run_command.h"
#include "base/sha256.h"
#include "stage.h"

bool fetch_valid_sha256(const char *s)
{
    size_t n = 0;
    for (; s && s[n]; n++)
        if (!isxdigit((unsigned char)s[n]))
            return false;
    return n == 64;
}

bool fetch_valid_url(const char *url)
{
    static const char *const schemes[] = {"https://", "http://", "ftp://", "file://"};
    for (size_t i = 0; url && i < ARRAY_LEN(schemes); i++)
        if (str_starts(url, schemes[i]) && url[strlen(schemes[i])])
            return true;
    return false;
}

bool fetch_offline(void)
{
    const char *v = getenv("TRILLIAN_OFFLINE");
    return v && *v && strcmp(v, "0") != 0;
}

static bool is_url(const char *s) { return strstr(s, "://") != NULL; }

/* The file name an input is stored and looked up under. */
static const char *file_name(const char *url, const char *name)
{
    if (name && *name)
        return name;
    const char *b = url ? path_basename(url) : "";
    return *b ? b : "source";
}

static char *cache_path(const char *cache_dir, const char *sha, const char *base)
{
    char lower[65];
    for (size_t i = 0; i < 64; i++)
        lower[i] = (char)tolower((unsigned char)sha[i]);
    lower[64] = 0;
    return xasprintf("%s/downloads/%.16s-%s", cache_dir, lower, base);
}

static bool has_sha(const char *path, const char *sha)
{
    char hex[65];
    return path_exists(path) && sha256_file(path, hex) == 0 && strcasecmp(hex, sha) == 0;
}

/* Whether N (L bytes) has a ".." component: a way out of the mirror. A
 * ".." inside a name ("unaligned..patch", in the ia64 7.2 series) is not. */
static bool goes_up(const char *n, size_t l)
{
    for (size_t i = 0; i + 1 < l; i++)
        if (n[i] == '.' && n[i + 1] == '.' && (i == 0 || n[i - 1] == '/') &&
            (i + 2 == l || n[i + 2] == '/'))
            return true;
    return false;
}

/* The name a SHA256SUMS line ("HEX  NAME" or "HEX *NAME", LEN bytes) gives,
 * as *NAME and *NLEN, when it is a name inside the mirror (not absolute, no
 * way up); false otherwise. */
static bool sums_line_name(const char *line, size_t len, const char **name, size_t *nlen)
{
    if (len <= 66 || line[64] != ' ')
        return false;
    const char *n = line + 65;
    if (*n == ' ' || *n == '*')
        n++;
    size_t l = len - (size_t)(n - line);
    while (l && (n[l - 1] == '\r' || n[l - 1] == ' '))
        l--;
    if (!l || n[0] == '/' || goes_up(n, l))
        return false;
    *name = n;
    *nlen = l;
    return true;
}

/* The name SHA256SUMS text gives the file with SHA, or NULL. */
static char *sums_find(const char *text, const char *sha)
{
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n'), *n;
        size_t len = nl ? (size_t)(nl - line) : strlen(line), nlen;
        if (sums_line_name(line, len, &n, &nlen) && strncasecmp(line, sha, 64) == 0)
            return xstrndup(n, nlen);
        line = nl ? nl + 1 : NULL;
    }
    return NULL;
}

/* The path SHA256SUMS text lists for a file named BASE (in any directory:
 * "elilo/elilo-3.16.tar.xz" for "elilo-3.16.tar.xz"), or NULL. A recipe
 * whose sha256 is wrong then finds the file by name and is told its real
 * hash, instead of only that no copy has the wrong one. */
static char *sums_find_name(const char *text, const char *base)
{
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n'), *n;
        size_t len = nl ? (size_t)(nl - line) : strlen(line), nlen;
        if (sums_line_name(line, len, &n, &nlen)) {
            char *name = xstrndup(n, nlen);
            if (strcmp(path_basename(name), base) == 0)
                return name;
            free(name);
        }
        line = nl ? nl + 1 : NULL;
    }
    return NULL;
}

static void mirrors(struct strlist *out)
{
    const char *env = getenv("TRILLIAN_MIRRORS");
    if (!env)
        return;
    char *copy = xstrdup(env), *save = NULL;
    for (char *m = strtok_r(copy, " \t\n", &save); m; m = strtok_r(NULL, " \t\n", &save)) {
        size_t n = strlen(m);
        while (n > 1 && m[n - 1] == '/')
            m[--n] = 0;
        strlist_push(out, m);
    }
    free(copy);
}

static int curl(const struct stage_ctx *cx, const char *url, const char *to)
{
    const char *argv[] = {"curl", "--fail", "--location", "--silent", "--show-error",
                          "--retry", "3", "--connect-timeout", "30", "--output", to,
                          url, NULL};
    return cx_run(cx, argv);
}

/* Puts SRC (a local path or a URL) into TMP and checks it against SHA.
 * Returns 0 if TMP now holds the right bytes; logs what went wrong. */
static int try_source(const struct stage_ctx *cx, const char *src, const char *tmp,
                      const char *sha, struct buf *tried)
{
    unlink(tmp);
    int rc = is_url(src) ? curl(cx, src, tmp) : copy_file(src, tmp);
    if (rc != 0) {
        buf_printf(tried, "; %s: %s", src, is_url(src) ? "download failed" : strerror(errno));
        unlink(tmp);
        return -1;
    }
    char hex[65];
    if (sha256_file(tmp, hex) < 0 || strcasecmp(hex, sha) != 0) {
        cx_log(cx, "%s has sha256 %s, not %s: not used", src, hex, sha);
        buf_printf(tried, "; %s has sha256 %s", src, hex);
        unlink(tmp);
        return -1;
    }
    cx_log(cx, "got %s (sha256 %s)", src, hex);
    return 0;
}

/* The SHA256SUMS of a mirror as text (new string), or NULL. */
static char *mirror_sums(const struct stage_ctx *cx, const char *mirror, const char *tmp)
{
    char *text = NULL;
    size_t len;
    if (!is_url(mirror)) {
        char *p = path_join(mirror, "SHA256SUMS");
        if (read_file(p, &text, &len) < 0)
            text = NULL;
        free(p);
        return text;
    }
    char *u = xasprintf("%s/SHA256SUMS", mirror);
    if (curl(cx, u, tmp) == 0 && read_file(tmp, &text, &len) < 0)
        text = NULL;
    unlink(tmp);
    free(u);
    return text;
}

char *fetch_pinned(const struct stage_ctx *cx, const char *url, const char *name,
                   const char *sha, const char *where)
{
    const char *base = file_name(url, name);
    char *dst = cache_path(cx->cache_dir, sha, base);
    if (has_sha(dst, sha)) {
        cx_log(cx, "%s: using %s (in the cache, sha256 matches)", where, dst);
        return dst;
    }
    char *dir = path_dirname(dst);
    if (mkdir_p(dir, 0755) < 0) {
        cx_fail(cx, "%s: cannot create %s: %s (check the cache directory's permissions)",
                where, dir, strerror(errno));
        free(dir);
        free(dst);
        return NULL;
    }
    free(dir);
    char *tmp = xasprintf("%s.part.%ld", dst, (long)getpid());
    struct buf tried = BUF_INIT;
    struct strlist ms = {0};
    mirrors(&ms);
    bool got = false;
    for (size_t i = 0; i < ms.n && !got; i++) {
        char *listed = mirror_sums(cx, ms.v[i], tmp);
        char *hit = listed ? sums_find(listed, sha) : NULL;
        char *named = listed && !hit ? sums_find_name(listed, base) : NULL;
        free(listed);
        if (hit) {
            char *src = is_url(ms.v[i]) ? xasprintf("%s/%s", ms.v[i], hit) : path_join(ms.v[i], hit);
            got = try_source(cx, src, tmp, sha, &tried) == 0;
            free(src);
            free(hit);
        }
        if (!got) {
            const char *rel = named ? named : base;
            char *src = is_url(ms.v[i]) ? xasprintf("%s/%s", ms.v[i], rel) : path_join(ms.v[i], rel);
            if (is_url(src) || path_exists(src))
                got = try_source(cx, src, tmp, sha, &tried) == 0;
            else
                buf_printf(&tried, "; mirror %s has no file with that sha256 or name", ms.v[i]);
            free(src);
        }
        free(named);
    }
    strlist_free(&ms);
    if (!got && url && !fetch_offline())
        got = try_source(cx, url, tmp, sha, &tried) == 0;
    else if (!got && url)
        buf_printf(&tried, "; %s: not asked (offline)", url);
    if (got && rename(tmp, dst) < 0) {
        cx_fail(cx, "%s: cannot store %s: %s", where, dst, strerror(errno));
        got = false;
    } else if (!got) {
        cx_fail(cx, "%s: no verified copy of %s (sha256 %s): %s. Put the file in a mirror "
                "(--mirror DIR: the file and its SHA256SUMS line)%s, or fix the sha256 if the "
                "file really changed", where, base, sha, tried.n ? tried.p + 2 : "no mirror is set",
                url ? " or let Trillian reach its origin" : "");
    }
    unlink(tmp);
    free(tmp);
    buf_free(&tried);
    if (!got) {
        free(dst);
        return NULL;
    }
    return dst;
}

bool fetch_available(const char *cache_dir, const char *url, const char *name, const char *sha)
{
    const char *base = file_name(url, name);
    char *dst = cache_path(cache_dir, sha, base);
    bool ok = path_exists(dst);
    free(dst);
    struct strlist ms = {0};
    mirrors(&ms);
    for (size_t i = 0; i < ms.n && !ok; i++) {
        if (is_url(ms.v[i]))
            continue;
        char *p = path_join(ms.v[i], "SHA256SUMS"), *text = NULL;
        size_t len;
        if (read_file(p, &text, &len) == 0) {
            char *hit = sums_find(text, sha);
            free(text);
            if (hit) {
                char *f = path_join(ms.v[i], hit);
                ok = path_exists(f);
                free(f);
                free(hit);
            }
        }
        free(p);
        if (!ok) { /* by name: only if the bytes are right (a name proves nothing) */
            char *f = path_join(ms.v[i], base);
            ok = has_sha(f, sha);
            free(f);
        }
    }
    strlist_free(&ms);
    return ok;
}

/* ---- downloads outside a stage -------------------------------------------- */

/* What curl's exit status CODE means, for one line (new string). */
static char *curl_why(int code, int http, const struct fetch_bounds *b)
{
    switch (code) {
    case 22: return http > 0 ? xasprintf("HTTP %d", http) : xstrdup("HTTP error");
    case 28: return xasprintf("timed out (less than %d bytes a second for %d s)",
                              FETCH_MIN_RATE, b->stall);
    case 18: return xstrdup("the server closed the connection before the whole file came");
    case 56: return xstrdup("the connection broke while receiving");
    case 52: return xstrdup("the server closed the connection without answering");
    case 6: return xstrdup("cannot resolve the host name");
    case 7: return xstrdup("cannot connect");
    case 37: return xstrdup("no such file");
    case 63: return xasprintf("larger than the %lld bytes allowed for it", b->max);
    case 1: return xstrdup("a redirect to a protocol other than http(s), not followed");
    default: return code < 0 ? xstrdup("curl is not installed (tools/install-deps)")
                             : xasprintf("curl failed (exit status %d)", code);
    }
}

/* The status code of the last response in curl's --dump-header file. */
static int http_status(const char *headers)
{
    char *text = NULL;
    int code = 0;
    if (read_file(headers, &text, NULL) < 0)
        return 0;
    for (char *l = text; l && *l;) {
        if (str_starts(l, "HTTP/")) {
            const char *sp = strchr(l, ' ');
            if (sp)
                code = atoi(sp + 1);
        }
        l = strchr(l, '\n');
        l = l ? l + 1 : NULL;
    }
    free(text);
    return code;
}

/* curl's options on its stdin (-K -): the URL, which may hold a password,
 * never in an argv that ps shows. A read end, or -1. */
static int config_pipe(const char *url)
{
    struct buf b = BUF_INIT;
    buf_puts(&b, "url = \"");
    for (const char *c = url; *c; c++) {
        if (*c == '"' || *c == '\\')
            buf_puts(&b, "\\");
        buf_add(&b, c, 1);
    }
    buf_puts(&b, "\"\n");
    int p[2] = {-1, -1};
    bool ok = b.n < 60000 && pipe2(p, O_CLOEXEC) == 0 && /* fits the pipe: no deadlock */
              write(p[1], b.p, b.n) == (ssize_t)b.n;
    if (p[1] >= 0)
        close(p[1]);
    buf_free(&b);
    if (!ok && p[0] >= 0)
        close(p[0]);
    return ok ? p[0] : -1;
}

/* Copies curl's stdout (RFD) to WFD until it ends, B->max bytes in all are
 * passed (*HAVE counts them) or DEADLINE comes: then curl (PID) is killed.
 * 0, 1 (too large), 2 (too slow in all), -1 (cannot write, errno). */
static int pump(int rfd, int wfd, pid_t pid, long long *have, const struct fetch_bounds *b,
                double deadline)
{
    static char chunk[65536];
    for (;;) {
        double left = deadline - now_seconds();
        if (left <= 0) {
            kill(pid, SIGKILL);
            return 2;
        }
        struct pollfd pfd = {.fd = rfd, .events = POLLIN};
        int ms = left > 1.0 ? 1000 : (int)(left * 1000) + 1;
        if (poll(&pfd, 1, ms) <= 0)
            continue;
        ssize_t n = read(rfd, chunk, sizeof chunk);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return 0;
        if (b->max > 0 && *have + n > b->max) { /* whatever curl knows of the size */
            kill(pid, SIGKILL);
            return 1;
        }
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(wfd, chunk + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                int e = errno;
                kill(pid, SIGKILL);
                errno = e;
                return -1;
            }
            off += w;
        }
        *have += n;
    }
}

int fetch_download(const char *url, const char *to, const struct fetch_bounds *b, bool progress,
                   char **why)
{
    *why = NULL;
    char t[32], m[32], at[32], rate[16];
    snprintf(t, sizeof t, "%d", b->stall);
    snprintf(m, sizeof m, "%lld", b->max);
    snprintf(rate, sizeof rate, "%d", FETCH_MIN_RATE);
    char *headers = xasprintf("%s.headers", to);
    int code = -1, wfd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    long long have = 0;
    if (wfd < 0) {
        *why = xasprintf("cannot create %s: %s", to, strerror(errno));
        free(headers);
        return -1;
    }
    for (int attempt = 0; attempt < 3; attempt++) {
        double left = b->deadline - now_seconds();
        if (left < 1) {
            free(*why);
            *why = xasprintf("took more than the %d s an entry may take in all", b->max_time);
            break;
        }
        char mt[32];
        snprintf(mt, sizeof mt, "%.1f", left);
        snprintf(at, sizeof at, "%lld", have);
        const char *argv[40];
        size_t n = 0;
        argv[n++] = "curl";
        argv[n++] = "--config"; /* the URL, on stdin */
        argv[n++] = "-";
        argv[n++] = "--fail";
        argv[n++] = "--netrc-optional"; /* credentials kept out of the URL */
        argv[n++] = "--location";
        argv[n++] = "--proto";
        argv[n++] = "=http,https";
        argv[n++] = "--proto-redir";
        argv[n++] = "=http,https";
        argv[n++] = progress ? "--progress-bar" : "--silent";
        argv[n++] = "--connect-timeout";
        argv[n++] = t;
        argv[n++] = "--speed-limit";
        argv[n++] = rate;
        argv[n++] = "--speed-time";
        argv[n++] = t;
        argv[n++] = "--max-time";
        argv[n++] = mt;
        if (b->max > 0) { /* refused before it comes, when the server says its size */
            argv[n++] = "--max-filesize";
            argv[n++] = m;
        }
        if (have > 0) { /* resume what came */
            argv[n++] = "--continue-at";
            argv[n++] = at;
        }
        argv[n++] = "--dump-header";
        argv[n++] = headers;
        argv[n++] = "--output";
        argv[n++] = "-";
        argv[n] = NULL;
        int cfg = config_pipe(url), p[2] = {-1, -1};
        if (cfg < 0 || pipe2(p, O_CLOEXEC) < 0) {
            int e = errno;
            if (cfg >= 0)
                close(cfg);
            free(*why);
            *why = xasprintf("cannot pass the URL to curl: %s", strerror(e));
            break;
        }
        struct run_command cmd = {.argv = argv, .in = RUN_IN_FD, .in_fd = cfg,
                                  .out = RUN_OUT_FD, .out_fd = p[1],
                                  .err = progress ? RUN_ERR_INHERIT : RUN_ERR_NULL};
        unlink(headers);
        int started = run_start(&cmd);
        close(cfg);
        close(p[1]);
        int over = started < 0 ? 0 : pump(p[0], wfd, cmd.pid, &have, b, b->deadline);
        int pump_errno = errno;
        close(p[0]);
        code = run_finish(&cmd);
        run_command_clear(&cmd);
        free(*why);
        *why = NULL;
        if (over == 0 && code == 0)
            break;
        if (over == 1)
            *why = xasprintf("more than the %lld bytes allowed for it", b->max);
        else if (over == 2 || (code == 28 && now_seconds() >= b->deadline - 0.5))
            *why = xasprintf("took more than the %d s an entry may take in all", b->max_time);
        else if (over < 0)
            *why = xasprintf("cannot write %s: %s", to, strerror(pump_errno));
        else
            *why = curl_why(code, http_status(headers), b);
        if (over != 0 || code == 28)
            break; /* too large, too slow: not asked again */
        /* a transfer cut short or a server error is asked again, resuming what
         * came (a server without ranges, curl's 33: from the start) */
        bool again = code == 18 || code == 56 || code == 52 || code == 33 ||
                     (code == 22 && http_status(headers) >= 500);
        if (code == 33 || code == 22) {
            have = 0;
            if (ftruncate(wfd, 0) < 0 || lseek(wfd, 0, SEEK_SET) < 0)
                break;
        }
        if (!again)
            break;
    }
    bool ok = *why == NULL && code == 0;
    if (close(wfd) < 0 && ok) {
        *why = xasprintf("cannot write %s: %s", to, strerror(errno));
        ok = false;
    }
    unlink(headers);
    free(headers);
    if (!ok)
        unlink(to);
    return ok ? 0 : -1;
}
