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

/* A download outside a stage (the engine's substituters): URL (http,
 * https or file) to TO, through curl with a connect timeout, a stall
 * timeout (TIMEOUT seconds with less than a byte a second: a server that
 * hangs), up to three attempts, the later ones resuming what an earlier one
 * got where the server allows ranges (curl -C -), and curl's progress bar
 * on a terminal when PROGRESS. Never more than MAX bytes (0: no limit).
 * Returns 0, or -1 with *WHY (a new string: "HTTP 404", "timed out after
 * 30 s without data", "the server closed the connection early", …). TO is
 * removed on failure. */
int fetch_download(const char *url, const char *to, int timeout, long long max, bool progress,
              char **why);

/* Whether TRILLIAN_OFFLINE is set (to anything but "" or "0"). */
bool fetch_offline(void);

#endif
