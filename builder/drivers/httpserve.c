/* The boot check's HTTP file server for one connection; see httpserve.h. */
#define _GNU_SOURCE
#include "httpserve.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

#define HEAD_MAX 16384 /* request line and headers; more is a 400 */

struct conn {
    int in, out;
    const char *root; /* realpath of the served directory */
    FILE *log;
    char buf[HEAD_MAX];
    size_t len; /* bytes of buf read and not yet consumed */
    bool eof;
};

struct request {
    char *method, *target, *version; /* point into the head, NUL-terminated */
    bool keep_alive;
    long long body; /* Content-Length of a request body, 0 without */
    bool bad;       /* unparsable header line or Content-Length */
};

static bool fill(struct conn *c)
{
    if (c->eof || c->len == sizeof c->buf)
        return false;
    ssize_t n;
    do
        n = read(c->in, c->buf + c->len, sizeof c->buf - c->len);
    while (n < 0 && errno == EINTR);
    if (n <= 0) {
        c->eof = true;
        return false;
    }
    c->len += (size_t)n;
    return true;
}

/* The end of the head in buf (after its blank line), 0 when not all read
 * yet. Bare LF line ends are taken too. */
static size_t head_end(const struct conn *c)
{
    for (size_t i = 0; i + 1 < c->len; i++) {
        if (c->buf[i] != '\n')
            continue;
        if (c->buf[i + 1] == '\n')
            return i + 2;
        if (c->buf[i + 1] == '\r' && i + 2 < c->len && c->buf[i + 2] == '\n')
            return i + 3;
    }
    return 0;
}

static void consume(struct conn *c, size_t n)
{
    memmove(c->buf, c->buf + n, c->len - n);
    c->len -= n;
}

/* Skips N bytes of a request body; false at EOF first. */
static bool skip_body(struct conn *c, long long n)
{
    while (n > 0) {
        if (!c->len && !fill(c))
            return false;
        size_t k = (size_t)n < c->len ? (size_t)n : c->len;
        consume(c, k);
        n -= (long long)k;
    }
    return true;
}

/* Whether the comma-separated header value V lists TOKEN. */
static bool has_token(const char *v, const char *token)
{
    size_t tl = strlen(token);
    for (const char *p = v; *p;) {
        p += strspn(p, " \t,");
        size_t n = strcspn(p, ",");
        size_t m = n;
        while (m && (p[m - 1] == ' ' || p[m - 1] == '\t'))
            m--;
        if (m == tl && strncasecmp(p, token, tl) == 0)
            return true;
        p += n;
    }
    return false;
}

/* Parses the head (NUL-terminated, modified in place) into R; false if the
 * request line is malformed. */
static bool parse_head(char *head, struct request *r)
{
    memset(r, 0, sizeof *r);
    char *save = NULL, *words = NULL;
    char *line = strtok_r(head, "\n", &save);
    if (!line)
        return false;
    line[strcspn(line, "\r")] = 0;
    r->method = strtok_r(line, " ", &words);
    r->target = strtok_r(NULL, " ", &words);
    r->version = strtok_r(NULL, " ", &words);
    if (!r->method || !r->target || !r->version || strtok_r(NULL, " ", &words) ||
        (strcmp(r->version, "HTTP/1.1") != 0 && strcmp(r->version, "HTTP/1.0") != 0))
        return false;
    r->keep_alive = strcmp(r->version, "HTTP/1.1") == 0;
    while ((line = strtok_r(NULL, "\n", &save))) {
        line[strcspn(line, "\r")] = 0;
        if (!*line)
            break;
        char *colon = strchr(line, ':');
        if (!colon || colon == line || strchr(" \t", *line)) {
            r->bad = true;
            continue;
        }
        *colon = 0;
        const char *v = colon + 1 + strspn(colon + 1, " \t");
        if (strcasecmp(line, "Connection") == 0) {
            if (has_token(v, "close"))
                r->keep_alive = false;
            else if (has_token(v, "keep-alive"))
                r->keep_alive = true;
        } else if (strcasecmp(line, "Content-Length") == 0) {
            char *end = NULL;
            errno = 0;
            r->body = strtoll(v, &end, 10);
            if (errno || end == v || *end || r->body < 0)
                r->bad = true;
        } else if (strcasecmp(line, "Transfer-Encoding") == 0) {
            r->bad = true; /* a chunked body we would not skip correctly */
        }
    }
    return true;
}

static int hexval(int ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    ch |= 0x20;
    return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* The file TARGET names below ROOT, checked: 0 and *path (new), or the
 * HTTP status refusing it. */
static int resolve(const char *root, const char *target, char **path)
{
    *path = NULL;
    if (strncasecmp(target, "http://", 7) == 0) { /* absolute form: drop the authority */
        target = strchr(target + 7, '/');
        if (!target)
            return 400;
    }
    if (target[0] != '/')
        return 400;
    size_t n = strcspn(target, "?#");
    char *dec = xmalloc(n + 1), *d = dec;
    for (size_t i = 0; i < n; i++) {
        if (target[i] != '%') {
            *d++ = target[i];
            continue;
        }
        int hi = i + 2 < n ? hexval(target[i + 1]) : -1;
        int lo = hi >= 0 ? hexval(target[i + 2]) : -1;
        if (lo < 0 || (hi == 0 && lo == 0)) { /* a bad escape, or a NUL */
            free(dec);
            return 400;
        }
        *d++ = (char)(hi * 16 + lo);
        i += 2;
    }
    *d = 0;
    for (const char *s = dec; *s;) { /* no ".." segment, decoded or not */
        size_t sl = strcspn(s, "/");
        if (sl == 2 && s[0] == '.' && s[1] == '.') {
            free(dec);
            return 403;
        }
        s += sl + (s[sl] ? 1 : 0);
    }
    char *full = xasprintf("%s%s", root, dec);
    free(dec);
    char *real = realpath(full, NULL);
    int e = errno;
    free(full);
    if (!real)
        return e == ENOENT || e == ENOTDIR ? 404 : 403;
    size_t rl = strlen(root);
    if (strncmp(real, root, rl) != 0 || (real[rl] != '/' && real[rl] != 0)) {
        free(real); /* a symlink out of the served directory */
        return 403;
    }
    *path = real;
    return 0;
}

static const char *reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 501: return "Not Implemented";
    default: return "Internal Server Error";
    }
}

static void http_date(time_t t, char out[64])
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 64, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

/* Logged before the answer is sent, so the line is there by the time the
 * client has the answer (a check reads the log once the guest is done). */
static void log_request(struct conn *c, const char *method, const char *target, int status,
                        long long bytes)
{
    if (!c->log)
        return;
    char *m = str_printable(method ? method : "-"), *t = str_printable(target ? target : "-");
    fprintf(c->log, "%s %s %d %lld\n", m, t, status, bytes);
    fflush(c->log);
    free(m);
    free(t);
}

/* A short text answer for STATUS; false if it could not be written. */
static bool answer_error(struct conn *c, const struct request *r, int status, bool close)
{
    char body[64], date[64];
    int bl = snprintf(body, sizeof body, "%d %s\n", status, reason(status));
    http_date(time(NULL), date);
    struct buf b = BUF_INIT;
    buf_printf(&b, "HTTP/1.1 %d %s\r\nServer: trillian\r\nDate: %s\r\n"
               "Content-Type: text/plain\r\nContent-Length: %d\r\n%sConnection: %s\r\n\r\n",
               status, reason(status), date, bl,
               status == 405 ? "Allow: GET, HEAD\r\n" : "", close ? "close" : "keep-alive");
    bool head = r && r->method && strcmp(r->method, "HEAD") == 0;
    if (!head)
        buf_add(&b, body, (size_t)bl);
    log_request(c, r ? r->method : NULL, r ? r->target : NULL, status, head ? 0 : bl);
    bool ok = write_all(c->out, b.p, b.n) == 0;
    buf_free(&b);
    return ok;
}

/* Answers a GET or HEAD; false if the connection broke. */
static bool answer_file(struct conn *c, const struct request *r)
{
    char *path = NULL;
    int status = resolve(c->root, r->target, &path);
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    free(path);
    struct stat sb;
    if (!status && (fd < 0 || fstat(fd, &sb) < 0))
        status = 404;
    else if (!status && !S_ISREG(sb.st_mode))
        status = 403;
    if (status) {
        if (fd >= 0)
            close(fd);
        return answer_error(c, r, status, !r->keep_alive);
    }
    char mod[64], date[64];
    http_date(sb.st_mtime, mod);
    http_date(time(NULL), date);
    char *hdr = xasprintf("HTTP/1.1 200 OK\r\nServer: trillian\r\nDate: %s\r\n"
                          "Content-Type: application/octet-stream\r\nContent-Length: %lld\r\n"
                          "Last-Modified: %s\r\nAccept-Ranges: none\r\nConnection: %s\r\n\r\n",
                          date, (long long)sb.st_size, mod,
                          r->keep_alive ? "keep-alive" : "close");
    bool head = strcmp(r->method, "HEAD") == 0;
    log_request(c, r->method, r->target, 200, head ? 0 : (long long)sb.st_size);
    bool ok = write_all(c->out, hdr, strlen(hdr)) == 0;
    free(hdr);
    long long sent = 0;
    char chunk[65536];
    while (ok && !head && sent < (long long)sb.st_size) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) /* the file shrank: the promised length cannot be kept */
            ok = false;
        else if ((ok = write_all(c->out, chunk, (size_t)n) == 0))
            sent += n;
    }
    close(fd);
    if (!ok && c->log) { /* the line above promised the whole file */
        fprintf(c->log, "  (connection lost after %lld of %lld bytes)\n", sent,
                head ? 0 : (long long)sb.st_size);
        fflush(c->log);
    }
    return ok;
}

static bool is_token(const char *s)
{
    return *s && str_all_alnum_or(s, "!#$%&'*+-.^_`|~");
}

int http_serve(int in, int out, const char *root, FILE *log)
{
    char *real = realpath(root, NULL);
    if (!real || !is_dir(real)) {
        free(real);
        return -1;
    }
    if (strcmp(real, "/") == 0)
        real[0] = 0; /* "/" + "/path", not "//path" */
    struct conn *c = xcalloc(1, sizeof *c);
    c->in = in;
    c->out = out;
    c->root = real;
    c->log = log;
    int served = 0;
    for (;;) {
        size_t end;
        while (c->len && (c->buf[0] == '\r' || c->buf[0] == '\n'))
            consume(c, 1); /* blank lines before a request line are allowed */
        while (!(end = head_end(c)) && fill(c))
            ;
        if (!end) {
            if (c->len == sizeof c->buf) /* a head that does not fit */
                answer_error(c, NULL, 400, true), served++;
            break; /* EOF, between requests or in one */
        }
        char *head = xstrndup(c->buf, end);
        consume(c, end);
        struct request r;
        bool ok;
        if (!parse_head(head, &r) || r.bad || !is_token(r.method)) {
            answer_error(c, &r, 400, true);
            ok = false; /* where the next request starts is unknown */
        } else if (strcmp(r.method, "GET") != 0 && strcmp(r.method, "HEAD") != 0) {
            static const char *const known[] = {"POST", "PUT", "DELETE", "OPTIONS", "PATCH",
                                                "TRACE", "CONNECT", NULL};
            bool std = false;
            for (size_t i = 0; known[i]; i++)
                std |= strcmp(known[i], r.method) == 0;
            answer_error(c, &r, std ? 405 : 501, true);
            ok = false; /* its body, if any, is not read */
        } else {
            ok = skip_body(c, r.body) && answer_file(c, &r) && r.keep_alive;
        }
        free(head);
        served++;
        if (!ok)
            break;
    }
    free(c);
    free(real);
    return served;
}

char *http_guestfwd_command(const char *self, const char *root, const char *log)
{
    struct buf b = BUF_INIT;
    const char *words[] = {self, HTTPSERVE_COMMAND, "--log", log, root};
    for (size_t i = 0; i < ARRAY_LEN(words); i++) {
        if (i)
            buf_puts(&b, " ");
        buf_shell_quote(&b, words[i]); /* g_shell_parse_argv splits as sh does */
    }
    return buf_detach(&b);
}

/* Whether FD is the same open file as stdout (libslirp gives the
 * connection as stdin, stdout and stderr). */
static bool same_as_stdout(int fd)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && fstat(STDOUT_FILENO, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

int http_serve_main(int argc, char **argv)
{
    const char *logpath = NULL;
    int i = 0;
    if (argc >= 2 && strcmp(argv[0], "--log") == 0) {
        logpath = argv[1];
        i = 2;
    }
    if (argc - i != 1) {
        if (!same_as_stdout(STDERR_FILENO))
            fprintf(stderr, "usage: trillian " HTTPSERVE_COMMAND " [--log FILE] DIR\n"
                    "(run by a boot check's `http` for each connection, on stdin and stdout; "
                    "see builder/drivers/httpserve.h)\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN); /* a guest that hangs up is an EPIPE, not a death */
    FILE *log = NULL;
    if (logpath)
        log = fopen(logpath, "ae");
    else if (!same_as_stdout(STDERR_FILENO))
        log = stderr;
    int n = http_serve(STDIN_FILENO, STDOUT_FILENO, argv[i], log);
    if (n < 0 && log)
        fprintf(log, "%s: not a directory: nothing served\n", argv[i]);
    if (log && log != stderr)
        fclose(log);
    return n < 0 ? 1 : 0;
}
