/* httpserve.h: the boot check's one-connection HTTP server, fed requests
 * through a pipe and answering into a file: GET and HEAD, keep-alive and
 * pipelining, Connection: close, HTTP/1.0, percent-decoding, query strings,
 * Last-Modified, the refusals (.., symlinks out, directories, bad requests,
 * other methods), the log lines, a client that hangs up, and the guestfwd
 * command's quoting. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/util.h"
#include "drivers/httpserve.h"

static char g_root[] = "/tmp/test-httpserve-XXXXXX";
static char *g_outside;

static void put(const char *rel, const char *text)
{
    char *p = path_join(g_root, rel);
    char *d = path_dirname(p);
    assert_int_equal(mkdir_p(d, 0755), 0);
    assert_int_equal(write_file_atomic(p, text, strlen(text), 0644), 0);
    /* 2023-11-14 22:13:20 UTC */
    struct timeval tv[2] = {{1700000000, 0}, {1700000000, 0}};
    assert_int_equal(utimes(p, tv), 0);
    free(d);
    free(p);
}

static int setup(void **state)
{
    (void)state;
    assert_non_null(mkdtemp(g_root));
    put("a.txt", "hello\n");
    put("dir/b b+.txt", "spaced\n");
    put("sub/c", "c\n");
    g_outside = xasprintf("%s-outside", g_root);
    assert_int_equal(write_file_atomic(g_outside, "secret\n", 7, 0644), 0);
    char *out = path_join(g_root, "out"), *in = path_join(g_root, "in");
    assert_int_equal(symlink(g_outside, out), 0);
    assert_int_equal(symlink("a.txt", in), 0);
    free(out);
    free(in);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    rm_rf(g_root);
    unlink(g_outside);
    free(g_outside);
    return 0;
}

/* Serves REQUESTS (one connection) from ROOT; the answers (new string),
 * *served the requests answered, *log the log lines (new string). */
static char *serve_in(const char *root, const char *requests, int *served, char **log)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_true(strlen(requests) < 65536); /* fits the pipe: no writer needed */
    assert_int_equal(write(p[1], requests, strlen(requests)), (ssize_t)strlen(requests));
    close(p[1]);
    char tmpl[] = "/tmp/test-httpserve-out-XXXXXX";
    int out = mkstemp(tmpl);
    assert_true(out >= 0);
    unlink(tmpl);
    char *logtext = NULL;
    size_t loglen = 0;
    FILE *lf = open_memstream(&logtext, &loglen);
    *served = http_serve(p[0], out, root, lf);
    fclose(lf);
    close(p[0]);
    struct stat sb;
    assert_int_equal(fstat(out, &sb), 0);
    char *text = xcalloc(1, (size_t)sb.st_size + 1);
    assert_int_equal(pread(out, text, (size_t)sb.st_size, 0), sb.st_size);
    close(out);
    if (log)
        *log = logtext;
    else
        free(logtext);
    return text;
}

static char *serve(const char *requests, int *served, char **log)
{
    return serve_in(g_root, requests, served, log);
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* The status line of ONE request on its own connection. */
static void expect_status(const char *request, const char *status)
{
    int served = 0;
    char *r = serve(request, &served, NULL);
    if (strncmp(r, status, strlen(status)) != 0)
        fail_msg("%s: got \"%.60s\", expected \"%s\"", request, r, status);
    assert_int_equal(served, 1);
    free(r);
}

static void get_a_file(void **state)
{
    (void)state;
    int served = 0;
    char *log = NULL;
    char *r = serve("GET /a.txt HTTP/1.1\r\nHost: 10.0.2.100\r\n\r\n", &served, &log);
    assert_int_equal(served, 1);
    assert_true(str_starts(r, "HTTP/1.1 200 OK\r\n"));
    assert_non_null(strstr(r, "\r\nContent-Length: 6\r\n"));
    assert_non_null(strstr(r, "\r\nLast-Modified: Tue, 14 Nov 2023 22:13:20 GMT\r\n"));
    assert_non_null(strstr(r, "\r\nAccept-Ranges: none\r\n"));
    assert_non_null(strstr(r, "\r\nConnection: keep-alive\r\n"));
    assert_true(str_ends(r, "\r\n\r\nhello\n"));
    assert_string_equal(log, "GET /a.txt 200 6\n");
    free(r);
    free(log);
}

static void keep_alive_and_pipelining(void **state)
{
    (void)state;
    int served = 0;
    char *log = NULL;
    char *r = serve("GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n"
                    "HEAD /a.txt HTTP/1.1\r\n\r\n"
                    "GET /missing HTTP/1.1\r\n\r\n"
                    "GET /dir/b%20b%2B.txt?by-hash=no#frag HTTP/1.1\n\n" /* bare LFs too */
                    "GET /in HTTP/1.1\r\nRange: bytes=2-\r\nConnection: close\r\n\r\n"
                    "GET /a.txt HTTP/1.1\r\n\r\n", /* after close: not answered */
                    &served, &log);
    assert_int_equal(served, 5);
    assert_int_equal(count(r, "HTTP/1.1 200 OK"), 4);
    assert_int_equal(count(r, "HTTP/1.1 404 Not Found"), 1);
    assert_int_equal(count(r, "hello\n"), 2); /* GET /a.txt and /in (whole: no ranges) */
    assert_int_equal(count(r, "spaced\n"), 1);
    assert_int_equal(count(r, "Connection: close"), 1);
    assert_true(str_ends(r, "Connection: close\r\n\r\nhello\n"));
    assert_string_equal(log, "GET /a.txt 200 6\n"
                             "HEAD /a.txt 200 0\n"
                             "GET /missing 404 14\n"
                             "GET /dir/b%20b%2B.txt?by-hash=no#frag 200 7\n"
                             "GET /in 200 6\n");
    free(r);
    free(log);
}

static void http10_closes(void **state)
{
    (void)state;
    int served = 0;
    char *r = serve("GET /a.txt HTTP/1.0\r\n\r\nGET /a.txt HTTP/1.0\r\n\r\n", &served, NULL);
    assert_int_equal(served, 1);
    assert_non_null(strstr(r, "Connection: close"));
    free(r);
    r = serve("GET /a.txt HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\nGET /a.txt HTTP/1.0\r\n\r\n",
              &served, NULL);
    assert_int_equal(served, 2);
    free(r);
    /* a request body (Content-Length) is skipped, the next request read */
    r = serve("GET /a.txt HTTP/1.1\r\nContent-Length: 5\r\n\r\nxxxxxGET /in HTTP/1.1\r\n\r\n",
              &served, NULL);
    assert_int_equal(served, 2);
    assert_int_equal(count(r, "HTTP/1.1 200 OK"), 2);
    free(r);
}

static void refusals(void **state)
{
    (void)state;
    expect_status("GET /../etc/passwd HTTP/1.1\r\n\r\n", "HTTP/1.1 403 Forbidden");
    expect_status("GET /dir/../../x HTTP/1.1\r\n\r\n", "HTTP/1.1 403 Forbidden");
    expect_status("GET /%2e%2E/etc/passwd HTTP/1.1\r\n\r\n", "HTTP/1.1 403 Forbidden");
    expect_status("GET /dir/%2e%2e HTTP/1.1\r\n\r\n", "HTTP/1.1 403 Forbidden");
    expect_status("GET /out HTTP/1.1\r\n\r\n", "HTTP/1.1 403 Forbidden"); /* symlink out */
    expect_status("GET /sub HTTP/1.1\r\n\r\n", "HTTP/1.1 403 Forbidden");  /* a directory */
    expect_status("GET / HTTP/1.1\r\n\r\n", "HTTP/1.1 403 Forbidden");
    expect_status("GET /a.txt/x HTTP/1.1\r\n\r\n", "HTTP/1.1 404 Not Found");
    expect_status("GET /nope/x HTTP/1.1\r\n\r\n", "HTTP/1.1 404 Not Found");
    expect_status("GET a.txt HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request");
    expect_status("GET /etc/passwd HTTP/1.1\r\n\r\n", "HTTP/1.1 404 Not Found"); /* below root */
    expect_status("GET /a%zz HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request");
    expect_status("GET /a.txt%00 HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request");
    expect_status("GET /a%2 HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request");
    expect_status("GET /a.txt HTTP/2.0\r\n\r\n", "HTTP/1.1 400 Bad Request");
    expect_status("GET /a.txt\r\n\r\n", "HTTP/1.1 400 Bad Request");
    expect_status("GET /a.txt HTTP/1.1\r\nno colon here\r\n\r\n", "HTTP/1.1 400 Bad Request");
    expect_status("GET /a.txt HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
                  "HTTP/1.1 400 Bad Request");
    expect_status("G(T /a.txt HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request");
    expect_status("BREW /a.txt HTTP/1.1\r\n\r\n", "HTTP/1.1 501 Not Implemented");
    /* the absolute form names the same file */
    expect_status("GET http://10.0.2.100/a.txt HTTP/1.1\r\n\r\n", "HTTP/1.1 200 OK");

    /* a refused method closes the connection: its body is not read */
    int served = 0;
    char *log = NULL;
    char *r = serve("POST /a.txt HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
                    "GET /a.txt HTTP/1.1\r\n\r\n", &served, &log);
    assert_int_equal(served, 1);
    assert_true(str_starts(r, "HTTP/1.1 405 Method Not Allowed\r\n"));
    assert_non_null(strstr(r, "\r\nAllow: GET, HEAD\r\n"));
    assert_non_null(strstr(r, "\r\nConnection: close\r\n"));
    assert_string_equal(log, "POST /a.txt 405 23\n");
    free(r);
    free(log);

    /* a head longer than the server takes: 400, closed */
    struct buf b = BUF_INIT;
    buf_puts(&b, "GET /a.txt HTTP/1.1\r\n");
    for (int i = 0; i < 2000; i++)
        buf_puts(&b, "X-Padding: 0123456789\r\n");
    buf_puts(&b, "\r\n");
    r = serve(b.p, &served, NULL);
    assert_true(str_starts(r, "HTTP/1.1 400 Bad Request\r\n"));
    assert_int_equal(served, 1);
    free(r);
    buf_free(&b);

    /* control characters in a target are not written raw to the log */
    r = serve("GET /\x1b[31m HTTP/1.1\r\n\r\n", &served, &log);
    assert_null(strchr(log, '\x1b'));
    free(r);
    free(log);

    /* nothing, and a request cut short: no answer */
    r = serve("", &served, NULL);
    assert_int_equal(served, 0);
    assert_string_equal(r, "");
    free(r);
    r = serve("GET /a.txt HTTP/1.1\r\nHost:", &served, NULL);
    assert_int_equal(served, 0);
    free(r);
}

/* A client that hangs up: EPIPE (not SIGPIPE) ends the connection, and
 * the log says the answer did not get through. */
static void client_gone(void **state)
{
    (void)state;
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    int in[2], out[2];
    assert_int_equal(pipe(in), 0);
    assert_int_equal(pipe(out), 0);
    const char *req = "GET /a.txt HTTP/1.1\r\n\r\nGET /a.txt HTTP/1.1\r\n\r\n";
    assert_int_equal(write(in[1], req, strlen(req)), (ssize_t)strlen(req));
    close(in[1]);
    close(out[0]);
    char *log = NULL;
    size_t loglen = 0;
    FILE *lf = open_memstream(&log, &loglen);
    assert_int_equal(http_serve(in[0], out[1], g_root, lf), 1);
    fclose(lf);
    assert_string_equal(log, "GET /a.txt 200 6\n  (connection lost after 0 of 6 bytes)\n");
    free(log);
    close(in[0]);
    close(out[1]);
    signal(SIGPIPE, old);
}

static void not_a_directory(void **state)
{
    (void)state;
    int served = 0;
    char *r = serve_in(g_outside, "GET / HTTP/1.1\r\n\r\n", &served, NULL);
    assert_int_equal(served, -1);
    free(r);
    r = serve_in("/nonexistent-httpserve", "GET / HTTP/1.1\r\n\r\n", &served, NULL);
    assert_int_equal(served, -1);
    free(r);
}

static void guestfwd_command(void **state)
{
    (void)state;
    char *c = http_guestfwd_command("/usr/bin/trillian", "/cache/o b/it's", "/out/x.log");
    assert_string_equal(c, "'/usr/bin/trillian' '__http-serve' '--log' '/out/x.log' "
                           "'/cache/o b/it'\\''s'");
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(get_a_file),
        cmocka_unit_test(keep_alive_and_pipelining),
        cmocka_unit_test(http10_closes),
        cmocka_unit_test(refusals),
        cmocka_unit_test(client_gone),
        cmocka_unit_test(not_a_directory),
        cmocka_unit_test(guestfwd_command),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
