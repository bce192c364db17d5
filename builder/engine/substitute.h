/* Substituters: other machines' stage entries, from a directory that
 * `trillian publish` wrote, served over http(s), file:// or as a plain
 * directory (docs/publish.md). Before a stage whose key is not in the cache
 * is built, each substituter is asked for DIR/cache/KEY.json and its
 * signature; the entry is taken only when the signature is by a trusted key
 * (ssh-keygen -Y verify), the metadata names this key, the payload has the
 * size and sha256 it states, and the unpacked files are exactly those it
 * lists (names, types, sizes, sha256, symlink targets inside the entry).
 * It is unpacked in CACHE/tmp and committed like a built entry. Anything
 * else is said in one line (which substituter, why) and the stage is
 * built here. Boot checks are never substituted: they observe this
 * machine's boot. */
#ifndef TRILLIAN_SUBSTITUTE_H
#define TRILLIAN_SUBSTITUTE_H

#include <stdbool.h>
#include <stdio.h>

#include "base/util.h"

struct stage;

struct substituters {
    struct strlist urls;   /* usable ones, without a trailing '/': http(s) URLs
                              (a password kept for the request) or local paths */
    struct strlist shown;  /* the same as they may be printed and recorded: no
                              password, control characters escaped */
    char *allowed;         /* CACHE/tmp/trust.PID: the allowed-signers file */
    char *cache;
    int timeout;           /* seconds below 1 KiB/s (TRILLIAN_SUBSTITUTER_TIMEOUT) */
    int max_time;          /* seconds for one entry in all (…_MAX_TIME) */
};

/* What a substituter offers for a key (after the metadata was checked). */
struct subst_offer {
    int from;              /* index into urls */
    long long payload_size, files_size;
};

/* Sets S up from URLS (--substituter, then TRILLIAN_SUBSTITUTERS) and the
 * trusted key files TRUST (--trust, then the config file): each URL that is
 * not http(s), file:// or a directory is said in one line on ERR and left
 * out. -1 (said on ERR) when substituters are given but no trusted key, or
 * a key file is unreadable: a usage error. 0 with no substituters (S then
 * does nothing). */
int subst_init(struct substituters *s, const struct strlist *urls, const struct strlist *trust,
               const char *cache, FILE *err);
void subst_free(struct substituters *s);
bool subst_active(const struct substituters *s);

/* Whether ST may come from a substituter at all (not a boot check, not an
 * uncached kind). */
bool subst_eligible(const struct stage *st);

/* Asks the substituters for ST's key, metadata only: true with *OFFER when
 * one has a trusted, well-formed entry. Each one that does not says why on
 * ERR in one line (when ERR is not NULL). */
bool subst_query(const struct substituters *s, const struct stage *st, struct subst_offer *offer,
                 FILE *err);

/* Downloads, checks, unpacks and commits ST's entry from the first
 * substituter that has a good one. 0 when CACHE/objects/KEY now holds it
 * (*FROM: the substituter as shown, borrowed from S); -1 after one line per
 * substituter on ERR. */
int subst_fetch(const struct substituters *s, const struct stage *st, const char **from,
                FILE *err);

/* The default trusted-keys file: $XDG_CONFIG_HOME/trillian/trusted-keys,
 * else ~/.config/trillian/trusted-keys (new string). */
char *subst_config_trust(void);

#endif
