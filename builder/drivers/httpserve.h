/* A static HTTP/1.1 file server for one connection on a pair of file
 * descriptors, inetd style: what a boot check's `http` setting gives the
 * guest (bootcheck.c). QEMU's user-mode network runs
 *
 *   trillian __http-serve [--log FILE] DIR
 *
 * for each TCP connection the guest opens to 10.0.2.100:80 (a `guestfwd`
 * with `cmd:`), the connection on its stdin and stdout; nothing listens on
 * the host. libslirp splits the command line with g_shell_parse_argv (sh's
 * quoting, no expansion) and puts the connection on stderr too: the server
 * logs to FILE, never to a stderr that is the connection.
 *
 * What it serves: GET and HEAD of regular files below DIR, with
 * Content-Length and Last-Modified (the file's mtime); keep-alive for
 * sequential and pipelined requests until EOF or `Connection: close`
 * (HTTP/1.0: until the request asks for keep-alive). The target is
 * percent-decoded, its query string ignored. Refused: a path that leaves
 * DIR (a ".." segment, a symlink pointing out of DIR: 403), a directory or
 * any other non-regular file (403), a missing file (404), a malformed
 * request (400, then the connection is closed), a method other than GET or
 * HEAD (405 for the standard ones, 501 for others, then closed). Range and
 * If-Modified-Since are not implemented: the answer is always the whole
 * file with 200 (and `Accept-Ranges: none`), which HTTP allows and apt
 * handles. One log line per request, written before the answer: "METHOD
 * PATH STATUS BYTES" (BYTES: the body sent; a transfer cut short adds a
 * line saying how far it got). */
#ifndef TRILLIAN_HTTPSERVE_H
#define TRILLIAN_HTTPSERVE_H

#include <stdio.h>

#define HTTPSERVE_COMMAND "__http-serve"
/* Where the guest finds the server (QEMU's user-mode network, 10.0.2.0/24). */
#define HTTPSERVE_ADDR "10.0.2.100"

/* Serves requests read from IN, answers written to OUT, files below ROOT
 * (a directory) until EOF, `Connection: close` or an error; a line per
 * request to LOG (may be NULL). Returns the number of requests answered,
 * or -1 if ROOT is not a directory. */
int http_serve(int in, int out, const char *root, FILE *log);

/* The guestfwd command line that runs SELF (this program) as the server
 * of ROOT logging to LOG: each argument single-quoted for
 * g_shell_parse_argv, so paths with spaces or quotes stay one argument.
 * QEMU's own option syntax (a comma doubled) is the template's {…:q}.
 * New string. */
char *http_guestfwd_command(const char *self, const char *root, const char *log);

/* `trillian __http-serve [--log FILE] DIR`: serves stdin/stdout. */
int http_serve_main(int argc, char **argv);

#endif
