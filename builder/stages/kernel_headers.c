/* headers, kind "source": the kernel's UAPI headers (make headers_install),
 * what a C library is built against, without building the kernel.
 *
 * Source: a kernel source tarball (`tarball`, a path; or `url` with
 * `sha256`, downloaded once into CACHE/downloads/toolchain/), plus `patches`
 * applied in order with patch -p1. headers_install needs no configuration
 * and no cross compiler (only the host's gcc, for unifdef), so the key holds
 * the tarball's content, the patches, the recipe's arch and the host tools:
 * not the kernel's config, fragments or toolchain. Recipes that differ only
 * in their kernel share one headers entry, and the C library built on it.
 *
 * Unpacking: without patches only what headers_install reads is extracted
 * (the top-level Makefile, scripts/, include/ and arch/SRCARCH/: a quarter
 * of the time of the whole tree, which is still decompressed once); with
 * patches the whole tree, as a patch may touch any file.
 *
 * Run, a table for the generic source-package build (pkg_build.h): the
 * tarball fetched and unpacked by the kind's get hook, `patches` applied by
 * pkg_build (patches_key), make ARCH=... headers_install INSTALL_HDR_PATH=OUT
 * in the unpacked tree (under the engine's jobserver), then a step that
 * checks the headers and runs make -s kernelversion.
 *
 * Outputs: include/ (linux/, asm/, asm-generic/, ...; as installed in
 * /usr/include), `version` (the source's kernel version, e.g. "6.1.192":
 * what glibc checks its minimum kernel against), stage-manifest.json
 * {"version", "arch", "tarball", "patches"}. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "formats/binfmt.h"
#include "pkg_build.h"
#include "stage.h"
#include "toolchain.h"

static const struct field fields[] = {
    {"tarball", F_STRING, false, NULL, NULL,
     "kernel source tarball, relative to the recipe (e.g. "
     "/usr/src/linux-source-6.1.tar.xz); give tarball or url"},
    {"url", F_STRING, false, NULL, NULL, "URL of a kernel source tarball (needs sha256)"},
    {"sha256", F_STRING, false, NULL, NULL,
     "SHA-256 of the tarball (required with url, checked for tarball)"},
    {"patches", F_PATH_LIST, false, NULL, NULL,
     "patches applied in order with patch -p1 (the whole tree is then unpacked)"},
    {0},
};

/* gcc: the host compiler builds unifdef; rsync installs the headers */
static const char *const tools[] = {"make", "gcc", "tar", "rsync", NULL};
static const char *const outputs[] = {"include", "version", "stage-manifest.json", NULL};

/* ARCH= and the arch/ directory for each recipe arch. */
struct harch {
    const char *debian, *arch, *srcarch;
};
static const struct harch harchs[] = {
    {"amd64", "x86_64", "x86"},
    {"ia64", "ia64", "ia64"},
    {0},
};

static const struct harch *harch_of(const char *debian)
{
    for (const struct harch *h = harchs; h->debian; h++)
        if (debian && strcmp(h->debian, debian) == 0)
            return h;
    return NULL;
}

static int declare(struct stage *st)
{
    if (!harch_of(st_arch(st)))
        return st_error(st, NULL, "kind \"source\" installs headers for arch amd64 or ia64, "
                        "not '%s'", st_arch(st) ? st_arch(st) : "?");
    const char *tarball = st_str(st, "tarball"), *url = st_str(st, "url");
    if (!tarball == !url)
        return st_error(st, tarball ? "url" : NULL, "%s (set tarball, e.g. "
                        "\"/usr/src/linux-source-6.1.tar.xz\", or url + sha256)",
                        tarball ? "has both tarball and url" : "has no source");
    if (url && !tc_is_url(url))
        return st_error(st, "url", "'%s' is not an http(s) URL (a local file goes in tarball)",
                        url);
    if (tarball && tc_is_url(tarball))
        return st_error(st, "tarball", "'%s' is a URL: set url (and sha256) instead", tarball);
    const char *key = tarball ? "tarball" : "url";
    char *p = st_path(st, key);
    tc_declare_source_value(st, key, "sha256", st_str(st, key), p, st_str(st, "sha256"));
    free(p);
    if (url)
        st_tool(st, "curl");
    struct strlist l = {0};
    if (st_list(st, "patches", &l))
        st_tool(st, "patch");
    strlist_free(&l);
    return 0;
}

/* The only directory below DIR (a tarball's top-level directory), or NULL. */
static char *only_subdir(const char *dir)
{
    DIR *d = opendir(dir);
    char *only = NULL;
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        n++;
        free(only);
        only = path_join(dir, e->d_name);
    }
    if (d)
        closedir(d);
    if (n != 1 || !is_dir(only)) {
        free(only);
        return NULL;
    }
    return only;
}

/* Unpacks the tarball into DIR: the parts headers_install reads, or all of
 * it. Returns the kernel tree (new string), or NULL after cx_fail. */
static char *unpack(const struct stage_ctx *cx, const struct harch *h, const char *rkey,
                    const char *tarball, const char *dir, bool whole)
{
    if (mkdir_p(dir, 0755) < 0) {
        cx_fail(cx, "cannot create %s: %s", dir, strerror(errno));
        return NULL;
    }
    struct strlist a = {0};
    strlist_push(&a, "tar");
    strlist_push(&a, "-xf");
    strlist_push(&a, tarball);
    strlist_push(&a, "-C");
    strlist_push(&a, dir);
    strlist_push(&a, "--no-same-owner");
    if (!whole) {
        /* '*' is the top-level directory, whatever its name */
        strlist_push(&a, "--wildcards");
        strlist_push(&a, "--no-wildcards-match-slash");
        strlist_push(&a, "*/Makefile");
        strlist_push(&a, "*/scripts");
        strlist_push(&a, "*/include");
        strlist_pushf(&a, "*/arch/%s", h->srcarch);
    }
    int r = tc_run_step(cx, NULL, NULL, (const char *const *)a.v, "unpack");
    strlist_free(&a);
    char *root = r == 0 ? only_subdir(dir) : NULL;
    char *mk = root ? path_join(root, "Makefile") : NULL;
    if (!mk || !path_exists(mk)) {
        cx_fail(cx, "%s: %s holds no kernel source tree with arch/%s (tar exit %d; see the log; "
                "expected one top-level directory with Makefile, scripts/, include/ and "
                "arch/%s/: Linux up to 6.6 for ia64)", rkey, tarball, h->srcarch, r,
                h->srcarch);
        free(root);
        root = NULL;
    }
    free(mk);
    return root;
}

/* The build (pkg_build.h): the source by get_source (a path or a URL,
 * unpacked in part or whole), the recipe's `patches`, one make step; then
 * the installed headers checked and the version read, as a step. */
struct hdr_state {
    const struct harch *h;
    const char *root; /* the kernel tree (pkg_build's, for the version step) */
    char *version;
};

static char *get_source(const struct stage_ctx *cx, void *arg)
{
    struct hdr_state *s = arg;
    const char *key = cx_str(cx, "tarball") ? "tarball" : "url";
    char *path = cx_path(cx, key), *root = NULL;
    char *tarball = tc_get_source_value(cx, "headers", key, "sha256", cx_str(cx, key), path,
                                        cx_str(cx, "sha256"));
    if (tarball) {
        struct strlist patches = {0};
        char *srcdir = path_join(cx->work, "src");
        char rkey[64];
        snprintf(rkey, sizeof rkey, "headers.%s", key);
        /* a patch may touch any file: then the whole tree */
        root = unpack(cx, s->h, rkey, tarball, srcdir, cx_list(cx, "patches", &patches) > 0);
        strlist_free(&patches);
        free(srcdir);
    }
    free(path);
    free(tarball);
    s->root = root;
    return root;
}

static const char *var(void *arg, const char *name)
{
    const struct hdr_state *s = arg;
    return strcmp(name, "arch") == 0 ? s->h->arch : NULL;
}

/* After headers_install: what glibc includes first is there, and the
 * tree's version (make kernelversion) goes to `version`. */
static int version_step(const struct stage_ctx *cx, void *arg)
{
    struct hdr_state *s = arg;
    const char *must[] = {"include/linux/version.h", "include/asm/unistd.h", NULL};
    for (size_t i = 0; must[i]; i++) {
        char *p = path_join(cx->out, must[i]);
        bool there = path_exists(p);
        free(p);
        if (!there)
            return cx_fail(cx, "headers: headers_install left no %s (see the log)", must[i]);
    }
    char *archarg = xasprintf("ARCH=%s", s->h->arch);
    const char *va[] = {"make", "-s", "--no-print-directory", "-C", s->root, archarg,
                        "kernelversion", NULL};
    unsigned v[3];
    int rc = 0;
    if (cx_capture(cx, va, &s->version) != 0 || !s->version) {
        rc = cx_fail(cx, "headers: make kernelversion failed (see the log)");
    } else {
        s->version[strcspn(s->version, "\n")] = 0;
        if (binfmt_parse_release(s->version, v) < 0)
            rc = cx_fail(cx, "headers: make kernelversion gave '%s', not a kernel version",
                         s->version);
    }
    free(archarg);
    if (rc)
        return rc;
    char *vline = xasprintf("%s\n", s->version);
    rc = cx_write(cx, "version", vline, strlen(vline)) ? 1 : 0;
    free(vline);
    return rc;
}

static const struct pkg_source sources[] = {
    {.name = "linux", .get = get_source, .patches_key = "patches"},
    {0},
};

static const char *const install_argv[] = {"make", "ARCH=${kind:arch}", "headers_install",
                                           "INSTALL_HDR_PATH=${out}", NULL};

static const struct pkg_step steps[] = {
    {.label = "headers_install", .cwd = "${src:linux}", .argv = install_argv,
     .hint = "make headers_install: it needs the host's gcc (unifdef) and rsync"},
    {.label = "kernelversion", .fn = version_step},
    {0},
};

static const struct pkg_file install[] = {{0}};

static const struct pkg_desc desc = {
    .what = "Linux headers", .sources = sources, .steps = steps, .install = install, .var = var,
};

static int run(struct stage_ctx *cx)
{
    struct hdr_state s = {harch_of(cx->arch), NULL, NULL};
    int rc = pkg_build(cx, &desc, &s);
    if (!rc) {
        struct strlist patches = {0};
        json_object *m = json_object_new_object(), *pl = json_object_new_array();
        json_add_str(m, "version", s.version);
        json_add_str(m, "arch", s.h->arch);
        json_add_str(m, "tarball", cx_str(cx, cx_str(cx, "tarball") ? "tarball" : "url"));
        cx_list(cx, "patches", &patches);
        for (size_t i = 0; i < patches.n; i++)
            json_object_array_add(pl, json_str(path_basename(patches.v[i])));
        json_object_object_add(m, "patches", pl);
        strlist_free(&patches);
        rc = cx_write_manifest(cx, m) ? 1 : 0;
    }
    if (!rc)
        cx_log(cx, "Linux %s UAPI headers for ARCH=%s in %s/include", s.version, s.h->arch,
               cx->out);
    free(s.version);
    return rc;
}

static const char *const patch_fields[] = {"patches", NULL};

const struct stage_kind stage_headers_source = {
    .name = "source",
    .section = "headers",
    .version = 1, /* not bumped for dropping the step times from the manifest:
                     * no input decided them (docs/engine.md) */
    .summary = "the kernel's UAPI headers (make headers_install) from a kernel source tarball, "
               "without configuring or building the kernel",
    .fields = fields,
    .patch_fields = patch_fields,
    .tools = tools,
    .outputs = outputs,
    .declare = declare,
    .run = run,
};
