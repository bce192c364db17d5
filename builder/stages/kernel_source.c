/* kernel, kind "source": Linux built from source.
 *
 * Source: a local tarball (`tarball`), a downloaded one (`url` + `sha256`,
 * kept under CACHE/downloads/), the orig tarball of Debian's `linux` source
 * package (`debian_version` + `debian_suite`, hashes from the suite's signed
 * Sources index, kept under CACHE/downloads/sources/) or a git branch or tag
 * (`git` + `ref`). The unpacked and patched tree is kept in KEEP/src-ID,
 * where ID hashes the tarball's content (or the git URL and ref) and the
 * patches, so rebuilds skip the minute of unpacking. Patches apply in order
 * with `patch -p1 --forward --batch`: a `series` directory, `series_urls`
 * (downloads pinned by sha256), then `patches`; one that does not apply
 * fails the stage naming the patch, the file and the hunk.
 *
 * Configuration: `make DEFCONFIG` (or a whole `base_config` file), then the
 * `fragments` merged on top like scripts/kconfig/merge_config.sh (later ones
 * win, with a warning when they disagree), then `make olddefconfig`. Every
 * option a fragment set is checked in the final .config; any that did not
 * survive fails the stage, named with the fragment line that set it and the
 * reason (no such symbol, unmet dependencies, another architecture's).
 *
 * Build: out of tree in KEEP/build-ID (O=), so a configuration change
 * rebuilds incrementally; ARCH from the recipe's arch; CROSS_COMPILE from the
 * toolchain stage (TOOLCHAIN/bin/TRIPLE-gcc) or `cross_compile`. make runs
 * under the engine's jobserver (MAKEFLAGS), or with -j JOBS without one.
 *
 * Outputs: vmlinux, vmlinuz (x86: bzImage; ia64: vmlinux.gz, the gzip -9n of
 * the stripped vmlinux that elilo loads), System.map, config, release,
 * modules/lib/modules/RELEASE (with modules.dep from depmod -b), headers/
 * (headers_install), stage-manifest.json. With config_only = true: config
 * and release only. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "formats/archive.h"
#include "formats/binfmt.h"
#include "drivers/debfetch.h"
#include "drivers/launcher.h"
#include "formats/kconfig.h"
#include "base/run_command.h"
#include "drivers/fetch.h"
#include "base/sha256.h"
#include "stage.h"

#define KERNEL_DEBIAN_MIRROR "http://deb.debian.org/debian"
#define KERNEL_DEBIAN_KEYRING "/usr/share/keyrings/debian-archive-keyring.gpg"

static const struct field fields[] = {
    {"tarball", F_PATH, false, NULL, NULL,
     "local kernel source tarball (e.g. /usr/src/linux-source-6.1.tar.xz)"},
    {"url", F_STRING, false, NULL, NULL,
     "URL of a kernel source tarball to download (needs sha256)"},
    {"sha256", F_STRING, false, NULL, NULL,
     "SHA-256 of the tarball at url"},
    {"git", F_STRING, false, NULL, NULL,
     "git repository URL to clone (needs ref)"},
    {"ref", F_STRING, false, NULL, NULL,
     "git branch, tag or full commit id to build"},
    {"debian_version", F_STRING, false, NULL, NULL,
     "version of Debian's `linux` source package whose orig tarball (the upstream "
     "source, without Debian's patches) is built; needs debian_suite"},
    {"debian_suite", F_STRING, false, NULL, NULL,
     "suite whose signed Sources index carries debian_version (trixie, sid, ...)"},
    {"debian_mirror", F_STRING, false, NULL, NULL,
     "Debian mirror for debian_version (unset: " KERNEL_DEBIAN_MIRROR ")"},
    {"debian_keyring", F_STRING, false, NULL, NULL,
     "keyring that signs debian_suite's Release file (unset: " KERNEL_DEBIAN_KEYRING ")"},
    {"series", F_PATH, false, NULL, NULL,
     "directory of a patch series, applied first: the order of its `series` file "
     "(quilt), else *.patch and *.diff by name"},
    {"series_urls", F_LIST, false, NULL, NULL,
     "patches to download, applied after series: ({ url = \"...\"; sha256 = \"...\"; }, ...)"},
    {"patches", F_INPUT_LIST, false, NULL, NULL,
     "patches applied in order with patch -p1, after series and series_urls: paths, or "
     "downloads pinned by sha256 ({ url = \"https://...\"; sha256 = \"...\"; })"},
    {"defconfig", F_STRING, false, NULL, "defconfig",
     "make target giving the base configuration (defconfig, tinyconfig, "
     "generic_defconfig, ...)"},
    {"base_config", F_PATH, false, NULL, NULL,
     "a whole .config to start from instead of defconfig"},
    {"fragments", F_STRING_LIST, false, NULL, NULL,
     "config fragments merged in order, later ones winning: NAME "
     "(kernel-config/NAME.config) or a path (with a / or ending in .config)"},
    {"cross_compile", F_STRING, false, NULL, NULL,
     "CROSS_COMPILE prefix when the recipe has no toolchain stage "
     "(ia64-linux-gnu- or /opt/x/bin/ia64-linux-gnu-)"},
    {"strip_modules", F_BOOL, false, NULL, "true",
     "strip debug symbols from installed modules (INSTALL_MOD_STRIP=1)"},
    {"config_only", F_BOOL, false, NULL, "false",
     "stop after the checked .config (outputs config and release)"},
    {0},
};

static const char *const tools[] = {"make", "gcc", "patch", "depmod", NULL};

/* ---- architectures ------------------------------------------------------- */

struct karch {
    const char *debian;  /* recipe arch */
    const char *arch;    /* ARCH= */
    const char *srcarch; /* arch/ directory */
    const char *triple;  /* CROSS_COMPILE without the dash */
    const char *image;   /* make target of the boot image */
    const char *image_path; /* built image, relative to the build dir */
    int em;              /* ELF e_machine vmlinux must have */
};

static const struct karch karchs[] = {
    {"amd64", "x86_64", "x86", "x86_64-linux-gnu", "bzImage",
     "arch/x86/boot/bzImage", 62 /* EM_X86_64 */},
    {"ia64", "ia64", "ia64", "ia64-linux-gnu", "vmlinux.gz", "vmlinux.gz", 50 /* EM_IA_64 */},
    {0},
};

static const struct karch *karch_of(const char *debian)
{
    for (const struct karch *k = karchs; k->debian; k++)
        if (debian && strcmp(k->debian, debian) == 0)
            return k;
    return NULL;
}

static bool is_host(const struct karch *k)
{
#if defined(__x86_64__)
    return strcmp(k->debian, "amd64") == 0;
#elif defined(__ia64__)
    return strcmp(k->debian, "ia64") == 0;
#else
    (void)k;
    return false;
#endif
}

/* ---- fragments ----------------------------------------------------------- */

static bool fragment_is_path(const char *f)
{
    return strchr(f, '/') || str_ends(f, ".config");
}

/* Where fragment F lives: a path relative to the recipe, or a name in the
 * data directory's kernel-config/. New string; NULL if F is a bare name that
 * is not there. */
static char *fragment_path(const char *recipe_dir, const char *f)
{
    if (fragment_is_path(f))
        return path_absolute(recipe_dir, f);
    char *rel = xasprintf("kernel-config/%s.config", f);
    char *p = trillian_data_path(rel);
    free(rel);
    if (path_exists(p))
        return p;
    free(p);
    return NULL;
}

/* The fragments to merge: the recipe's machine profile's (machine.h) first,
 * then the recipe's own `fragments`; one the recipe lists too is merged at
 * the recipe's place, so a recipe naming the same list keeps its key. */
static void all_fragments(const struct stage *st, struct strlist *out)
{
    struct strlist own = {0};
    st_list(st, "fragments", &own);
    const struct machine *m = st_machine(st);
    for (size_t i = 0; m && i < m->fragments.n; i++)
        if (!strlist_contains(&own, m->fragments.v[i]) &&
            !strlist_contains(out, m->fragments.v[i]))
            strlist_push(out, m->fragments.v[i]);
    for (size_t i = 0; i < own.n; i++)
        strlist_push(out, own.v[i]);
    strlist_free(&own);
}

static bool valid_hex40(const char *s)
{
    if (!s || strlen(s) != 40)
        return false;
    for (const char *p = s; *p; p++)
        if (!isxdigit((unsigned char)*p))
            return false;
    return true;
}

static bool valid_target(const char *s)
{
    if (!s || !str_ends(s, "config") || s[0] == '-')
        return false;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != '.')
            return false;
    return true;
}

/* Looks PROGRAM up on PATH (with DIR first when not NULL). */
static bool on_path(const char *dir, const char *program)
{
    char *found = run_find_program(program, dir, 0);
    bool ok = found != NULL;
    free(found);
    return ok;
}

/* ---- plan time ------------------------------------------------------------ */

static int series_dir_list(const char *dir, struct strlist *out, char **why);

static int declare(struct stage *st)
{
    const struct karch *k = karch_of(st_arch(st));
    if (!k)
        return st_error(st, NULL, "kind \"source\" builds for arch amd64 or "
                        "ia64, not '%s'", st_arch(st) ? st_arch(st) : "?");
    const char *tarball = st_str(st, "tarball"), *url = st_str(st, "url"),
               *git = st_str(st, "git"), *dver = st_str(st, "debian_version");
    int nsrc = !!tarball + !!url + !!git + !!dver;
    if (nsrc != 1)
        return st_error(st, nsrc ? (tarball ? "tarball" : url ? "url" : "git") : NULL,
                        "%s (set exactly one of tarball, url + sha256, git + ref, or "
                        "debian_version + debian_suite)", nsrc ? "has more than one source"
                                                               : "has no source");
    if (dver) {
        if (!st_str(st, "debian_suite"))
            return st_error(st, "debian_version", "needs kernel.debian_suite (the suite "
                            "carrying linux %s: trixie, sid, ...)", dver);
        if (!dver[0] || dver[0] == '-' || strspn(dver, "0123456789.:~+-abcdefghijklmnopqrstuvwxyz"
                                                 "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != strlen(dver))
            return st_error(st, "debian_version", "'%s' is not a Debian version (like "
                            "6.12.8-1; apt-cache showsrc linux lists them)", dver);
        const char *kr = st_str(st, "debian_keyring") ? st_str(st, "debian_keyring")
                                                      : KERNEL_DEBIAN_KEYRING;
        if (!path_exists(kr))
            return st_error(st, st_str(st, "debian_keyring") ? "debian_keyring" : "debian_version",
                            "the keyring %s does not exist (apt-get install "
                            "debian-archive-keyring, or set kernel.debian_keyring)", kr);
        st_tool(st, "apt-get");
    } else {
        static const char *const only[] = {"debian_suite", "debian_mirror", "debian_keyring", NULL};
        for (size_t i = 0; only[i]; i++)
            if (st_isset(st, only[i]))
                return st_error(st, only[i], "only goes with kernel.debian_version");
    }
    if (url) {
        if (!st_isset(st, "sha256"))
            return st_error(st, "url", "needs kernel.sha256 (the SHA-256 of "
                            "the tarball, as sha256sum prints it)");
        if (!fetch_valid_sha256(st_str(st, "sha256")))
            return st_error(st, "sha256", "must be 64 hex digits");
        if (!fetch_valid_url(url))
            return st_error(st, "url", "must be an http(s), ftp or file URL");
        st_remote(st, "sha256", url, NULL, st_str(st, "sha256"));
        st_tool(st, "curl");
    } else if (st_isset(st, "sha256")) {
        return st_error(st, "sha256", "only goes with kernel.url");
    }
    if (git) {
        if (!st_str(st, "ref") || !st_str(st, "ref")[0])
            return st_error(st, "git", "needs kernel.ref (a branch, tag or commit id)");
        if (git[0] == '-' || st_str(st, "ref")[0] == '-')
            return st_error(st, "ref", "must not start with '-'");
        st_tool(st, "git");
    } else if (st_isset(st, "ref")) {
        return st_error(st, "ref", "only goes with kernel.git");
    }
    if (tarball) {
        char *p = st_path(st, "tarball");
        bool ok = path_exists(p) && !is_dir(p);
        free(p);
        if (!ok)
            return st_error(st, "tarball", "'%s' is not a file (install "
                            "linux-source-6.1 for /usr/src/linux-source-6.1."
                            "tar.xz, or fix the path)", tarball);
    }

    if (st_str(st, "series")) {
        char *dir = st_path(st, "series"), *why = NULL;
        struct strlist l = {0};
        int n = is_dir(dir) ? series_dir_list(dir, &l, &why) : -1;
        if (n < 0 && !why)
            why = xasprintf("'%s' is not a directory (a patch series: its `series` "
                            "file or *.patch files)", st_str(st, "series"));
        strlist_free(&l);
        free(dir);
        if (n < 0) {
            st_error(st, "series", "%s", why);
            free(why);
            return -1;
        }
    }
    const struct st_node *urls = st_node(st, "series_urls");
    for (size_t i = 0; i < node_len(urls); i++) {
        const struct st_node *e = node_elem(urls, i);
        const char *u = node_member_str(e, "url"), *h = node_member_str(e, "sha256");
        if (!u || !h)
            return st_error(st, "series_urls", "entry %zu needs url and sha256: "
                            "{ url = \"https://...\"; sha256 = \"...\"; }", i + 1);
        if (!fetch_valid_sha256(h))
            return st_error(st, "series_urls", "entry %zu: sha256 must be 64 hex digits", i + 1);
        if (!fetch_valid_url(u))
            return st_error(st, "series_urls", "entry %zu: url must be an http(s), ftp or "
                            "file URL", i + 1);
        /* the content is pinned by its sha256: that is what the key needs */
        char *t = xasprintf("%s %s", h, u);
        st_input_text(st, "series_url", t);
        free(t);
        st_remote(st, "series_urls", u, NULL, h);
        st_tool(st, "curl");
    }

    const char *defconfig = st_str(st, "defconfig");
    if (st_isset(st, "base_config") && st_isset(st, "defconfig"))
        return st_error(st, "base_config", "give either defconfig or "
                        "base_config, not both");
    if (!st_isset(st, "base_config") && !valid_target(defconfig))
        return st_error(st, "defconfig", "'%s' is not a configuration target "
                        "(expected a make target ending in 'config', like "
                        "defconfig, tinyconfig or generic_defconfig)",
                        defconfig ? defconfig : "");

    /* fragments: found, readable and well-formed now, by content in the key */
    struct strlist frags = {0};
    all_fragments(st, &frags);
    int rc = 0;
    for (size_t i = 0; i < frags.n; i++) {
        char *p = fragment_path(st_recipe_dir(st), frags.v[i]);
        if (!p) {
            char *dir = trillian_data_path("kernel-config");
            rc = st_error(st, "fragments", "no fragment '%s' (looked for "
                          "%s/%s.config; give a path to use another file)",
                          frags.v[i], dir, frags.v[i]);
            free(dir);
            continue;
        }
        char *text = NULL;
        size_t len;
        if (read_file(p, &text, &len) < 0) {
            rc = st_error(st, "fragments", "cannot read fragment %s: %s", p,
                          strerror(errno));
            free(p);
            continue;
        }
        struct kconfig kc = {0};
        struct buf err = {0};
        if (kconfig_parse(&kc, text, p, &err) < 0)
            rc = st_error(st, "fragments", "%s", err.p);
        else
            st_input_file(st, frags.v[i], p);
        buf_free(&err);
        kconfig_free(&kc);
        free(text);
        free(p);
    }
    strlist_free(&frags);
    if (rc)
        return rc;

    const char *cc = st_str(st, "cross_compile");
    if (st_want(st, "toolchain")) {
        if (cc)
            return st_error(st, "cross_compile", "the recipe has a toolchain "
                            "stage; drop cross_compile (or the toolchain)");
    } else if (cc || !is_host(k)) {
        char *gcc = cc ? xasprintf("%sgcc", cc) : xasprintf("%s-gcc", k->triple);
        if (!on_path(NULL, gcc)) {
            rc = st_error(st, cc ? "cross_compile" : NULL,
                          "needs the C compiler %s for arch %s, which is not "
                          "%s (add a toolchain section to the recipe, or set "
                          "kernel.cross_compile to the prefix of one)", gcc,
                          k->debian, strchr(gcc, '/') ? "there" : "on PATH");
            free(gcc);
            return rc;
        }
        st_tool(st, gcc);
        free(gcc);
    }

    if (st_bool(st, "config_only", false)) {
        st_output(st, "config");
        st_output(st, "release");
    } else {
        static const char *const outs[] = {"vmlinux", "vmlinuz", "System.map",
                                           "config", "release", "modules",
                                           "headers", NULL};
        for (size_t i = 0; outs[i]; i++)
            st_output(st, outs[i]);
    }
    return 0;
}

/* ---- small run-time helpers ---------------------------------------------- */

static int write_text(const struct stage_ctx *cx, const char *name,
                      const char *text)
{
    char *p = path_join(cx->out, name);
    int rc = write_file_atomic(p, text, strlen(text), 0644);
    if (rc < 0)
        cx_fail(cx, "cannot write %s: %s", p, strerror(errno));
    free(p);
    return rc < 0 ? 1 : 0;
}

/* Removes KEEP entries starting with PREFIX other than KEEPNAME: old source
 * trees and build directories, which are large. */
static void prune_keep(const struct stage_ctx *cx, const char *prefix,
                       const char *keepname)
{
    DIR *d = opendir(cx->keep);
    if (!d)
        return;
    struct strlist gone = {0};
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (str_starts(de->d_name, prefix) && strcmp(de->d_name, keepname))
            strlist_push(&gone, de->d_name);
    closedir(d);
    for (size_t i = 0; i < gone.n; i++) {
        char *p = path_join(cx->keep, gone.v[i]);
        cx_log(cx, "removing old %s", p);
        rm_rf(p);
        free(p);
    }
    strlist_free(&gone);
}

/* The only subdirectory of DIR when DIR holds nothing else (a tarball's
 * top-level directory), else DIR itself. New string. */
static char *tree_root(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return xstrdup(dir);
    char *only = NULL;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        n++;
        if (!only)
            only = path_join(dir, de->d_name);
    }
    closedir(d);
    if (n == 1 && only && is_dir(only))
        return only;
    free(only);
    return xstrdup(dir);
}

/* ---- getting the source --------------------------------------------------- */

/* The tarball at kernel.url, from the cache, a mirror or its origin. */
static char *fetch_url(const struct stage_ctx *cx, const char *url, const char *sha)
{
    char *where = cx_where(cx, "sha256");
    char *got = fetch_pinned(cx, url, NULL, sha, where);
    free(where);
    return got;
}

/* debian_version: Debian's `linux` source package fetched with a private apt
 * (its files' SHA-256 from debian_suite's signed Sources index, kept in
 * CACHE/downloads/sources/). Only the orig tarball is used: Debian's own
 * patches (the .debian.tar.xz) are not what out-of-tree series are made
 * against. Returns the orig tarball's path, or NULL after cx_fail. */
static char *fetch_debian_orig(const struct stage_ctx *cx)
{
    const char *dver = cx_str(cx, "debian_version");
    const char *suite = cx_str(cx, "debian_suite");
    char *got = NULL, *orig = NULL;
    /* "kernel.debian_" names kernel.debian_suite, kernel.debian_mirror, ... */
    char *dsc = debfetch_source(
        cx, cx_str(cx, "debian_mirror") ? cx_str(cx, "debian_mirror") : KERNEL_DEBIAN_MIRROR,
        suite, cx_str(cx, "debian_keyring") ? cx_str(cx, "debian_keyring") : KERNEL_DEBIAN_KEYRING,
        "kernel.debian_", "linux", dver, "kernel.debian_version", &got);
    if (dsc) {
        /* 6.12.8-1 -> linux_6.12.8.orig.tar.*, beside the .dsc */
        const char *v = strchr(got, ':') ? strchr(got, ':') + 1 : got;
        const char *dash = strrchr(v, '-');
        char *up = dash ? xstrndup(v, (size_t)(dash - v)) : xstrdup(v);
        char *dir = xstrndup(dsc, (size_t)(path_basename(dsc) - dsc));
        static const char *const comp[] = {"xz", "gz", "bz2", NULL};
        for (size_t i = 0; comp[i] && !orig; i++) {
            char *p = xasprintf("%slinux_%s.orig.tar.%s", dir, up, comp[i]);
            if (path_exists(p))
                orig = p;
            else
                free(p);
        }
        if (!orig)
            cx_fail(cx, "kernel.debian_version: linux %s has no orig tarball "
                    "(linux_%s.orig.tar.*) beside %s: a native package cannot be "
                    "told from Debian's patches; use kernel.url or kernel.tarball",
                    got, up, dsc);
        else
            cx_log(cx, "Debian's linux %s (%s): %s", got, suite, orig);
        free(up);
        free(dir);
    }
    free(dsc);
    free(got);
    return orig;
}

/* The patches of a series directory, in order: the names its `series`
 * file lists (quilt's format: one per line, # comments, options after the
 * name ignored), else every *.patch and *.diff sorted by name. Returns
 * the count, or -1 with *why set (caller frees). */
static int series_dir_list(const char *dir, struct strlist *out, char **why)
{
    char *sf = path_join(dir, "series"), *text = NULL;
    int n0 = (int)out->n;
    if (read_file(sf, &text, NULL) == 0) {
        char *save = NULL;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            line[strcspn(line, "#")] = 0;
            char *name = line + strspn(line, " \t");
            name[strcspn(name, " \t\r")] = 0;
            if (!name[0])
                continue;
            char *p = path_join(dir, name);
            if (!path_exists(p) || is_dir(p)) {
                *why = xasprintf("%s names %s, which is not a file", sf, name);
                free(p);
                free(text);
                free(sf);
                return -1;
            }
            strlist_push_owned(out, p);
        }
        free(text);
    } else {
        struct strlist all = {0};
        DIR *d = opendir(dir);
        for (struct dirent *e; d && (e = readdir(d));)
            if (str_ends(e->d_name, ".patch") || str_ends(e->d_name, ".diff"))
                strlist_push(&all, e->d_name);
        if (d)
            closedir(d);
        strlist_sort(&all);
        for (size_t i = 0; i < all.n; i++)
            strlist_push_owned(out, path_join(dir, all.v[i]));
        strlist_free(&all);
    }
    free(sf);
    if ((int)out->n == n0) {
        *why = xasprintf("%s has no `series` file and no *.patch or *.diff files", dir);
        return -1;
    }
    return (int)out->n - n0;
}

/* Every patch in the order it is applied: the `series` directory, then the
 * `series_urls` (downloaded into CACHE/downloads/, sha256 checked), then
 * `patches`. Absolute paths; false after a failure (logged). */
static bool all_patches(const struct stage_ctx *cx, struct strlist *out)
{
    char *dir = cx_path(cx, "series");
    if (dir) {
        char *why = NULL;
        int n = series_dir_list(dir, out, &why);
        free(dir);
        if (n < 0) {
            cx_fail(cx, "kernel.series: %s", why);
            free(why);
            return false;
        }
    }
    const struct st_node *urls = cx_node(cx, "series_urls");
    for (size_t i = 0; i < node_len(urls); i++) {
        const struct st_node *e = node_elem(urls, i);
        const char *url = node_member_str(e, "url"), *sha = node_member_str(e, "sha256");
        char *w = cx_where(cx, "series_urls"), *where = xasprintf("%s[%zu]", w, i);
        char *got = fetch_pinned(cx, url, NULL, sha, where);
        free(w);
        free(where);
        if (!got)
            return false;
        strlist_push_owned(out, got);
    }
    return cx_inputs(cx, "patches", out) >= 0;
}

/* Clones URL at REF (branch or tag) into DIR. */
static int git_clone(const struct stage_ctx *cx, const char *url,
                     const char *ref, const char *dir)
{
    static const char *const env[] = {"GIT_TERMINAL_PROMPT=0", NULL};
    if (valid_hex40(ref)) {
        /* a commit: fetch just it (servers allow fetching reachable SHAs) */
        const char *init[] = {"git", "init", "--quiet", dir, NULL};
        const char *fetch[] = {"git", "-C", dir, "fetch", "--quiet", "--depth",
                               "1", "--", url, ref, NULL};
        const char *co[] = {"git", "-C", dir, "checkout", "--quiet",
                            "FETCH_HEAD", NULL};
        if (cx_run_in(cx, NULL, env, init) != 0 ||
            cx_run_in(cx, NULL, env, fetch) != 0)
            return cx_fail(cx, "kernel.ref: cannot fetch commit %s from %s "
                           "(see the log; is it in the repository?)", ref,
                           url);
        if (cx_run_in(cx, NULL, env, co) != 0)
            return cx_fail(cx, "kernel.ref: cannot check out %s", ref);
        return 0;
    }
    char *heads = NULL;
    const char *lsargv[] = {"git", "ls-remote", "--heads", "--tags", url, ref,
                            NULL};
    (void)env;
    int st = cx_capture(cx, lsargv, &heads);
    if (st != 0) {
        free(heads);
        return cx_fail(cx, "kernel.git: cannot list %s (git ls-remote exited "
                       "%d; check the URL and the network)", url, st);
    }
    bool found = heads && heads[0];
    free(heads);
    if (!found)
        return cx_fail(cx, "kernel.ref: %s has no branch or tag named '%s' "
                       "(check git ls-remote %s)", url, ref, url);
    const char *argv[] = {"git", "clone", "--quiet", "--depth", "1",
                          "--branch", ref, "--", url, dir, NULL};
    if (cx_run_in(cx, NULL, env, argv) != 0)
        return cx_fail(cx, "kernel.git: git clone of %s at %s failed (see "
                       "the log)", url, ref);
    return 0;
}

/* Applies PATCH in TREE; on failure names the patch and the files. */
static int apply_patch(const struct stage_ctx *cx, const char *tree,
                       const char *patch)
{
    const char *argv[] = {"patch", "-p1", "--forward", "--batch",
                          "--no-backup-if-mismatch", "-d", tree, "-i", patch,
                          NULL};
    char *out = NULL;
    int st = cx_capture(cx, argv, &out);
    if (out && out[0])
        cx_log(cx, "%s", out);
    if (st == 0) {
        if (out && strstr(out, "with fuzz"))
            cx_log(cx, "warning: %s applied with fuzz (refresh it)", patch);
        free(out);
        return 0;
    }
    /* Walk patch's report: "patching file F" then what went wrong there. */
    struct buf why = {0};
    char *file = NULL;
    const char *p = out ? out : "";
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char *line = xstrndup(p, len);
        p += len + (eol ? 1 : 0);
        if (str_starts(line, "patching file ")) {
            free(file);
            file = xstrdup(line + 14);
            if (file[0] == '\'' && str_ends(file, "'")) {
                memmove(file, file + 1, strlen(file));
                file[strlen(file) - 1] = '\0';
            }
        } else if (str_starts(line, "|--- ") || str_starts(line, "|+++ ")) {
            /* the header of a file patch cannot find */
            const char *f = line + 5;
            const char *slash = strchr(f, '/');
            free(file);
            file = xstrndup(slash ? slash + 1 : f, strcspn(slash ? slash + 1
                                                                 : f, "\t "));
        } else if (strstr(line, "FAILED") || strstr(line, "Reversed") ||
                   strstr(line, "No file to patch") ||
                   strstr(line, "malformed patch") ||
                   strstr(line, "Only garbage")) {
            buf_printf(&why, "%s%s: %s", why.n ? "; " : "",
                       file ? file : "?", line);
        }
        free(line);
    }
    int rc = cx_fail(cx, "kernel.patches: %s does not apply: %s (patch exited "
                     "%d; rebase the patch onto this kernel or drop it)",
                     patch, why.n ? why.p : "see patch's output above", st);
    buf_free(&why);
    free(file);
    free(out);
    return rc;
}

/* Unpacks (or clones) and patches the source into KEEP/src-ID, unless it is
 * there already. Returns the tree's path, and a description for the
 * manifest in *desc. */
static char *prepare_source(const struct stage_ctx *cx, struct buf *desc)
{
    const char *url = cx_str(cx, "url"), *git = cx_str(cx, "git");
    char *tarball = NULL;
    struct sha256 id;
    sha256_init(&id);
    char hex[65];
    if (git) {
        const char *ref = cx_str(cx, "ref");
        sha256_update(&id, "git\n", 4);
        sha256_update(&id, git, strlen(git));
        sha256_update(&id, "\n", 1);
        sha256_update(&id, ref, strlen(ref));
        buf_puts(desc, "\"git\": ");
        json_string(desc, git);
        buf_puts(desc, ", \"ref\": ");
        json_string(desc, ref);
    } else {
        if (url) {
            tarball = fetch_url(cx, url, cx_str(cx, "sha256"));
            if (!tarball) {
                sha256_discard(&id);
                return NULL;
            }
            snprintf(hex, sizeof hex, "%s", cx_str(cx, "sha256"));
        } else {
            tarball = cx_str(cx, "debian_version") ? fetch_debian_orig(cx)
                                                   : cx_path(cx, "tarball");
            if (!tarball) {
                sha256_discard(&id);
                return NULL;
            }
            double t0 = now_seconds();
            if (sha256_file(tarball, hex) < 0) {
                cx_fail(cx, "kernel.%s: cannot read %s: %s",
                        cx_str(cx, "debian_version") ? "debian_version" : "tarball", tarball,
                        strerror(errno));
                free(tarball);
                sha256_discard(&id);
                return NULL;
            }
            cx_log(cx, "%s: sha256 %s (%.1f s)", tarball, hex,
                   now_seconds() - t0);
        }
        sha256_update(&id, "tar\n", 4);
        sha256_update(&id, hex, 64);
        if (cx_str(cx, "debian_version")) {
            buf_puts(desc, "\"debian\": ");
            char *d = xasprintf("linux %s (%s)", cx_str(cx, "debian_version"),
                                cx_str(cx, "debian_suite"));
            json_string(desc, d);
            free(d);
            buf_puts(desc, ", ");
        }
        buf_puts(desc, "\"tarball\": ");
        json_string(desc, url ? url : path_basename(tarball));
        buf_puts(desc, ", \"sha256\": ");
        json_string(desc, hex);
    }
    struct strlist patches = {0};
    if (!all_patches(cx, &patches)) {
        strlist_free(&patches);
        free(tarball);
        sha256_discard(&id);
        return NULL;
    }
    if (cx_str(cx, "series")) {
        buf_puts(desc, ", \"series\": ");
        json_string(desc, cx_str(cx, "series"));
    }
    buf_puts(desc, ", \"patches\": [");
    for (size_t i = 0; i < patches.n; i++) {
        const char *p = patches.v[i];
        if (sha256_file(p, hex) < 0) {
            cx_fail(cx, "kernel.patches: cannot read %s: %s", p,
                    strerror(errno));
            strlist_free(&patches);
            free(tarball);
            sha256_discard(&id);
            return NULL;
        }
        sha256_update(&id, "patch\n", 6);
        sha256_update(&id, hex, 64);
        /* name and sha256 of every patch, for the build report */
        buf_printf(desc, "%s{\"name\": ", i ? ", " : "");
        json_string(desc, path_basename(p));
        buf_printf(desc, ", \"sha256\": \"%s\"}", hex);
    }
    buf_puts(desc, "]");
    sha256_final_hex(&id, hex);
    char *name = xasprintf("src-%.16s", hex);
    char *tree = path_join(cx->keep, name);

    if (is_dir(tree)) {
        cx_log(cx, "using the prepared source tree %s", tree);
    } else {
        char *tmp = xasprintf("%s.tmp", tree);
        rm_rf(tmp);
        double t0 = now_seconds();
        char *root = NULL;
        int ok = -1;
        if (git) {
            if (mkdir_p(cx->keep, 0755) == 0 &&
                git_clone(cx, git, cx_str(cx, "ref"), tmp) == 0) {
                root = xstrdup(tmp);
                ok = 0;
            }
        } else {
            char aerr[ARC_ERRLEN];
            if (mkdir_p(tmp, 0755) < 0)
                cx_fail(cx, "cannot create %s: %s", tmp, strerror(errno));
            else if (arc_extract(tarball, tmp,
                                 ARC_X_NO_OWNERS | ARC_X_NO_XATTRS, NULL,
                                 aerr) < 0)
                cx_fail(cx, "kernel.%s: cannot unpack %s: %s",
                        url ? "url" : "tarball", tarball, aerr);
            else {
                root = tree_root(tmp);
                ok = 0;
            }
        }
        if (ok == 0) {
            cx_log(cx, "source ready in %.1f s", now_seconds() - t0);
            char *mk = path_join(root, "Makefile");
            char *kc = path_join(root, "Kconfig");
            if (!path_exists(mk) || !path_exists(kc)) {
                cx_fail(cx, "kernel.%s: %s holds no kernel source tree (no "
                        "top-level Makefile and Kconfig)",
                        git ? "git" : url ? "url" : "tarball",
                        git ? git : tarball);
                ok = -1;
            }
            free(mk);
            free(kc);
        }
        for (size_t i = 0; ok == 0 && i < patches.n; i++) {
            cx_log(cx, "applying %s", patches.v[i]);
            if (apply_patch(cx, root, patches.v[i]) != 0)
                ok = -1;
        }
        if (ok == 0 && rename(root, tree) < 0) {
            cx_fail(cx, "cannot move %s to %s: %s", root, tree,
                    strerror(errno));
            ok = -1;
        }
        rm_rf(tmp);
        free(root);
        free(tmp);
        if (ok != 0) {
            free(tree);
            tree = NULL;
        } else {
            /* old trees and their build directories are gigabytes */
            prune_keep(cx, "src-", name);
            char *bname = xasprintf("build-%.16s", hex);
            prune_keep(cx, "build-", bname);
            free(bname);
        }
    }
    if (tree && git) {
        /* the commit built, for the manifest */
        const char *argv[] = {"git", "-C", tree, "rev-parse", "HEAD", NULL};
        char *head = NULL;
        if (cx_capture(cx, argv, &head) == 0 && head) {
            head[strcspn(head, "\n")] = '\0';
            buf_puts(desc, ", \"commit\": ");
            json_string(desc, head);
        }
        free(head);
    }
    free(name);
    strlist_free(&patches);
    free(tarball);
    return tree;
}

/* ---- make ----------------------------------------------------------------- */

struct kbuild {
    const struct stage_ctx *cx;
    const struct karch *k;
    char *src, *bld;
    char *cross; /* CROSS_COMPILE, or NULL */
    char *cc;    /* CC=... with ccache or distcc in front (launcher.h), or NULL */
    struct strlist env;
    bool jobserver;
};

static void kbuild_free(struct kbuild *kb)
{
    free(kb->src);
    free(kb->bld);
    free(kb->cross);
    free(kb->cc);
    strlist_free(&kb->env);
}

static void make_argv(const struct kbuild *kb, struct strlist *a)
{
    strlist_push(a, "make");
    strlist_pushf(a, "--directory=%s", kb->src);
    strlist_pushf(a, "O=%s", kb->bld);
    strlist_pushf(a, "ARCH=%s", kb->k->arch);
    if (kb->cross)
        strlist_pushf(a, "CROSS_COMPILE=%s", kb->cross);
    if (kb->cc)
        strlist_push(a, kb->cc);
    if (!kb->jobserver && kb->cx->jobs > 0)
        strlist_pushf(a, "-j%d", kb->cx->jobs);
}

/* make TARGETS... (NULL-terminated) with extra VAR=VALUE arguments. */
static int make(const struct kbuild *kb, const char *const *args)
{
    struct strlist a = {0};
    make_argv(kb, &a);
    for (size_t i = 0; args[i]; i++)
        strlist_push(&a, args[i]);
    int rc = cx_run_in(kb->cx, NULL, (const char *const *)kb->env.v,
                       (const char *const *)a.v);
    strlist_free(&a);
    return rc;
}

static bool have_jobserver(void)
{
    const char *mf = getenv("MAKEFLAGS");
    return mf && (strstr(mf, "--jobserver-auth") ||
                  strstr(mf, "--jobserver-fds"));
}

/* CROSS_COMPILE and PATH: the toolchain stage's bin/ goes first on PATH and
 * the prefix is TRIPLE-, so binutils may come from the toolchain or the
 * system; likewise for a cross_compile with a directory. */
static int setup_toolchain(struct kbuild *kb)
{
    const struct stage_ctx *cx = kb->cx;
    const char *cc = cx_str(cx, "cross_compile");
    char *bindir = NULL;
    const char *tc = cx_dep(cx, "toolchain");
    if (tc) {
        /* the toolchain stage names its target triplet in `target` */
        char *tfile = path_join(tc, "target"), *triple = NULL;
        size_t tlen;
        if (read_file(tfile, &triple, &tlen) == 0)
            triple[strcspn(triple, " \t\r\n")] = '\0';
        bindir = path_join(tc, "bin");
        kb->cross = xasprintf("%s-", triple && triple[0] ? triple
                                                         : kb->k->triple);
        free(triple);
        free(tfile);
    } else if (cc) {
        if (strchr(cc, '/')) {
            bindir = path_dirname(cc);
            kb->cross = xstrdup(path_basename(cc));
        } else {
            kb->cross = xstrdup(cc);
        }
    } else if (!is_host(kb->k)) {
        kb->cross = xasprintf("%s-", kb->k->triple);
    }
    if (bindir) {
        strlist_push_owned(&kb->env, run_path_env("%s", bindir));
    }
    int rc = 0;
    if (kb->cross) {
        char *gcc = xasprintf("%sgcc", kb->cross);
        if (!on_path(bindir, gcc))
            rc = cx_fail(cx, "%s: no %s%s%s (%s)",
                         tc ? "toolchain" : cc ? "kernel.cross_compile"
                                               : "kernel",
                         gcc, bindir ? " in " : " on PATH",
                         bindir ? bindir : "",
                         tc ? "the toolchain stage must produce "
                              "bin/TRIPLE-gcc"
                            : "add a toolchain section to the recipe or set "
                              "kernel.cross_compile");
        else
            cx_log(cx, "CROSS_COMPILE=%s%s%s", kb->cross,
                   bindir ? ", PATH starts with " : "", bindir ? bindir : "");
        free(gcc);
    }
    free(bindir);
    return rc;
}

/* KBUILD_BUILD_* from SOURCE_DATE_EPOCH, for a reproducible uts version. */
static void reproducible_env(struct kbuild *kb)
{
    time_t t = (time_t)kb->cx->source_date_epoch;
    struct tm tm;
    char when[64] = "Thu Jan  1 00:00:00 UTC 1970";
    if (gmtime_r(&t, &tm))
        strftime(when, sizeof when, "%a %b %e %H:%M:%S UTC %Y", &tm);
    strlist_pushf(&kb->env, "KBUILD_BUILD_TIMESTAMP=%s", when);
    strlist_push(&kb->env, "KBUILD_BUILD_USER=trillian");
    strlist_push(&kb->env, "KBUILD_BUILD_HOST=trillian");
    strlist_push(&kb->env, "KBUILD_BUILD_VERSION=1");
}

/* ---- configuration -------------------------------------------------------- */

static int load_config(const struct stage_ctx *cx, const char *path,
                       const char *label, struct kconfig *kc)
{
    char *text = NULL;
    size_t len;
    if (read_file(path, &text, &len) < 0)
        return cx_fail(cx, "cannot read %s: %s", path, strerror(errno));
    struct buf err = {0};
    int rc = 0;
    if (kconfig_parse(kc, text, label, &err) < 0)
        rc = cx_fail(cx, "%s", err.p);
    buf_free(&err);
    free(text);
    return rc;
}

static int configure(const struct kbuild *kb, struct buf *desc)
{
    const struct stage_ctx *cx = kb->cx;
    char *dotconfig = path_join(kb->bld, ".config");
    struct kconfig base = {0}, want = {0}, final = {0};
    struct strlist frags = {0}, warnings = {0};
    int rc = 1;
    double t0 = now_seconds();

    char *base_config = cx_path(cx, "base_config");
    if (base_config) {
        if (copy_file(base_config, dotconfig) < 0) {
            cx_fail(cx, "kernel.base_config: cannot copy %s: %s", base_config,
                    strerror(errno));
            goto out;
        }
        buf_puts(desc, ", \"base_config\": ");
        json_string(desc, path_basename(base_config));
    } else {
        const char *target = cx_str(cx, "defconfig");
        const char *args[] = {target, NULL};
        if (make(kb, args) != 0) {
            cx_fail(cx, "kernel.defconfig: make %s failed for ARCH=%s (is it "
                    "a configuration target of this kernel? see arch/%s/"
                    "configs/)", target, kb->k->arch, kb->k->srcarch);
            goto out;
        }
        buf_puts(desc, ", \"defconfig\": ");
        json_string(desc, target);
    }
    if (load_config(cx, dotconfig, "base .config", &base))
        goto out;

    all_fragments(cx->st, &frags);
    buf_puts(desc, ", \"fragments\": [");
    for (size_t i = 0; i < frags.n; i++) {
        char *p = fragment_path(cx->recipe_dir, frags.v[i]);
        if (!p) {
            cx_fail(cx, "kernel.fragments: no fragment '%s'", frags.v[i]);
            goto out;
        }
        struct kconfig f = {0};
        const char *label = fragment_is_path(frags.v[i])
                                ? frags.v[i]
                                : path_basename(p);
        int lrc = load_config(cx, p, label, &f);
        free(p);
        if (lrc) {
            kconfig_free(&f);
            goto out;
        }
        kconfig_merge(&want, &f, &warnings);
        kconfig_free(&f);
        buf_printf(desc, "%s", i ? ", " : "");
        json_string(desc, frags.v[i]);
    }
    buf_puts(desc, "]");
    for (size_t i = 0; i < warnings.n; i++)
        cx_log(cx, "warning: kernel.fragments: %s", warnings.v[i]);
    size_t changed = kconfig_merge(&base, &want, NULL);
    cx_log(cx, "fragments set %zu options (%zu differ from the base)", want.n,
           changed);
    struct buf text = BUF_INIT;
    kconfig_format(&base, &text);
    int w = write_file_atomic(dotconfig, text.p, text.n, 0644);
    buf_free(&text);
    if (w < 0) {
        cx_fail(cx, "cannot write %s: %s", dotconfig, strerror(errno));
        goto out;
    }
    const char *args[] = {"olddefconfig", NULL};
    if (make(kb, args) != 0) {
        cx_fail(cx, "make olddefconfig failed (see the log above)");
        goto out;
    }
    if (load_config(cx, dotconfig, ".config", &final))
        goto out;

    struct kconfig_problem *probs = NULL;
    size_t n = kconfig_check(&want, &final, &probs);
    if (n) {
        struct buf all = {0};
        for (size_t i = 0; i < n; i++) {
            char *t = kconfig_problem_text(&probs[i], kb->src,
                                           kb->k->srcarch);
            buf_printf(&all, "%s  %s", all.n ? "\n" : "", t);
            free(t);
        }
        cx_fail(cx, "kernel.fragments: %zu option%s the fragments set did "
                "not survive make olddefconfig (ARCH=%s):\n%s\nFix the "
                "fragments (add the missing dependencies, or drop the "
                "options)", n, n == 1 ? "" : "s", kb->k->arch, all.p);
        buf_free(&all);
        free(probs);
        goto out;
    }
    cx_log(cx, "configured in %.1f s: all %zu options the fragments set are "
           "in the final .config", now_seconds() - t0, want.n);
    rc = 0;
out:
    free(base_config);
    free(dotconfig);
    kconfig_free(&base);
    kconfig_free(&want);
    kconfig_free(&final);
    strlist_free(&frags);
    strlist_free(&warnings);
    return rc;
}

/* ---- outputs -------------------------------------------------------------- */

static int copy_out(const struct kbuild *kb, const char *from,
                    const char *to)
{
    char *src = path_join(kb->bld, from);
    char *dst = path_join(kb->cx->out, to);
    int rc = 0;
    if (copy_file(src, dst) < 0)
        rc = cx_fail(kb->cx, "the build made no %s (%s)", src,
                     strerror(errno));
    free(src);
    free(dst);
    return rc;
}

static bool config_has(const char *dotconfig, const char *name)
{
    struct kconfig kc = {0};
    char *text = NULL;
    size_t len;
    bool on = false;
    if (read_file(dotconfig, &text, &len) == 0 &&
        kconfig_parse(&kc, text, ".config", NULL) == 0) {
        const struct kconfig_entry *e = kconfig_get(&kc, name);
        on = e && e->value && strcmp(e->value, "y") == 0;
    }
    kconfig_free(&kc);
    free(text);
    return on;
}

static int install_modules(const struct kbuild *kb, const char *release,
                           bool modules)
{
    const struct stage_ctx *cx = kb->cx;
    char *modroot = path_join(cx->out, "modules");
    char *sub = xasprintf("lib/modules/%s", release);
    char *moddir = path_join(modroot, sub);
    int rc = 1;
    if (modules) {
        char *a1 = xasprintf("INSTALL_MOD_PATH=%s", modroot);
        const char *args[] = {"modules_install", a1, "DEPMOD=true",
                              cx_bool(cx, "strip_modules", true)
                                  ? "INSTALL_MOD_STRIP=1"
                                  : NULL,
                              NULL};
        int st = make(kb, args);
        free(a1);
        if (st != 0) {
            cx_fail(cx, "make modules_install failed (see the log above)");
            goto out;
        }
        /* links back into the build directory mean nothing in an image */
        char *l1 = path_join(moddir, "build"), *l2 = path_join(moddir,
                                                                "source");
        unlink(l1);
        unlink(l2);
        free(l1);
        free(l2);
    } else {
        /* no CONFIG_MODULES: an empty tree, still with modules.dep */
        if (mkdir_p(moddir, 0755) < 0) {
            cx_fail(cx, "cannot create %s: %s", moddir, strerror(errno));
            goto out;
        }
        static const char *const lists[] = {"modules.builtin",
                                            "modules.builtin.modinfo", NULL};
        for (size_t i = 0; lists[i]; i++) {
            char *s = path_join(kb->bld, lists[i]);
            char *d = path_join(moddir, lists[i]);
            if (path_exists(s))
                copy_file(s, d);
            free(s);
            free(d);
        }
    }
    const char *dargv[] = {"depmod", "-b", modroot, release, NULL};
    if (cx_run(cx, dargv) != 0) {
        cx_fail(cx, "depmod -b %s %s failed (see the log above)", modroot,
                release);
        goto out;
    }
    char *dep = path_join(moddir, "modules.dep");
    bool ok = path_exists(dep);
    free(dep);
    if (!ok) {
        cx_fail(cx, "depmod wrote no modules.dep in %s", moddir);
        goto out;
    }
    rc = 0;
out:
    free(modroot);
    free(sub);
    free(moddir);
    return rc;
}

static long version_number(const char *v)
{
    unsigned a = 0, b = 0, c = 0;
    if (!v || sscanf(v, "%u.%u.%u", &a, &b, &c) < 1)
        return -1;
    return (long)a * 10000 + (long)b * 100 + (long)c;
}

/* The kernel names the oldest gcc it builds with (scripts/min-tool-version.sh,
 * since 5.15); a cross gcc older than that stops here, clearly, rather than
 * deep inside the build. */
static int check_min_gcc(const struct kbuild *kb)
{
    const struct stage_ctx *cx = kb->cx;
    char *script = path_join(kb->src, "scripts/min-tool-version.sh");
    if (!kb->cross || !path_exists(script)) {
        free(script);
        return 0;
    }
    const char *sargv[] = {"sh", script, "gcc", NULL};
    char *need = NULL, *have = NULL, *gcc = xasprintf("%sgcc", kb->cross);
    /* through env(1): the program is looked up in the toolchain's PATH,
     * which the spawn's own lookup (the parent's PATH) would miss */
    struct strlist a = {0};
    strlist_push(&a, "env");
    for (size_t i = 0; i < kb->env.n; i++)
        strlist_push(&a, kb->env.v[i]);
    strlist_push(&a, gcc);
    strlist_push(&a, "-dumpfullversion");
    int rc = 0;
    if (cx_capture(cx, sargv, &need) == 0 && cx_capture(cx, (const char *const *)a.v, &have) == 0) {
        need[strcspn(need, "\n")] = 0;
        have[strcspn(have, "\n")] = 0;
        long n = version_number(need), h = version_number(have);
        if (n > 0 && h > 0 && h < n)
            rc = cx_fail(cx, "%s: this kernel needs gcc %s or newer (its "
                         "scripts/min-tool-version.sh), but %s is gcc %s: build a newer "
                         "toolchain (toolchain.gcc) or choose an older kernel",
                         cx_dep(cx, "toolchain") ? "toolchain.gcc" : "kernel.cross_compile",
                         need, gcc, have);
        else if (n > 0 && h > 0)
            cx_log(cx, "gcc %s meets the kernel's minimum %s", have, need);
    }
    strlist_free(&a);
    free(need);
    free(have);
    free(gcc);
    free(script);
    return rc;
}

static int run(struct stage_ctx *cx)
{
    const struct karch *k = karch_of(cx->arch);
    if (!k)
        return cx_fail(cx, "arch %s is not supported by kernel kind source",
                       cx->arch);
    struct kbuild kb = {.cx = cx, .k = k, .jobserver = have_jobserver()};
    struct buf desc = BUF_INIT;
    int rc = 1;
    double t0 = now_seconds();
    if (setup_toolchain(&kb))
        goto out;
    reproducible_env(&kb);
    /* the tree and its build directory are both below KEEP */
    char *launch = launcher_prefix(cx, "kernel", cx->keep, false, &kb.env);
    if (launch)
        kb.cc = xasprintf("CC=%s %sgcc", launch, kb.cross ? kb.cross : "");
    free(launch);

    kb.src = prepare_source(cx, &desc);
    if (!kb.src || check_min_gcc(&kb))
        goto out;
    {
        const char *id = path_basename(kb.src) + 4; /* after "src-" */
        char *b = xasprintf("build-%s", id);
        kb.bld = path_join(cx->keep, b);
        free(b);
    }
    if (mkdir_p(kb.bld, 0755) < 0) {
        cx_fail(cx, "cannot create %s: %s", kb.bld, strerror(errno));
        goto out;
    }
    cx_log(cx, "building in %s (ARCH=%s, %s)", kb.bld, k->arch,
           kb.jobserver ? "make jobserver from trillian" : "no jobserver");
    if (configure(&kb, &desc))
        goto out;

    /* the release, as the kernel computes it */
    struct strlist a = {0};
    make_argv(&kb, &a);
    strlist_push(&a, "-s");
    strlist_push(&a, "kernelrelease");
    char *relout = NULL;
    /* with the toolchain's PATH: arch/ia64's Makefile runs the compiler */
    int st = cx_capture_in(cx, (const char *const *)kb.env.v, (const char *const *)a.v, &relout);
    strlist_free(&a);
    char *release = NULL;
    if (st == 0 && relout) {
        /* the last non-empty line (make may print directory changes) */
        char *s = relout + strlen(relout);
        while (s > relout && isspace((unsigned char)s[-1]))
            *--s = '\0';
        char *nl = strrchr(relout, '\n');
        release = xstrdup(nl ? nl + 1 : relout);
    }
    free(relout);
    if (!release || !release[0] || strchr(release, ' ') ||
        strchr(release, '/')) {
        cx_fail(cx, "make kernelrelease gave no usable release ('%s')",
                release ? release : "");
        free(release);
        goto out;
    }
    cx_log(cx, "kernel release %s", release);

    char *dotconfig = path_join(kb.bld, ".config");
    bool modules = config_has(dotconfig, "CONFIG_MODULES");
    free(dotconfig);
    char *reltext = xasprintf("%s\n", release);
    int wr = write_text(cx, "release", reltext);
    free(reltext);
    if (wr || copy_out(&kb, ".config", "config"))
        goto out_rel;
    if (cx_bool(cx, "config_only", false)) {
        cx_log(cx, "config_only: stopping after the configuration");
    } else {
        double tb = now_seconds();
        const char *targets[] = {"vmlinux", k->image,
                                 modules ? "modules" : NULL, NULL};
        if (make(&kb, targets) != 0) {
            cx_fail(cx, "the kernel build failed: make %s%s (see the errors "
                    "above in the log)", k->image,
                    modules ? " modules" : "");
            goto out_rel;
        }
        cx_log(cx, "built in %.0f s", now_seconds() - tb);
        if (copy_out(&kb, "vmlinux", "vmlinux") ||
            copy_out(&kb, k->image_path, "vmlinuz") ||
            copy_out(&kb, "System.map", "System.map"))
            goto out_rel;
        /* a wrong CROSS_COMPILE must not reach the cache as this arch's kernel */
        char *vml = path_join(cx->out, "vmlinux");
        char berr[BINFMT_ERRLEN];
        int em = binfmt_elf_machine(vml, berr);
        free(vml);
        if (em != k->em) {
            if (em < 0)
                cx_fail(cx, "vmlinux is not an ELF file: %s", berr);
            else
                cx_fail(cx, "vmlinux is built for %s, not %s: check the toolchain stage's "
                        "target", binfmt_elf_machine_name(em), cx->arch);
            goto out_rel;
        }
        if (install_modules(&kb, release, modules))
            goto out_rel;
        char *hdr = path_join(cx->out, "headers");
        char *a1 = xasprintf("INSTALL_HDR_PATH=%s", hdr);
        const char *hargs[] = {"headers_install", a1, NULL};
        st = make(&kb, hargs);
        free(a1);
        free(hdr);
        if (st != 0) {
            cx_fail(cx, "make headers_install failed (see the log above)");
            goto out_rel;
        }
    }

    struct buf m = {0};
    buf_puts(&m, "{\"release\": ");
    json_string(&m, release);
    buf_printf(&m, ", %s", desc.p);
    buf_puts(&m, ", \"arch\": ");
    json_string(&m, k->arch);
    if (kb.cross) {
        buf_puts(&m, ", \"cross_compile\": ");
        json_string(&m, kb.cross);
    }
    buf_printf(&m, ", \"modules\": %s}\n", modules ? "true" : "false");
    wr = write_text(cx, "stage-manifest.json", m.p);
    buf_free(&m);
    if (wr)
        goto out_rel;
    cx_log(cx, "kernel %s done in %.0f s", release, now_seconds() - t0);
    rc = 0;
out_rel:
    free(release);
out:
    buf_free(&desc);
    kbuild_free(&kb);
    return rc;
}

/* added after 6.1 kernels were cached: unset, they leave keys as they were */
static const char *const late_fields[] = {"series", "series_urls", "debian_version",
                                          "debian_suite", "debian_mirror",
                                          "debian_keyring", NULL};

const struct stage_kind stage_kernel_source = {
    .name = "source",
    .section = "kernel",
    .version = 1,
    .summary = "Linux built from a tarball, Debian's source package or git, with "
               "patch series and config fragments",
    .fields = fields,
    .tools = tools,
    .outputs = NULL, /* declare() states them: they depend on config_only */
    .late_fields = late_fields,
    .declare = declare,
    .run = run,
};
