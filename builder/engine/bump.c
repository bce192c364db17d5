/* `trillian kernel-bump` (bump.h): download, try the patches, rewrite. */
#define _GNU_SOURCE
#include "engine/bump.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/sha256.h"
#include "base/util.h"
#include "drivers/fetch.h"

#define DEBIAN_POOL "http://deb.debian.org/debian/pool/main/l/linux/"

/* The recipe's kernel stage, if its kind can try patches on a tarball. */
static const struct stage *kernel_stage(const struct recipe *r)
{
    for (size_t i = 0; i < r->nstages; i++)
        if (!strcmp(r->stages[i]->section, "kernel") && r->stages[i]->kind->patch_check)
            return r->stages[i];
    return NULL;
}

static bool valid_version(const char *v)
{
    return isdigit((unsigned char)v[0]) &&
           strspn(v, "0123456789.abcdefghijklmnopqrstuvwxyz~+-") == strlen(v);
}

/* URL into TO: a file:/// URL is copied (fetch_download takes http(s)
 * only, since substituters' downloads are bounded there); else downloaded. */
static int get_url(const char *url, const char *to, const struct fetch_bounds *b, char **why)
{
    if (!str_starts(url, "file:///"))
        return fetch_download(url, to, b, isatty(2), why);
    if (copy_file(url + strlen("file://"), to) == 0)
        return 0;
    *why = xstrdup(strerror(errno));
    return -1;
}

/* URL downloaded into CACHE/downloads/ as SHA16-NAME (the name fetch.h gives
 * it, so a build finds it there), its sha256 in HEX and checked against
 * --sha256. The path, or NULL after saying why. */
static char *download(const struct bump_opts *o, const char *url, char hex[65])
{
    char *dir = path_join(o->cache, "downloads");
    char *tmp = xasprintf("%s/kernel-bump.part.%ld", dir, (long)getpid());
    char *why = NULL, *got = NULL;
    /* no size cap (an orig is ~160 MB); a 60 s stall or an hour ends it */
    struct fetch_bounds bounds = {.max = 0, .stall = 60, .max_time = 3600,
                                  .deadline = now_seconds() + 3600};
    if (mkdir_p(dir, 0755) < 0) {
        fprintf(stderr, "trillian kernel-bump: cannot create %s: %s\n", dir, strerror(errno));
    } else if (get_url(url, tmp, &bounds, &why) < 0) {
        fprintf(stderr, "trillian kernel-bump: linux %s: no source at %s (%s). Debian's pool "
                "keeps an orig tarball only while a suite lists it: find the version in a "
                "suite's Sources (apt-get source --print-uris linux/SUITE) or give --url\n",
                o->version, url, why ? why : "download failed");
    } else if (sha256_file(tmp, hex) < 0) {
        fprintf(stderr, "trillian kernel-bump: cannot read %s: %s\n", tmp, strerror(errno));
    } else if (o->sha256 && strcasecmp(hex, o->sha256) != 0) {
        fprintf(stderr, "trillian kernel-bump: %s has sha256 %s, not %s (--sha256): nothing "
                "was written\n", url, hex, o->sha256);
    } else {
        got = xasprintf("%s/%.16s-%s", dir, hex, path_basename(url));
        if (rename(tmp, got) < 0) {
            fprintf(stderr, "trillian kernel-bump: cannot store %s: %s\n", got, strerror(errno));
            free(got);
            got = NULL;
        }
    }
    unlink(tmp);
    free(tmp);
    free(dir);
    free(why);
    return got;
}

/* Where KEY = starts between L and EOL (not inside a longer name), or NULL. */
static char *find_key(char *l, const char *eol, const char *key)
{
    for (char *k = l; (k = strstr(k, key)) != NULL && k < eol; k++) {
        const char *after = k + strlen(key);
        after += strspn(after, " \t");
        if ((k == l || (!isalnum((unsigned char)k[-1]) && k[-1] != '_')) &&
            (*after == '=' || *after == ':'))
            return k;
    }
    return NULL;
}

/* Sets the string of KEY = "..." on the line WHERE ("FILE:LINE", as
 * st_node_where gives it) to VALUE, the rest of the file as it was. 0, or
 * -1 after saying why. */
static int rewrite(const char *where, const char *key, const char *value)
{
    const char *colon = strrchr(where, ':');
    long line = colon ? strtol(colon + 1, NULL, 10) : 0;
    char *file = colon ? xstrndup(where, (size_t)(colon - where)) : NULL, *text = NULL;
    size_t len;
    int rc = -1;
    if (line <= 0 || read_file(file, &text, &len) < 0) {
        fprintf(stderr, "trillian kernel-bump: cannot read kernel.%s's place %s: set it to "
                "\"%s\" by hand\n", key, where, value);
        goto out;
    }
    char *l = text;
    for (long n = 1; n < line && l; n++)
        l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL;
    char *eol = l ? l + strcspn(l, "\n") : NULL, *k = l ? find_key(l, eol, key) : NULL;
    char *q1 = k ? strchr(k, '"') : NULL, *q2 = q1 ? strchr(q1 + 1, '"') : NULL;
    if (!q2 || q2 > eol) {
        fprintf(stderr, "trillian kernel-bump: %s: expected %s = \"...\" on that line: set it "
                "to \"%s\" by hand\n", where, key, value);
        goto out;
    }
    struct buf b = BUF_INIT;
    buf_printf(&b, "%.*s%s%s", (int)(q1 + 1 - text), text, value, q2);
    if (write_file_atomic(file, b.p, b.n, 0644) < 0)
        fprintf(stderr, "trillian kernel-bump: cannot write %s: %s\n", file, strerror(errno));
    else
        rc = 0;
    buf_free(&b);
out:
    free(text);
    free(file);
    return rc;
}

/* The kind's patch check on TARBALL in a scratch directory, patch's
 * reports in LOG: how many patches did not apply, or -1. */
static int try_patches(const struct recipe *r, const struct stage *st, const char *cache,
                       const char *tarball, const char *log)
{
    char *work = xasprintf("%s/tmp/kernel-bump.%ld", cache, (long)getpid());
    struct stage_ctx cx = {.st = st, .name = "kernel-bump", .out = work, .work = work,
                           .keep = work, .recipe_dir = r->dir, .arch = r->arch,
                           .cache_dir = cache, .jobs = 1,
                           .source_date_epoch = r->source_date_epoch};
    int bad = -1, fd = -1, saved = dup(2);
    if (mkdir_p(work, 0755) < 0 || (fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0) {
        fprintf(stderr, "trillian kernel-bump: cannot create %s or %s: %s\n", work, log,
                strerror(errno));
    } else {
        fflush(stderr);
        dup2(fd, 2);
        bad = st->kind->patch_check(&cx, tarball);
        fflush(stderr);
        dup2(saved, 2);
    }
    if (fd >= 0)
        close(fd);
    if (saved >= 0)
        close(saved);
    rm_rf(work);
    free(work);
    return bad;
}

int bump_kernel(struct recipe *r, const struct bump_opts *o)
{
    const struct stage *st = kernel_stage(r);
    const struct st_node *un = st ? st_node(st, "url") : NULL, *sn = st ? st_node(st, "sha256") : NULL;
    if (!un || !sn) {
        fprintf(stderr, "trillian kernel-bump: recipe %s (%s) has no kernel built from a "
                "url + sha256 (a tarball, git or debian_version kernel is changed by hand)\n",
                r->name, r->file);
        return 2;
    }
    if (!valid_version(o->version)) {
        fprintf(stderr, "trillian kernel-bump: '%s' is not a kernel version (like 7.2.9)\n",
                o->version);
        return 2;
    }
    char *url = o->url ? xstrdup(o->url) : xasprintf(DEBIAN_POOL "linux_%s.orig.tar.xz", o->version);
    char hex[65], *tarball = NULL;
    int rc = 2;
    if (!fetch_valid_url(url) || strpbrk(url, "\"\\"))
        fprintf(stderr, "trillian kernel-bump: --url %s: expected an http(s), ftp or file URL\n", url);
    else
        tarball = download(o, url, hex);
    if (!tarball)
        goto out;
    printf("linux %s: %s (sha256 %s)\n", o->version, url, hex);
    fflush(stdout);
    char *log = xasprintf("%s/tmp/kernel-bump-%s.log", o->cache, o->version);
    int bad = try_patches(r, st, o->cache, tarball, log);
    if (bad < 0) {
        fprintf(stderr, "trillian kernel-bump: the patches could not be tried: see %s\n", log);
    } else if (bad && !o->force) {
        printf("nothing written: %d patch%s do%s not apply on %s (refresh %s, or --force "
               "to write the new source anyway); patch's reports: %s\n", bad,
               bad == 1 ? "" : "es", bad == 1 ? "es" : "", o->version, bad == 1 ? "it" : "them",
               log);
        rc = 1;
    } else {
        char *uw = st_node_where(st, un), *sw = st_node_where(st, sn);
        if (rewrite(uw, "url", url) == 0 && rewrite(sw, "sha256", hex) == 0) {
            printf("wrote %s: kernel.url = \"%s\"\nwrote %s: kernel.sha256 = \"%s\"\n", uw,
                   url, sw, hex);
            rc = 0;
        }
        free(uw);
        free(sw);
    }
    free(log);
out:
    free(tarball);
    free(url);
    return rc;
}
