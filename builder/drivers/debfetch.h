/* One Debian binary package, pinned at plan time and fetched at run time.
 *
 * debfetch_resolve asks `apt-cache show --no-all-versions` for apt's
 * candidate (or an exact version) and returns its version, archive SHA256
 * and pool file name: a stage puts those into its cache key, so a new upload
 * to the archive is a new key and the same one is a cache hit.
 * debfetch_get downloads it with `apt-get download` into
 * CACHE/downloads/apt/ (kept across builds, shared by stages), checks the
 * SHA256, and returns the path; a verified copy already there is reused.
 * Used by the initramfs stage (busybox-static) and the ESP stage
 * (systemd-boot-efi); the same code path serves any architecture apt knows.
 * Below: a private apt for one archive (source packages through its signed
 * Sources index), and a source package by its .dsc's URL and sha256. */
#ifndef TRILLIAN_DEBFETCH_H
#define TRILLIAN_DEBFETCH_H

#include "stage.h"

struct deb_pin {
    char *package, *arch, *version, *sha256, *filename;
};

/* Plan time (no stage context: spawns apt-cache itself, argv only). ARCH is
 * the Debian architecture ("amd64"); VERSION may be NULL for the candidate.
 * Returns 0, or -1 with a one-line reason in *err (caller frees). */
int debfetch_resolve(const char *package, const char *arch, const char *version,
                     struct deb_pin *pin, char **err);
/* An apt-cache query (ARGV) against the host's apt, stdout into *OUT as
 * run_capture_quiet gives it; a query asked before is answered from the
 * cache (st_recall) while apt's lists, configuration, dpkg's status and the
 * apt-cache binary have the identities they had then: a warm plan starts no
 * apt-cache (each starts dpkg three times; two took most of a warm no-op's
 * 1.2 s), and an apt-get update makes it ask again. Successful answers only
 * are kept. */
int debfetch_host_query(const char *const *argv, char **out);
/* Run time: the verified .deb's path (new string), or NULL after cx_fail
 * naming SETTING (the recipe key to change). */
char *debfetch_get(const struct stage_ctx *cx, const struct deb_pin *pin,
                   const char *setting);
void deb_pin_free(struct deb_pin *pin);

/* The host's Debian architecture (dpkg --print-architecture; amd64 if dpkg
 * says nothing): a private apt's deb-src line needs one the mirror carries,
 * though a source package does not depend on it. New string. */
char *debfetch_host_arch(const struct stage_ctx *cx);

/* ---- a private apt for one archive ---------------------------------------
 *
 * For packages from an archive the host's apt does not know (another
 * architecture, debian-ports, a local mirror, a pinned suite): a private apt
 * configuration under DIR (sources.list with a deb line for ARCH, or a
 * deb-src line when `sources` is set, [signed-by=KEYRING]; its own lists, cache and
 * an empty dpkg status; the host's sources and preferences ignored).
 * debfetch_apt_open runs `apt-get update` on it at run time: apt checks the
 * Release file's signature against KEYRING and every index against the
 * Release file's hashes, so every later hash is the archive's. Failures are
 * explained naming RKEY.mirror, RKEY.suite, RKEY.keyring or RKEY.components
 * (RKEY is how messages name the recipe section: "packages.libc"; an
 * RKEY ending in "_" is a prefix instead: "kernel.debian_" names
 * kernel.debian_mirror, ...). */
struct debfetch_archive {
    const char *mirror, *suite, *keyring, *arch;
    const struct strlist *components;
    bool sources;     /* deb-src instead of deb (for debfetch_apt_source) */
    const char *rkey; /* "packages.busybox" */
};

struct debfetch_apt {
    char *dir, *arch, *rkey, *mirror, *suite;
    struct strlist opts; /* "-o", "X=Y" pairs for apt-get and apt-cache */
};

/* Returns 0, or 1 after cx_fail. */
int debfetch_apt_open(const struct stage_ctx *cx, const struct debfetch_archive *a,
                      const char *dir, struct debfetch_apt *apt);
/* Like debfetch_resolve, against the private archive (run time). */
int debfetch_apt_resolve(const struct debfetch_apt *apt, const char *package,
                         const char *version, struct deb_pin *pin, char **err);
/* Like debfetch_get (same CACHE/downloads/apt/ store). */
char *debfetch_apt_get(const struct stage_ctx *cx, const struct debfetch_apt *apt,
                       const struct deb_pin *pin, const char *setting);
/* A source package (VERSION NULL = the candidate): the .dsc and the files it
 * names, hashes from the signed Sources index (`apt-get source
 * --print-uris`), kept in CACHE/downloads/sources/ (a verified copy there is
 * reused; otherwise `apt-get source --download-only`). Returns the .dsc's
 * path (the files are beside it) and the version in *version_out, or NULL
 * after cx_fail naming SETTING. */
char *debfetch_apt_source(const struct stage_ctx *cx, const struct debfetch_apt *apt,
                          const char *package, const char *version, const char *setting,
                          char **version_out);
/* debfetch_apt_source through a private apt of its own (below cx->work) for
 * the suite's main component: the whole path for a stage that wants one
 * source package. Same result. */
char *debfetch_source(const struct stage_ctx *cx, const char *mirror, const char *suite,
                      const char *keyring, const char *rkey, const char *package,
                      const char *version, const char *setting, char **version_out);
void debfetch_apt_free(struct debfetch_apt *apt);

/* ---- a source package by its .dsc ----------------------------------------
 *
 * Not through an archive's index: the recipe pins the .dsc by URL and
 * sha256, and the .dsc pins the files it lists by theirs. */

struct dsc_file {
    char *name, *sha256;
};

struct dsc_info {
    char *source, *version, *format; /* its Source, Version, Format */
    struct dsc_file *files;          /* its Checksums-Sha256, in order */
    size_t n;
};

/* Reads the .dsc TEXT (clearsigned or not: the signature is not checked,
 * the .dsc being pinned by its own sha256): Source, Version, and every file
 * of Checksums-Sha256, a plain file name each. The Files field (md5) may
 * name no file without a sha256: an md5 pins nothing. 0, or -1 with a
 * one-line reason in *err (caller frees). */
int debfetch_dsc_parse(const char *text, struct dsc_info *out, char **err);
void dsc_info_free(struct dsc_info *d);

/* The .dsc DSC (a verified file, fetched from URL) read into *INFO, and
 * every file it lists fetched from URL's directory, pinned by the .dsc's
 * sha256, through fetch_pinned (the cache, the mirrors by sha256 or name,
 * the origin; nothing unverified is kept: a file whose bytes do not match
 * fails naming it, the expected and the actual sha256). Their paths in the
 * cache go to PATHS, in INFO's order. WHERE ("FILE:LINE:
 * packages.x.source_dsc") starts the messages. 0, or 1 after cx_fail. */
int debfetch_dsc_files(const struct stage_ctx *cx, const char *dsc, const char *url,
                       const char *where, struct dsc_info *info, struct strlist *paths);
/* Run time: the .dsc at URL pinned by SHA256 (a mismatch named by
 * WHERE_SHA, the setting to fix), then debfetch_dsc_files (WHERE: the
 * URL's setting), all linked under their own names into DIR (made anew),
 * where dpkg-source finds them beside the .dsc. Returns the .dsc's path in
 * DIR and fills *INFO; NULL after cx_fail. */
char *debfetch_dsc_get(const struct stage_ctx *cx, const char *url, const char *sha256,
                       const char *where, const char *where_sha, const char *dir,
                       struct dsc_info *info);

#endif
