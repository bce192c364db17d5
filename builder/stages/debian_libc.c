/* packages, kind "debian-libc": a C library sysroot made from a Debian
 * archive's binary packages instead of built from source: libc6, libc6-dev,
 * linux-libc-dev, libgcc-s1, libcrypt1 and libcrypt-dev for the recipe's
 * arch (libc6.1 and libc6.1-dev on ia64), or the `packages` list.
 *
 * The archive (mirror, suite, components, keyring) defaults to the userland
 * section's when the userland is a debootstrap root, so the sysroot and the
 * root carry the same C library; otherwise Debian bookworm. At run time a
 * private apt (debfetch_apt_open: its own sources.list with signed-by, lists
 * and status) runs `apt-get update` against it: apt checks the Release
 * signature with the keyring and the indexes against the Release hashes;
 * each package is then pinned (`version` for libc, else the suite's
 * candidate), downloaded with `apt-get download` into CACHE/downloads/apt/
 * and its SHA256 checked against the index (debfetch). The .debs are unpacked
 * with libarchive into sysroot/; absolute symlinks are made relative.
 *
 * Checks: the loader and libc are ELF files for the recipe's machine; when
 * the recipe has a kernel, its release satisfies the minimum kernel in libc's
 * ABI tag (binfmt_kernel_for_libc); when the userland is debootstrap, the
 * libc version equals the root's (from its packages.tsv).
 *
 * Outputs (the same contract as kind glibc): sysroot/ (usable as TARGET-gcc
 * --sysroot=DIR), `version` (upstream, "2.36"), stage-manifest.json {glibc,
 * debian_version, min_kernel, kernel_release, packages}. The key holds the
 * settings and the effective archive; a new upload to the suite is picked up
 * when the key changes (pin `version` for a fixed C library). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/archive.h"
#include "formats/binfmt.h"
#include "drivers/debfetch.h"
#include "base/json_out.h"
#include "stage.h"
#include "sysroot.h"
#include "toolchain.h"

static const struct field fields[] = {
    SR_ARCHIVE_FIELDS,
    {"packages", F_STRING_LIST, false, NULL, NULL,
     "binary packages unpacked into the sysroot (default: libc6 libc6-dev linux-libc-dev "
     "libgcc-s1 libcrypt1 libcrypt-dev; libc6.1 and libc6.1-dev on ia64)"},
    {"version", F_STRING, false, NULL, NULL,
     "exact version of the libc package (default: the suite's candidate)"},
    {0},
};

static const char *const tools[] = {"apt-get", "apt-cache", NULL};
static const char *const outputs[] = {"sysroot", "version", "stage-manifest.json", NULL};

static const char *const default_extra[] = {"linux-libc-dev", "libgcc-s1", "libcrypt1",
                                            "libcrypt-dev", NULL};

static void package_list(const struct stage *st, struct strlist *out)
{
    if (st_list(st, "packages", out))
        return;
    const struct libc_names *ln = libc_names_of(st_arch(st));
    strlist_push(out, ln ? ln->libc_pkg : "libc6");
    strlist_push(out, ln ? ln->dev_pkg : "libc6-dev");
    for (size_t i = 0; default_extra[i]; i++)
        strlist_push(out, default_extra[i]);
}

static int declare(struct stage *st)
{
    const struct libc_names *ln = libc_names_of(st_arch(st));
    if (!ln)
        return st_error(st, NULL, "no C library names known for arch \"%s\"", st_arch(st));
    struct sr_archive a;
    sr_archive_of(st, &a);
    sr_declare_archive(st, &a);
    strlist_free(&a.components);
    struct strlist pk = {0};
    package_list(st, &pk);
    if (!strlist_contains(&pk, ln->libc_pkg))
        st_error(st, "packages", "must include %s, the C library of %s", ln->libc_pkg,
                 st_arch(st));
    strlist_free(&pk);
    if (sr_debootstrap_userland(st))
        st_need(st, "userland");
    st_want(st, "kernel");
    return 0;
}

/* The root's version of PACKAGE from a packages.tsv, new string or NULL. */
static char *tsv_version(const char *tsv, const char *package)
{
    char *data;
    size_t len;
    if (read_file(tsv, &data, &len) != 0)
        return NULL;
    char *r = NULL;
    size_t pl = strlen(package);
    for (char *l = data; l && *l && !r;) {
        if (!strncmp(l, package, pl) && l[pl] == '\t') {
            const char *v = l + pl + 1;
            r = xstrndup(v, strcspn(v, "\t\n"));
        }
        l = strchr(l, '\n');
        if (l)
            l++;
    }
    free(data);
    return r;
}

/* "2.36" from "2.36-9+deb12u14" or "1:2.36-9". */
static char *upstream_version(const char *v)
{
    const char *c = strchr(v, ':');
    const char *s = c ? c + 1 : v;
    const char *dash = strrchr(s, '-');
    return dash ? xstrndup(s, (size_t)(dash - s)) : xstrdup(s);
}

static int check_machine(const struct stage_ctx *cx, const char *sysroot, const char *rel)
{
    char *p = path_join(sysroot, rel);
    char err[BINFMT_ERRLEN];
    int m = binfmt_elf_machine(p, err);
    int want = tc_arch_machine(cx->arch);
    int rc = 0;
    if (m < 0)
        rc = cx_fail(cx, "packages.%s: %s", cx->name, err);
    else if (m != want)
        rc = cx_fail(cx, "packages.%s: %s is %s code (ELF machine %d), but arch \"%s\" needs "
                     "%s: the archive's package is for another architecture", cx->name, rel,
                     binfmt_elf_machine_name(m), m, cx->arch, binfmt_elf_machine_name(want));
    free(p);
    return rc;
}

static int run(struct stage_ctx *cx)
{
    const struct libc_names *ln = libc_names_of(cx->arch);
    char *rkey = xasprintf("packages.%s", cx->name);
    struct sr_archive a;
    sr_archive_of(cx->st, &a);
    struct strlist pk = {0};
    package_list(cx->st, &pk);
    struct debfetch_archive da = {a.mirror, a.suite, a.keyring, cx->arch, &a.components, false,
                                  rkey};
    struct debfetch_apt apt = {0};
    char *aptdir = path_join(cx->work, "apt");
    char *tmp = path_join(cx->work, "sysroot");
    char *sysroot = path_join(cx->out, "sysroot");
    char *libc_version = NULL, *ldso = NULL, *libc = NULL, *root_ver = NULL;
    json_object *pkjs = json_object_new_object(); /* package: version */
    char min[32] = "", release[128] = "";
    int rc = debfetch_apt_open(cx, &da, aptdir, &apt);
    if (rc)
        goto out;
    if (mkdir_p(tmp, 0755) < 0) {
        rc = cx_fail(cx, "cannot create %s: %s", tmp, strerror(errno));
        goto out;
    }
    for (size_t i = 0; i < pk.n && rc == 0; i++) {
        struct deb_pin pin;
        char *err = NULL;
        const char *ver = !strcmp(pk.v[i], ln->libc_pkg) ? cx_str(cx, "version") : NULL;
        if (debfetch_apt_resolve(&apt, pk.v[i], ver, &pin, &err) < 0) {
            rc = cx_fail(cx, "%s.%s: %s; fix %s.%s, or %s.suite / %s.components", rkey,
                         ver ? "version" : "packages", err, rkey, ver ? "version" : "packages",
                         rkey, rkey);
            free(err);
            break;
        }
        char *setting = xasprintf("%s.packages", rkey);
        char *deb = debfetch_apt_get(cx, &apt, &pin, setting);
        free(setting);
        char aerr[ARC_ERRLEN];
        if (!deb) {
            rc = 1;
        } else if (arc_deb_extract(deb, tmp, ARC_X_NO_OWNERS, NULL, aerr) < 0) {
            rc = cx_fail(cx, "cannot unpack %s: %s", deb, aerr);
        } else {
            cx_log(cx, "unpacked %s %s", pin.package, pin.version);
            json_add_str(pkjs, pin.package, pin.version);
            if (!strcmp(pk.v[i], ln->libc_pkg))
                libc_version = xstrdup(pin.version);
        }
        free(deb);
        deb_pin_free(&pin);
    }
    if (rc)
        goto out;
    int nl = sr_relative_links(tmp);
    cx_log(cx, "%d absolute symlinks made relative", nl < 0 ? 0 : nl);

    ldso = sr_find_lib(tmp, ln->triplet, ln->ldso);
    libc = sr_find_lib(tmp, ln->triplet, ln->libc);
    if (!ldso || !libc) {
        rc = cx_fail(cx, "%s.packages: the unpacked packages have no %s%s%s (expected in lib/ "
                     "or lib/%s/): is %s a C library package for %s?", rkey,
                     ldso ? "" : ln->ldso, !ldso && !libc ? " and no " : "",
                     libc ? "" : ln->libc, ln->triplet, ln->libc_pkg, cx->arch);
        goto out;
    }
    if ((rc = check_machine(cx, tmp, ldso)) || (rc = check_machine(cx, tmp, libc)))
        goto out;

    const char *kdir = cx_dep(cx, "kernel");
    if (kdir) {
        char *rf = path_join(kdir, "release");
        char *text = NULL;
        size_t len;
        if (read_file(rf, &text, &len) == 0) {
            snprintf(release, sizeof release, "%.*s", (int)strcspn(text, "\n"), text);
            char *lp = path_join(tmp, libc);
            char msg[BINFMT_ERRLEN];
            int k = binfmt_kernel_for_libc(lp, release, min, msg);
            free(lp);
            if (k == BINFMT_KERNEL_TOO_OLD)
                rc = cx_fail(cx, "%s: %s; use a libc package built for older kernels "
                             "(%s.suite or %s.version), or a newer kernel", rkey, msg, rkey,
                             rkey);
            else if (k < 0)
                rc = cx_fail(cx, "%s: %s", rkey, msg);
            else
                cx_log(cx, "%s", k == BINFMT_KERNEL_OK ? "kernel is new enough for libc" : msg);
        }
        free(text);
        free(rf);
        if (rc)
            goto out;
    }

    const char *udir = sr_debootstrap_userland(cx->st) ? cx_dep(cx, "userland") : NULL;
    if (udir) {
        char *tsv = path_join(udir, "packages.tsv");
        root_ver = tsv_version(tsv, ln->libc_pkg);
        free(tsv);
        if (root_ver && strcmp(root_ver, libc_version) != 0) {
            rc = cx_fail(cx, "%s: the sysroot's %s is %s but the userland root has %s %s: "
                         "programs built against it may not run there; set %s.version = "
                         "\"%s\" (or the same suite and mirror as the userland)", rkey,
                         ln->libc_pkg, libc_version, ln->libc_pkg, root_ver, rkey, root_ver);
            goto out;
        }
        cx_log(cx, "the userland root has the same %s (%s)", ln->libc_pkg,
               root_ver ? root_ver : "not installed there");
    }

    char *up = upstream_version(libc_version);
    json_object *js = json_object_new_object();
    json_add_str(js, "glibc", up);
    json_add_str(js, "debian_version", libc_version);
    json_object_object_add(js, "min_kernel", min[0] ? json_str(min) : NULL);
    json_object_object_add(js, "kernel_release", release[0] ? json_str(release) : NULL);
    json_add_str(js, "ld_so", ldso);
    json_add_str(js, "libc", libc);
    json_add_str(js, "mirror", a.mirror);
    json_add_str(js, "suite", a.suite);
    json_object_object_add(js, "packages", pkjs);
    pkjs = NULL;
    char *vtext = xasprintf("%s\n", up);
    if (cx_write(cx, "version", vtext, strlen(vtext))) {
        json_object_put(js);
        rc = 1;
    } else if (cx_write_manifest(cx, js)) {
        rc = 1;
    } else if (rename(tmp, sysroot) < 0) {
        rc = cx_fail(cx, "cannot move %s to %s: %s", tmp, sysroot, strerror(errno));
    } else {
        cx_log(cx, "sysroot with glibc %s (%s), loader %s", up, libc_version, ldso);
    }
    free(vtext);
    free(up);
out:
    debfetch_apt_free(&apt);
    strlist_free(&a.components);
    strlist_free(&pk);
    json_object_put(pkjs);
    free(rkey);
    free(aptdir);
    free(tmp);
    free(sysroot);
    free(libc_version);
    free(ldso);
    free(libc);
    free(root_ver);
    return rc;
}

/* What the stage is, for the report, the SBOM and a minimal root (stage.h):
 * Debian's glibc, taken as built. */
static const struct stage_component made[] = {
    {.name = "glibc", .version = "glibc", .package = "libc6",
     .package_version = "debian_version", .licence = "LGPL-2.1-or-later",
     .role = COMPONENT_ROOT, .root_name = "glibc", .root_version = {"debian_version", "@version"}},
    {0},
};

const struct stage_kind stage_debian_libc = {
    .name = "debian-libc",
    .section = "packages",
    .version = 1,
    .summary = "a C library sysroot from a Debian archive's libc6, libc6-dev and "
               "linux-libc-dev packages (signed archive, pinned and verified downloads)",
    .fields = fields,
    .tools = tools,
    .outputs = outputs,
    .components = made,
    .declare = declare,
    .run = run,
};
