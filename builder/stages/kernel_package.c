/* kernel, kind "package": a prebuilt Debian kernel (.deb) fetched with apt.
 *
 * `package` may be a metapackage (linux-image-cloud-amd64): at plan time it is
 * resolved through its linux-image-* dependency to the real image package
 * (linux-image-6.1.0-57-cloud-amd64) with `apt-cache show`, and the resolved
 * name, version and the archive's SHA256 of the .deb enter the cache key, so a
 * new kernel in the archive is a new key and the same one is a cache hit.
 * run() downloads it with `apt-get download` (kept under
 * CACHE/downloads/apt/ so repeat builds don't refetch), checks the SHA256,
 * unpacks it with libarchive and lays out:
 *   vmlinuz, System.map, config   from boot/NAME-RELEASE
 *   release                       the kernel release string and a newline
 *   modules/lib/modules/RELEASE/  the modules, with modules.dep (depmod -b)
 * plus stage-manifest.json (package, version, sha256, release). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "formats/archive.h"
#include "drivers/debfetch.h"
#include "base/sha256.h"
#include "base/json_out.h"
#include "stage.h"

static const struct field fields[] = {
    {"package", F_STRING, false, NULL, "linux-image-cloud-amd64",
     "Debian kernel image package or metapackage (resolved through its "
     "linux-image-* dependency)"},
    {"version", F_STRING, false, NULL, NULL,
     "exact version of `package` (apt's candidate if unset)"},
    {0},
};

static const char *const tools[] = {"apt-get", "apt-cache", "depmod", NULL};
static const char *const outputs[] = {"vmlinuz", "System.map", "config",
                                      "release", "modules", NULL};

/* ---- resolving the package with apt-cache -------------------------------- */

struct resolved {
    char *package, *version, *sha256, *filename, *arch;
    char *chain; /* "linux-image-cloud-amd64 -> linux-image-6.1.0-57-…" */
};

static void resolved_free(struct resolved *r)
{
    free(r->package);
    free(r->version);
    free(r->sha256);
    free(r->filename);
    free(r->arch);
    free(r->chain);
    *r = (struct resolved){0};
}

typedef int (*capture_fn)(void *ud, const char *const *argv, char **out);

/* Plan time: declare() has no stage context, so no log; an answer is
 * remembered while apt's state is the same, so a warm plan starts no
 * apt-cache (debfetch_host_query). */
static int plan_capture(void *ud, const char *const *argv, char **out)
{
    (void)ud;
    return debfetch_host_query(argv, out);
}

static int ctx_capture(void *ud, const char *const *argv, char **out)
{
    return cx_capture(ud, argv, out);
}

/* A field of the first paragraph of apt-cache show output; new string. */
static char *field_value(const char *text, const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = text; p && *p;) {
        if (*p == '\n')
            break; /* end of the first paragraph */
        if (strncmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (*v == ' ')
                v++;
            const char *e = strchr(v, '\n');
            return xstrndup(v, e ? (size_t)(e - v) : strlen(v));
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return NULL;
}

/* The first linux-image-* package in a Depends value, with its "(= V)"
 * version if any. */
static bool image_dependency(const char *depends, char **pkg, char **ver)
{
    *pkg = *ver = NULL;
    if (!depends)
        return false;
    char *d = xstrdup(depends);
    char *save = NULL;
    for (char *alt = strtok_r(d, ",|", &save); alt;
         alt = strtok_r(NULL, ",|", &save)) {
        while (*alt == ' ')
            alt++;
        if (!str_starts(alt, "linux-image-"))
            continue;
        size_t n = strcspn(alt, " (:");
        *pkg = xstrndup(alt, n);
        const char *eq = strstr(alt, "(= ");
        if (eq) {
            eq += 3;
            *ver = xstrndup(eq, strcspn(eq, ")"));
        }
        break;
    }
    free(d);
    return *pkg != NULL;
}

static bool host_arch_is(const char *arch)
{
    /* the Debian architecture of this build, as dpkg names it */
#if defined(__x86_64__)
    return strcmp(arch, "amd64") == 0;
#elif defined(__ia64__)
    return strcmp(arch, "ia64") == 0;
#elif defined(__aarch64__)
    return strcmp(arch, "arm64") == 0;
#else
    (void)arch;
    return false;
#endif
}

/* Follows metapackages to the real image. 0, or -1 with a message in err. */
static int resolve(const char *package, const char *version, const char *arch,
                   capture_fn cap, void *ud, struct resolved *r,
                   struct buf *err)
{
    *r = (struct resolved){0};
    struct buf chain = BUF_INIT;
    char *pkg = xstrdup(package);
    char *ver = version ? xstrdup(version) : NULL;
    int rc = -1;
    for (int hop = 0; hop < 5; hop++) {
        char *spec;
        if (host_arch_is(arch))
            spec = ver ? xasprintf("%s=%s", pkg, ver) : xstrdup(pkg);
        else
            spec = ver ? xasprintf("%s:%s=%s", pkg, arch, ver)
                       : xasprintf("%s:%s", pkg, arch);
        const char *argv[] = {"apt-cache", "show", "--no-all-versions", spec,
                              NULL};
        char *text = NULL;
        int st = cap(ud, argv, &text);
        char *got = text ? field_value(text, "Package") : NULL;
        if (st != 0 || !got) {
            if (st < 0)
                buf_printf(err, "could not run apt-cache (install apt)");
            else
                buf_printf(err, "apt knows no package %s%s%s for %s (check the "
                           "name and version, run apt-get update%s)", pkg,
                           ver ? " version " : "", ver ? ver : "", arch,
                           host_arch_is(arch) ? ""
                                              : ", and add the architecture "
                                                "with dpkg --add-architecture "
                                                "and its archive to apt's "
                                                "sources; ia64 is only on "
                                                "debian-ports: use kind = "
                                                "\"source\" instead");
            free(got);
            free(text);
            free(spec);
            goto out;
        }
        buf_printf(&chain, "%s%s%s%s", chain.n ? " -> " : "", got,
                   ver ? " " : "", ver ? ver : "");
        char *dep = NULL, *depver = NULL;
        char *depends = field_value(text, "Depends");
        char *this_ver = field_value(text, "Version");
        if (image_dependency(depends, &dep, &depver) &&
            strcmp(dep, got) != 0) {
            /* a metapackage: follow it, to the version it pins if any */
            free(pkg);
            free(ver);
            pkg = dep;
            ver = depver;
            free(depends);
            free(this_ver);
            free(got);
            free(text);
            free(spec);
            continue;
        }
        free(dep);
        free(depver);
        free(depends);
        r->package = got;
        r->version = this_ver;
        r->sha256 = field_value(text, "SHA256");
        r->filename = field_value(text, "Filename");
        r->arch = field_value(text, "Architecture");
        free(text);
        free(spec);
        if (!r->version || !r->sha256 || !r->filename) {
            buf_printf(err, "apt-cache show %s gave no Version, SHA256 or "
                       "Filename (is it a virtual package?)", r->package);
            resolved_free(r);
            goto out;
        }
        r->chain = buf_detach(&chain);
        rc = 0;
        goto out;
    }
    buf_printf(err, "%s: more than 5 levels of linux-image-* metapackages",
               package);
out:
    buf_free(&chain);
    free(pkg);
    free(ver);
    return rc;
}

static int declare(struct stage *st)
{
    const char *package = st_str(st, "package");
    const char *version = st_str(st, "version");
    if (!package || !package[0])
        return st_error(st, "package", "is empty (name a Debian kernel image "
                        "package, like linux-image-cloud-amd64)");
    if (strpbrk(package, " =:/") || (version && strpbrk(version, " =/")))
        return st_error(st, version && strpbrk(version, " =/") ? "version"
                                                               : "package",
                        "must be a bare Debian package name and version "
                        "(put the version in kernel.version)");
    struct resolved r;
    struct buf err = BUF_INIT;
    if (resolve(package, version, st_arch(st), plan_capture, NULL, &r,
                &err) < 0) {
        st_error(st, "package", "%s", err.p);
        buf_free(&err);
        return -1;
    }
    st_input_text(st, "resolved-package", r.package);
    st_input_text(st, "resolved-version", r.version);
    st_input_text(st, "deb-sha256", r.sha256);
    resolved_free(&r);
    return 0;
}

/* ---- run ------------------------------------------------------------------ */

/* Gets the .deb into CACHE/downloads/apt/, reusing a verified copy: the
 * same fetch as every other stage's packages (debfetch). */
static char *fetch_deb(const struct stage_ctx *cx, const struct resolved *r)
{
    const struct deb_pin pin = {.package = r->package, .arch = r->arch, .version = r->version,
                                .sha256 = r->sha256, .filename = r->filename};
    return debfetch_get(cx, &pin, "kernel.package");
}

/* The release of the only boot/vmlinuz-RELEASE in ROOT, or NULL. */
static char *find_release(const struct stage_ctx *cx, const char *root)
{
    char *boot = path_join(root, "boot");
    DIR *d = opendir(boot);
    char *rel = NULL;
    int n = 0;
    if (d) {
        struct dirent *de;
        while ((de = readdir(d)) != NULL)
            if (str_starts(de->d_name, "vmlinuz-")) {
                n++;
                if (!rel)
                    rel = xstrdup(de->d_name + 8);
            }
        closedir(d);
    }
    free(boot);
    if (n != 1) {
        cx_fail(cx, "the package has %d boot/vmlinuz-* files, expected one "
                "(kernel.package: name a linux-image package)", n);
        free(rel);
        return NULL;
    }
    return rel;
}

static int copy_boot_file(const struct stage_ctx *cx, const char *root,
                          const char *prefix, const char *rel,
                          const char *outname)
{
    char *name = xasprintf("boot/%s-%s", prefix, rel);
    char *src = path_join(root, name);
    char *dst = path_join(cx->out, outname);
    int rc = 0;
    if (copy_file(src, dst) < 0)
        rc = cx_fail(cx, "the package lacks %s (%s); kernel.package must be "
                     "a Debian linux-image package", name, strerror(errno));
    free(name);
    free(src);
    free(dst);
    return rc;
}

static int run(struct stage_ctx *cx)
{
    const char *package = cx_str(cx, "package");
    const char *version = cx_str(cx, "version");
    struct resolved r;
    struct buf err = BUF_INIT;
    if (resolve(package, version, cx->arch, ctx_capture, (void *)cx, &r,
                &err) < 0) {
        int rc = cx_fail(cx, "kernel.package: %s", err.p);
        buf_free(&err);
        return rc;
    }
    cx_log(cx, "resolved %s", r.chain);
    int rc = 1;
    char *deb = NULL, *root = NULL, *rel = NULL;
    deb = fetch_deb(cx, &r);
    if (!deb)
        goto out;

    root = path_join(cx->work, "deb");
    mkdir_p(root, 0755);
    char aerr[ARC_ERRLEN];
    double t0 = now_seconds();
    if (arc_deb_extract(deb, root, ARC_X_NO_OWNERS | ARC_X_NO_XATTRS, NULL,
                        aerr) < 0) {
        cx_fail(cx, "cannot unpack %s: %s (kernel.package)", deb, aerr);
        goto out;
    }
    cx_log(cx, "unpacked %s in %.1f s", path_basename(deb),
           now_seconds() - t0);
    rel = find_release(cx, root);
    if (!rel)
        goto out;
    if (copy_boot_file(cx, root, "vmlinuz", rel, "vmlinuz") ||
        copy_boot_file(cx, root, "System.map", rel, "System.map") ||
        copy_boot_file(cx, root, "config", rel, "config"))
        goto out;
    char *reltext = xasprintf("%s\n", rel);
    int w = cx_write(cx, "release", reltext, strlen(reltext));
    free(reltext);
    if (w)
        goto out;

    /* modules: bookworm ships lib/modules, later releases usr/lib/modules */
    char *sub = xasprintf("lib/modules/%s", rel);
    char *usub = xasprintf("usr/lib/modules/%s", rel);
    char *src = path_join(root, sub);
    if (!is_dir(src)) {
        free(src);
        src = path_join(root, usub);
    }
    char *modroot = path_join(cx->out, "modules");
    char *dst = path_join(modroot, sub);
    char *dstparent = path_dirname(dst);
    bool ok = is_dir(src) && mkdir_p(dstparent, 0755) == 0 &&
              (rename(src, dst) == 0 || copy_tree(src, dst, false) == 0);
    if (!ok)
        cx_fail(cx, "the package has no %s directory (kernel.package must be "
                "a linux-image package with modules)", sub);
    free(dstparent);
    free(src);
    free(usub);
    if (ok) {
        const char *dargv[] = {"depmod", "-b", modroot, rel, NULL};
        if (cx_run(cx, dargv) != 0) {
            cx_fail(cx, "depmod -b %s %s failed (see the log above)", modroot,
                    rel);
            ok = false;
        } else {
            char *dep = path_join(dst, "modules.dep");
            if (!path_exists(dep)) {
                cx_fail(cx, "depmod wrote no %s", dep);
                ok = false;
            }
            free(dep);
        }
    }
    free(dst);
    free(sub);
    free(modroot);
    if (!ok)
        goto out;

    json_object *m = json_object_new_object();
    json_add_str(m, "requested", package);
    json_add_str(m, "package", r.package);
    json_add_str(m, "version", r.version);
    json_add_str(m, "sha256", r.sha256);
    json_add_str(m, "release", rel);
    if (cx_write_manifest(cx, m))
        goto out;
    cx_log(cx, "kernel %s from %s %s", rel, r.package, r.version);
    rc = 0;
out:
    if (root)
        rm_rf(root);
    free(root);
    free(rel);
    free(deb);
    resolved_free(&r);
    buf_free(&err);
    return rc;
}

const struct stage_kind stage_kernel_package = {
    .name = "package",
    .section = "kernel",
    .version = 1,
    .summary = "a prebuilt Debian kernel image package, fetched with apt",
    .fields = fields,
    .tools = tools,
    .outputs = outputs,
    .declare = declare,
    .run = run,
};
