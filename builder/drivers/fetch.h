/* Remote inputs pinned by sha256: one way for every stage to get a file that
 * lives elsewhere (a source tarball, a patch, an emulator's source).
 *
 * A file is looked for, in order: in CACHE/downloads/ (named SHA16-NAME);
 * in each mirror of TRILLIAN_MIRRORS (set by --mirror; space-separated
 * directories or http(s)/ftp/file URLs), first through the mirror's
 * SHA256SUMS (any name whose sha256 matches), then by the URL's file name
 * (at the mirror's top, or a path SHA256SUMS lists with that file name: a
 * wrong sha256 in a recipe is then answered with the file's real one);
 * then at its origin URL, unless TRILLIAN_OFFLINE is set (--offline). Every
 * candidate is checked against the sha256 before it is kept: a mismatch is
 * reported and the next place is tried; nothing unverified stays in the
 * cache. Downloads use curl with retries and timeouts; curl honours the
 * usual proxy variables (http_proxy, https_proxy, no_proxy). */
#ifndef TRILLIAN_FETCH_H
#define TRILLIAN_FETCH_H

#include <stdbool.h>

struct stage_ctx;

/* True if S is 64 hex digits. */
bool fetch_valid_sha256(const char *s);
/* True if URL has a scheme fetch can download (http, https, ftp, file). */
bool fetch_valid_url(const char *url);

/* The path of the verified file in CACHE/downloads/ (new string), or NULL
 * after logging why (every place tried, and what to do). URL may be NULL
 * for an input that only mirrors carry; NAME is then its file name (else
 * the URL's). WHERE names the recipe setting for messages
 * ("recipe.cfg:12: kernel.patches[2]"). */
char *fetch_pinned(const struct stage_ctx *cx, const char *url, const char *name,
                   const char *sha256, const char *where);

/* Plan time, for --offline: whether the file is in CACHE/downloads/ or in a
 * mirror that is a local directory (listed in its SHA256SUMS, or under its
 * name with the right sha256); URL mirrors are not asked. */
bool fetch_available(const char *cache_dir, const char *url, const char *name,
                     const char *sha256);

/* A download outside a stage (the engine's substituters) is bounded in
 * size and time whatever the server does. */
#define FETCH_MIN_RATE 1024 /* bytes a second, below which a transfer stalls */
struct fetch_bounds {
    long long max;   /* bytes; 0: no limit */
    int stall;       /* seconds below FETCH_MIN_RATE that give a transfer up */
    int max_time;    /* the seconds DEADLINE allows, for messages */
    double deadline; /* now_seconds() by which everything has come */
};
/* URL (http or https; a password in it stays off curl's command line) to
 * TO, through curl with a connect timeout, the stall bound, the deadline,
 * and up to three attempts for a transfer cut short or a server error, the
 * later ones resuming what came where the server allows ranges; a stall,
 * the deadline or too many bytes end it at once. The bytes pass through
 * this process, counted: more than B->max ends the transfer at that byte,
 * with or without a Content-Length (curl's --max-filesize alone sees only
 * an announced size). curl's progress bar on a terminal when PROGRESS.
 * Returns 0, or -1 with *WHY (new string: "HTTP 404", "timed out (…)", "more
 * than the 65536 bytes allowed for it", …); TO is removed on failure. */
int fetch_download(const char *url, const char *to, const struct fetch_bounds *b, bool progress,
                   char **why);

/* Whether TRILLIAN_OFFLINE is set (to anything but "" or "0"). */
bool fetch_offline(void);

#endif
